"""What a stack watches its cluster with: a controller's metrics scraped by Managed Service for
Prometheus (``ControllerMetrics``), and the stack's Cloud Monitoring dashboard and alert
policies (``StackMonitoring``).

Kueue v0.17.1 and JobSet v0.10.1 serve their metrics on HTTPS port 8443 behind
controller-runtime's authentication filter (kubernetes-sigs/kueue cmd/kueue/main.go and
kubernetes-sigs/jobset main.go: ``SecureServing: true``,
``filters.WithAuthenticationAndAuthorization``): a scraper must present a bearer token of an
identity allowed ``get`` on the ``/metrics`` URL (each release's ``<name>-metrics-reader``
ClusterRole), over TLS with the controller's self-signed certificate. Managed Service for
Prometheus supports exactly that (GoogleCloudPlatform/prometheus-engine, PodMonitoring
``endpoints[].authorization`` and ``tls``, in the CRD since v0.15): the token is a Secret in the
PodMonitoring's own namespace that the collector (service account ``collector`` in
``gmp-system``) may read. So each controller gets a service account bound to its reader role, a
long-lived token Secret for it, a Role letting the collector read that one Secret, and the
PodMonitoring. JobSet's own metrics are few (failed and completed JobSets, reconcile errors); the
dashboard's slice counts come from GKE's kube state metrics of JobSets instead (``JOBSET``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components.addons.alerts import AlertSpec
from components.addons.dashboard_model import Dashboard
from components.console_links import dashboard_url

PODMONITORING_API = "monitoring.googleapis.com/v1"
SCRAPER = "metrics-scraper"
SCRAPER_TOKEN = "metrics-scraper-token"
# Managed collection's collector (GKE "Managed Service for Prometheus", managed collection).
COLLECTOR_NAMESPACE = "gmp-system"
COLLECTOR = "collector"


@dataclass(frozen=True)
class ControllerMetricsArgs:
    """A controller to scrape: its namespace, its pods' labels, its metrics port and the
    ClusterRole that may read its ``/metrics``; ``install`` is its release (the role and the
    namespace come with it)."""

    name: str
    namespace: str
    reader_role: str
    selector: Mapping[str, str]
    provider: k8s.Provider
    port: int = 8443
    interval_seconds: int = 30
    install: Sequence[pulumi.Resource] = ()


class ControllerMetrics(pulumi.ComponentResource):
    """A PodMonitoring that scrapes one controller over HTTPS with a token of its own."""

    def __init__(
        self, name: str, args: ControllerMetricsArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:monitoring:ControllerMetrics", name, None, opts)
        ns = args.namespace
        child = pulumi.ResourceOptions(
            parent=self, provider=args.provider, depends_on=list(args.install)
        )
        meta = k8s.meta.v1.ObjectMetaArgs
        account = k8s.core.v1.ServiceAccount(
            f"{name}-scraper",
            metadata=meta(name=SCRAPER, namespace=ns),
            automount_service_account_token=False,  # no pod runs as it; only its token is read
            opts=child,
        )
        after_account = pulumi.ResourceOptions.merge(
            child, pulumi.ResourceOptions(depends_on=[account])
        )
        token = k8s.core.v1.Secret(
            f"{name}-scraper-token",
            metadata=meta(
                name=SCRAPER_TOKEN,
                namespace=ns,
                annotations={"kubernetes.io/service-account.name": SCRAPER},
            ),
            type="kubernetes.io/service-account-token",
            opts=after_account,
        )
        k8s.rbac.v1.ClusterRoleBinding(
            f"{name}-scraper-reads-metrics",
            metadata=meta(name=f"{ns}-{SCRAPER}"),
            role_ref=k8s.rbac.v1.RoleRefArgs(
                api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=args.reader_role
            ),
            subjects=[k8s.rbac.v1.SubjectArgs(kind="ServiceAccount", name=SCRAPER, namespace=ns)],
            opts=after_account,
        )
        self._collector_reads(name, ns, child)
        self.pod_monitoring = k8s.apiextensions.CustomResource(
            f"{name}-pod-monitoring",
            api_version=PODMONITORING_API,
            kind="PodMonitoring",
            metadata=meta(name=f"{args.name}-controller", namespace=ns),
            spec=_pod_monitoring_spec(args),
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[token])),
        )
        self.register_outputs({})

    def _collector_reads(self, name: str, ns: str, child: pulumi.ResourceOptions) -> None:
        """The collector may read the token Secret, and nothing else of the namespace."""
        reader = "gmp-collector-reads-scraper-token"
        meta = k8s.meta.v1.ObjectMetaArgs
        role = k8s.rbac.v1.Role(
            f"{name}-collector-role",
            metadata=meta(name=reader, namespace=ns),
            rules=[
                k8s.rbac.v1.PolicyRuleArgs(
                    api_groups=[""],
                    resources=["secrets"],
                    resource_names=[SCRAPER_TOKEN],
                    verbs=["get", "list", "watch"],
                )
            ],
            opts=child,
        )
        k8s.rbac.v1.RoleBinding(
            f"{name}-collector-binding",
            metadata=meta(name=reader, namespace=ns),
            role_ref=k8s.rbac.v1.RoleRefArgs(
                api_group="rbac.authorization.k8s.io", kind="Role", name=reader
            ),
            subjects=[
                k8s.rbac.v1.SubjectArgs(
                    kind="ServiceAccount", name=COLLECTOR, namespace=COLLECTOR_NAMESPACE
                )
            ],
            opts=pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[role])),
        )


def _pod_monitoring_spec(args: ControllerMetricsArgs) -> dict:
    return {
        "selector": {"matchLabels": dict(args.selector)},
        "endpoints": [
            {
                "port": args.port,
                "scheme": "https",
                "path": "/metrics",
                "interval": f"{args.interval_seconds}s",
                "authorization": {
                    "type": "Bearer",
                    "credentials": {"secret": {"name": SCRAPER_TOKEN, "key": "token"}},
                },
                # The controller's certificate is self-signed (controller-runtime's default).
                "tls": {"insecureSkipVerify": True},
            }
        ],
    }


@dataclass(frozen=True)
class StackMonitoringArgs:
    """The stack's dashboard (None: none) and alert policies, in ``project``; every policy
    notifies ``notification_channels`` and carries ``labels`` (lowercase keys and values)."""

    project: str
    cluster: str
    dashboard: Dashboard | None = None
    alerts: Sequence[AlertSpec] = ()
    notification_channels: Sequence[str] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    dashboards_link: str = ""
    """Where the alerts' documentation points (the project's dashboards)."""


class StackMonitoring(pulumi.ComponentResource):
    """A Cloud Monitoring dashboard and alert policies; ``dashboard_url`` opens the dashboard
    (known once it exists)."""

    dashboard_url: pulumi.Output[str] | None

    def __init__(
        self, name: str, args: StackMonitoringArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:monitoring:StackMonitoring", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.dashboard_url = None
        if args.dashboard is not None:
            dashboard = gcp.monitoring.Dashboard(
                f"{name}-dashboard",
                gcp.monitoring.DashboardArgs(
                    dashboard_json=args.dashboard.to_json(), project=args.project
                ),
                opts=child,
            )
            self.dashboard_url = dashboard.id.apply(
                lambda i: dashboard_url(args.project, i, args.cluster)
            )
        self.alert_policies = [_policy(name, spec, args, child) for spec in args.alerts]
        self.register_outputs({"dashboard_url": self.dashboard_url})


def _policy(
    name: str, spec: AlertSpec, args: StackMonitoringArgs, opts: pulumi.ResourceOptions
) -> gcp.monitoring.AlertPolicy:
    conditions = [
        gcp.monitoring.AlertPolicyConditionArgs(
            display_name=condition.title,
            condition_prometheus_query_language=(
                gcp.monitoring.AlertPolicyConditionConditionPrometheusQueryLanguageArgs(
                    query=condition.query,
                    duration=condition.duration,
                    evaluation_interval="60s",
                    disable_metric_validation=True,
                )
            ),
        )
        for condition in spec.conditions
    ]
    links = f"\n\nDashboards: {args.dashboards_link}" if args.dashboards_link else ""
    return gcp.monitoring.AlertPolicy(
        f"{name}-{spec.key}",
        gcp.monitoring.AlertPolicyArgs(
            display_name=spec.title,
            combiner="OR",
            conditions=conditions,
            severity=spec.severity.value,
            notification_channels=list(args.notification_channels),
            user_labels=dict(args.labels),
            documentation=gcp.monitoring.AlertPolicyDocumentationArgs(
                content=spec.what_to_do + links, mime_type="text/markdown"
            ),
            project=args.project,
        ),
        opts=opts,
    )
