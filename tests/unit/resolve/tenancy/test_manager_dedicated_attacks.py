"""A member of fleet team beta (``edit`` in beta's namespace on the manager, teams[].group)
against the pools a worker dedicates to team alpha, through the fleet's manager: Kueue's
admission (tests/kueue_admission.py) on the manager's and the worker's planned Kueue objects,
the manager's admission policies (tests/kube_cel.py) and its RoleBindings. The worker rvwb has
one shared v5e 2x4 slice (8 chips) and one dedicated to alpha (8 chips); expected values are
literals."""

from __future__ import annotations

import copy

import pytest

from components.plan.engine import plan_file
from tests.admission import Cluster, cluster_policies
from tests.cluster_objects import MEMBER, admitted, inputs, team_namespaces
from tests.kueue_admission import KueueCluster, jobset_pod_sets
from tests.unit.resolve.tenancy.test_fleet_dedicated import V5E, worker, write
from tests.unit.resolve.tenancy.test_manager_attacks import jobset_request

SECURITY = {"securityGroup": "gke-security-groups@example.com"}
GROUPS = [
    {"name": "alpha", "group": "alpha@example.com"},
    {"name": "beta", "group": "beta@example.com"},
]
FLEET = {
    "tpu-pathways:environment": "staging",
    "tpu-pathways:workloadBackend": "jobset",
    "tpu-pathways:fleet": {
        "workers": ["rvwb"],
        "manager": {
            "project": "tpu-pathways-fleet",
            "region": "us-central1",
            "zone": "us-central1-a",
            **SECURITY,
        },
    },
    "tpu-pathways:teams": GROUPS,
    "tpu-pathways:workloads": [
        {"name": "a1", "team": "alpha", "pool": "v5e-alpha", "mode": "headless"}
    ],
}
KUEUE_KINDS = ("ClusterQueue", "ResourceFlavor", "LocalQueue")
NODE_POOL = "gcp:container/nodePool:NodePool"
ALPHA_TAINT = {"key": "tpu-pathways/dedicated-to", "value": "alpha", "effect": "NoExecute"}
# GKE's own labels and taint of the worker's TPU nodes (GKE, "About TPUs in GKE"), with the
# pools' own labels and taints as the worker's plan gives them (``tpu_nodes``).
TPU_NODE = {
    "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
    "cloud.google.com/gke-tpu-topology": "2x4",
    "node.kubernetes.io/instance-type": "ct5lp-hightpu-4t",
}
TPU_TAINT = {"key": "google.com/tpu", "value": "present", "effect": "NoSchedule"}


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    stacks = tmp_path_factory.mktemp("attack")
    cluster = {**worker("rvwb")["tpu-pathways:cluster"], **SECURITY}
    write(stacks, "rvwb", worker("rvwb", cluster=cluster, teams=GROUPS))
    write(stacks, "fleet", FLEET)
    return plan_file("fleet", stacks), plan_file("rvwb", stacks)


def kueue(plan, *extra: dict) -> KueueCluster:
    objects = {kind: inputs(plan, kind) for kind in KUEUE_KINDS}
    for obj in extra:
        objects[obj["kind"]] = [*objects[obj["kind"]], obj]
    return KueueCluster(objects)


def fleet_jobset(fleet) -> dict:
    (found,) = inputs(fleet, "JobSet")
    return found


def squat(fleet, name: str) -> dict:
    """beta's copy of alpha's JobSet, its TPU pods selecting and tolerating alpha's nodes (its
    head on the shared CPU pool, where beta's heads run)."""
    jobset = copy.deepcopy(fleet_jobset(fleet))
    jobset["metadata"] |= {"name": name, "namespace": "beta"}
    for replicated in jobset["spec"]["replicatedJobs"]:
        spec = replicated["template"]["spec"]["template"]["spec"]
        if replicated["name"] == "worker":
            spec["nodeSelector"] = {**spec["nodeSelector"], "tpu-pathways/dedicated-to": "alpha"}
            spec["tolerations"] = [{**ALPHA_TAINT, "operator": "Equal"}]
        else:
            spec["nodeSelector"] = {"cloud.google.com/gke-nodepool": "cpu-np"}
    return jobset


def test_beta_may_write_its_jobset_on_the_manager_but_only_in_its_own_namespace(plans):
    fleet, _ = plans
    manager = Cluster(cluster_policies(fleet), team_namespaces(fleet), (fleet,))
    # The manager's policies admit it (a queued, MultiKueue-managed JobSet): Kueue decides.
    assert manager.denials(jobset_request(squat(fleet, "squat"), MEMBER)) == []
    # beta's group has edit in beta's namespace only: alpha's queue is out of its reach.
    bindings = {
        (b["metadata"]["namespace"], s["name"])
        for b in inputs(fleet, "RoleBinding")
        for s in b.get("subjects", [])
        if s.get("kind") == "Group"
    }
    assert {ns for ns, group in bindings if group == "beta@example.com"} == {"beta"}


def test_beta_cannot_take_alphas_dedicated_chips_on_the_manager(plans):
    fleet, _ = plans
    manager = kueue(fleet)
    # beta's first squat takes the set's shared slice (its own queue's chips) ...
    assert manager.admit("beta", {}, squat(fleet, "s1")) == (
        "mk-rvwb",
        {"pathways-head": "cpu-heads", "worker": V5E},
    )
    # ... and its second finds nothing: alpha's 8 chips are neither lent nor on beta's flavors.
    assert (
        manager.admit("beta", {}, squat(fleet, "s2")) == "pod set worker fits no flavor of mk-rvwb"
    )
    # alpha's own JobSet is still admitted, on its dedicated flavors.
    alpha = fleet_jobset(fleet)
    assert manager.admit("alpha", {}, alpha) == (
        "mk-rvwb.alpha",
        {"pathways-head": "cpu-alpha-cpu.alpha", "worker": f"{V5E}.alpha"},
    )
    assert manager.usage[("mk-rvwb.alpha", f"{V5E}.alpha", "google.com/tpu")] == 8


def test_a_beta_queue_on_alphas_clusterqueue_admits_nothing(plans):
    fleet, _ = plans
    # Were a LocalQueue in beta's namespace pointed at alpha's ClusterQueue, its selector holds.
    rogue = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "rogue", "namespace": "beta"},
        "spec": {"clusterQueue": "mk-rvwb.alpha"},
    }
    jobset = squat(fleet, "s3")
    jobset["metadata"]["labels"] = {
        **jobset["metadata"]["labels"],
        "kueue.x-k8s.io/queue-name": "rogue",
    }
    assert kueue(fleet, rogue).admit("beta", {}, jobset) == (
        "Workload namespace doesn't match ClusterQueue selector"
    )


def tpu_nodes(worker_plan) -> dict[str, tuple[dict, list[dict]]]:
    """The worker's TPU node pools: their nodes' labels and taints."""
    effects = {"NO_EXECUTE": "NoExecute", "NO_SCHEDULE": "NoSchedule"}
    found = {}
    for r in worker_plan.resources:
        config = r.inputs.get("nodeConfig") or {}
        if r.custom and r.type == NODE_POOL and r.inputs.get("name") in ("v5e-0", "v5e-alpha-0"):
            pool = r.inputs["name"]
            labels = {**TPU_NODE, **config["labels"], "cloud.google.com/gke-nodepool": pool}
            taints = [t | {"effect": effects[t["effect"]]} for t in config.get("taints") or []]
            found[pool] = (labels, [*taints, TPU_TAINT])
    return found


def lands_on(pod_spec: dict, nodes: dict) -> list[str]:
    """The node pools whose nodes the pod selects and tolerates (a TPU pod tolerates GKE's TPU
    taint: GKE's ExtendedResourceToleration)."""
    tolerations = [*pod_spec.get("tolerations", []), {**TPU_TAINT, "operator": "Equal"}]

    def tolerated(taint: dict) -> bool:
        return any(
            t["key"] == taint["key"]
            and t.get("value") == taint["value"]
            and t.get("effect", taint["effect"]) == taint["effect"]
            for t in tolerations
        )

    return sorted(
        name
        for name, (labels, taints) in nodes.items()
        if all(labels.get(k) == v for k, v in pod_spec.get("nodeSelector", {}).items())
        and all(tolerated(t) for t in taints)
    )


def worker_pods(worker: KueueCluster, namespace: str, jobset: dict) -> dict[str, dict]:
    """The JobSet's pods as the worker's Kueue admits its copy (None: not admitted)."""
    admission = worker.admit(namespace, {}, jobset)
    assert not isinstance(admission, str), admission
    _, flavors = admission
    specs = {f["metadata"]["name"]: f["spec"] for f in worker.objects["ResourceFlavor"]}
    return {s.name: admitted(dict(s.spec), specs[flavors[s.name]]) for s in jobset_pod_sets(jobset)}


def test_alphas_fleet_jobset_runs_on_its_dedicated_pool_and_betas_squat_on_none(plans):
    fleet, rvwb = plans
    nodes = tpu_nodes(rvwb)
    assert sorted(nodes) == ["v5e-0", "v5e-alpha-0"]
    worker = kueue(rvwb)
    # MultiKueue's copy: the manager's JobSet without managedBy, on the worker's LocalQueue of
    # the same name in the same namespace, admitted by the worker's own Kueue.
    alpha = worker_pods(worker, "alpha", fleet_jobset(fleet))
    assert lands_on(alpha["worker"], nodes) == ["v5e-alpha-0"]
    assert alpha["pathways-head"]["nodeSelector"]["cloud.google.com/gke-nodepool"] == "alpha-cpu"
    # beta's squat, admitted on the manager's shared chips: the worker admits it on the shared
    # flavor, whose label its selector of alpha's label contradicts: it runs nowhere.
    beta = worker_pods(worker, "beta", squat(fleet, "s1"))
    assert lands_on(beta["worker"], nodes) == []
    assert worker.usage[("alpha-cluster-queue", f"{V5E}-alpha", "google.com/tpu")] == 8
