"""ControllerMetrics and StackMonitoring from their Args: a PodMonitoring scraping a controller's
HTTPS metrics with a bearer token only the collector may read, and the stack's dashboard and
alert policies in its project."""

from __future__ import annotations

import json

import pytest

from components.addons.alerts import AlertSpec, Condition, Severity
from components.addons.dashboard import DashboardArgs, stack_dashboard
from components.addons.monitoring import (
    ControllerMetrics,
    ControllerMetricsArgs,
    StackMonitoring,
    StackMonitoringArgs,
)
from components.plan.render import manifest
from tests.components.harness import k8s_provider, register

PODMONITORING = "kubernetes:monitoring.googleapis.com/v1:PodMonitoring"
SECRET = "kubernetes:core/v1:Secret"
ROLE = "kubernetes:rbac.authorization.k8s.io/v1:Role"
ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
CLUSTER_ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding"
DASHBOARD = "gcp:monitoring/dashboard:Dashboard"
POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"


@pytest.fixture(scope="module")
def kueue():
    def build():
        ControllerMetrics(
            "c-kueue-metrics",
            ControllerMetricsArgs(
                name="kueue",
                namespace="kueue-system",
                reader_role="kueue-metrics-reader",
                selector={"control-plane": "controller-manager"},
                provider=k8s_provider(),
                interval_seconds=60,
            ),
        )

    return register(build)


def test_the_pod_monitoring_scrapes_https_with_the_scrapers_token(kueue):
    (monitoring,) = kueue.of_type(PODMONITORING)
    assert manifest(monitoring) == {
        "apiVersion": "monitoring.googleapis.com/v1",
        "kind": "PodMonitoring",
        "metadata": {"name": "kueue-controller", "namespace": "kueue-system"},
        "spec": {
            "selector": {"matchLabels": {"control-plane": "controller-manager"}},
            "endpoints": [
                {
                    "port": 8443,
                    "scheme": "https",
                    "path": "/metrics",
                    "interval": "60s",
                    "authorization": {
                        "type": "Bearer",
                        "credentials": {
                            "secret": {"name": "metrics-scraper-token", "key": "token"}
                        },
                    },
                    "tls": {"insecureSkipVerify": True},
                }
            ],
        },
    }


def test_the_token_is_the_scrapers_and_only_the_collector_may_read_it(kueue):
    (token,) = kueue.of_type(SECRET)
    assert manifest(token)["type"] == "kubernetes.io/service-account-token"
    assert manifest(token)["metadata"]["annotations"] == {
        "kubernetes.io/service-account.name": "metrics-scraper"
    }
    (binding,) = kueue.of_type(CLUSTER_ROLE_BINDING)
    assert manifest(binding)["roleRef"]["name"] == "kueue-metrics-reader"
    assert manifest(binding)["subjects"] == [
        {"kind": "ServiceAccount", "name": "metrics-scraper", "namespace": "kueue-system"}
    ]
    (role,) = kueue.of_type(ROLE)
    assert manifest(role)["rules"] == [
        {
            "apiGroups": [""],
            "resources": ["secrets"],
            "resourceNames": ["metrics-scraper-token"],
            "verbs": ["get", "list", "watch"],
        }
    ]
    (reader,) = kueue.of_type(ROLE_BINDING)
    assert manifest(reader)["subjects"] == [
        {"kind": "ServiceAccount", "name": "collector", "namespace": "gmp-system"}
    ]


@pytest.fixture(scope="module")
def watched():
    spec = AlertSpec(
        "slices-not-ready",
        "c: slices not ready",
        Severity.ERROR,
        (Condition("slices", "up == 0", 20),),
        "Look at the workers.",
    )
    dashboard = stack_dashboard(DashboardArgs("dev", "c", "acme-ml", ["nlp"]))

    def build():
        monitoring = StackMonitoring(
            "c-monitoring",
            StackMonitoringArgs(
                project="acme-ml",
                cluster="c",
                dashboard=dashboard,
                alerts=(spec,),
                notification_channels=("projects/acme-ml/notificationChannels/42",),
                labels={"stack": "dev"},
            ),
        )
        return {"url": monitoring.dashboard_url}

    return register(build)


def test_the_dashboard_is_the_typed_models_json_in_the_project(watched):
    (dashboard,) = watched.of_type(DASHBOARD)
    assert dashboard.inputs["project"] == "acme-ml"
    document = json.loads(dashboard.inputs["dashboardJson"])
    assert document["displayName"] == "tpu-pathways dev (c)"
    assert watched.outputs["url"] == "[unknown]"  # the dashboard's ID exists once it is created


def test_the_alert_policy_notifies_the_channels_in_promql(watched):
    (policy,) = watched.of_type(POLICY)
    assert policy.inputs["notificationChannels"] == ["projects/acme-ml/notificationChannels/42"]
    assert policy.inputs["conditions"] == [
        {
            "displayName": "slices",
            "conditionPrometheusQueryLanguage": {
                "query": "up == 0",
                "duration": "1200s",
                "evaluationInterval": "60s",
                "disableMetricValidation": True,
            },
        }
    ]
    assert policy.inputs["documentation"] == {
        "content": "Look at the workers.",
        "mimeType": "text/markdown",
    }
