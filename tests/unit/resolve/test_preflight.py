"""The plan-time preflight: each PathwaysJob expanded as the controller v0.1.4 does, scheduled
against node pools, and refused when it would not run. Expected values are literals taken from
the controller's source and GKE's documentation, not recomputed the way the code does."""

from __future__ import annotations

import pytest

from components.errors import ConfigError
from components.pathways.controller_model import expand
from components.pathways.preflight import preflight_job
from components.pathways.scheduler_model import TPU_TAINT, NodePoolModel
from components.pathways.spec import (
    Controller,
    DeploymentMode,
    PathwaysJobSpec,
    Worker,
    WorkerType,
)
from components.resolve.preflight import bucket_grants, planned_pools, preflight
from components.stack.program import build_stack
from components.tpu.machines import machine_type
from components.workloads.job import PathwaysJob, PathwaysJobArgs

TRAIN = {
    "name": "train",
    "pool": "v5e",
    "image": "python:3.12",
    "command": ["python", "train.py"],
    "resources": {"cpu": "8", "memory": "32Gi"},
}
NOTEBOOK = {"name": "notebook", "pool": "v5e", "mode": "headless"}


def _issues(config) -> list[str]:
    return [str(i) for i in preflight(config, planned_pools(config), bucket_grants(config)).issues]


# --- the controller model -----------------------------------------------------------------------


def test_workers_are_one_pod_per_host_with_the_tpu_selector_and_host_network():
    spec = PathwaysJobSpec(
        workers=[
            Worker(
                type=WorkerType.CT5P_HIGHTPU_4T,
                topology="2x2x4",
                num_slices=3,
                node_selector={"team": "a"},
            )
        ],
        controller=Controller(deployment_mode=DeploymentMode.DEFAULT),
    )
    job = expand("j", "ns", spec)
    # 2x2x4 = 16 chips, 4 per ct5p VM: 4 pods per slice; 3 slices.
    assert (job.workers.groups, job.workers.per_group, job.workers.pods) == (3, 4, 12)
    assert job.workers.tpu_chips == 4
    assert dict(job.workers.node_selector) == {
        "team": "a",
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
        "cloud.google.com/gke-tpu-topology": "2x2x4",
    }
    assert job.workers.host_network and job.head.host_network
    assert job.workers.exclusive_topology == "cloud.google.com/gke-nodepool"
    # headless default-mode head: resource manager 8 CPU / 32 GB + proxy 16 CPU / 100 GB, no
    # nodeSelector, exclusive per host.
    assert job.head.resources.cpu_millicores == 24_000
    assert job.head.resources.memory_bytes == 132_000_000_000
    assert dict(job.head.node_selector) == {}
    assert job.head.exclusive_topology == "kubernetes.io/hostname"
    assert job.head.images == (
        "us-docker.pkg.dev/cloud-tpu-v2-images/pathways/server:latest",
        "us-docker.pkg.dev/cloud-tpu-v2-images/pathways/proxy_server:latest",
    )


def test_eight_chip_hosts_and_sub_host_slices():
    def vms(worker_type, topology):
        spec = PathwaysJobSpec(
            workers=[Worker(type=worker_type, topology=topology, num_slices=1)],
            controller=Controller(deployment_mode=DeploymentMode.DEFAULT),
        )
        workers = expand("j", "ns", spec).workers
        return workers.per_group, workers.tpu_chips

    assert vms(WorkerType.CT5LP_HIGHTPU_8T, "2x4") == (1, 8)
    assert vms(WorkerType.CT5LP_HIGHTPU_4T, "2x4") == (2, 4)
    # The controller's list has 1x1 for ct6e-standard-4t, but GKE has no such node (v6e 1x1 is
    # ct6e-standard-1t): the spec refuses it, as the stack file's pools do.
    with pytest.raises(ConfigError) as refused:
        vms(WorkerType.CT6E_STANDARD_4T, "1x1")
    assert str(refused.value) == (
        "Worker: 1 problem\n  - topology: '1x1' is not a topology of ct6e-standard-4t; nearest "
        "valid: 2x2, 2x4, 4x4, 4x8 (7 in all: python -m components shapes v6e)"
    )


# --- the planned pools --------------------------------------------------------------------------


def test_planned_pools_carry_gke_labels_taints_and_the_node_identity(config_of, stack_values):
    config = config_of(stack_values())
    pools = {p.name: p for p in planned_pools(config)}
    assert set(pools) == {"system-np", "cpu-np", "v5e-0"}
    tpu = pools["v5e-0"]
    assert tpu.labels["cloud.google.com/gke-tpu-accelerator"] == "tpu-v5-lite-podslice"
    assert tpu.labels["cloud.google.com/gke-tpu-topology"] == "2x4"
    assert tpu.labels["cloud.google.com/gke-nodepool"] == "v5e-0"
    assert tpu.labels["cloud.google.com/gke-spot"] == "true"
    assert tpu.taints == (TPU_TAINT,)
    assert str(TPU_TAINT) == "google.com/tpu=present:NoSchedule"
    assert (tpu.max_nodes, tpu.tpu_chips) == (2, 4)
    assert pools["cpu-np"].taints == ()
    assert tpu.identity == "pathways-dev-nodes@tpu-pathways-dev.iam.gserviceaccount.com"


def test_plan_reports_the_expanded_pods_per_workload(plan_of, stack_values):
    plan = plan_of(stack_values(workloads=[TRAIN, NOTEBOOK]))
    train = plan.summary["workloads"]["pathways/train"]
    assert train["head"]["landsOn"] == ["cpu-np"]
    assert train["head"]["nodeSelector"] == {"cloud.google.com/gke-nodepool": "cpu-np"}
    assert train["head"]["resources"] == "32 CPU / 154.9Gi"
    assert train["workers"]["pods"] == 2
    assert train["workers"]["landsOn"] == ["v5e"]
    assert train["command"] == ["python", "train.py"]
    node_sa = "pathways-dev-nodes@tpu-pathways-dev.iam.gserviceaccount.com"
    assert train["head"]["identity"] == f"node service account {node_sa}"
    assert train["pathwaysDirAccess"] == f"granted to node service account {node_sa}"
    assert train["resolvesFrom"] == "any namespace"
    # a headless head is pinned to no pool; the system pool (e2-standard-16) cannot hold it
    assert plan.summary["workloads"]["pathways/notebook"]["head"]["landsOn"] == ["cpu-np"]


def test_plan_text_shows_each_workloads_pods(plan_of, stack_values):
    from components.plan.render import render_text

    lines = render_text(plan_of(stack_values(workloads=[TRAIN]))).splitlines()
    start = lines.index(
        "  + PathwaysJob pathways/train  workers=1 x ct5lp-hightpu-4t 2x4  deploymentMode=default"
    )
    assert lines[start + 1 : start + 5] == [
        "      image    python:3.12",
        "      command  python train.py",
        "      head     32 CPU / 154.9Gi on cpu-np",
        "      workers  2 pods (2/slice) x 4 chips on v5e",
    ]


# --- refusals -----------------------------------------------------------------------------------


def test_worker_selector_no_node_carries_is_refused_at_plan_time(schema_of, stack_values):
    bad = {**TRAIN, "nodeSelector": {"tpu-pathways/reservation": "someone-elses"}}
    config = schema_of(stack_values(workloads=[bad]))
    (issue,) = _issues(config)
    assert issue.startswith("workloads[0]: workload 'pathways/train':")
    assert "tpu-pathways/reservation=someone-elses matches none of its node labels" in issue
    assert "cloud.google.com/gke-nodepool=v5e-0" in issue  # the labels the pool's nodes have
    with pytest.raises(ConfigError, match="someone-elses"):
        build_stack(config)


def test_reservation_pool_nodes_carry_the_reservation_label(config_of, stack_values):
    pools = [{**stack_values()["tpuPools"][0], "capacity": {"reservation": "mine"}}]
    good = {**TRAIN, "nodeSelector": {"tpu-pathways/reservation": "mine"}}
    assert _issues(config_of(stack_values(tpuPools=pools, workloads=[good]))) == []


def test_oversubscribed_pool_without_kueue_is_refused(schema_of, stack_values):
    values = stack_values(workloads=[TRAIN, NOTEBOOK], addons={"kueue": {"enabled": False}})
    (issue,) = _issues(schema_of(values))
    assert issue.startswith("addons.kueue.enabled: pool 'v5e' has 1 slice(s)")
    assert "workload 'pathways/train' asks for 1" in issue
    assert "workload 'pathways/notebook' asks for 1" in issue


def test_the_same_jobs_with_kueue_are_accepted(config_of, stack_values):
    # Kueue is on by default in a stack that owns its cluster, and admits all-or-nothing.
    config = config_of(stack_values(workloads=[TRAIN, NOTEBOOK]))
    assert config.kueue_enabled
    assert _issues(config) == []


def test_head_that_fits_no_node_is_refused(config_of, stack_values):
    # The parser's head-fit check knows only the stack's CPU pool; the preflight checks the
    # pools it is given, here the owner's CPU pool being smaller than this stack's config says.
    config = config_of(stack_values(workloads=[TRAIN]))
    small = [
        p
        if p.group != "cpu-np"
        else NodePoolModel(
            p.name,
            p.group,
            machine_type("n2-standard-16"),
            p.labels,
            p.taints,
            p.max_nodes,
            0,
            p.identity,
        )
        for p in planned_pools(config)
    ]
    (issue,) = [str(i) for i in preflight(config, small, bucket_grants(config)).issues]
    assert issue.startswith("workloads[0]: workload 'pathways/train': the head pod fits no node")
    assert "pool 'cpu-np': needs 32 CPU" in issue
    assert "n2-standard-16" in issue


def _colocated_spec(template: dict) -> PathwaysJobSpec:
    return PathwaysJobSpec(
        workers=[Worker(type=WorkerType.CT5LP_HIGHTPU_4T, topology="2x4", num_slices=1)],
        controller=Controller(
            deployment_mode=DeploymentMode.COLOCATE_HEAD_WITH_WORKERS,
            main_container_name="main",
            template=template,
        ),
    )


_MAIN = {
    "name": "main",
    "image": "python:3.12",
    "command": ["python", "serve.py"],
    "resources": {"limits": {"cpu": "8", "memory": "32Gi"}},
}


def test_colocated_head_without_the_toleration_is_refused(config_of, stack_values):
    pools = planned_pools(config_of(stack_values()))
    spec = _colocated_spec({"spec": {"containers": [_MAIN]}})
    issue = _refused_both_ways(spec, pools, r"google\.com/tpu=present:NoSchedule")
    assert issue.startswith("spec: PathwaysJob 'pathways/serve': the head pod fits no node")
    assert "does not tolerate the taint google.com/tpu=present:NoSchedule" in issue


def _refused_both_ways(spec: PathwaysJobSpec, pools: list[NodePoolModel], match: str) -> str:
    """The preflight's one issue with the job ``pathways/serve``, after checking that the
    Python API refuses the same resource (built with the pools) with it before registering."""
    (issue,) = [str(i) for i in preflight_job("serve", "pathways", spec, pools).issues]
    with pytest.raises(ConfigError, match=match):
        PathwaysJob(
            "serve",
            PathwaysJobArgs(
                name="serve",
                namespace="pathways",
                spec=spec,
                provider=None,  # never reached: refused before registration
                node_pools=pools,
            ),
        )
    return issue


def test_colocated_head_with_the_toleration_fits_a_tpu_host(config_of, stack_values):
    pools = planned_pools(config_of(stack_values()))
    toleration = {"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"}
    spec = _colocated_spec({"spec": {"containers": [_MAIN], "tolerations": [toleration]}})
    report = preflight_job("serve", "pathways", spec, pools)
    assert report.issues == []
    assert report.jobs["pathways/serve"]["head"]["landsOn"] == ["v5e"]


def test_inference_workloads_carry_the_toleration(config_of, stack_values):
    infer = {**TRAIN, "name": "infer", "mode": "inference"}
    config = config_of(stack_values(workloads=[infer], addons={"kueue": {"enabled": False}}))
    assert _issues(config) == []


def test_pods_acting_as_an_ungranted_node_identity_are_refused(config_of, stack_values):
    config = config_of(stack_values(workloads=[TRAIN]))
    (issue,) = [str(i) for i in preflight(config, planned_pools(config), grants=()).issues]
    assert "act as the node service account pathways-dev-nodes@" in issue
    assert "no object access to gs://tpu-pathways-dev-pathways-dev-pathways" in issue


def test_too_few_slices_for_a_job_is_refused(config_of, stack_values):
    config = config_of(stack_values(workloads=[TRAIN]))
    # an owner's pool list in which this pool's only slice is missing: nothing to land on
    pools = [p for p in planned_pools(config) if p.group != "v5e"]
    (issue,) = [str(i) for i in preflight(config, pools, bucket_grants(config)).issues]
    assert "pool 'v5e' is not among the node pools checked" in issue


def test_team_stack_identity_on_the_shared_pools_is_reported_unverified():
    """A team stack on its owner's shared pools (both sides declared isolation: shared): its
    pods act as the owner's node account, whose grants this stack cannot see."""
    from components.resolve.checks import parse_stack_config
    from components.resolve.loader import load_stack
    from components.resolve.stack_files import STACKS_DIR

    owner = load_stack("team-research", STACKS_DIR).shared_cluster
    owner = owner.model_copy(update={"shared_pool_teams": {"research": True}})
    values = {
        "owner": "research-v5p",
        "teams": [{"name": "vision", "isolation": "shared"}],
        "workloads": [{"name": "nb", "team": "vision", "pool": "v5p", "mode": "headless"}],
    }
    config = parse_stack_config(values, owner=owner)
    report = preflight(config, planned_pools(config), bucket_grants(config))
    assert report.issues == []
    access = report.jobs["vision/nb"]["pathwaysDirAccess"]
    assert access.startswith("unverified")


def test_a_dedicated_team_stacks_pods_act_as_its_own_account():
    from components.resolve.loader import load_stack
    from tests.examples import EXAMPLES_DIR as STACKS_DIR

    config = load_stack("team-research", STACKS_DIR)
    report = preflight(config, planned_pools(config), bucket_grants(config))
    assert report.issues == []
    assert report.jobs["nlp/nlp-notebook"]["pathwaysDirAccess"] == (
        "granted to node service account "
        "pathways-research-nlp-nodes@tpu-pathways-research.iam.gserviceaccount.com"
    )


def test_preflight_runs_in_every_stack(config_error, schema_of):
    # The parse runs it with every other check; build_stack runs it again before registering
    # anything, for a config that did not come through the parse.
    values = {
        "gcp": {"project": "tpu-pathways-dev", "region": "us-west4", "zone": "us-west4-a"},
        "cluster": {"name": "c"},
        "tpuPools": [{"name": "p", "accelerator": "v5litepod-8"}],
        "addons": {"kueue": {"enabled": False}},
        "workloads": [
            {**TRAIN, "pool": "p"},
            {**NOTEBOOK, "pool": "p"},
        ],
    }
    (issue,) = config_error(values).issues
    assert issue.key == "addons.kueue.enabled"
    assert issue.message.startswith("pool 'p' has 1 slice(s) but its jobs ask for 2 in all")
    with pytest.raises(ConfigError) as raised:
        build_stack(schema_of(values))
    assert raised.value.source == "preflight"
    assert raised.value.issues == [issue]


def test_a_selector_on_one_slices_node_pool_name_fits_that_slice_only(config_of, stack_values):
    """One verdict serves a TPU pool's slices, unless the pod selects a node pool by name."""
    from dataclasses import replace

    from components.labels import NODE_POOL_LABEL
    from components.pathways.scheduler_model import pools_that_fit

    config = config_of(
        stack_values(tpuPools=[{"name": "v5e", "accelerator": "v5litepod-8", "slices": 3}])
    )
    pools = planned_pools(config)
    spec = PathwaysJobSpec(
        workers=[Worker(type=WorkerType.CT5LP_HIGHTPU_4T, topology="2x4", num_slices=1)],
        controller=Controller(deployment_mode=DeploymentMode.DEFAULT),
    )
    workers = expand("j", "ns", spec).workers
    assert [p.name for p in pools_that_fit(workers, pools)] == ["v5e-0", "v5e-1", "v5e-2"]
    pinned = replace(workers, node_selector={**workers.node_selector, NODE_POOL_LABEL: "v5e-1"})
    assert [p.name for p in pools_that_fit(pinned, pools)] == ["v5e-1"]


# --- colocated (inference) jobs: pod affinity per node pool, one node pool each ----------------

INFER = {**TRAIN, "name": "infer", "mode": "inference"}
NODE_POOL = "cloud.google.com/gke-nodepool"


def _colocated_values(stack_values, workloads, slices=3):
    """Kueue off (it cannot queue a colocated head), one v5e 2x4 pool of ``slices`` slices."""
    return stack_values(
        tpuPools=[{"name": "v5e", "accelerator": "v5litepod-8", "slices": slices}],
        addons={"kueue": {"enabled": False}},
        workloads=workloads,
    )


def test_colocated_workers_carry_the_controllers_pod_affinity_per_node_pool():
    from components.pathways.controller_model import AffinityTerm, PodSet

    toleration = {"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"}
    colocated = expand("j", "ns", _colocated_spec({"spec": {"tolerations": [toleration]}}))
    # MakePodAffinityRules (v0.1.4): affinity to its own JobSet, anti-affinity to other
    # JobSets' Job pods, both per node pool; the head gets neither.
    assert colocated.workers.affinity == (
        AffinityTerm(PodSet.OWN_JOBSET, "cloud.google.com/gke-nodepool"),
    )
    assert colocated.workers.anti_affinity == (
        AffinityTerm(PodSet.OTHER_JOBSETS, "cloud.google.com/gke-nodepool"),
    )
    assert (colocated.head.affinity, colocated.head.anti_affinity) == ((), ())
    default = expand(
        "j",
        "ns",
        PathwaysJobSpec(
            workers=[Worker(type=WorkerType.CT5LP_HIGHTPU_4T, topology="2x4", num_slices=1)],
            controller=Controller(deployment_mode=DeploymentMode.DEFAULT),
        ),
    )
    assert (default.workers.affinity, default.workers.anti_affinity) == ((), ())


def test_affinity_to_its_jobset_with_exclusive_placement_leaves_room_for_one_slice():
    from components.pathways.scheduler_model import schedulable_groups

    def job(mode: DeploymentMode):
        spec = PathwaysJobSpec(
            workers=[Worker(type=WorkerType.CT5LP_HIGHTPU_4T, topology="2x4", num_slices=3)],
            controller=Controller(deployment_mode=mode),
        )
        return expand("j", "ns", spec).workers

    assert schedulable_groups(job(DeploymentMode.COLOCATE_HEAD_WITH_WORKERS)) == 1
    assert schedulable_groups(job(DeploymentMode.DEFAULT)) == 3


def test_inference_with_several_slices_is_refused_naming_the_keys(schema_of, stack_values):
    config = schema_of(_colocated_values(stack_values, [{**INFER, "slices": 2}]))
    (issue,) = _issues(config)
    assert issue.startswith(
        "workloads[0].slices: workload 'pathways/infer': slices 2 with mode inference never "
        "schedules:"
    )
    assert "the other 1 stay Pending" in issue
    assert issue.endswith(
        "set slices: 1, or use mode: training (head on CPU nodes) for more slices"
    )
    with pytest.raises(ConfigError, match="never schedules"):
        build_stack(config)


def test_python_api_refuses_a_colocated_job_of_several_slices(config_of, stack_values):
    pools = planned_pools(config_of(_colocated_values(stack_values, [])))
    toleration = {"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"}
    template = {"spec": {"containers": [_MAIN], "tolerations": [toleration]}}
    spec = _colocated_spec(template).model_copy(
        update={"workers": [Worker(type=WorkerType.CT5LP_HIGHTPU_4T, topology="2x4", num_slices=2)]}
    )
    issue = _refused_both_ways(spec, pools, r"numSlices 2 with controller\.deploymentMode")
    assert issue.startswith(
        "spec.workers[0].numSlices: PathwaysJob 'pathways/serve': workers[0].numSlices 2 with "
        "controller.deploymentMode colocate_head_with_workers never schedules:"
    )
    assert "use controller.deploymentMode: default (head on CPU nodes)" in issue


def test_colocated_job_and_its_neighbours_are_pinned_to_node_pools_of_their_own(
    plan_of, stack_values
):
    notebook = {**NOTEBOOK, "name": "nb"}
    plan = plan_of(_colocated_values(stack_values, [TRAIN, INFER, notebook]))
    jobs = plan.summary["workloads"]
    # the colocated job first, then the others in config order
    assert jobs["pathways/infer"]["nodePool"] == "v5e-0"
    assert jobs["pathways/train"]["nodePool"] == "v5e-1"
    assert jobs["pathways/nb"]["nodePool"] == "v5e-2"
    selector = {
        "cloud.google.com/gke-nodepool": "v5e-0",
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
        "cloud.google.com/gke-tpu-topology": "2x4",
    }
    assert jobs["pathways/infer"]["head"]["nodeSelector"] == selector
    assert jobs["pathways/infer"]["workers"]["nodeSelector"] == selector
    assert jobs["pathways/train"]["workers"]["nodeSelector"][NODE_POOL] == "v5e-1"
    # a training head stays on the CPU pool
    assert jobs["pathways/train"]["head"]["nodeSelector"] == {NODE_POOL: "cpu-np"}


def test_jobs_in_pools_without_a_colocated_job_are_not_pinned(plan_of, stack_values):
    plan = plan_of(_colocated_values(stack_values, [TRAIN, NOTEBOOK]))
    assert sorted(plan.summary["workloads"]) == ["pathways/notebook", "pathways/train"]
    for job in plan.summary["workloads"].values():
        assert "nodePool" not in job
        assert NODE_POOL not in job["workers"]["nodeSelector"]


def test_a_node_pool_the_user_selects_is_kept_and_not_handed_out(config_of, stack_values):
    from components.resolve.workload_specs import node_pool_pins

    infer = {**INFER, "nodeSelector": {NODE_POOL: "v5e-0"}}
    config = config_of(_colocated_values(stack_values, [infer, TRAIN], slices=2))
    assert node_pool_pins(config) == {"pathways/train": "v5e-1"}
    assert _issues(config) == []


def test_a_job_of_several_slices_beside_a_colocated_job_is_refused(schema_of, stack_values):
    config = schema_of(_colocated_values(stack_values, [INFER, {**TRAIN, "slices": 2}]))
    (issue,) = _issues(config)
    assert issue.startswith(
        "workloads[1]: workload 'pathways/infer' (colocated: it needs its node pool to itself) "
        "and workload 'pathways/train' could both land on node pool 'v5e-0':"
    )
    assert "Give one of them another TPU pool, or add slices to the pool" in issue
    with pytest.raises(ConfigError, match="could both land on node pool 'v5e-0'"):
        build_stack(config)


def test_two_colocated_jobs_on_one_node_pool_are_refused_once(schema_of, stack_values):
    pinned = {NODE_POOL: "v5e-1"}
    first = {**INFER, "name": "infer-a", "nodeSelector": pinned}
    second = {**INFER, "name": "infer-b", "nodeSelector": pinned}
    (issue,) = _issues(schema_of(_colocated_values(stack_values, [first, second])))
    assert issue.startswith(
        "workloads[1]: workload 'pathways/infer-a' (colocated: it needs its node pool to itself) "
        "and workload 'pathways/infer-b' could both land on node pool 'v5e-1':"
    )


def test_serving_example_plans_with_its_jobs_on_separate_node_pools(example_plan):
    from components.plan.render import render_text

    plan = example_plan("serving-v6e")
    jobs = plan.summary["workloads"]
    assert jobs["serving/batch-infer"]["nodePool"] == "v6e-0"
    # shared services run in `default`, where pathwaysutils' connect() looks for them
    assert jobs["default/shared-v6e"]["nodePool"] == "v6e-1"
    lines = render_text(plan).splitlines()
    start = lines.index(
        "  + PathwaysJob serving/batch-infer  workers=1 x ct6e-standard-4t 2x2  "
        "deploymentMode=colocate_head_with_workers"
    )
    assert "      pinned   to node pool v6e-0" in lines[start : start + 14]
