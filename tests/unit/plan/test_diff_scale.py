"""A diff against a large base stays linear (issue 35): checks of the algorithm's structure,
without a clock (benchmarks/run.py measures the time, at up to 70,000 resources).

- the modeled `pulumi up` finishes a component without scanning its siblings (a TPU pool
  component of 10,000 slices has 10,000 node pools);
- a diff schedules one estimate per plan (the typical one it draws), and a critical path
  without limits simulates each estimate once;
- a base is read with one bounded walk and copied only if it holds surrogate escapes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from components.cli import diff as diff_cli
from components.plan import critical_path as cp
from components.plan.critical_path import critical_path
from components.plan.diff import diff_plans
from components.plan.durations import DurationTable
from components.plan.model import Plan, PlannedResource
from components.plan.schedule import UNBOUNDED, Graph, Limits, Schedule
from tests.helpers import graph_resource as res

ROOT = Path(__file__).resolve().parents[3]
DEV_BASE = ROOT / "tests" / "data" / "plan-dev-base.json"

# "t:x:S10" takes 10 s, "t:x:S5" 5 s; components take no time.
TABLE = DurationTable.from_dict(
    {
        "defaultCustom": {"seconds": [0, 0], "source": "test"},
        "types": {
            "t:x:S10": [{"seconds": [10, 10], "source": "test"}],
            "t:x:S5": [{"seconds": [4, 6], "source": "test"}],
        },
    }
)


class Unscannable(list):
    """A component's children that may be iterated but never searched."""

    def __contains__(self, item: object) -> bool:
        raise AssertionError("a component's children were scanned for one child")

    def index(self, *args: Any) -> int:
        raise AssertionError("a component's children were scanned for one child")


def test_a_component_is_done_without_scanning_its_children():
    # "pool" (a component) holds 500 node pools of 10 s; "job" waits for the component, so for
    # all of them: done at 10 s, the job runs 10-20.
    children = [res(f"np{i}", parent="pool") for i in range(500)]
    graph = Graph([res("pool", "t:x:Pool", custom=False), *children, res("job", deps=("pool",))])
    graph.children["pool"] = Unscannable(graph.children["pool"])
    durations = {urn: TABLE.duration(r) for urn, r in graph.resources.items()}
    schedule = Schedule(graph, durations, "typical")
    assert schedule.done["pool"] == 10
    assert (schedule.start["job"], schedule.finish["job"]) == (10, 20)
    assert schedule.makespan == 20


class Counted(Schedule):
    made: list[str] = []

    def __post_init__(self) -> None:
        Counted.made.append(self.estimate)
        super().__post_init__()


@pytest.fixture
def schedules(monkeypatch) -> list[str]:
    Counted.made = []
    monkeypatch.setattr(cp, "Schedule", Counted)
    return Counted.made


CHAIN = [res("a"), res("b", "t:x:S5", deps=("a",)), res("c", deps=("b",))]


def test_without_limits_each_estimate_is_simulated_once(schedules):
    path = critical_path(CHAIN, TABLE, UNBOUNDED)
    assert schedules == ["low", "typical", "high"]
    assert path.parallel == path.unbounded == {"low": 24, "typical": 25, "high": 26}


def test_within_limits_each_estimate_is_simulated_within_and_without_them(schedules):
    path = critical_path(CHAIN, TABLE, Limits(1, None))
    assert schedules == ["low", "typical", "high"] * 2
    assert path.parallel == path.unbounded == {"low": 24, "typical": 25, "high": 26}


def test_only_the_typical_estimate_when_asked(schedules):
    path = critical_path(CHAIN, TABLE, UNBOUNDED, estimates=("typical",))
    assert schedules == ["typical"]
    assert path.parallel == path.unbounded == {"typical": 25}
    assert path.sequential == {"typical": 25}
    assert [(s.name, s.start, s.finish) for s in path.chain] == [
        ("a", 0, 10),
        ("b", 10, 15),
        ("c", 15, 25),
    ]


def test_the_chain_needs_the_typical_estimate():
    with pytest.raises(ValueError, match="typical"):
        critical_path(CHAIN, TABLE, UNBOUNDED, estimates=("low", "high"))


def _plan(*resources: PlannedResource) -> Plan:
    return Plan("s", "p", list(resources), {}, {"tpu": {}})


def test_a_diff_schedules_the_typical_estimate_of_each_plan(schedules):
    diff = diff_plans(_plan(*CHAIN), _plan(*CHAIN[:2]))
    assert schedules == ["typical", "typical"]
    assert [s.name for s in diff.path_before.chain] == ["a", "b", "c"]
    assert [s.name for s in diff.path_after.chain] == ["a", "b"]
    assert list(diff.path_before.parallel) == list(diff.path_after.parallel) == ["typical"]


# --- reading a base ---------------------------------------------------------------------------


def nested(levels: int) -> Any:
    """A value whose deepest part is at ``levels`` (a scalar counts as a level)."""
    value: Any = "x"
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def lists(levels: int) -> Any:
    """``levels`` arrays, one in another, the innermost empty."""
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("value", "too_deep"),
    [
        (nested(64), False),
        (nested(65), True),
        (lists(64), False),
        (lists(65), True),
        ({"a": [1, {"b": nested(61)}]}, False),  # 3 levels above it + 61
        ({"a": [1, {"b": nested(62)}]}, True),
        ("x", False),
    ],
)
def test_the_depth_bound(value, too_deep):
    assert diff_cli._too_deep(value) is too_deep


def _refuse_copies(value: Any) -> Any:
    raise AssertionError("the base was copied")


def test_a_base_without_surrogate_escapes_is_read_without_a_copy(monkeypatch):
    monkeypatch.setattr(diff_cli, "encodable", _refuse_copies)
    plan = diff_cli.load_plan_document(DEV_BASE, "--diff")
    assert plan.stack == "dev"


def test_a_base_with_a_surrogate_escape_is_made_encodable(monkeypatch, tmp_path):
    copies: list[Any] = []
    keep = diff_cli.encodable

    def encodable(value: Any) -> Any:
        copies.append(value)
        return keep(value)

    monkeypatch.setattr(diff_cli, "encodable", encodable)
    document = json.loads(DEV_BASE.read_text())
    document["resources"][0]["name"] = "x\U0001f600"  # written as \ud83d\ude00
    document["resources"][1]["name"] = "y\ud800"  # a lone surrogate
    base = tmp_path / "base.json"
    base.write_text(json.dumps(document))
    plan = diff_cli.load_plan_document(base, "--diff")
    assert copies[0]["stack"] == "dev"  # the whole document, once
    assert sum(1 for c in copies if isinstance(c, dict) and "stack" in c) == 1
    assert [r.name for r in plan.resources[:2]] == ["x\U0001f600", "y\\ud800"]
