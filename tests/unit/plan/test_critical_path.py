"""The modeled critical path of `pulumi up` (components/plan/critical_path.py).

Hand-built graphs with hand-computed chains and times, then the structure every example stack
must keep: node pools never wait for each other and installs never wait for a TPU node pool.
"""

from __future__ import annotations

import contextlib
import io
from types import SimpleNamespace

import pytest
import yaml

from components.cli import plan as plan_cli
from components.cli.main import main
from components.plan.critical_path import (
    CONFIG_FILE,
    NODE_POOL,
    DurationTable,
    critical_path,
    minutes,
    structure_violations,
)
from components.plan.durations import DURATIONS_PATH
from components.plan.model import PlannedResource
from components.plan.schedule import UNBOUNDED
from components.resolve.tenancy.ownership import owner_stacks
from components.tokens import LUSTRE_INSTANCE, WORKLOAD_TYPES
from tests.examples import EXAMPLES_DIR
from tests.helpers import graph_resource as res

STACKS = owner_stacks(EXAMPLES_DIR)  # the stacks that create a cluster and its node pools

# Test types take exactly the seconds in their name ("t:x:S10" takes 10 s); "t:x:R10-30" takes
# 10 s (low) to 30 s (high), 20 s typical. Unlisted custom types take 0 s.
TABLE = DurationTable.from_dict(
    {
        "defaultCustom": {"seconds": [0, 0], "source": "test"},
        "types": {
            **{f"t:x:S{n}": [{"seconds": [n, n], "source": "test"}] for n in (1, 5, 10, 20, 30)},
            "t:x:R10-30": [{"seconds": [10, 30], "source": "test"}],
            "t:x:R2-4": [{"seconds": [2, 4], "source": "test"}],
            "t:x:TimedComponent": [{"seconds": [7, 7], "source": "test"}],
        },
    }
)


def chain_of(resources: list[PlannedResource]) -> list[tuple[str, float, float]]:
    return [(s.name, s.start, s.finish) for s in critical_path(resources, TABLE).chain]


@pytest.mark.parametrize(
    ("resources", "chain", "parallel", "sequential"),
    [
        pytest.param(
            [
                res("a", "t:x:S10"),
                res("b", "t:x:S20", deps=("a",)),
                res("c", "t:x:S5", deps=("b",)),
            ],
            [("a", 0, 10), ("b", 10, 30), ("c", 30, 35)],
            35,
            35,
            id="a-chain-runs-one-after-another",
        ),
        pytest.param(
            # a(10) -> b(20) -> d(1) and a -> c(5) -> d: d starts when b is done, at 30.
            [
                res("a", "t:x:S10"),
                res("b", "t:x:S20", deps=("a",)),
                res("c", "t:x:S5", deps=("a",)),
                res("d", "t:x:S1", deps=("b", "c")),
            ],
            [("a", 0, 10), ("b", 10, 30), ("d", 30, 31)],
            31,
            36,
            id="a-diamond-takes-the-longer-side",
        ),
        pytest.param(
            # x(10) -> y(10) runs beside z(30): the deployment takes 30, not 50.
            [res("x"), res("y", deps=("x",)), res("z", "t:x:S30")],
            [("z", 0, 30)],
            30,
            50,
            id="parallel-branches-overlap",
        ),
    ],
)
def test_the_longest_chain_sets_the_time(resources, chain, parallel, sequential):
    path = critical_path(resources, TABLE)
    assert chain_of(resources) == chain
    assert (path.parallel["typical"], path.sequential["typical"]) == (parallel, sequential)


def test_provider_edge_waits_for_the_provider_and_what_it_waits_for():
    # The Kubernetes object names only its provider, the provider waits for the cluster.
    resources = [
        res("cluster", "t:x:S30"),
        res("k8s", "pulumi:providers:kubernetes", deps=("cluster",)),
        res("namespace", "t:x:S5", provider="k8s"),
    ]
    assert chain_of(resources) == [("cluster", 0, 30), ("k8s", 30, 30), ("namespace", 30, 35)]


def test_components_take_no_time_and_do_not_hold_their_children():
    resources = [
        res("a", "t:x:S10"),
        # A component registered after a: its child waits for a, not for the component.
        res("group", "t:x:Group", deps=("a",), custom=False),
        res("in-group", "t:x:S5", parent="group"),
        # A component with no waits: its child starts at once.
        res("free", "t:x:Group", custom=False),
        res("in-free", "t:x:S5", parent="free"),
    ]
    path = critical_path(resources, TABLE)
    assert chain_of(resources) == [("a", 0, 10), ("in-group", 10, 15)]  # no component listed
    assert path.parallel["typical"] == 15
    assert path.sequential["typical"] == 20


def test_depending_on_a_component_waits_for_its_children():
    resources = [
        res("group", "t:x:Group", custom=False),
        res("slow", "t:x:S20", parent="group"),
        res("quick", "t:x:S5", parent="group"),
        res("after", "t:x:S1", deps=("group",)),
    ]
    assert chain_of(resources) == [("slow", 0, 20), ("after", 20, 21)]


def test_a_timed_component_counts_like_a_resource():
    # A remote component such as a ConfigFile stands in for the objects it applies.
    resources = [
        res("cluster", "t:x:S10"),
        res("install", "t:x:TimedComponent", deps=("cluster",), custom=False),
        res("job", "t:x:S1", deps=("install",)),
    ]
    assert chain_of(resources) == [("cluster", 0, 10), ("install", 10, 17), ("job", 17, 18)]


def test_low_typical_high_estimates():
    resources = [res("a", "t:x:R10-30"), res("b", "t:x:R2-4", deps=("a",)), res("c", "t:x:S5")]
    path = critical_path(resources, TABLE)
    assert path.parallel == {"low": 12, "typical": 23, "high": 34}
    assert path.sequential == {"low": 17, "typical": 28, "high": 39}
    steps = critical_path(resources, TABLE).chain
    assert [(s.name, s.low, s.high) for s in steps] == [("a", 10, 30), ("b", 2, 4)]


def test_edges_to_resources_outside_the_plan_cost_nothing():
    resources = [res("a", parent="urn:stack-root", deps=("urn:elsewhere",))]
    assert chain_of(resources) == [("a", 0, 10)]


def test_a_cycle_is_reported():
    with pytest.raises(ValueError, match="cycle"):
        critical_path([res("a", deps=("b",)), res("b", deps=("a",))], TABLE)


def test_minutes_format():
    assert [minutes(s) for s in (0, 59.6, 605, 3725)] == ["0m00s", "1m00s", "10m05s", "1h02m05s"]


# --- structure -----------------------------------------------------------------------------

CLUSTER = "gcp:container/cluster:Cluster"


def pool(name: str, machine: str, **kw) -> PlannedResource:
    return res(name, NODE_POOL, inputs={"nodeConfig": {"machineType": machine}}, **kw)


def test_intended_structure_has_no_violations():
    resources = [
        res("cluster", CLUSTER),
        res("k8s", "pulumi:providers:kubernetes", deps=("cluster",)),
        pool("cpu", "n2-standard-64", deps=("cluster",)),
        pool("tpu-0", "ct5p-hightpu-4t", deps=("cluster",)),
        pool("tpu-1", "ct5p-hightpu-4t", deps=("cluster",)),
        res("jobset", CONFIG_FILE, deps=("cluster",), provider="k8s", custom=False),
    ]
    assert structure_violations(resources) == []


def test_a_node_pool_waiting_for_another_is_a_violation():
    resources = [
        res("cluster", CLUSTER),
        pool("tpu-0", "ct6e-standard-4t", deps=("cluster",)),
        # Transitively: tpu-1 waits for a resource that waits for tpu-0.
        res("between", "t:x:S1", deps=("tpu-0",)),
        pool("tpu-1", "ct6e-standard-4t", deps=("cluster", "between")),
    ]
    assert structure_violations(resources) == ["node pool tpu-1 waits for node pool(s) tpu-0"]


def test_an_install_waiting_for_a_tpu_node_pool_is_a_violation():
    resources = [
        res("cluster", CLUSTER),
        pool("cpu", "n2-standard-64", deps=("cluster",)),
        pool("tpu-0", "tpu7x-standard-4t", deps=("cluster",)),
        res("k8s", "pulumi:providers:kubernetes", deps=("cluster", "tpu-0")),
        # Only through its provider, which waits for the TPU pool; the CPU pool is allowed.
        res("kueue", CONFIG_FILE, deps=("cluster", "cpu"), provider="k8s", custom=False),
    ]
    assert structure_violations(resources) == ["install kueue waits for TPU node pool(s) tpu-0"]


def test_node_pools_and_installs_must_wait_for_the_cluster():
    resources = [
        res("cluster", CLUSTER),
        pool("tpu-0", "ct5lp-hightpu-4t"),
        res("jobset", CONFIG_FILE, custom=False),
    ]
    assert structure_violations(resources) == [
        "node pool tpu-0 does not wait for the cluster",
        "install jobset does not wait for the cluster",
    ]


def test_the_cli_exit_code_follows_the_structure():
    bad = [
        res("cluster", CLUSTER),
        pool("a", "ct5p-hightpu-4t", deps=("cluster",)),
        pool("b", "ct5p-hightpu-4t", deps=("cluster", "a")),
    ]
    plan = SimpleNamespace(stack="t", resources=bad)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert plan_cli._critical_path(plan, as_json=False) == 1
    assert "STRUCTURE VIOLATIONS (1)" in out.getvalue()
    assert "node pool b waits for node pool(s) a" in out.getvalue()


# --- the example stacks --------------------------------------------------------------------


def transitive_waits(resources: list[PlannedResource]) -> dict[str, set[str]]:
    """Written independently of the module: everything each resource depends on through
    dependencies, provider or parent, directly or transitively (a superset of real waits)."""
    edges = {r.urn: {u for u in (*r.dependencies, r.provider, r.parent) if u} for r in resources}
    closure: dict[str, set[str]] = {}

    def visit(urn: str) -> set[str]:
        if urn not in closure:
            closure[urn] = set()
            for up in edges.get(urn, ()):
                closure[urn] |= {up, *visit(up)}
        return closure[urn]

    for urn in edges:
        visit(urn)
    return closure


@pytest.mark.parametrize("stack", STACKS)
def test_example_stack_structure(example_plan, stack):
    plan = example_plan(stack)
    by_urn = {r.urn: r for r in plan.resources}
    waits = transitive_waits(plan.resources)
    pools = {r.urn for r in plan.resources if r.type == NODE_POOL}
    tpu_pools = {
        u for u in pools if by_urn[u].inputs["nodeConfig"]["machineType"].startswith(("ct", "tpu"))
    }
    assert tpu_pools, "every example stack has TPU node pools"
    for urn in pools:
        assert not waits[urn] & pools, f"{by_urn[urn].name} waits for another node pool"
    for r in plan.resources:
        if r.type == CONFIG_FILE:
            assert not waits[r.urn] & tpu_pools, f"install {r.name} waits for a TPU node pool"
    assert structure_violations(plan.resources) == []


@pytest.mark.parametrize("stack", STACKS)
def test_example_stack_critical_path(example_plan, stack):
    # The graph's own shape, without the engine's and GKE's limits (test_critical_path_limits).
    plan = example_plan(stack)
    path = critical_path(plan.resources, limits=UNBOUNDED)
    types = [s.type for s in path.chain]
    if any(r.type == LUSTRE_INSTANCE for r in plan.resources):
        # A Managed Lustre instance (15-60 min, durations.yaml) outlasts cluster and slices;
        # its claims are what the workloads wait for.
        assert LUSTRE_INSTANCE in types
        assert path.chain[-1].type in WORKLOAD_TYPES
        return
    # The chain runs through the cluster and ends with a TPU slice node pool ...
    assert CLUSTER in types
    assert path.chain[-1].type == NODE_POOL
    assert path.chain[-1].label == "TPU slice node pool"
    cluster_done = path.milestones["cluster"]
    assert path.chain[-1].start == cluster_done  # ... that starts as soon as the cluster is up,
    # installs run beside the node pools, and workloads never extend the deployment.
    assert path.milestones["installs"] < path.milestones["tpu node pools"]
    assert path.milestones["workloads submitted"] < path.parallel["typical"]
    assert path.parallel["typical"] == path.milestones["tpu node pools"]
    assert path.parallel["typical"] < path.sequential["typical"]
    assert path.violations == []


@pytest.mark.parametrize("stack", STACKS)
def test_cli_prints_the_critical_path(example_plan, stack, capsys):
    # What `plan --stack STACK --critical-path` prints, from this run's plan of the stack (the
    # command itself runs in the next test, on research-v5p: one more plan of each stack through
    # it re-checked the same reading of the arguments)
    assert plan_cli._critical_path(example_plan(stack), as_json=False) == 0
    out = capsys.readouterr().out
    assert "Parallel total" in out and "Sequential total" in out
    assert "Structure: ok" in out


def test_research_critical_path_columns_line_up_and_stages_come_in_finishing_order(capsys):
    assert main(["plan", "--stack", "research-v5p", "--critical-path"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.strip().startswith("start"))
    rows = lines[header + 1 : lines.index("", header)]
    column = lines[header].index("resource")
    # every row's resource starts under the header, whatever the width of its duration cell
    # ("0m40s (0m20s-1m00s)" or "10m00s (5m00s-15m00s)")
    assert len(rows) > 3
    assert all(row[column - 1] == " " and row[column] != " " for row in rows), rows
    assert any("10m00s (5m00s-15m00s) TPU slice node pool:" in row for row in rows)
    text = " ".join(lines)
    stages = text.split("Stages finish at (typical): ")[1].split(".")[0]
    assert stages == (
        "cluster 10m00s, cpu node pools 14m00s, installs 17m00s, workloads submitted 18m00s, "
        "tpu node pools 20m00s"
    )


def test_duration_data_is_sourced_and_covers_the_example_stacks(example_plan):
    data = yaml.safe_load(DURATIONS_PATH.read_text())
    for type_token, rules in data["types"].items():
        for rule in rules:
            low, high = rule["seconds"]
            assert 0 <= low <= high, type_token
            assert rule["source"].strip(), f"{type_token} has no source"
    table = DurationTable.load()
    for stack in STACKS:
        for r in example_plan(stack).resources:
            if r.custom or r.type == CONFIG_FILE:
                duration = table.duration(r)
                assert duration.label != "default", f"{r.type} has no entry in durations.yaml"
