"""A stack file's plan is made once within a command that plans many stacks (``plan --all``,
tests/unit/plan/test_diff.py counts that end to end), and afresh everywhere else."""

from __future__ import annotations

import pytest

from components.errors import ConfigError, ConfigIssue
from components.plan import engine
from components.plan.shared_plans import each_stack_planned_once, shared
from tests.examples import EXAMPLES_DIR


def _maker(made: list[str], value: str):
    def make() -> str:
        made.append(value)
        return value

    return make


def test_outside_every_call_makes_its_plan():
    made: list[str] = []
    assert [shared("a", _maker(made, "A")) for _ in range(3)] == ["A", "A", "A"]
    assert made == ["A", "A", "A"]


def test_within_each_key_is_made_once_and_forgotten_after():
    made: list[str] = []
    with each_stack_planned_once():
        assert shared("a", _maker(made, "A")) == "A"
        assert shared("b", _maker(made, "B")) == "B"
        assert shared("a", _maker(made, "other")) == "A"
    assert made == ["A", "B"]
    assert shared("a", _maker(made, "again")) == "again"


def test_a_failed_plan_is_not_kept():
    attempts = []

    def fails() -> str:
        attempts.append(1)
        raise ConfigError([ConfigIssue("tpuPools", "bad")], "Pulumi.x.yaml")

    with each_stack_planned_once():
        for _ in range(2):
            with pytest.raises(ConfigError):
                shared("x", fails)
    assert len(attempts) == 2


def test_a_team_stack_alone_still_plans_its_owner(monkeypatch):
    """``plan --stack team-research``: its owner is planned for it (nothing shared outside)."""
    planned = []
    plan_read = engine.plan_read

    def counted(source, *args):
        planned.append(source.stack)
        return plan_read(source, *args)

    monkeypatch.setattr(engine, "plan_read", counted)
    engine.plan_file("team-research", EXAMPLES_DIR)
    assert planned == ["research-v5p", "team-research"]
