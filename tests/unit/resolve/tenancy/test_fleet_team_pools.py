"""A fleet and its workers' teams: pools dedicated to a team (its own queue on the manager:
test_fleet_dedicated), a dedicated team's heads on its own CPU pool, and a fleet team's group
against the worker's for the same namespace. Worker stacks are written here (a dev worker with
teams alpha and beta); expected values are literals."""

from __future__ import annotations

import copy

from components.plan.engine import plan_file
from components.plan.render import manifest
from components.resolve.loader import reference_reader
from components.resolve.tenancy.fleet import load_fleet
from tests.fleet_stacks import fleet, kueue_manifests, refusal, worker, write
from tests.object_schemas import custom_resource_errors

FLEET = fleet(
    ["rvwb"],
    teams=[{"name": "alpha"}],
    workloads=[{"name": "a1", "team": "alpha", "pool": "v5e-alpha", "mode": "headless"}],
)


def jobsets(plan) -> list[dict]:
    return [
        m
        for r in plan.resources
        if r.is_kubernetes_object and (m := manifest(r))["kind"] == "JobSet"
    ]


def test_a_workload_on_a_dedicated_shape_no_shared_pool_has_is_admitted_on_its_teams_queue(
    tmp_path,
):
    # Before, refused: the manager counted shared pools only and had no v5e 4x4 quota. Now
    # alpha's queue holds its own pool (test_fleet_dedicated has the whole queue).
    pools = [
        {"name": "v5e", "generation": "v5e", "topology": "2x4", "slices": 1},
        {"name": "v5e-alpha", "generation": "v5e", "topology": "4x4", "slices": 1, "team": "alpha"},
    ]
    write(tmp_path, "rvwb", worker("rvwb", tpuPools=pools))
    write(tmp_path, "fleet", FLEET)
    loaded = load_fleet("fleet", reference_reader(tmp_path), tmp_path)
    (alpha,) = loaded.nominations.dedicated["mk-rvwb"]
    assert (alpha.name, dict(alpha.chips)) == ("mk-rvwb.alpha", {"v5litepod-16": 16})


def test_a_dedicated_teams_fleet_head_runs_on_its_own_cpu_pool_as_on_the_worker(tmp_path):
    write(tmp_path, "rvwb", worker("rvwb"))
    write(tmp_path, "fleet", FLEET)
    (fleet_jobset,) = jobsets(plan_file("fleet", tmp_path))
    head = fleet_jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert fleet_jobset["spec"]["replicatedJobs"][0]["name"] == "pathways-head"
    # On rvwb, alpha's LocalQueue leads to its ClusterQueue, whose only CPU flavor is alpha-cpu.
    assert head["nodeSelector"] == {"cloud.google.com/gke-nodepool": "alpha-cpu"}
    # The same workload in the worker's own stack (another stacks dir: one cluster, one stack).
    own = tmp_path / "own"
    own.mkdir()
    workload = {**FLEET["tpu-pathways:workloads"][0]}
    write(own, "rvwb", worker("rvwb", workloadBackend="jobset", workloads=[workload]))
    (worker_jobset,) = jobsets(plan_file("rvwb", own))
    assert fleet_jobset["spec"].pop("managedBy") == "kueue.x-k8s.io/multikueue"
    assert fleet_jobset == worker_jobset


def test_workers_that_would_run_a_dedicated_teams_head_on_different_pools_are_refused(tmp_path):
    write(tmp_path, "rvwb", worker("rvwb"))
    # rvwc: rvwb in another project, whose CPU pool of alpha's has another name (their shared
    # CPU pools are alike: where a shared pool's heads would run is no difference).
    alpha_heads = {"team": "alpha", "name": "alpha-heads", "machineType": "n2-standard-64"}
    write(tmp_path, "rvwc", worker("rvwc", teamCpuPools=[alpha_heads]))
    config = copy.deepcopy(FLEET)
    config["tpu-pathways:fleet"]["workers"] = ["rvwb", "rvwc"]
    config["tpu-pathways:workloads"][0]["pathwaysDir"] = "gs://fleet-shared/a1"
    write(tmp_path, "fleet", config)
    assert refusal(tmp_path) == [
        (
            "workloads[0].workers",
            "the workers it may go to (rvwb, rvwc) would need different JobSets (CPU pool or "
            "node pool names differ), and MultiKueue may dispatch it to any of them; name one "
            "of them in workers",
        )
    ]


def test_a_fleet_teams_group_must_be_the_workers_group_for_that_namespace(tmp_path):
    teams = [{"name": "alpha", "group": "ml-research@example.com"}, {"name": "beta"}]
    security = {"securityGroup": "gke-security-groups@example.com"}
    write(
        tmp_path,
        "rvwb",
        worker("rvwb", teams=teams, cluster=worker("rvwb")["tpu-pathways:cluster"] | security),
    )
    config = copy.deepcopy(FLEET)
    config["tpu-pathways:fleet"]["manager"] |= security
    config["tpu-pathways:teams"] = [
        {"name": "alpha", "group": "interns@example.com"},
        {"name": "beta", "group": "beta@example.com"},
    ]
    write(tmp_path, "fleet", config)
    assert refusal(tmp_path) == [
        (
            "teams[0].group",
            "interns@example.com would queue JobSets into namespace 'alpha' on worker 'rvwb', "
            "which binds ml-research@example.com there (its teams[].group): the fleet's group "
            "must be the worker's, or another group would run pods as that team; set the same "
            "in both, or leave it out here",
        ),
        (
            "teams[1].group",
            "beta@example.com would queue JobSets into namespace 'beta' on worker 'rvwb', which "
            "binds no group there (its teams[].group): the fleet's group must be the worker's, "
            "or another group would run pods as that team; set the same in both, or leave it "
            "out here",
        ),
    ]
    # The worker's own group, or none on the manager (it binds no one there), is accepted.
    config["tpu-pathways:teams"] = [{"name": "alpha", "group": "ml-research@example.com"}]
    config["tpu-pathways:teams"].append({"name": "beta"})
    write(tmp_path, "fleet", config)
    fleet_stack = load_fleet("fleet", reference_reader(tmp_path), tmp_path)
    assert [t.group for t in fleet_stack.config.teams] == ["ml-research@example.com", None]


def test_a_fleet_with_a_dedicated_teams_pools_renders_kueue_objects_its_crds_admit(tmp_path):
    """The fleet the checks accept (a shared v5e pool beside alpha's): every Kueue object of
    the manager and the workers passes Kueue v0.17.1's CRD schemas (a set's queue without a
    shared pool has no TPU resource group at all: test_fleet_dedicated)."""
    write(tmp_path, "rvwb", worker("rvwb"))
    write(tmp_path, "fleet", FLEET)
    kueue = kueue_manifests(plan_file("fleet", tmp_path))
    assert {m["kind"] for m in kueue} >= {"ClusterQueue", "MultiKueueConfig", "AdmissionCheck"}
    assert {m["metadata"]["name"]: custom_resource_errors(m) for m in kueue} == {
        m["metadata"]["name"]: [] for m in kueue
    }
