"""A member of a fleet team (``edit`` in its namespace on the manager, teams[].group) against
the fleet's manager cluster, whose one pool runs Kueue with every worker's token (review of
2026-11-27): a pod at the highest team PriorityClass that fills the node would preempt Kueue and
stop every team's dispatch. What the example fleet's plan renders refuses it: its admission
policies evaluated as the API server does (tests/kube_cel.py), its quotas, its pool's taint and
its controllers' placement, each against literal values."""

from __future__ import annotations

import copy

import pytest

from tests.admission import (
    OWNED_BY_REPLICASET,
    Cluster,
    cluster_policies,
    container,
    jobset_request,
    pod,
)
from tests.cluster_objects import (
    DEPLOYER,
    JOB_CONTROLLER,
    KUEUE_CONTROLLER,
    MEMBER,
    REPLICASET_CONTROLLER,
    inputs,
    team_namespaces,
)
from tests.kube_cel import Request

TEAMS = ("research", "pathways")
FILLS_THE_NODE = {
    "priorityClassName": "very-high",
    "containers": [container(resources={"requests": {"cpu": "3500m", "memory": "12Gi"}})],
}


@pytest.fixture(scope="module")
def fleet(example_plan):
    return example_plan("fleet")


@pytest.fixture(scope="module")
def manager(fleet) -> Cluster:
    return Cluster(cluster_policies(fleet), team_namespaces(fleet), (fleet,))


def jobset(namespace: str, labels: dict | None = None, managed_by: str | None = None) -> dict:
    """A member's JobSet filling the node at very-high (``labels``/``managed_by``: its own)."""
    spec: dict = {
        "replicatedJobs": [
            {"name": "w", "template": {"spec": {"template": {"spec": FILLS_THE_NODE}}}}
        ]
    }
    if managed_by is not None:
        spec["managedBy"] = managed_by
    metadata = {"name": "squat", "namespace": namespace, **({"labels": labels} if labels else {})}
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": metadata} | {
        "spec": spec
    }


@pytest.mark.parametrize("namespace", TEAMS)
@pytest.mark.parametrize(
    ("creator", "metadata"),
    [
        (MEMBER, {}),  # a bare pod
        (REPLICASET_CONTROLLER, {"ownerReferences": OWNED_BY_REPLICASET}),  # a Deployment's
        (JOB_CONTROLLER, {"ownerReferences": [{"kind": "Job", "controller": True}]}),  # a Job's
    ],
)
def test_no_pod_is_created_in_a_managers_team_namespace(manager, namespace, creator, metadata):
    squat = pod(FILLS_THE_NODE, **metadata)
    assert manager.denied_by(Request(squat, namespace, creator)) == ["manager-pod"]


@pytest.mark.parametrize("namespace", TEAMS)
def test_an_unlabelled_jobset_that_kueue_would_ignore_is_refused(manager, namespace):
    unlabelled = jobset(namespace)
    assert manager.denied_by(jobset_request(unlabelled, MEMBER)) == [
        "manager-jobset-managed-by",
        "manager-jobset-queue",
    ]


@pytest.mark.parametrize("namespace", TEAMS)
def test_a_queued_jobset_the_manager_would_run_itself_is_refused(manager, namespace):
    queued = jobset(namespace, {"kueue.x-k8s.io/queue-name": "multislice-queue"})
    assert manager.denied_by(jobset_request(queued, MEMBER)) == ["manager-jobset-managed-by"]


def test_a_jobset_on_a_queue_its_namespace_lacks_is_refused(manager):
    other = jobset(
        "research", {"kueue.x-k8s.io/queue-name": "elsewhere"}, "kueue.x-k8s.io/multikueue"
    )
    assert manager.denied_by(jobset_request(other, MEMBER)) == ["manager-jobset-queue"]


def test_managed_by_cannot_be_dropped_later(manager):
    labels = {"kueue.x-k8s.io/queue-name": "multislice-queue"}
    before = jobset("research", labels, "kueue.x-k8s.io/multikueue")
    after = jobset("research", labels)
    request = jobset_request(after, MEMBER, operation="UPDATE", old_object=before)
    assert manager.denied_by(request) == ["manager-jobset-managed-by"]


def test_the_fleets_own_jobsets_are_admitted_and_run_by_kueue(fleet, manager):
    jobsets = inputs(fleet, "JobSet")
    assert sorted(j["metadata"]["namespace"] for j in jobsets) == ["pathways", "research"]
    for created in jobsets:
        assert manager.denials(jobset_request(created, DEPLOYER)) == []
        resumed = copy.deepcopy(created)
        resumed["spec"]["suspend"] = False
        update = jobset_request(resumed, KUEUE_CONTROLLER, operation="UPDATE", old_object=created)
        assert manager.denials(update) == []


def by_name(plan, name: str):
    (found,) = [r for r in plan.resources if r.name == name and r.custom]
    return found


def test_the_managers_quotas_admit_no_pod_and_no_worker_derived_compute(fleet):
    quotas = {q["metadata"]["name"]: q["spec"] for q in inputs(fleet, "ResourceQuota")}
    expected = {
        "pods": "0",
        "requests.google.com/tpu": "0",
        "services.loadbalancers": "0",
        "services.nodeports": "0",
        "count/ingresses.networking.k8s.io": "0",
    }
    assert quotas == {"research-quota": {"hard": expected}, "pathways-quota": {"hard": expected}}


def test_the_managers_pool_is_tainted_and_its_controllers_tolerate_it_at_their_priority(fleet):
    pool = by_name(fleet, "pathways-fleet-system-np")
    assert pool.inputs["nodeConfig"]["taints"] == [
        {
            "effect": "NO_SCHEDULE",
            "key": "components.gke.io/gke-managed-components",
            "value": "true",
        }
    ]
    (priority,) = [
        p
        for p in inputs(fleet, "PriorityClass")
        if p["metadata"]["name"] == "tpu-pathways-controllers"
    ]
    assert priority["value"] == 1000000
    for name, deployment in (
        ("pathways-fleet-kueue-controller", "kueue-controller-manager"),
        ("pathways-fleet-jobset-controller", "jobset-controller-manager"),
    ):
        patch = by_name(fleet, name)
        assert patch.inputs["metadata"]["name"] == deployment
        spec = patch.inputs["spec"]["template"]["spec"]
        assert spec["priorityClassName"] == "tpu-pathways-controllers"
        assert spec["tolerations"] == [
            {
                "effect": "NoSchedule",
                "key": "components.gke.io/gke-managed-components",
                "operator": "Equal",
                "value": "true",
            }
        ]
        assert spec["nodeSelector"] == {"cloud.google.com/gke-nodepool": "system-np"}


def test_the_kueue_patch_keeps_the_urn_it_had_as_the_configs_restart(fleet):
    (component,) = [
        r
        for r in fleet.by_type("tpu-pathways:installs:ControllerPatch")
        if r.name == "pathways-fleet-kueue-controller"
    ]
    assert component.options["aliases"] == [
        {
            "urn": "urn:pulumi:fleet::tpu-pathways::tpu-pathways:multikueue:ManagerKueueConfig"
            "$tpu-pathways:installs:ControllerPatch::pathways-fleet-kueue-config-restart"
        }
    ]
