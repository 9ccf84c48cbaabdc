"""The deploy parallelism, the sensitivity to GKE's concurrency, the timeouts and the options
(components/plan/deploy_time.py): small graphs worked out by hand, then a 64-slice stack through
the CLI."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from components.cli.main import main
from components.gke.operations import SENSITIVITY, Concurrency
from components.plan.deploy_time import (
    MAX_DEPLOY_PARALLEL,
    deploy_parallel,
    go_seconds,
    late_node_pools,
    peak_in_flight,
    sensitivity,
)
from components.plan.durations import DurationTable
from components.plan.model import PlannedResource
from components.plan.schedule import Graph, Limits, Schedule
from components.tokens import CONFIG_FILE, NODE_POOL

TPU = {"nodeConfig": {"machineType": "ct5lp-hightpu-4t"}}
TABLE = DurationTable.from_dict(
    {
        "engine": {"parallelPerCpu": 1, "runnerCpus": 2, "jobLimitMinutes": 1},
        "defaultCustom": {"seconds": [0, 0], "source": "test"},
        "types": {
            "t:x:S10": [{"seconds": [10, 10], "source": "test"}],
            CONFIG_FILE: [{"seconds": [5, 5], "source": "test"}],
            NODE_POOL: [
                {
                    "when": {"input": "nodeConfig.flexStart", "equals": True},
                    "seconds": [1, 1],
                    "source": "test: created empty",
                },
                {"seconds": [10, 30], "source": "test: 20 s typical"},
            ],
        },
    }
)


def res(name, type_, deps=(), inputs=None, timeout=None) -> PlannedResource:
    options = {"customTimeouts": {"create": timeout}} if timeout else {}
    return PlannedResource(
        urn=name,
        type=type_,
        name=name,
        parent=None,
        custom=True,
        provider=None,
        inputs=inputs or {},
        dependencies=list(deps),
        options=options,
    )


# A cluster (10 s); three TPU pools and an install wait for it; a second install waits for the
# first. Pools take 10 / 20 / 30 s (low / typical / high), installs 5 s.
GRAPH = Graph(
    [
        res("c", "t:x:S10"),
        *(res(f"p{i}", NODE_POOL, ("c",), TPU, "40s") for i in (1, 2, 3)),
        res("i1", CONFIG_FILE, ("c",)),
        res("i2", CONFIG_FILE, ("i1",)),
    ]
)
DURATIONS = {urn: TABLE.duration(r) for urn, r in GRAPH.resources.items()}


def test_peak_in_flight_counts_what_is_ready_at_once():
    # Without an engine limit and GKE taking 10: at 10 s the three pools and i1 are ready (4);
    # i2 replaces i1 at 15 s. The cluster alone before.
    schedule = Schedule(GRAPH, DURATIONS, "typical", Limits(None, 10))
    assert schedule.peak_in_flight() == 4
    assert peak_in_flight(GRAPH, DURATIONS) == 4


def test_a_pool_queued_at_gke_still_holds_its_slot():
    # GKE one at a time: the pools run 10-30, 30-50, 50-70 (typical) but all three hold a slot
    # from 10 s, beside i1: still 4.
    assert Schedule(GRAPH, DURATIONS, "typical", Limits(None, 1)).peak_in_flight() == 4


def test_the_deploy_parallelism_is_at_least_pulumis_default():
    # Pulumi's default in this table is 1 x 2 CPUs = 2; the peak, 4, is more.
    assert deploy_parallel(GRAPH, TABLE) == 4
    small = Graph([res("c", "t:x:S10"), res("i1", CONFIG_FILE, ("c",))])
    assert deploy_parallel(small, TABLE) == 2


def test_the_deploy_parallelism_has_a_ceiling():
    pools = [res(f"p{i}", NODE_POOL, (), TPU) for i in range(MAX_DEPLOY_PARALLEL + 5)]
    assert deploy_parallel(Graph(pools), TABLE) == MAX_DEPLOY_PARALLEL


def test_at_the_deploy_parallelism_nothing_waits_for_a_slot():
    at_peak = Schedule(GRAPH, DURATIONS, "typical", Limits(4, 1))
    assert [at_peak.slot_wait(u) for u in GRAPH.order] == [0] * 6
    # With 2 slots p1 and p2 take both at 10 s (p2 waiting at GKE); p1's slot goes at 30 s to
    # p3, ready as early and registered before i1 (first come, first served, ties in plan
    # order); i1 gets p2's at 50 s.
    narrow = Schedule(GRAPH, DURATIONS, "typical", Limits(2, 1))
    assert narrow.slot_wait("i1") == 40


def test_sensitivity_rows():
    levels = [Concurrency(1, "one"), Concurrency(3, "three")]
    rows = sensitivity(GRAPH, DURATIONS, TABLE, 4, levels)
    one, three = rows
    # GKE one at a time: pools end at 30, 50, 70 s typical (10 + 3 x 20); low 10 + 3 x 10,
    # high 10 + 3 x 30. Installs: 10 + 5 + 5.
    assert (one.node_pool_operations, one.source, one.parallel) == (1, "one", 4)
    assert one.total == {"low": 40, "typical": 70, "high": 100}
    assert (one.installs, one.tpu_pools) == (20, 70)
    assert three.total == {"low": 20, "typical": 30, "high": 40}
    # At Pulumi's default (2 slots) and GKE's 3: two pools at 10-30; p3 at 30-50 holds a slot
    # from 30 s, i1 gets the other (30-35), then i2 (35-40).
    assert (three.default_parallel, three.default_total, three.default_installs) == (2, 50, 40)
    # Pools created empty take 1 s: 10 + 3 x 1 at one at a time; installs then bound it (20).
    assert one.empty_pools_total == {"low": 20, "typical": 20, "high": 20}


def test_timeouts_and_the_job_limit_against_the_high_estimate():
    one, three = sensitivity(GRAPH, DURATIONS, TABLE, 4, [Concurrency(1, ""), Concurrency(3, "")])
    # One at a time, high: p2 holds its slot from 10 s and ends at 70 s (60 s > 40 s), p3 at
    # 100 s; p1 (30 s) makes it. Three at once: 30 s each.
    assert one.late_node_pools == ["p2", "p3"]
    assert three.late_node_pools == []
    # The job limit of this table is 1 min: 100 s passes it, 40 s does not.
    assert (one.over_job_limit, three.over_job_limit) == (True, False)


def test_a_pool_without_custom_timeouts_gets_the_providers_default():
    graph = Graph([res("p", NODE_POOL, (), TPU)])
    schedule = Schedule(graph, {"p": TABLE.duration(graph.resources["p"])}, "high")
    assert late_node_pools(graph, schedule) == []  # 30 s against 2 h


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("2h", 7200), ("3h30m", 12600), ("90m", 5400), ("40s", 40), ("1h0m5s", 3605), ("", None)],
)
def test_go_durations_read(text, seconds):
    assert go_seconds(text) == seconds


def test_no_empty_pool_option_without_a_tpu_pool_to_change():
    flex = {"nodeConfig": {"machineType": "ct5lp-hightpu-4t", "flexStart": True}}
    graph = Graph([res("c", "t:x:S10"), res("p", NODE_POOL, ("c",), flex)])
    durations = {u: TABLE.duration(r) for u, r in graph.resources.items()}
    (row,) = sensitivity(graph, durations, TABLE, 2, [Concurrency(1, "")])
    assert row.empty_pools_total is None


# --- a 64-slice stack through the CLI ----------------------------------------------------------

BENCH_STACKS = Path(__file__).resolve().parents[3] / "benchmarks" / "stacks.py"


@pytest.fixture(scope="module")
def sixty_four_slices(tmp_path_factory):
    spec = importlib.util.spec_from_file_location("bench_stacks_for_deploy_time", BENCH_STACKS)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    work = tmp_path_factory.mktemp("stacks")
    return work, module.write_stack(work, 64)


def test_sixty_four_slices_sensitivity_table(sixty_four_slices, capsys):
    work, stack = sixty_four_slices
    assert main(["plan", "--stack", stack, "--stacks-dir", str(work), "--critical-path"]) == 0
    out = capsys.readouterr().out
    rows = {
        line.split()[0]: line.split()
        for line in out.splitlines()
        if line.strip() and line.split()[0] in {"5", "10", "25", "100"} and "(" in line
    }
    # 64 TPU pools of 10 min and 2 CPU pools of 4 min, after the cluster (10 min), GKE taking
    # G at once: G=100 all at once (20 min); G=25 three rounds (40 min); G=10 the CPU pools free
    # two lanes at 14 min, 64 pools over 10 lanes: 7 rounds (1h20m); G=5: 13 rounds on the lanes
    # after a CPU pool (10 + 4 + 130 min = 2h24m). Installs at 17 min at every G.
    assert {g: (r[1], r[3]) for g, r in rows.items()} == {
        "5": ("2h24m00s", "17m00s"),
        "10": ("1h20m00s", "17m00s"),
        "25": ("40m00s", "17m00s"),
        "100": ("20m00s", "17m00s"),
    }
    # the bare `pulumi up` (8 slots): installs behind the pools
    assert rows["10"][4:6] == ["1h34m11s", "1h33m03s"]
    for level in SENSITIVITY:
        assert f"  {level.operations}: {level.source}" in out
    assert "Timeouts: every node pool's create timeout" in out
    assert "TPU pools created empty and grown by the cluster autoscaler" in out
