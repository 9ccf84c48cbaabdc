"""The modeled `pulumi up` within the engine's ``--parallel`` and GKE's node pool operations per
cluster (components/plan/critical_path.py, ``Limits``). Small graphs with schedules worked out by
hand, then a 64-slice stack."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from components.cli.main import main
from components.plan.critical_path import (
    NODE_POOL,
    DurationTable,
    Limits,
    critical_path,
    default_limits,
    default_table,
)
from components.plan.engine import plan_file
from tests.helpers import graph_resource as res

TABLE = DurationTable.from_dict(
    {
        "defaultCustom": {"seconds": [0, 0], "source": "test"},
        "types": {
            "t:x:S10": [{"seconds": [10, 10], "source": "test"}],
            "t:x:S5": [{"seconds": [5, 5], "source": "test"}],
            NODE_POOL: [{"seconds": [10, 10], "source": "test"}],
        },
    }
)
BENCH_STACKS = Path(__file__).resolve().parents[3] / "benchmarks" / "stacks.py"


# A cluster (10 s), then five node pools (10 s each) and two installs (5 s each) that wait for it.
CLUSTER_POOLS_INSTALLS = [
    res("c", "t:x:S10"),
    *(res(f"p{i}", NODE_POOL, ("c",)) for i in range(1, 6)),
    res("i1", "t:x:S5", ("c",)),
    res("i2", "t:x:S5", ("c",)),
]


def test_both_limits():
    # --parallel 3, GKE 2 at once. At 10 s p1, p2 start and p3 takes the third engine slot to
    # wait for GKE; at 20 s p3, p4 start (p5 waits holding a slot); at 30 s p5 starts, the
    # installs get the two freed slots (30-35); p5 ends at 40 s.
    path = critical_path(CLUSTER_POOLS_INSTALLS, TABLE, Limits(3, 2))
    assert path.parallel == {"low": 40, "typical": 40, "high": 40}
    assert path.unbounded == {"low": 20, "typical": 20, "high": 20}
    assert path.sequential["typical"] == 70
    assert path.limits == {"parallel": 3, "nodePoolOperations": 2}
    # The chain goes through the queue: each pool started when the one before freed its slot.
    assert [(s.name, s.start, s.finish) for s in path.chain] == [
        ("c", 0, 10),
        ("p1", 10, 20),
        ("p3", 20, 30),
        ("p5", 30, 40),
    ]


def test_the_engine_limit_alone():
    # 3 slots: p1-p3 at 10-20, p4, p5, i1 at 20 (i1 ends at 25), i2 at 25-30.
    assert critical_path(CLUSTER_POOLS_INSTALLS, TABLE, Limits(3, None)).parallel["typical"] == 30


def test_the_gke_limit_alone():
    # Two pools at a time: 10-20, 20-30, 30-40; the installs run at once beside them.
    assert critical_path(CLUSTER_POOLS_INSTALLS, TABLE, Limits(None, 2)).parallel["typical"] == 40


def test_without_limits_the_longest_chain():
    assert critical_path(CLUSTER_POOLS_INSTALLS, TABLE, Limits(None, None)).parallel == {
        "low": 20,
        "typical": 20,
        "high": 20,
    }


def test_the_default_is_pulumis_on_a_two_vcpu_runner_and_ten_gke_operations():
    assert default_limits(default_table()) == Limits(8, 10)
    assert default_limits(default_table(), 32) == Limits(32, 10)


@pytest.fixture(scope="module")
def sixty_four_slices(tmp_path_factory):
    spec = importlib.util.spec_from_file_location("bench_stacks_for_limits", BENCH_STACKS)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    work = tmp_path_factory.mktemp("stacks")
    return work, module.write_stack(work, 64)


@pytest.fixture(scope="module")
def sixty_four_resources(sixty_four_slices):
    """The 64-slice stack's planned resources, planned once for the tests that model them."""
    work, stack = sixty_four_slices
    return plan_file(stack, work).resources


def test_sixty_four_slices_take_the_queue_not_one_slice(sixty_four_resources):
    resources = sixty_four_resources
    # Pulumi's bare default, 8 slots: 64 TPU slices of 10 min (typical) through 8 engine slots,
    # at least 64 x 10 / 8 = 80 min after the cluster (10 min), against 20 min if every slice ran
    # at once; the installs, the private DNS zones, the metrics scrapers and the jobs, which
    # hold slots too, add a minute and a half. The installs queue behind the pools that took
    # the slots first.
    bare = critical_path(resources, limits=default_limits(default_table()))
    assert bare.unbounded["typical"] == 20 * 60
    assert bare.parallel["typical"] == 94 * 60 + 11
    assert bare.milestones["installs"] > 90 * 60
    # More engine slots than GKE takes: GKE's 10 at a time bound it (7 rounds of node pools).
    wide = critical_path(resources, limits=Limits(1000, 10))
    assert wide.parallel["typical"] == 80 * 60


def test_by_default_the_deploy_parallelism_and_nothing_waits_for_a_slot(sixty_four_resources):
    path = critical_path(sixty_four_resources)
    assert path.limits == {"parallel": path.deploy_parallel, "nodePoolOperations": 10}
    assert path.slot_waits == {"resources": 0, "longest": 0.0}
    # GKE's 10 at a time bound the total (7 rounds of 10 min after the cluster); the installs
    # are done after the cluster (10 min), the system pool (4 min) and their own chain (JobSet,
    # then Kueue and the controller, 1.5 min each).
    assert path.parallel["typical"] == 80 * 60
    assert path.milestones["cpu node pools"] == 14 * 60
    assert path.milestones["installs"] == 17 * 60


def test_the_cli_says_what_it_assumed(sixty_four_slices, capsys):
    work, stack = sixty_four_slices
    args = ["plan", "--stack", stack, "--stacks-dir", str(work), "--critical-path"]
    assert main([*args, "--parallel", "16"]) == 0
    out = capsys.readouterr().out
    assert "Assumed: `pulumi up --parallel 16` (at most 16 operations at once); GKE node" in out
    assert "Parallel total (as the engine runs it, within those limits): 1h20m00s" in out
    assert "Without any limit (the graph's longest chain): 20m00s" in out
    # the deploy parallelism is printed whatever was modeled
    assert "Deploy with `pulumi up --parallel 83`" in out
