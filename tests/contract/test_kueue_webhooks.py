"""The model of Kueue v0.17.1's ClusterQueue and ResourceFlavor webhooks (tests/kueue_webhooks.py)
refuses what those webhooks refuse (pkg/webhooks/clusterqueue_webhook.go,
resourceflavor_webhook.go) and accepts what they accept; expected values are literals."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.kueue_webhooks import quantity, webhook_errors

SOURCE = "(kueue v0.17.1 pkg/webhooks/clusterqueue_webhook.go "


def cluster_queue(*groups: dict, **spec) -> dict:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {"namespaceSelector": {}, "resourceGroups": list(groups), **spec},
    }


def group(covered: list[str], *flavors: tuple[str, list[dict]]) -> dict:
    return {
        "coveredResources": covered,
        "flavors": [{"name": name, "resources": resources} for name, resources in flavors],
    }


def res(name: str, nominal, **limits) -> dict:
    return {"name": name, "nominalQuota": nominal, **limits}


TPU = group(["google.com/tpu"], ("t", [res("google.com/tpu", 8)]))
CPU = group(["cpu", "memory"], ("c", [res("cpu", "24"), res("memory", "96Gi")]))


def test_a_valid_cluster_queue_passes():
    lent = group(["google.com/tpu"], ("t", [res("google.com/tpu", 8, lendingLimit=8)]))
    checks = {"admissionChecks": [{"name": "mk", "onFlavors": ["t"]}]}
    assert webhook_errors(cluster_queue(lent, CPU, cohortName="all")) == []
    assert webhook_errors(cluster_queue(TPU, CPU, admissionChecksStrategy=checks)) == []


@pytest.mark.parametrize(
    ("queue", "expected"),
    [
        pytest.param(
            cluster_queue(TPU, group(["cpu"], ("t", [res("cpu", 1)]))),
            "spec.resourceGroups[1].flavors[0].name: Invalid value: 't': Duplicate value: a "
            f"flavor is in one resource group of a ClusterQueue only {SOURCE}"
            "validateResourceGroups)",
            id="flavor-in-two-groups",
        ),
        pytest.param(
            cluster_queue(TPU, group(["google.com/tpu"], ("u", [res("google.com/tpu", 1)]))),
            "spec.resourceGroups[1].coveredResources[0]: Invalid value: 'google.com/tpu': "
            "Duplicate value: a resource is covered by one resource group only "
            f"{SOURCE}validateResourceGroups)",
            id="resource-in-two-groups",
        ),
        pytest.param(
            cluster_queue(group(["cpu"], ("c", [res("memory", 1)]))),
            "spec.resourceGroups[0].flavors[0].resources[0].name: Invalid value: 'memory': must "
            f"match the name in coveredResources {SOURCE}validateFlavorQuotas)",
            id="resource-not-the-covered-one",
        ),
        pytest.param(
            cluster_queue(group(["cpu"], ("c", [res("cpu", "8", borrowingLimit="1")]))),
            "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: Invalid value: '1': "
            f"must be nil when cohort is empty {SOURCE}validateLimit)",
            id="borrowing-limit-without-cohort",
        ),
        pytest.param(
            cluster_queue(
                group(["cpu"], ("c", [res("cpu", "8", lendingLimit="9000m")])), cohortName="all"
            ),
            "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: Invalid value: "
            f"'9000m': must be less than or equal to the nominalQuota {SOURCE}"
            "validateLendingLimit)",
            id="lending-more-than-nominal",
        ),
        pytest.param(
            cluster_queue(
                TPU,
                admissionChecksStrategy={"admissionChecks": [{"name": "mk", "onFlavors": ["x"]}]},
            ),
            "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[0]: Invalid value: 'x': "
            f"Unsupported value: not a flavor of the ClusterQueue ['t'] {SOURCE}"
            "validateAdmissionCheckOnFlavors)",
            id="admission-check-on-unknown-flavor",
        ),
        pytest.param(
            cluster_queue(
                TPU,
                namespaceSelector={
                    "matchExpressions": [{"key": "team", "operator": "In", "values": []}]
                },
            ),
            "spec.namespaceSelector.matchExpressions[0].values: Invalid value: []: must be "
            "specified when `operator` is 'In' or 'NotIn' (kueue v0.17.1 pkg/webhooks/"
            "clusterqueue_webhook.go validateClusterQueueSpec (ValidateLabelSelector))",
            id="selector-in-without-values",
        ),
    ],
)
def test_what_the_cluster_queue_webhook_refuses_is_reported_naming_its_rule(queue, expected):
    assert webhook_errors(queue) == [expected]


def test_a_resource_flavors_labels_and_taints_are_checked():
    flavor = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "f"},
        "spec": {
            "nodeLabels": {"pool": "a b"},
            "nodeTaints": [{"key": "k", "value": "v", "effect": "NoSchedule"}],
        },
    }
    assert webhook_errors(flavor) == [
        "spec.nodeLabels: Invalid value: 'pool=a b': must be a valid label (kueue v0.17.1 "
        "pkg/webhooks/resourceflavor_webhook.go ValidateResourceFlavor (ValidateLabels))"
    ]


def test_quantities_compare_as_kubernetes_reads_them():
    assert quantity("9000m") == Decimal(9)
    assert quantity("1Ki") == Decimal(1024)
    assert quantity("2e3") == Decimal(2000)
    assert quantity(8) == Decimal(8)
