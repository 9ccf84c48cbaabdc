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
from tests.admission import Cluster, cluster_policies, jobset_request
from tests.cluster_objects import MEMBER, admitted, inputs, team_namespaces
from tests.fleet_stacks import V5E, fleet, worker, write, write_all
from tests.kueue_admission import KueueCluster, jobset_pod_sets, pod_requests, tolerated

SECURITY = {"securityGroup": "gke-security-groups@example.com"}
GROUPS = [
    {"name": "alpha", "group": "alpha@example.com"},
    {"name": "beta", "group": "beta@example.com"},
]
FLEET = fleet(
    ["rvwb"],
    teams=GROUPS,
    workloads=[{"name": "a1", "team": "alpha", "pool": "v5e-alpha", "mode": "headless"}],
    **SECURITY,
)
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


def tpu_on(flavor: str) -> dict[str, str]:
    return {"google.com/tpu": flavor}


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
        {"pathways-head": {"cpu": "cpu-heads", "memory": "cpu-heads"}, "worker": tpu_on(V5E)},
    )
    # ... and its second finds nothing: alpha's 8 chips are neither lent nor on beta's flavors.
    assert manager.admit("beta", {}, squat(fleet, "s2")) == (
        "pod set worker fits no flavor of mk-rvwb for ['google.com/tpu']"
    )
    # alpha's own JobSet is still admitted, on its dedicated flavors.
    alpha = fleet_jobset(fleet)
    assert manager.admit("alpha", {}, alpha) == (
        "mk-rvwb.alpha",
        {
            "pathways-head": {"cpu": "cpu-alpha-cpu.alpha", "memory": "cpu-alpha-cpu.alpha"},
            "worker": tpu_on(f"{V5E}.alpha"),
        },
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
    return sorted(
        name
        for name, (labels, taints) in nodes.items()
        if all(labels.get(k) == v for k, v in pod_spec.get("nodeSelector", {}).items())
        and all(tolerated(t, tolerations) for t in taints)
    )


def worker_pods(worker: KueueCluster, namespace: str, jobset: dict) -> dict[str, dict]:
    """The JobSet's pods as the worker's Kueue admits its copy (None: not admitted)."""
    admission = worker.admit(namespace, {}, jobset)
    assert not isinstance(admission, str), admission
    _, flavors = admission
    specs = {f["metadata"]["name"]: f["spec"] for f in worker.objects["ResourceFlavor"]}
    pods = {}
    for pod_set in jobset_pod_sets(jobset):
        spec = dict(pod_set.spec)
        for flavor in sorted(set(flavors[pod_set.name].values())):
            spec = admitted(spec, specs[flavor])
        pods[pod_set.name] = spec
    return pods


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


def alpha_worker_spec(jobset: dict) -> dict:
    (worker,) = [r for r in jobset["spec"]["replicatedJobs"] if r["name"] == "worker"]
    return worker["template"]["spec"]["template"]["spec"]


def test_a_tpu_pod_set_that_also_asks_for_cpu_is_charged_it_on_the_cpu_flavor(plans):
    fleet, rvwb = plans
    jobset = copy.deepcopy(fleet_jobset(fleet))
    alpha_worker_spec(jobset)["containers"][0]["resources"]["limits"]["cpu"] = "1"
    manager = kueue(fleet)
    # Kueue gives each requested resource a flavor of the group covering it (flavorassigner.go
    # findFlavorForPodSets): the 2 TPU pods take 1 CPU each of alpha's CPU flavor.
    _, flavors = manager.admit("alpha", {}, jobset)
    assert flavors["worker"] == {"cpu": "cpu-alpha-cpu.alpha", "google.com/tpu": f"{V5E}.alpha"}
    # the head's 24 CPU, and now 2 x 1 CPU of the TPU pods
    assert manager.usage[("mk-rvwb.alpha", "cpu-alpha-cpu.alpha", "cpu")] == 26000
    # On the worker, the CPU flavor's node pool label joins the TPU pods' selector: they fit
    # no node (why the project's TPU pods ask for no CPU of their own).
    pods = worker_pods(kueue(rvwb), "alpha", jobset)
    assert pods["worker"]["nodeSelector"]["cloud.google.com/gke-nodepool"] == "alpha-cpu"
    assert lands_on(pods["worker"], tpu_nodes(rvwb)) == []


def test_a_resource_no_group_covers_makes_the_jobset_inadmissible(plans):
    fleet, _ = plans
    jobset = copy.deepcopy(fleet_jobset(fleet))
    alpha_worker_spec(jobset)["containers"][0]["resources"]["limits"]["example.com/fpga"] = "1"
    assert kueue(fleet).admit("alpha", {}, jobset) == (
        "resource example.com/fpga unavailable in ClusterQueue"
    )


def test_required_node_affinity_on_a_flavor_label_is_honoured(plans):
    fleet, _ = plans
    jobset = copy.deepcopy(fleet_jobset(fleet))
    topology = {"key": "cloud.google.com/gke-tpu-topology", "operator": "In", "values": ["4x4"]}
    other = {"key": "example.com/not-a-flavor-label", "operator": "Exists"}
    alpha_worker_spec(jobset)["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [topology, other]}]
            }
        }
    }
    # flavorSelector keeps the topology requirement (a label key of the group's flavors) and
    # drops the other: alpha's only TPU flavor is 2x4, so nothing fits.
    assert kueue(fleet).admit("alpha", {}, jobset) == (
        "pod set worker fits no flavor of mk-rvwb.alpha for ['google.com/tpu']"
    )
    # A term left with no requirement on the group's label keys matches every flavor.
    topology["values"] = ["2x4"]
    assert kueue(fleet).admit("alpha", {}, jobset)[0] == "mk-rvwb.alpha"


def flavors_of(queue: dict) -> set[str]:
    return {f["name"] for g in queue["spec"]["resourceGroups"] for f in g["flavors"]}


def test_no_other_queue_of_its_cohort_holds_a_dedicated_queues_flavors_and_it_lends_nothing(
    plans,
):
    """What the reasoning about preemption (not modelled: tests/kueue_admission.py) relies on:
    reclaim and borrowing preemption only take from queues that borrow the flavor-resources the
    preemptor needs, and nothing borrows alpha's (kueue v0.17.1 pkg/scheduler/preemption/
    preemption.go findCandidates)."""
    fleet, _ = plans
    queues = {q["metadata"]["name"]: q for q in inputs(fleet, "ClusterQueue")}
    dedicated = queues["mk-rvwb.alpha"]
    cohort = dedicated["spec"]["cohortName"]
    others = [q for n, q in queues.items() if n != "mk-rvwb.alpha"]
    assert cohort == "mk-rvwb"
    assert [q["metadata"]["name"] for q in others if q["spec"].get("cohortName") == cohort] == [
        "mk-rvwb"
    ]
    assert flavors_of(dedicated) == {f"{V5E}.alpha", "cpu-alpha-cpu.alpha"}
    assert [flavors_of(dedicated) & flavors_of(q) for q in others] == [set()]
    limits = [
        (r["name"], r.get("borrowingLimit"), r.get("lendingLimit"))
        for g in dedicated["spec"]["resourceGroups"]
        for f in g["flavors"]
        for r in f["resources"]
    ]
    assert limits == [("google.com/tpu", 0, 0), ("cpu", 0, 0), ("memory", 0, 0)]


def test_a_pods_requests_count_sidecars_and_an_init_containers_peak_as_kubernetes_does():
    def container(cpu: str, **extra) -> dict:
        return {"name": cpu, "resources": {"requests": {"cpu": cpu}}, **extra}

    # component-helpers PodRequests: max(2 + sidecar 1, init 4 + sidecars started before: 0)
    pod = {
        "initContainers": [container("4"), container("1", restartPolicy="Always")],
        "containers": [container("2")],
    }
    assert pod_requests(pod) == {"cpu": 4000}
    pod["initContainers"].reverse()  # now the init container runs beside the sidecar: 4 + 1
    assert pod_requests(pod) == {"cpu": 5000}


@pytest.fixture(scope="module")
def two_worker_plans(tmp_path_factory):
    """test_fleet_dedicated's fleet: rvwa and rvwb, each a shared v5e 2x4 slice and one
    dedicated to alpha (8 chips each); the manager's alpha queue holds their sum, 16."""
    stacks = tmp_path_factory.mktemp("two-workers")
    write_all(stacks)
    return plan_file("fleet", stacks), plan_file("rvwa", stacks), plan_file("rvwb", stacks)


def named(jobset: dict, name: str) -> dict:
    copied = copy.deepcopy(jobset)
    copied["metadata"]["name"] = name
    return copied


def test_on_two_workers_the_summed_manager_quota_admits_what_the_workers_run(two_worker_plans):
    fleet, rvwa, rvwb = two_worker_plans
    manager = kueue(fleet)
    alphas = [named(fleet_jobset(fleet), f"a{i}") for i in range(3)]
    # alpha's 16 summed chips admit two 8-chip JobSets; the third waits.
    admitted = (
        "mk-rvwa-rvwb.alpha",
        {
            "pathways-head": {"cpu": "cpu-alpha-cpu.alpha", "memory": "cpu-alpha-cpu.alpha"},
            "worker": tpu_on(f"{V5E}.alpha"),
        },
    )
    assert [manager.admit("alpha", {}, j) for j in alphas] == [
        admitted,
        admitted,
        "pod set worker fits no flavor of mk-rvwa-rvwb.alpha for ['google.com/tpu']",
    ]
    assert manager.usage[("mk-rvwa-rvwb.alpha", f"{V5E}.alpha", "google.com/tpu")] == 16
    # beta's squats selecting and tolerating alpha's nodes take the set's 16 shared chips (two
    # JobSets), then nothing: alpha's chips are on no flavor of beta's queue.
    squats = [manager.admit("beta", {}, squat(fleet, f"s{i}")) for i in range(3)]
    assert [s if isinstance(s, str) else s[1]["worker"] for s in squats] == [
        tpu_on(V5E),
        tpu_on(V5E),
        "pod set worker fits no flavor of mk-rvwa-rvwb for ['google.com/tpu']",
    ]
    # MultiKueue (AllAtOnce) copies each admitted JobSet to both workers: each worker's own
    # Kueue admits one of alpha's (its 8 dedicated chips), so the two run, one per worker, and
    # the copies of the other are removed; nothing beyond the manager's 16 runs.
    for plan in (rvwa, rvwb):
        worker = kueue(plan)
        first, second = (worker.admit("alpha", {}, j) for j in alphas[:2])
        assert (first[0], first[1]["worker"]) == ("alpha-cluster-queue", tpu_on(f"{V5E}-alpha"))
        assert second == (
            "pod set worker fits no flavor of alpha-cluster-queue for ['google.com/tpu']"
        )
        assert worker.usage[("alpha-cluster-queue", f"{V5E}-alpha", "google.com/tpu")] == 8
