"""A fleet whose workers give teams a guaranteed share (``addons.kueue.teamQuotas``): each team
gets a ClusterQueue of its own on the manager holding its share summed over the set's workers,
in a cohort named after the set, so one team's JobSets cannot hold the whole set's quota on the
manager while the other's guaranteed chips sit idle on the workers. Worker stacks are written
here (two workers, one v5e 2x4 pool of 2 slices each: 16 chips); expected values are
literals."""

from __future__ import annotations

from pathlib import Path

from components.plan.engine import plan_file
from tests.fleet_stacks import V5E, fleet, kueue_manifests, kueue_objects, worker, write
from tests.object_schemas import custom_resource_errors

QUOTAS = [
    {"team": "alpha", "chips": {"v5litepod-8": 8}, "borrowingLimit": 0},
    {"team": "beta", "chips": {"v5litepod-8": 8}, "borrowingLimit": 0},
]


def quota_worker(name: str, quotas: list[dict]) -> dict:
    """Worker ``name``: one shared v5e 2x4 pool of 2 slices (16 chips), teams alpha and beta
    with ``quotas`` (``addons.kueue.teamQuotas``), no dedicated pool."""
    kueue = {"enabled": True} | ({"teamQuotas": quotas} if quotas else {})
    pool = {"name": "v5e", "generation": "v5e", "topology": "2x4", "slices": 2}
    return worker(name, tpuPools=[pool], teamCpuPools=[], addons={"kueue": kueue})


FLEET = fleet(["rvwa", "rvwb"])


def fleet_plan(stacks: Path, rvwa: list[dict], rvwb: list[dict]):
    write(stacks, "rvwa", quota_worker("rvwa", rvwa))
    write(stacks, "rvwb", quota_worker("rvwb", rvwb))
    write(stacks, "fleet", FLEET)
    return plan_file("fleet", stacks)


def selector(operator: str, *values: str) -> dict:
    expression = {"key": "kubernetes.io/metadata.name", "operator": operator}
    return {"matchExpressions": [expression | ({"values": list(values)} if values else {})]}


def tpu(nominal: int, **limit: int) -> dict:
    resource = {"name": "google.com/tpu", "nominalQuota": nominal}
    if "borrowing" in limit:
        resource["borrowingLimit"] = limit["borrowing"]
    return {
        "coveredResources": ["google.com/tpu"],
        "flavors": [{"name": V5E, "resources": [resource]}],
    }


def heads(cpu: str, memory: str) -> dict:
    return {
        "coveredResources": ["cpu", "memory"],
        "flavors": [
            {
                "name": "cpu-heads",
                "resources": [
                    {"name": "cpu", "nominalQuota": cpu},
                    {"name": "memory", "nominalQuota": memory},
                ],
            }
        ],
    }


def queue(namespaces: dict, groups: list[dict], cohort: bool = True) -> dict:
    spec: dict = {"namespaceSelector": namespaces, "queueingStrategy": "BestEffortFIFO"}
    if cohort:
        spec["cohortName"] = "mk-rvwa-rvwb"
    spec["preemption"] = {
        "reclaimWithinCohort": "Any" if cohort else "Never",
        "withinClusterQueue": "LowerPriority",
    }
    spec["resourceGroups"] = groups
    spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": "mk-rvwa-rvwb"}]}
    return spec


# Two workers' CPU pools: 2 x 3 n2-standard-64 nodes, allocatable.
SET_CPU = heads("382620m", "1572101978850")


def test_each_team_gets_its_share_of_the_set_in_one_cohort(tmp_path):
    # The reviewer's scenario: 8 chips for alpha and for beta on each worker, no borrowing.
    plan = fleet_plan(tmp_path, QUOTAS, QUOTAS)
    specs = {name: m["spec"] for name, m in kueue_objects(plan, "ClusterQueue").items()}
    assert specs == {
        "mk-rvwa-rvwb.alpha": queue(
            selector("In", "alpha"), [tpu(16, borrowing=0), heads("0", "0")]
        ),
        "mk-rvwa-rvwb.beta": queue(selector("In", "beta"), [tpu(16, borrowing=0), heads("0", "0")]),
        # The rest of the set's 32 chips (none) and its CPU; no team queues on it.
        "mk-rvwa-rvwb": queue(selector("DoesNotExist"), [tpu(0), SET_CPU]),
    }
    local = {ns: m["spec"]["clusterQueue"] for ns, m in kueue_objects(plan, "LocalQueue").items()}
    assert local == {"alpha": "mk-rvwa-rvwb.alpha", "beta": "mk-rvwa-rvwb.beta"}
    assert plan.outputs["fleet"]["worker_sets"]["mk-rvwa-rvwb"]["team_queues"] == {
        "alpha": {"cluster_queue": "mk-rvwa-rvwb.alpha", "tpu_chips": {V5E: 16}},
        "beta": {"cluster_queue": "mk-rvwa-rvwb.beta", "tpu_chips": {V5E: 16}},
    }


def test_a_team_without_a_share_queues_on_the_sets_queue_which_lends_the_rest(tmp_path):
    # alpha has 8 chips on rvwa only (on rvwb it shares the default queue: it may borrow);
    # beta has no share anywhere.
    plan = fleet_plan(tmp_path, [{"team": "alpha", "chips": {"v5litepod-8": 8}}], [])
    specs = {name: m["spec"] for name, m in kueue_objects(plan, "ClusterQueue").items()}
    assert specs == {
        "mk-rvwa-rvwb.alpha": queue(selector("In", "alpha"), [tpu(8), heads("0", "0")]),
        "mk-rvwa-rvwb": queue(selector("In", "beta"), [tpu(24), SET_CPU]),
    }
    local = {ns: m["spec"]["clusterQueue"] for ns, m in kueue_objects(plan, "LocalQueue").items()}
    assert local == {"alpha": "mk-rvwa-rvwb.alpha", "beta": "mk-rvwa-rvwb"}


def test_without_shares_the_teams_share_the_sets_queue_as_on_the_workers(tmp_path):
    plan = fleet_plan(tmp_path, [], [])
    specs = {name: m["spec"] for name, m in kueue_objects(plan, "ClusterQueue").items()}
    assert specs == {
        "mk-rvwa-rvwb": queue(selector("In", "alpha", "beta"), [tpu(32), SET_CPU], cohort=False)
    }
    assert "team_queues" not in plan.outputs["fleet"]["worker_sets"]["mk-rvwa-rvwb"]


def test_the_team_queues_pass_kueue_crd_schemas(tmp_path):
    plan = fleet_plan(tmp_path, QUOTAS, [QUOTAS[0]])
    kueue = kueue_manifests(plan)
    names = {m["metadata"]["name"] for m in kueue if m["kind"] == "ClusterQueue"}
    assert names == {"mk-rvwa-rvwb", "mk-rvwa-rvwb.alpha", "mk-rvwa-rvwb.beta"}
    assert {(m["kind"], m["metadata"]["name"]): custom_resource_errors(m) for m in kueue} == {
        (m["kind"], m["metadata"]["name"]): [] for m in kueue
    }
