"""A fleet whose workers dedicate pools to a team: the team's queue of its worker set on the
manager holds exactly those pools (their chips summed over the set's workers, never lent or
borrowed), on flavors with the workers' node labels and toleration, and no other team's queue
holds them; what still cannot work is refused. Worker stacks are written here (two workers, each
with a shared v5e 2x4 slice, a v5e 2x4 slice dedicated to alpha and alpha's CPU pool); expected
values are literals."""

from __future__ import annotations

import copy

import pytest

from components.plan.engine import plan_file
from tests.fleet_stacks import (
    DEDICATED_FLEET,
    V5E,
    kueue_manifests,
    kueue_objects,
    refusal,
    worker,
    write,
    write_all,
)
from tests.object_schemas import custom_resource_errors

V5E_LABELS = {
    "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
    "cloud.google.com/gke-tpu-topology": "2x4",
    "node.kubernetes.io/instance-type": "ct5lp-hightpu-4t",
}
ALPHA_TOLERATION = [{"key": "tpu-pathways/dedicated-to", "operator": "Equal", "value": "alpha"}]
# n2-standard-64 allocatable (63.77 CPU, 262 GB) x alpha-cpu's 4 nodes, on each worker.
ALPHA_CPU, ALPHA_MEMORY = "255080m", "1048067985900"
SHARED_CPU, SHARED_MEMORY = "191310m", "786050989425"


def kept(name: str, nominal) -> dict:
    return {"borrowingLimit": 0, "lendingLimit": 0, "name": name, "nominalQuota": nominal}


def selector(*teams: str) -> dict:
    if not teams:
        expression = {"key": "kubernetes.io/metadata.name", "operator": "DoesNotExist"}
    else:
        expression = {"key": "kubernetes.io/metadata.name", "operator": "In", "values": list(teams)}
    return {"matchExpressions": [expression]}


def alpha_queue(set_name: str, chips: int, cpu: str, memory: str) -> dict:
    return {
        "admissionChecksStrategy": {"admissionChecks": [{"name": set_name}]},
        "cohortName": set_name,
        "namespaceSelector": selector("alpha"),
        "preemption": {"reclaimWithinCohort": "Never", "withinClusterQueue": "LowerPriority"},
        "queueingStrategy": "BestEffortFIFO",
        "resourceGroups": [
            {
                "coveredResources": ["google.com/tpu"],
                "flavors": [{"name": f"{V5E}.alpha", "resources": [kept("google.com/tpu", chips)]}],
            },
            {
                "coveredResources": ["cpu", "memory"],
                "flavors": [
                    {
                        "name": "cpu-alpha-cpu.alpha",
                        "resources": [kept("cpu", cpu), kept("memory", memory)],
                    }
                ],
            },
        ],
    }


def heads(cpu: str, memory: str) -> dict:
    resources = [{"name": "cpu", "nominalQuota": cpu}, {"name": "memory", "nominalQuota": memory}]
    return {
        "coveredResources": ["cpu", "memory"],
        "flavors": [{"name": "cpu-heads", "resources": resources}],
    }


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory):
    stacks = tmp_path_factory.mktemp("dedicated")
    write_all(stacks)
    return stacks, plan_file("fleet", stacks), plan_file("rvwb", stacks)


def test_a_dedicated_teams_manager_queue_holds_its_pools_on_every_worker_of_the_set(two_workers):
    _, fleet, _ = two_workers
    queues = kueue_objects(fleet, "ClusterQueue")
    # alpha's: its two dedicated slices (8 chips each) and its two CPU pools, nothing lent or
    # borrowed; in the set's cohort only as Kueue allows the limits there.
    assert queues["mk-rvwa-rvwb.alpha"]["spec"] == alpha_queue(
        "mk-rvwa-rvwb", 16, "510160m", "2096135971800"
    )
    # The set's own: the two shared slices only, for beta alone.
    assert queues["mk-rvwa-rvwb"]["spec"] == {
        "admissionChecksStrategy": {"admissionChecks": [{"name": "mk-rvwa-rvwb"}]},
        "cohortName": "mk-rvwa-rvwb",
        "namespaceSelector": selector("beta"),
        "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
        "queueingStrategy": "BestEffortFIFO",
        "resourceGroups": [
            {
                "coveredResources": ["google.com/tpu"],
                "flavors": [
                    {"name": V5E, "resources": [{"name": "google.com/tpu", "nominalQuota": 16}]}
                ],
            },
            heads("382620m", "1572101978850"),
        ],
    }
    assert set(queues) == {"mk-rvwa-rvwb", "mk-rvwa-rvwb.alpha"}
    local = kueue_objects(fleet, "LocalQueue")
    assert {ns: q["spec"]["clusterQueue"] for ns, q in local.items()} == {
        "alpha": "mk-rvwa-rvwb.alpha",
        "beta": "mk-rvwa-rvwb",
    }
    assert fleet.outputs["fleet"]["worker_sets"]["mk-rvwa-rvwb"]["team_queues"] == {
        "alpha": {
            "cluster_queue": "mk-rvwa-rvwb.alpha",
            "dedicated": True,
            "tpu_chips": {f"{V5E}.alpha": 16},
        }
    }


def test_the_managers_dedicated_flavors_are_the_workers_and_its_quota_their_sum(two_workers):
    _, fleet, rvwb = two_workers
    flavors = {name: f["spec"] for name, f in kueue_objects(fleet, "ResourceFlavor").items()}
    assert flavors == {
        "cpu-heads": {},
        V5E: {"nodeLabels": V5E_LABELS},
        f"{V5E}.alpha": {
            "nodeLabels": {**V5E_LABELS, "tpu-pathways/dedicated-to": "alpha"},
            "tolerations": ALPHA_TOLERATION,
        },
        "cpu-alpha-cpu.alpha": {
            "nodeLabels": {
                "cloud.google.com/gke-nodepool": "alpha-cpu",
                "tpu-pathways/dedicated-to": "alpha",
            },
            "tolerations": ALPHA_TOLERATION,
        },
    }
    # The same node labels and toleration as the worker's own flavors for alpha ...
    own = {name: f["spec"] for name, f in kueue_objects(rvwb, "ResourceFlavor").items()}
    assert own[f"{V5E}-alpha"] == flavors[f"{V5E}.alpha"]
    assert own["cpu-alpha-cpu"] == flavors["cpu-alpha-cpu.alpha"]
    # ... and twice the quota of the worker's queue for alpha (two such workers).
    groups = kueue_objects(rvwb, "ClusterQueue")["alpha-cluster-queue"]["spec"]["resourceGroups"]
    assert [r["nominalQuota"] for g in groups for f in g["flavors"] for r in f["resources"]] == [
        8,
        ALPHA_CPU,
        ALPHA_MEMORY,
    ]


def test_the_dedicated_queue_and_its_flavors_pass_kueues_crd_schemas_and_webhooks(two_workers):
    """The manager's and a worker's Kueue objects, as the API server admits them: the CRD
    schemas, their CEL rules and Kueue's webhooks (tests/object_schemas.py)."""
    _, fleet, rvwb = two_workers
    for plan in (fleet, rvwb):
        kueue = kueue_manifests(plan)
        assert {m["kind"] for m in kueue} >= {"ClusterQueue", "ResourceFlavor", "LocalQueue"}
        assert {(m["kind"], m["metadata"]["name"]): custom_resource_errors(m) for m in kueue} == {
            (m["kind"], m["metadata"]["name"]): [] for m in kueue
        }


def _no_cohort(spec: dict) -> None:
    del spec["cohortName"]


def _no_cohort_nor_borrowing_limit(spec: dict) -> None:
    del spec["cohortName"]
    for group in spec["resourceGroups"]:
        for flavor in group["flavors"]:
            for resource in flavor["resources"]:
                del resource["borrowingLimit"]


def _cpu_only(spec: dict) -> None:
    spec["resourceGroups"][1]["flavors"][0]["resources"].pop()


def _memory_first(spec: dict) -> None:
    spec["resourceGroups"][1]["flavors"][0]["resources"].reverse()


def _tpu_flavor_twice(spec: dict) -> None:
    spec["resourceGroups"][1]["flavors"][0]["name"] = f"{V5E}.alpha"


CEL = "(CEL rule: "
WEBHOOK = "(kueue v0.17.1 pkg/webhooks/clusterqueue_webhook.go "


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        pytest.param(
            _no_cohort,
            [
                "spec: borrowingLimit must be nil when cohort is empty "
                + CEL
                + "!has(self.cohortName) && has(self.resourceGroups) ? self.resourceGroups.all(rg, "
                "rg.flavors.all(f, f.resources.all(r, !has(r.borrowingLimit)))) : true)"
            ],
            id="no-cohort",
        ),
        pytest.param(
            _no_cohort_nor_borrowing_limit,
            [
                f"spec.resourceGroups[{g}].flavors[0].resources[{r}].lendingLimit: Invalid value: "
                f"0: must be nil when cohort is empty {WEBHOOK}validateLimit)"
                for g, r in ((0, 0), (1, 0), (1, 1))
            ],
            id="lending-limit-without-cohort",
        ),
        pytest.param(
            _cpu_only,
            [
                "spec.resourceGroups[1]: flavors must have the same number of resources as the "
                "coveredResources "
                + CEL
                + "self.flavors.all(x, size(x.resources) == size(self.coveredResources)))"
            ],
            id="fewer-resources-than-covered",
        ),
        pytest.param(
            _memory_first,
            [
                f"spec.resourceGroups[1].flavors[0].resources[{i}].name: Invalid value: "
                f"'{name}': must match the name in coveredResources {WEBHOOK}validateFlavorQuotas)"
                for i, name in enumerate(["memory", "cpu"])
            ],
            id="resources-not-in-covered-order",
        ),
        pytest.param(
            _tpu_flavor_twice,
            [
                f"spec.resourceGroups[1].flavors[0].name: Invalid value: '{V5E}.alpha': Duplicate "
                "value: a flavor is in one resource group of a ClusterQueue only "
                f"{WEBHOOK}validateResourceGroups)"
            ],
            id="flavor-in-two-groups",
        ),
    ],
)
def test_a_dedicated_queue_kueue_would_refuse_is_reported_naming_the_rule(
    two_workers, change, expected
):
    _, fleet, _ = two_workers
    queue = copy.deepcopy(kueue_objects(fleet, "ClusterQueue")["mk-rvwa-rvwb.alpha"])
    assert custom_resource_errors(queue) == []
    change(queue["spec"])
    assert custom_resource_errors(queue) == expected


def test_a_set_whose_tpu_pools_are_all_dedicated_is_accepted_when_each_team_has_its_own(tmp_path):
    # Before, refused: the set's queue would have had no TPU flavor and alpha no quota.
    pools = [{"name": "v5e", "generation": "v5e", "topology": "2x4", "slices": 2, "team": "alpha"}]
    fleet = copy.deepcopy(DEDICATED_FLEET)
    fleet["tpu-pathways:fleet"]["workers"] = ["rvwb"]
    fleet["tpu-pathways:teams"] = [{"name": "alpha"}]
    fleet["tpu-pathways:workloads"][0] |= {"pool": "v5e"}
    del fleet["tpu-pathways:workloads"][0]["pathwaysDir"]
    write_all(tmp_path, fleet, rvwb=worker("rvwb", tpuPools=pools))
    plan = plan_file("fleet", tmp_path)
    queues = {name: q["spec"] for name, q in kueue_objects(plan, "ClusterQueue").items()}
    assert queues["mk-rvwb.alpha"] == alpha_queue("mk-rvwb", 16, ALPHA_CPU, ALPHA_MEMORY)
    # The set's own queue: no team, no TPU flavor (a resource group needs one), its heads' CPU.
    assert queues["mk-rvwb"]["namespaceSelector"] == selector()
    assert queues["mk-rvwb"]["resourceGroups"] == [heads(SHARED_CPU, SHARED_MEMORY)]
    kueue = kueue_manifests(plan)
    assert [e for m in kueue for e in custom_resource_errors(m)] == []


def test_a_set_without_shared_pools_for_a_team_without_dedicated_pools_is_still_refused(tmp_path):
    pools = [{"name": "v5e", "generation": "v5e", "topology": "2x4", "slices": 2, "team": "alpha"}]
    fleet = copy.deepcopy(DEDICATED_FLEET)
    fleet["tpu-pathways:fleet"]["workers"] = ["rvwb"]
    fleet["tpu-pathways:workloads"] = []
    write_all(tmp_path, fleet, rvwb=worker("rvwb", tpuPools=pools))
    assert refusal(tmp_path) == [
        (
            "teams[1].workers",
            "the workers [rvwb] have no TPU pool shared by all teams (dedicated: rvwb: pool 'v5e' "
            "(team alpha)), and team 'beta' has no pool dedicated to it on each of them: the "
            "manager's ClusterQueue mk-rvwb, where its JobSets queue, would have no TPU flavor "
            "and no quota for them (nor would the workers run them); add a shared TPU pool to "
            "one of them, dedicate pools to the team on each of them, or name workers that have "
            "a shared pool",
        )
    ]


def test_a_team_with_pools_dedicated_on_some_workers_of_its_set_only_is_refused(tmp_path):
    shared_only = worker(
        "rvwa",
        tpuPools=[{"name": "v5e", "generation": "v5e", "topology": "2x4", "slices": 1}],
        teamCpuPools=[],
    )
    fleet = copy.deepcopy(DEDICATED_FLEET)
    fleet["tpu-pathways:workloads"] = []
    write_all(tmp_path, fleet, rvwa=shared_only)
    assert refusal(tmp_path) == [
        (
            "teams[0].workers",
            "team 'alpha' has pools dedicated to it on [rvwb] and none on [rvwa]: those workers "
            "admit its jobs on its own pools only, these on their shared pools only, and one "
            "manager queue of the set cannot hold both (it would admit against one what the "
            "other runs); name workers that all dedicate pools to 'alpha' ([rvwb]), or none "
            "([rvwa])",
        )
    ]


def test_a_workloads_own_set_with_the_teams_pools_on_some_workers_only_is_refused(tmp_path):
    # alpha's set [rvwa, rvwb] dedicates pools to it; a1's own set [rvwa, rvwc] does on rvwa
    # only (rvwc has shared pools only): its manager queue could not match both workers.
    shared = [{"name": "v5e", "generation": "v5e", "topology": "2x4", "slices": 2}]
    fleet = copy.deepcopy(DEDICATED_FLEET)
    fleet["tpu-pathways:fleet"]["workers"] = ["rvwa", "rvwb", "rvwc"]
    fleet["tpu-pathways:teams"] = [{"name": "alpha", "workers": ["rvwa", "rvwb"]}, {"name": "beta"}]
    fleet["tpu-pathways:workloads"][0]["workers"] = ["rvwa", "rvwc"]
    write_all(tmp_path, fleet)
    write(tmp_path, "rvwc", worker("rvwc", tpuPools=shared, teamCpuPools=[]))
    assert refusal(tmp_path) == [
        (
            "workloads[0].workers",
            "team 'alpha' has pools dedicated to it on [rvwa] and none on [rvwc]: those workers "
            "admit its jobs on its own pools only, these on their shared pools only, and one "
            "manager queue of the set cannot hold both (it would admit against one what the "
            "other runs); name workers that all dedicate pools to 'alpha' ([rvwa]), or none "
            "([rvwc])",
        ),
        (
            "workloads[0].workers",
            "'rvwc', one of the workers it may go to, cannot run it (.pool: 'v5e-alpha' is not a "
            "TPU pool of this stack; pools: v5e): MultiKueue may dispatch it there; give it "
            "workers: [rvwa]",
        ),
    ]
