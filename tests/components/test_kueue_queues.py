"""KueueQueues from its Args: a flavor per TPU shape and one for the CPU pool, the
ClusterQueue whose quota is what the pools provide, team queues in a cohort, LocalQueues."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s
import pytest

from components.addons.kueue import KueueQueues, KueueQueuesArgs, TeamQuotaArgs, tpu_flavors
from components.tpu.catalog import resolve_accelerator
from tests.components.harness import k8s_provider, register

QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
LOCAL = "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"
FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
V5P_FLAVOR = "tpu-v5p-slice-2x2x2-4t"


def queues(team_quotas=(), service_queues=None):
    def build():
        provider = k8s_provider()
        install = k8s.core.v1.Namespace("kueue", opts=pulumi.ResourceOptions(provider=provider))
        v5p = resolve_accelerator("v5p-16")
        args = KueueQueuesArgs(
            provider=provider,
            kueue_install=install,
            cohort="pathways",
            # two pools of the same shape: one flavor with all their chips
            tpu_flavors=tpu_flavors([(v5p, 2), (v5p, 1)]),
            cpu_pool="cpu-np",
            cpu_machine_type="n2-standard-64",
            cpu_max_nodes=2,
            namespaces={"research": "research", "serving": "serving"},
            team_quotas=team_quotas,
            service_queues=service_queues or {},
        )
        KueueQueues("q", args)

    return register(build)


@pytest.fixture(scope="module")
def single():
    return queues()


@pytest.fixture(scope="module")
def shared():
    return queues(
        [TeamQuotaArgs("research", {"v5p-16": 8}, borrowing_limit=4)],
        {"research-svc": "research", "serving-svc": "serving"},
    )


def test_flavors(single):
    flavors = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in single.of_type(FLAVOR)}
    # the shared pools' label too: a dedicated pool of the same shape carries the TPU labels
    assert flavors == {
        V5P_FLAVOR: {
            "nodeLabels": {
                "cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
                "cloud.google.com/gke-tpu-topology": "2x2x2",
                "node.kubernetes.io/instance-type": "ct5p-hightpu-4t",
                "tpu-pathways/shared-pool": "true",
            }
        },
        "cpu-cpu-np": {
            "nodeLabels": {
                "cloud.google.com/gke-nodepool": "cpu-np",
                "tpu-pathways/shared-pool": "true",
            }
        },
    }


def test_the_cluster_queue_holds_the_provisioned_chips(single):
    spec = single.one(QUEUE, "q-cluster-queue").inputs["spec"]
    tpu, cpu = spec["resourceGroups"]
    # 3 slices of v5p-16 (2 hosts x 4 chips)
    assert tpu["flavors"] == [
        {"name": V5P_FLAVOR, "resources": [{"name": "google.com/tpu", "nominalQuota": 24}]}
    ]
    assert cpu["flavors"][0]["name"] == "cpu-cpu-np"
    assert spec["preemption"] == {
        "reclaimWithinCohort": "Never",
        "withinClusterQueue": "LowerPriority",
    }
    assert "cohortName" not in spec


def test_local_queues_point_at_the_default_queue(single):
    local = {r.inputs["metadata"]["namespace"]: r.inputs["spec"] for r in single.of_type(LOCAL)}
    assert local == {
        "research": {"clusterQueue": "cluster-queue"},
        "serving": {"clusterQueue": "cluster-queue"},
    }


def test_a_team_quota_splits_the_chips_in_a_cohort(shared):
    default = shared.one(QUEUE, "q-cluster-queue").inputs["spec"]
    team = shared.one(QUEUE, "q-research-cluster-queue").inputs["spec"]
    assert default["cohortName"] == team["cohortName"] == "pathways"
    assert default["resourceGroups"][0]["flavors"][0]["resources"] == [
        {"name": "google.com/tpu", "nominalQuota": 16}
    ]
    assert team["resourceGroups"][0]["flavors"][0]["resources"] == [
        {"name": "google.com/tpu", "nominalQuota": 8, "borrowingLimit": 4}
    ]
    # its namespace, and default, where pathwaysutils needs its shared services
    assert team["namespaceSelector"] == {
        "matchExpressions": [
            {
                "key": "kubernetes.io/metadata.name",
                "operator": "In",
                "values": ["research", "default"],
            }
        ]
    }
    assert team["preemption"]["reclaimWithinCohort"] == "Any"


def test_a_team_with_a_quota_queues_on_its_own_queue(shared):
    local = {
        (r.inputs["metadata"]["namespace"], r.inputs["metadata"]["name"]): r.inputs["spec"]
        for r in shared.of_type(LOCAL)
    }
    assert local == {
        ("research", "multislice-queue"): {"clusterQueue": "research-cluster-queue"},
        ("serving", "multislice-queue"): {"clusterQueue": "cluster-queue"},
        ("default", "research-svc"): {"clusterQueue": "research-cluster-queue"},
        ("default", "serving-svc"): {"clusterQueue": "cluster-queue"},
    }


def test_each_shared_service_has_a_local_queue_in_default_on_its_teams_queue(shared):
    research = shared.one(LOCAL, "q-default-research-svc")
    assert research.inputs["metadata"] == {"name": "research-svc", "namespace": "default"}
    assert research.inputs["spec"] == {"clusterQueue": "research-cluster-queue"}
    serving = shared.one(LOCAL, "q-default-serving-svc")
    assert serving.inputs["spec"] == {"clusterQueue": "cluster-queue"}
    # created after the ClusterQueues it points at
    assert shared.one(QUEUE, "q-research-cluster-queue").urn in research.dependencies


def test_no_shared_service_no_queue_in_default(single):
    assert [r.name for r in single.of_type(LOCAL) if "default" in r.name] == []
