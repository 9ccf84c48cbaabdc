"""parse_stack_config validates the same values once per process (the offline plan validates the
stack file, then the program validates the engine's copy of the same values)."""

from __future__ import annotations

import pytest

from components.errors import ConfigError, ConfigIssue
from components.resolve import checks


@pytest.fixture
def validations(monkeypatch):
    """How many times the config was really validated."""
    calls: list[str] = []
    real = checks._validate

    def counting(values, source, owner, earlier):
        calls.append(source)
        return real(values, source, owner, earlier)

    monkeypatch.setattr(checks, "_validate", counting)
    return calls


def test_the_same_values_are_validated_once(stack_values, validations):
    first = checks.parse_stack_config(stack_values(), "the file")
    again = checks.parse_stack_config(stack_values(), "the engine's config")
    assert again is first
    assert validations == ["the file"]


def test_other_values_are_validated_again(stack_values, validations):
    first = checks.parse_stack_config(stack_values())
    other = checks.parse_stack_config(stack_values(team="research"))
    assert (first.team, other.team) == ("ml-platform", "research")
    assert len(validations) == 2


def test_a_refused_config_is_refused_every_time(stack_values, validations):
    values = stack_values(environment="staging-ish")
    for _ in range(2):
        with pytest.raises(ConfigError):
            checks.parse_stack_config(values)
    assert len(validations) == 2


def test_problems_found_before_are_never_answered_from_the_memo(stack_values, validations):
    checks.parse_stack_config(stack_values())
    earlier = [ConfigIssue("tpu-pathway:team", "misspelled namespace")]
    with pytest.raises(ConfigError) as raised:
        checks.parse_stack_config(stack_values(), earlier=earlier)
    assert [i.key for i in raised.value.issues] == ["tpu-pathway:team"]
    assert len(validations) == 2


def test_a_key_json_rewrites_has_no_memo_key():
    """json.dumps writes the key True as "true": the two must not share a memo entry."""
    assert checks._validation_key({"secrets": {"true": "x"}}, None) is not None
    assert checks._validation_key({"secrets": {True: "x"}}, None) is None
    assert checks._validation_key({"tpuPools": ({"name": "v5e"},)}, None) is None
