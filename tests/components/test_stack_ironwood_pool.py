"""Multi-host Ironwood (tpu7x, tpu7) slices as registered with the engine: each pool owns one
Compute Engine workload policy (HIGH_THROUGHPUT, the slice's accelerator topology) that every
slice's node pool names, instead of COMPACT placement with a TPU topology. Single-host Ironwood
pools and other generations get no policy.

Known answers: GKE docs "About Ironwood (TPU7x) in GKE" (the workload policy replaces
--tpu-topology) and XPK 1.16 (xpk/core/nodepool.py: ``resource-policies create workload-policy
--region=<region> --type=HIGH_THROUGHPUT --accelerator-topology=<topology>``, node pool
``--placement-policy=<name>``, no ``--placement-type``/``--tpu-topology``, 15 pods per node).
Shapes: tpu7x-128 = 64 chips = 4x4x4 on 16 four-chip hosts; tpu7-16 = 8 chips = 2x2x2 on 2.
"""

from __future__ import annotations

import re

import pytest

from components.gke.tpu_pool import workload_policy_name
from components.plan.critical_path import critical_path, default_table, structure_violations
from components.plan.render import render_text
from components.policy.report import check_plan

NODE_POOL = "gcp:container/nodePool:NodePool"
RESOURCE_POLICY = "gcp:compute/resourcePolicy:ResourcePolicy"
TPU_COMPONENT = "tpu-pathways:nodepool:TpuNodePool"
STACK = "urn:pulumi:test::tpu-pathways::pulumi:pulumi:Stack"

POOLS = [
    {"name": "iw", "accelerator": "tpu7x-128", "slices": 2, "allowUnlistedZone": True},
    {"name": "iw7", "accelerator": "tpu7-16", "allowUnlistedZone": True},
    {"name": "iwone", "generation": "tpu7x", "topology": "2x2x1", "allowUnlistedZone": True},
    {"name": "v5p", "accelerator": "v5p-16", "allowUnlistedZone": True},
]


@pytest.fixture(scope="module")
def values(stack_values):
    return stack_values(tpuPools=POOLS)


@pytest.fixture(scope="module")
def plan(plan_of, values):
    return plan_of(values)


@pytest.fixture(scope="module")
def pools(plan):
    return {r.inputs["name"]: r for r in plan.by_type(NODE_POOL) if TPU_COMPONENT in r.parent}


@pytest.fixture(scope="module")
def policies(plan):
    return {r.name: r for r in plan.by_type(RESOURCE_POLICY)}


def test_one_workload_policy_per_multi_host_ironwood_pool(policies):
    assert sorted(policies) == [
        "pathways-dev-iw-workload-policy",
        "pathways-dev-iw7-workload-policy",
    ]


def test_the_workload_policy_is_high_throughput_with_the_slice_topology(policies):
    iw = policies["pathways-dev-iw-workload-policy"]
    assert iw.inputs == {
        "name": "pathways-dev-iw-4x4x4",
        "project": "tpu-pathways-dev",
        "region": "us-west4",  # the stack's region, not the zone us-west4-a
        "description": "Placement of the 4x4x4 TPU slices of node pool group pathways-dev-iw",
        "workloadPolicy": {"type": "HIGH_THROUGHPUT", "acceleratorTopology": "4x4x4"},
    }
    iw7 = policies["pathways-dev-iw7-workload-policy"]
    assert iw7.inputs["name"] == "pathways-dev-iw7-2x2x2"
    assert iw7.inputs["workloadPolicy"] == {
        "type": "HIGH_THROUGHPUT",
        "acceleratorTopology": "2x2x2",
    }


def test_the_workload_policy_is_a_child_of_the_pool_component(policies):
    for pool in ("iw", "iw7"):
        policy = policies[f"pathways-dev-{pool}-workload-policy"]
        assert policy.parent == f"{STACK}${TPU_COMPONENT}::pathways-dev-{pool}"


@pytest.mark.parametrize(
    ("name", "policy", "nodes"),
    [
        ("iw-0", "pathways-dev-iw-4x4x4", 16),
        ("iw-1", "pathways-dev-iw-4x4x4", 16),
        ("iw7-0", "pathways-dev-iw7-2x2x2", 2),
    ],
)
def test_every_slice_names_the_pools_workload_policy(pools, policies, name, policy, nodes):
    inputs = pools[name].inputs
    # No COMPACT type and no TPU topology: the workload policy places the slice.
    assert inputs["placementPolicy"] == {"type": "", "policyName": policy}
    assert inputs["nodeCount"] == nodes
    assert inputs["maxPodsPerNode"] == 15
    owner = f"pathways-dev-{name.rsplit('-', 1)[0]}-workload-policy"
    assert policies[owner].urn in pools[name].dependencies


def test_workload_policy_slices_ignore_what_gke_reads_back(pools):
    options = pools["iw-0"].options
    assert options["ignoreChanges"] == ["placementPolicy.tpuTopology", "placementPolicy.type"]
    assert "placementPolicy.policyName" in options["replaceOnChanges"]


def test_single_host_ironwood_and_other_generations_have_no_workload_policy(pools):
    assert "placementPolicy" not in pools["iwone-0"].inputs
    assert not any("workload-policy" in d for d in pools["iwone-0"].dependencies)
    assert pools["v5p-0"].inputs["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "2x2x2"}
    assert not any("workload-policy" in d for d in pools["v5p-0"].dependencies)


def test_a_stack_without_multi_host_ironwood_registers_no_resource_policy(plan_of, stack_values):
    plan = plan_of(stack_values(tpuPools=[POOLS[2], POOLS[3]]))
    assert plan.by_type(RESOURCE_POLICY) == []


def test_production_protects_the_workload_policy(plan_of, values, stack_values):
    plan = plan_of(stack_values(**{**values, "environment": "production"}))
    policies = plan.by_type(RESOURCE_POLICY)
    assert len(policies) == 2  # iw and iw7
    for policy in policies:
        assert policy.options.get("protect") is True


def test_the_ironwood_plan_passes_the_guardrails(plan):
    assert [v for v in check_plan(plan, "dev") if v.rule == "tpu-slice-placement"] == []


def test_the_workload_policy_runs_beside_the_cluster_not_after_it(plan):
    assert structure_violations(plan.resources) == []
    table = default_table()
    policy = plan.get(RESOURCE_POLICY, "pathways-dev-iw-workload-policy")
    duration = table.duration(policy)
    assert (duration.low, duration.high) == (5, 30)
    assert duration.label == "Compute Engine workload policy (Ironwood slice placement)"
    # It waits for nothing, so the cluster (8-10 min) gates the slices, not the policy.
    assert policy.dependencies == []
    chain = [step.name for step in critical_path(plan.resources, table).chain]
    assert "pathways-dev-iw-workload-policy" not in chain


def test_workload_policy_names_are_valid_compute_engine_names():
    assert workload_policy_name("pathways-dev-iw", "4x4x4") == "pathways-dev-iw-4x4x4"
    # A 40-character cluster name and a 30-character pool name: 78 characters in full.
    base = "c" * 40 + "-" + "p" * 30
    long_a = workload_policy_name(base, "16x16x24")
    long_b = workload_policy_name(base, "16x16x20")
    for name in (long_a, long_b):
        assert len(name) == 63
        assert re.fullmatch(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?", name)
    # a prefix, then the first 8 hex digits of the full name's SHA-256 (`sha256sum`): the same
    # name in every run, and a different one for each topology
    assert (long_a, long_b) == (
        "c" * 40 + "-" + "p" * 13 + "-227c2db9",
        "c" * 40 + "-" + "p" * 13 + "-c6c7a388",
    )


def test_the_plain_plan_shows_the_workload_policy(plan):
    lines = render_text(plan).splitlines()
    start = lines.index(
        "  + ResourcePolicy pathways-dev-iw-workload-policy (name pathways-dev-iw-4x4x4)  "
        "region=us-west4  type=HIGH_THROUGHPUT"
    )
    assert lines[start + 1] == "      acceleratorTopology=4x4x4"
