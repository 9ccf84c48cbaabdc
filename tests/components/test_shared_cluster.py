"""One cluster, many teams: the owner's `shared_cluster` output, team stacks that read it through
a StackReference, the owner's Kueue queueing their jobs, and the ownership rules.

Expected values are literals worked out by hand from the stack files (research-v5p: two slices of
v5p-16 = 2x2x2 on ct5p-hightpu-4t, 8 chips each), never computed by the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml

from components.cli import main as cli
from components.config.grammars import parse_owner_ref
from components.config.schema.contract import SharedCluster
from components.errors import ConfigError, ConfigIssue
from components.plan.engine import plan_stack, run_program
from components.resolve.loader import load_stack
from components.resolve.tenancy.ownership import owner_stacks
from components.resolve.tenancy.shared_cluster import contract_from_outputs, read_contract
from components.vocabulary import node_account_id
from tests.helpers import deep_merge
from tests.owner_stacks import OWNER, write_stacks

STACK_REFERENCE = "pulumi:pulumi:StackReference"
PATHWAYS_JOB = "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob"
LOCAL_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"
CLUSTER_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
OWNER_ONLY_TYPES = {
    "gcp:container/cluster:Cluster",
    "gcp:container/nodePool:NodePool",
    "gcp:storage/bucket:Bucket",
    "kubernetes:yaml/v2:ConfigFile",
    CLUSTER_QUEUE,
    "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor",
    "kubernetes:scheduling.k8s.io/v1:PriorityClass",
    "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
}
RESEARCH_BUCKET = "tpu-pathways-research-pathways-research-pathways"

# A small team on the owner (tests/owner_stacks.py), written as stack files so they take the
# CLI's path.
TEAM: dict[str, Any] = {
    "owner": "lab",
    "teams": [{"name": "vision", "isolation": "shared"}],
    "workloads": [{"name": "train", "team": "vision", "pool": "v5p", "mode": "headless"}],
}


def team_error(tmp_path: Path, team: dict[str, Any], owner: dict[str, Any] = OWNER) -> ConfigError:
    stacks = write_stacks(tmp_path / "stacks", {"lab": owner, "vision": team})
    with pytest.raises(ConfigError) as caught:
        load_stack("vision", stacks)
    return caught.value


def sorting_issue(stacks: Path) -> ConfigIssue:
    """The one issue sorting the stacks of ``stacks`` by role (owners, team stacks) raises."""
    with pytest.raises(ConfigError) as caught:
        owner_stacks(stacks)
    (issue,) = caught.value.issues
    return issue


def plan_team(tmp_path: Path, team: dict[str, Any] = TEAM, owner: dict[str, Any] = OWNER):
    stacks = write_stacks(tmp_path / "stacks", {"lab": owner, "vision": team})
    return plan_stack(load_stack("vision", stacks), "vision")


# --- the owner's exported contract -----------------------------------------------------------


@pytest.fixture(scope="module")
def research(example_plan):
    return example_plan("research-v5p")


@pytest.fixture(scope="module")
def team_research(example_plan):
    return example_plan("team-research")


def test_owner_exports_its_pools_bucket_queues_and_versions(research):
    exported = research.outputs["shared_cluster"]
    json.dumps(exported)  # plain JSON: no unknowns, no secrets
    assert exported["owner_stack"] == "research-v5p"
    assert (exported["project"], exported["cluster_name"], exported["cluster_location"]) == (
        "tpu-pathways-research",
        "pathways-research",
        "us-east5",
    )
    assert exported["tpu_pools"] == [
        {
            "name": "v5p",
            "generation": "v5p",
            "topology": "2x2x2",
            "machine_type": "ct5p-hightpu-4t",
            "slices": 2,
            "chips": 16,
            "node_labels": {
                "cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
                "cloud.google.com/gke-tpu-topology": "2x2x2",
                "node.kubernetes.io/instance-type": "ct5p-hightpu-4t",
            },
            "node_pools": ["v5p-0", "v5p-1"],
            "capacity": {
                "on_demand": False,
                "spot": False,
                "reservation": "research-v5p-reservation",
                "flex_start": False,
            },
            # llm-pretrain (two slices, not pinned) may land on either node pool
            "held": [
                {"node_pool": "v5p-0", "jobs": ["research/llm-pretrain"], "colocated": False},
                {"node_pool": "v5p-1", "jobs": ["research/llm-pretrain"], "colocated": False},
            ],
        },
        {
            "name": "v5p-nlp",
            "generation": "v5p",
            "topology": "2x2x2",
            "machine_type": "ct5p-hightpu-4t",
            "slices": 1,
            "chips": 8,
            "node_labels": {
                "cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
                "cloud.google.com/gke-tpu-topology": "2x2x2",
                "node.kubernetes.io/instance-type": "ct5p-hightpu-4t",
            },
            "node_pools": ["v5p-nlp-0"],
            "capacity": {
                "on_demand": False,
                "spot": False,
                "reservation": "research-v5p-reservation",
                "flex_start": False,
            },
            "held": [],
            "team": "nlp",
        },
    ]
    assert exported["team_cpu_pools"] == [
        {
            "name": "nlp-cpu",
            "machine_type": "n2-standard-64",
            "min_nodes": 0,
            "max_nodes": 2,
            "team": "nlp",
        }
    ]
    # research runs alone on the shared pools, without having declared it shares them
    assert exported["shared_pool_teams"] == {"research": False}
    assert (exported["dns"], exported["google_apis"]) == ("cloudDns", "privateGoogleAccess")
    assert exported["cpu_pool"] == {
        "name": "cpu-np",
        "machine_type": "n2-standard-64",
        "min_nodes": 1,
        "max_nodes": 8,
    }
    assert exported["scratch_bucket"] == RESEARCH_BUCKET
    assert exported["team_namespaces"] == ["research"]
    queues = exported["queues"]
    assert queues["enabled"] is True
    assert (queues["local_queue"], queues["default_cluster_queue"]) == (
        "multislice-queue",
        "cluster-queue",
    )
    assert queues["queue_label"] == "kueue.x-k8s.io/queue-name"
    assert queues["priority_classes"]["high"] == 750
    assert queues["team_cluster_queues"] == {"nlp": "nlp-cluster-queue"}
    assert exported["versions"] == {
        "jobset": "v0.10.1",
        "pathways_job": "v0.1.4",
        "kueue": "v0.17.1",
    }
    SharedCluster.model_validate(exported)  # the typed contract team stacks validate with


def test_team_stack_sees_the_owners_pools_as_its_own_pool_models(tmp_path):
    owner = {
        **OWNER,
        "cpuPool": {"minNodes": 2, "maxNodes": 4},
        "tpuPools": [{"name": "v5p", "accelerator": "v5p-16", "capacity": {"flexStart": True}}],
    }
    stacks = write_stacks(tmp_path / "stacks", {"lab": owner, "vision": TEAM})
    config = load_stack("vision", stacks)
    (pool,) = config.tpu_pools
    assert (pool.name, pool.shape.topology, pool.shape.machine_type, pool.slices) == (
        "v5p",
        "2x2x2",
        "ct5p-hightpu-4t",
        1,
    )
    assert pool.capacity.type.value == "flexStart"
    assert (config.cpu_pool.min_nodes, config.cpu_pool.max_nodes) == (2, 4)
    assert config.bucket_name == "tpu-pathways-lab-lab-pathways"
    assert not config.creates_cluster


def test_team_stacks_export_no_contract(team_research):
    assert "shared_cluster" not in team_research.outputs
    assert team_research.outputs["owner_stack"] == "research-v5p"


# --- a team stack reads its owner through a StackReference -----------------------------------


def test_team_research_restates_nothing_of_its_owner():
    path = Path(__file__).resolve().parents[2] / "stacks" / "Pulumi.team-research.yaml"
    keys = set(yaml.safe_load(path.read_text())["config"])
    assert "tpu-pathways:owner" in keys
    for owned in ("gcp", "cluster", "cpuPool", "tpuPools", "scratchBucket", "addons"):
        assert f"tpu-pathways:{owned}" not in keys


def test_team_research_reads_research_v5p_through_a_stack_reference(team_research):
    (reference,) = team_research.by_type(STACK_REFERENCE)
    assert reference.inputs == {"name": "research-v5p"}
    assert reference.options == {"read": True}


def test_team_jobs_use_the_owners_pools_bucket_and_queue(team_research):
    (job,) = team_research.by_type(PATHWAYS_JOB)
    assert job.inputs["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "multislice-queue"}
    (worker,) = job.inputs["spec"]["workers"]
    assert (worker["type"], worker["topology"], worker["numSlices"]) == (
        "ct5p-hightpu-4t",
        "2x2x2",
        1,
    )
    # nlp has dedicated pools in the owner: its prefix is under _/
    assert job.inputs["spec"]["pathwaysDir"] == f"gs://{RESEARCH_BUCKET}/_/nlp/nlp-notebook"


def test_team_namespace_gets_a_local_queue_on_the_owners_cluster_queue(team_research):
    (queue,) = team_research.by_type(LOCAL_QUEUE)
    assert queue.inputs["metadata"] == {"name": "multislice-queue", "namespace": "nlp"}
    # nlp's pools are dedicated: its own ClusterQueue, whose flavors are those pools
    assert queue.inputs["spec"] == {"clusterQueue": "nlp-cluster-queue"}
    (job,) = team_research.by_type(PATHWAYS_JOB)
    assert queue.urn in job.dependencies  # the job is queued only once its queue exists


def test_team_stack_creates_nothing_cluster_wide(team_research):
    assert not {r.type for r in team_research.resources} & OWNER_ONLY_TYPES
    objects = [r for r in team_research.resources if r.is_kubernetes_object]
    namespaces = {r.inputs["metadata"].get("namespace") for r in objects}
    namespaces |= {
        r.inputs["metadata"]["name"] for r in team_research.by_type("kubernetes:core/v1:Namespace")
    }
    assert namespaces - {None} == {"nlp"}


def test_team_plan_follows_the_owners_current_pools(tmp_path):
    """The owner resizes its pool: the team's plan says so, no edit to the team stack."""
    one_slice = {**OWNER, "tpuPools": [{"name": "v5p", "accelerator": "v5p-16", "slices": 1}]}
    team = {**TEAM, "workloads": [{**TEAM["workloads"][0], "slices": 2}]}
    error = team_error(tmp_path, team, one_slice)
    assert [str(i) for i in error.issues] == [
        "workloads[0].slices: 2 exceeds the 1 slice(s) of pool 'v5p'"
    ]
    assert plan_team(tmp_path / "two", team).by_type(PATHWAYS_JOB)  # 2 slices: fine


def test_unknown_pool_names_the_owner_stack(tmp_path):
    team = {**TEAM, "workloads": [{**TEAM["workloads"][0], "pool": "v6e"}]}
    (issue,) = team_error(tmp_path, team).issues
    assert issue.key == "workloads[0].pool"
    assert issue.message == "'v6e' is not a TPU pool of owner stack 'lab'; pools: v5p"


def test_team_jobs_may_use_the_owners_priority_classes(tmp_path):
    workload = {**TEAM["workloads"][0], "mode": "training", "image": "img", "command": ["run"]}
    plan = plan_team(tmp_path, {**TEAM, "workloads": [{**workload, "priority": "high"}]})
    (job,) = plan.by_type(PATHWAYS_JOB)
    assert job.inputs["spec"]["workers"][0]["priorityClassName"] == "high"


def test_without_the_owners_kueue_no_queue_label_and_no_priorities(tmp_path):
    owner = {**OWNER, "addons": {"kueue": {"enabled": False}}}
    plan = plan_team(tmp_path / "a", owner=owner)
    (job,) = plan.by_type(PATHWAYS_JOB)
    assert "labels" not in job.inputs["metadata"]
    assert plan.by_type(LOCAL_QUEUE) == []
    workload = {**TEAM["workloads"][0], "priority": "high"}
    (issue,) = team_error(tmp_path / "b", {**TEAM, "workloads": [workload]}, owner).issues
    assert issue.key == "workloads[0].priority"
    assert "addons.kueue.enabled: true on owner stack 'lab'" in issue.message


# --- ownership rules ---------------------------------------------------------------------------


_ADDONS_BELONG = (
    "the JobSet, PathwaysJob controller and Kueue installs, ClusterQueues, ResourceFlavors and "
    "PriorityClasses belong to owner stack 'lab'"
)


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("addons", {"kueue": {"enabled": True}}, _ADDONS_BELONG),
        ("addons", {"jobset": {"install": True}}, _ADDONS_BELONG),
        ("addons", {"pathwaysJob": {"install": True}}, _ADDONS_BELONG),
        (
            "tpuPools",
            [{"name": "v5p", "accelerator": "v5p-16", "slices": 2}],
            "the TPU pools belong to owner stack 'lab'",
        ),
        ("cpuPool", {"machineType": "n2-standard-64"}, "the CPU pool belongs to owner stack 'lab'"),
        (
            "scratchBucket",
            {"create": False, "name": RESEARCH_BUCKET},
            "the scratch bucket belongs to owner stack 'lab'",
        ),
        (
            "cluster",
            {"name": "lab", "existing": {"name": "lab", "location": "us-east5"}},
            "the cluster belongs to owner stack 'lab', and a team stack reads cluster from it; "
            "remove cluster from this team stack",
        ),
        ("gcp", OWNER["gcp"], "the project, region and zone belong to owner stack 'lab'"),
    ],
)
def test_team_stack_asking_for_what_the_owner_owns_is_refused(tmp_path, key, value, said):
    error = team_error(tmp_path, {**TEAM, key: value})
    (issue,) = error.issues
    assert issue.key == key
    assert said in issue.message


def test_team_stack_may_not_claim_the_owners_namespace(tmp_path):
    # The workload's own check runs in the same report: its team is no longer declared.
    issue, workload = team_error(tmp_path, {**TEAM, "teams": [{"name": "platform"}]}).issues
    assert (
        str(workload) == "workloads[0].team: 'vision' is not a team of this stack; teams: platform"
    )
    assert issue.key == "teams[0].name"
    assert issue.message.startswith("namespace 'platform' belongs to owner stack 'lab'")


def test_team_stack_refusals_exit_2_naming_the_owner(tmp_path, capsys):
    stacks = write_stacks(
        tmp_path / "stacks", {"lab": OWNER, "vision": {**TEAM, "addons": {"kueue": {}}}}
    )
    code = cli.main(["plan", "--stack", "vision", "--stacks-dir", str(stacks)])
    assert code == 2
    assert "addons: " in capsys.readouterr().err


@pytest.mark.parametrize(
    ("owner", "message"),
    [
        ("vision", "'vision' is this stack"),
        ("nowhere", "no stack 'nowhere' in this project; cluster owners: lab"),
        ("other", "stack 'other' does not own a cluster"),
        ("acme/elsewhere/lab", "is a stack of project 'elsewhere'"),
        ("a/b/c/d", "is not a stack reference"),
    ],
)
def test_owner_must_be_a_cluster_owning_stack_of_this_project(tmp_path, owner, message):
    stacks = write_stacks(
        tmp_path / "stacks",
        {
            "lab": OWNER,
            "other": {**TEAM, "teams": [{"name": "x"}]},
            "vision": {**TEAM, "owner": owner},
        },
    )
    with pytest.raises(ConfigError) as caught:
        load_stack("vision", stacks)
    (issue,) = caught.value.issues
    assert issue.key == "owner"
    assert message in issue.message


FLEET: dict[str, Any] = {
    "fleet": {
        "workers": ["lab"],
        "manager": {
            "project": "tpu-pathways-lab-fleet",
            "region": "us-east5",
            "zone": "us-east5-a",
        },
    },
    "teams": [{"name": "platform"}],
}
FLEET_OWNER = (
    "'lab-fleet' is a fleet stack: its manager cluster runs no TPU or CPU pool for jobs and takes "
    "no team stacks (it queues JobSets and MultiKueue dispatches them to its workers); to run jobs "
    "through the fleet, add them to its tpu-pathways:workloads; name a cluster owner instead: "
)


def test_a_team_stack_naming_a_fleet_as_owner_is_refused_naming_the_owners(tmp_path):
    stacks = write_stacks(
        tmp_path / "stacks",
        {"lab": OWNER, "lab-fleet": FLEET, "vision": {**TEAM, "owner": "lab-fleet"}},
    )
    with pytest.raises(ConfigError) as caught:
        load_stack("vision", stacks)
    assert [(i.key, i.message) for i in caught.value.issues] == [("owner", FLEET_OWNER + "lab")]


def test_under_pulumi_up_a_fleets_outputs_are_no_contract():
    # What a StackReference to a fleet stack answers: its `fleet` output, no `shared_cluster`.
    with pytest.raises(ConfigError) as caught:
        read_contract({"fleet": {"workers": {"lab": "us-east5"}}}, "lab-fleet")
    assert [(i.key, i.message) for i in caught.value.issues] == [
        (
            "owner",
            FLEET_OWNER + "a stack of this project whose gcp and cluster keys create its cluster",
        )
    ]


def test_owner_reference_forms():
    assert parse_owner_ref("research-v5p") == (None, "research-v5p")
    assert parse_owner_ref("acme/research-v5p") == (None, "research-v5p")
    assert parse_owner_ref("acme/tpu-pathways/research-v5p") == ("tpu-pathways", "research-v5p")


def test_contract_missing_or_from_another_version_is_a_clear_error():
    with pytest.raises(ConfigError, match="exports no 'shared_cluster' output"):
        contract_from_outputs(None, "research-v5p")
    with pytest.raises(ConfigError, match="version 99"):
        contract_from_outputs({"contract_version": 99}, "research-v5p")
    with pytest.raises(
        ConfigError, match="exports an invalid shared_cluster: owner_stack: Field required"
    ):
        contract_from_outputs({"contract_version": 3}, "research-v5p")


def test_two_owners_of_one_cluster_are_refused_naming_both(tmp_path, capsys):
    twin = {**OWNER, "tpuPools": [{"name": "v6e", "accelerator": "v6e-4"}], "addons": {}}
    stacks = write_stacks(tmp_path / "stacks", {"lab": OWNER, "lab-twin": twin, "vision": TEAM})
    issue = sorting_issue(stacks)
    assert "stacks 'lab' and 'lab-twin' would both own cluster 'lab'" in issue.message
    assert "project 'tpu-pathways-lab'" in issue.message
    assert cli.main(["stacks", "--stacks-dir", str(stacks), "--github-output"]) == 2
    assert "'lab' and 'lab-twin'" in capsys.readouterr().err


def test_three_owners_of_one_cluster_are_listed_in_one_sentence(tmp_path):
    twin = {**OWNER, "tpuPools": [{"name": "v6e", "accelerator": "v6e-4"}], "addons": {}}
    stacks = write_stacks(
        tmp_path / "stacks", {"lab": OWNER, "lab-twin": twin, "lab-three": twin, "vision": TEAM}
    )
    issue = sorting_issue(stacks)
    assert issue.message.startswith(
        "stacks 'lab', 'lab-three' and 'lab-twin' would all own cluster 'lab' in project "
        "'tpu-pathways-lab'"
    )


def test_same_cluster_name_in_another_project_is_not_a_second_owner(tmp_path, capsys):
    other = {**OWNER, "gcp": {**OWNER["gcp"], "project": "tpu-pathways-other"}}
    stacks = write_stacks(tmp_path / "stacks", {"lab": OWNER, "lab-other": other, "vision": TEAM})
    assert cli.main(["stacks", "--stacks-dir", str(stacks), "--github-output"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        'owners=["lab", "lab-other"]',
        'teams=["vision"]',
    ]


def test_two_owners_creating_one_scratch_bucket_are_refused(tmp_path):
    other = {
        **OWNER,
        # another project: two clusters in one project are refused on their own
        "gcp": {**OWNER["gcp"], "project": "tpu-pathways-lab2"},
        "cluster": {"name": "lab2", "deletionProtection": False},
        "scratchBucket": {"name": "lab-scratch"},
    }
    owner = {**OWNER, "scratchBucket": {"name": "lab-scratch"}}
    stacks = write_stacks(tmp_path / "stacks", {"lab": owner, "lab2": other})
    issue = sorting_issue(stacks)
    assert (issue.key, issue.message) == (
        "scratchBucket.name",
        "stacks 'lab' and 'lab2' would each create scratch bucket 'lab-scratch' (bucket names "
        "are global); give one of them another scratchBucket.name",
    )


def test_owners_whose_long_cluster_names_share_a_prefix_get_distinct_names(tmp_path, capsys):
    # The first 56 characters of the default bucket name and the first 24 of the cluster name
    # are the same: truncation alone made one account and one bucket of the two.
    gcp = {**OWNER["gcp"], "project": "tpu-pathways-lab-longname-x"}
    one = {**OWNER, "gcp": gcp, "cluster": {"name": "research-pretraining-large-a"}}
    two = {**OWNER, "gcp": gcp, "cluster": {"name": "research-pretraining-large-b"}}
    # Each in a directory of its own: two clusters of one project are refused together.
    dirs = {s: write_stacks(tmp_path / s, {s: c}) for s, c in (("one", one), ("two", two))}
    assert [load_stack(s, d).bucket_name for s, d in dirs.items()] == [
        "tpu-pathways-lab-longname-x-research-pretraining-large-a-38a742",
        "tpu-pathways-lab-longname-x-research-pretraining-large-b-6f39ef",
    ]
    assert [node_account_id(c["cluster"]["name"]) for c in (one, two)] == [
        "research-pretrain-046c43-nodes",
        "research-pretrain-22919b-nodes",
    ]


def test_two_team_stacks_claiming_one_namespace_are_refused(tmp_path):
    other = {**TEAM, "workloads": []}
    stacks = write_stacks(tmp_path / "stacks", {"lab": OWNER, "vision": TEAM, "vision2": other})
    issue = sorting_issue(stacks)
    assert (issue.key, issue.message) == (
        "teams",
        "stacks 'vision' and 'vision2' both list team 'vision' on the cluster of owner stack "
        "'lab'; each would create and own namespace 'vision' (destroying one deletes the "
        "other's); give each team stack its own team names",
    )


def test_the_plan_of_a_stack_in_conflict_reports_it_and_others_plan(tmp_path, capsys):
    other = {**TEAM, "workloads": []}
    stacks = write_stacks(tmp_path / "stacks", {"lab": OWNER, "vision": TEAM, "vision2": other})
    assert cli.main(["plan", "--stack", "vision2", "--stacks-dir", str(stacks)]) == 2
    err = capsys.readouterr().err
    assert "Pulumi.vision2.yaml (with the other stacks of stacks/)" in err
    assert "teams: stacks 'vision' and 'vision2' both list team 'vision'" in err
    assert cli.main(["plan", "--stack", "lab", "--stacks-dir", str(stacks)]) == 0


def test_two_clusters_in_one_project_are_refused(tmp_path, capsys):
    # A Workload Identity principal names the project's pool, not a cluster: team `platform`'s
    # grant would hold for namespace `platform` of the second cluster too.
    other = {**OWNER, "cluster": {"name": "lab-2", "deletionProtection": False}}
    stacks = write_stacks(tmp_path / "stacks", {"lab": OWNER, "lab-2": other})
    issue = sorting_issue(stacks)
    assert issue.key == "gcp.project"
    assert issue.message == (
        "stacks 'lab' and 'lab-2' would each create a cluster in project 'tpu-pathways-lab': a "
        "team's Workload Identity grant (its bucket prefix) would then hold for the same "
        "namespace in the other cluster too; give each cluster its own project"
    )


# --- `pulumi up`: the real entry reads the reference before anything else registers ----------


def test_entrypoint_refuses_a_bad_team_config_after_reading_only_the_reference(
    tmp_path, monkeypatch, registrations
):
    import runpy

    from components.resolve.stack_files import read_stack_file

    stacks = write_stacks(
        tmp_path / "stacks",
        {"lab": OWNER, "vision": {**TEAM, "workloads": [{**TEAM["workloads"][0], "pool": "x"}]}},
    )
    owner = plan_stack(load_stack("lab", stacks), "lab").outputs
    config = read_stack_file("vision", stacks)
    registrations.clear()  # only what the team stack's program registers
    main = Path(__file__).resolve().parents[2] / "__main__.py"
    with pytest.raises(pulumi.RunError, match="not a TPU pool of owner stack 'lab'"):
        run_program(
            lambda: (runpy.run_path(str(main)), {})[1],
            "vision",
            stack_outputs={"lab": owner},
            config=config,
        )
    assert [t for t, _ in registrations if t != "pulumi:pulumi:Stack"] == []


# --- per-team quotas: Kueue cohort and borrowing on the owner ---------------------------------

QUOTAS = {
    "kueue": {
        "enabled": True,
        "teamQuotas": [{"team": "vision", "chips": {"v5p-16": 8}, "borrowingLimit": 0}],
    }
}


def queues_by_name(plan) -> dict[str, dict]:
    return {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in plan.by_type(CLUSTER_QUEUE)}


def tpu_quota(spec: dict) -> dict[str, dict]:
    (group,) = [g for g in spec["resourceGroups"] if g["coveredResources"] == ["google.com/tpu"]]
    return {f["name"]: f["resources"][0] for f in group["flavors"]}


def test_team_quota_is_its_own_cluster_queue_in_one_cohort(tmp_path):
    stacks = write_stacks(tmp_path / "stacks", {"lab": {**OWNER, "addons": QUOTAS}})
    queues = queues_by_name(plan_stack(load_stack("lab", stacks), "lab"))
    assert set(queues) == {"cluster-queue", "vision-cluster-queue"}
    flavor = "tpu-v5p-slice-2x2x2-4t"
    # 16 chips provisioned: 8 guaranteed to vision, the other 8 to everyone else
    assert tpu_quota(queues["vision-cluster-queue"]) == {
        flavor: {"name": "google.com/tpu", "nominalQuota": 8, "borrowingLimit": 0}
    }
    assert tpu_quota(queues["cluster-queue"]) == {
        flavor: {"name": "google.com/tpu", "nominalQuota": 8}
    }
    for spec in queues.values():
        assert spec["cohortName"] == "lab"
        assert spec["preemption"]["reclaimWithinCohort"] == "Any"
    # the team's namespace, and default for the team's shared services
    assert queues["vision-cluster-queue"]["namespaceSelector"] == {
        "matchExpressions": [
            {
                "key": "kubernetes.io/metadata.name",
                "operator": "In",
                "values": ["vision", "default"],
            }
        ]
    }


def test_team_stack_queues_on_its_own_cluster_queue(tmp_path):
    plan = plan_team(tmp_path, owner={**OWNER, "addons": QUOTAS})
    (queue,) = plan.by_type(LOCAL_QUEUE)
    assert queue.inputs["spec"] == {"clusterQueue": "vision-cluster-queue"}


def test_without_quotas_the_cluster_queue_is_unchanged(research):
    spec = queues_by_name(research)["cluster-queue"]
    assert "cohortName" not in spec
    assert spec["preemption"] == {
        "reclaimWithinCohort": "Never",
        "withinClusterQueue": "LowerPriority",
    }


@pytest.mark.parametrize(
    ("quotas", "key", "message"),
    [
        (
            [{"team": "vision", "chips": {"v5p-16": 12}}, {"team": "nlp", "chips": {"v5p-16": 8}}],
            "addons.kueue.teamQuotas",
            "quotas give 20 v5p-16 chips to teams but the pools provision 16",
        ),
        (
            [{"team": "vision", "chips": {"v6e-4": 4}}],
            "addons.kueue.teamQuotas[0].chips.v6e-4",
            "no TPU pool of this stack is v6e-4",
        ),
        (
            [{"team": "vision", "chips": {"v9x-4": 4}}],
            "addons.kueue.teamQuotas[0].chips.v9x-4",
            "is not a known TPU accelerator",
        ),
        (
            [{"team": "vision", "chips": {"v5p-16": 4}}, {"team": "vision", "chips": {}}],
            "addons.kueue.teamQuotas[1].team",
            "'vision' has more than one quota",
        ),
    ],
)
def test_bad_team_quotas_are_refused(stack_values, config_error, quotas, key, message):
    values = stack_values(
        tpuPools=[{"name": "v5p", "accelerator": "v5p-16", "slices": 2}],
        addons={"kueue": {"enabled": True, "teamQuotas": quotas}},
    )
    issues = config_error(values).issues
    assert key in [i.key for i in issues]
    assert any(message in i.message for i in issues if i.key == key)


def test_team_quotas_need_kueue(stack_values, config_error):
    quotas = [{"team": "a", "chips": {}}]
    values = stack_values(addons={"kueue": {"enabled": False, "teamQuotas": quotas}})
    (issue,) = config_error(values).issues
    assert (issue.key, issue.message) == ("addons.kueue.teamQuotas", "needs addons.kueue.enabled")


def test_a_stack_reaching_an_owners_cluster_without_owner_is_refused(tmp_path):
    sideways = {
        "gcp": OWNER["gcp"],
        "cluster": {"name": "lab", "existing": {"name": "lab", "location": "us-east5"}},
        "scratchBucket": {"name": "side-scratch"},
    }
    stacks = write_stacks(tmp_path / "stacks", {"lab": OWNER, "side": sideways})
    issue = sorting_issue(stacks)
    assert issue.key == "cluster.existing"
    assert "stack 'side' targets cluster 'lab', which stack 'lab' owns" in issue.message
    assert "owner: lab" in issue.message


# --- shared services: every stack's land in namespace default --------------------------------

OWNER_WITH_SERVICE: dict[str, Any] = {
    **OWNER,
    "sharedServices": [{"name": "shared", "team": "platform", "pool": "v5p"}],
}


def test_a_team_stack_may_not_take_the_owners_service_name(tmp_path):
    team = {**TEAM, "sharedServices": [{"name": "shared", "team": "vision", "pool": "v5p"}]}
    error = team_error(tmp_path, team, OWNER_WITH_SERVICE)
    issues = {i.key: i.message for i in error.issues}
    assert issues == {
        "sharedServices[0].name": "'shared' is already a shared service of owner stack 'lab' "
        "in namespace 'default', where every team's shared services run; choose another name"
    }


def test_a_team_stacks_service_queues_in_default_on_the_owners_kueue(tmp_path):
    team = {**TEAM, "sharedServices": [{"name": "vision-svc", "team": "vision", "pool": "v5p"}]}
    plan = plan_team(tmp_path, team, OWNER_WITH_SERVICE)
    queues = {
        (r.inputs["metadata"]["namespace"], r.inputs["metadata"]["name"]): r.inputs["spec"]
        for r in plan.by_type(LOCAL_QUEUE)
    }
    assert queues == {
        ("vision", "multislice-queue"): {"clusterQueue": "cluster-queue"},
        ("default", "vision-svc"): {"clusterQueue": "cluster-queue"},
    }
    (job,) = [r for r in plan.by_type(PATHWAYS_JOB) if r.inputs["metadata"]["name"] == "vision-svc"]
    assert job.inputs["metadata"]["namespace"] == "default"
    assert job.inputs["metadata"]["labels"] == {
        "tpu-pathways/team": "vision",
        "kueue.x-k8s.io/queue-name": "vision-svc",
    }


# --- node pools the owner's jobs hold (review finding 2) ---------------------------------------

V6E_OWNER: dict[str, Any] = {
    "gcp": {"project": "tpu-pathways-k3", "region": "us-east5", "zone": "us-east5-b"},
    "cluster": {"name": "k3", "deletionProtection": False},
    "cpuPool": {"maxNodes": 4},
    "tpuPools": [{"name": "v6e", "generation": "v6e", "topology": "2x2", "slices": 3}],
    "addons": {"kueue": {"enabled": False}},  # colocated heads cannot be queued
    "teams": [{"name": "platform", "isolation": "shared"}],
}


def _inference(name: str, team: str) -> dict[str, Any]:
    return {
        "name": name,
        "team": team,
        "pool": "v6e",
        "mode": "inference",
        "image": "us-docker.pkg.dev/example/serve:1",
        "command": ["python3", "serve.py"],
        "resources": {"cpu": "8", "memory": "32Gi"},
    }


def _v6e_stacks(tmp_path: Path, slices: int, owner_jobs: list[dict[str, Any]]) -> Path:
    owner = deep_merge(V6E_OWNER, {"tpuPools": [{**V6E_OWNER["tpuPools"][0], "slices": slices}]})
    owner["workloads"] = owner_jobs
    team = {
        "owner": "k3",
        "teams": [{"name": "serving", "isolation": "shared"}],
        "workloads": [_inference("inf2", "serving")],
    }
    return write_stacks(tmp_path / "stacks", {"k3": owner, "t3": team})


def test_owner_exports_the_node_pools_its_jobs_hold(tmp_path):
    stacks = _v6e_stacks(tmp_path, 3, [_inference("inf1", "platform")])
    exported = plan_stack(load_stack("k3", stacks), "k3").outputs["shared_cluster"]
    assert exported["contract_version"] == 3
    assert exported["tpu_pools"][0]["held"] == [
        {"node_pool": "v6e-0", "jobs": ["platform/inf1"], "colocated": True}
    ]


def test_team_colocated_job_is_pinned_past_the_owners_node_pools(tmp_path):
    stacks = _v6e_stacks(tmp_path, 3, [_inference("inf1", "platform")])
    # the team stack's offline plan reads the contract from the owner's stack file
    plan = plan_stack(load_stack("t3", stacks), "t3")
    (job,) = plan.by_type(PATHWAYS_JOB)
    selector = job.inputs["spec"]["workers"][0]["nodeSelector"]
    assert selector == {"cloud.google.com/gke-nodepool": "v6e-1"}
    assert plan.summary["workloads"]["serving/inf2"]["nodePool"] == "v6e-1"


def test_team_colocated_job_without_a_free_node_pool_is_refused_naming_the_owners_jobs(
    tmp_path, capsys
):
    stacks = _v6e_stacks(tmp_path, 1, [_inference("inf1", "platform")])
    assert cli.main(["plan", "--stacks-dir", str(stacks), "--stack", "t3"]) == 2
    err = capsys.readouterr().err
    assert (
        "  - workloads[0]: workload 'serving/inf2' could land on node pools of TPU pool 'v6e' "
        "that jobs of owner stack 'k3' hold ('v6e-0' by platform/inf1), and it is colocated and "
        "needs a node pool to itself (its workers are bound to its head's node pool, and the "
        "head is kept out of no node pool another job holds); no free node pool of the pool is "
        "left to pin it to: add slices to the pool in the owner stack, or use another TPU pool"
    ) in err.splitlines()


def test_a_team_job_beside_the_owners_colocated_job_is_pinned_off_its_node_pool(tmp_path):
    stacks = _v6e_stacks(tmp_path, 2, [_inference("inf1", "platform")])
    team = {
        "owner": "k3",
        "teams": [{"name": "serving", "isolation": "shared"}],
        "workloads": [{"name": "nb", "team": "serving", "pool": "v6e", "mode": "headless"}],
    }
    write_stacks(stacks.parent / "stacks", {"t3": team})
    plan = plan_stack(load_stack("t3", stacks), "t3")
    assert plan.summary["workloads"]["serving/nb"]["nodePool"] == "v6e-1"
