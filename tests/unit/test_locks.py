"""The lock files agree with pyproject.toml and with each other (``python scripts/lock.py``
writes them): the README's set-up, CI and the workflows install exactly these versions."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements" / "lock.txt"
CONSTRAINTS = ROOT / "requirements" / "constraints.txt"
POLICY = ROOT / "policy" / "requirements.txt"
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
REGENERATE = "the lock is stale: run `python scripts/lock.py` (needs uv)"


def entries(text: str) -> list[str]:
    """Each requirement of a requirements file, its continuation lines joined."""
    joined = text.replace("\\\n", " ")
    return [
        line.strip()
        for line in joined.splitlines()
        if line.strip() and not line.lstrip().startswith(("#", "-"))
    ]


def pins(text: str) -> dict[str, tuple[str, str]]:
    """name -> (version, marker) of every ``name==version`` entry."""
    found = {}
    for entry in entries(text):
        requirement = Requirement(re.sub(r"\s+--hash=\S+", "", entry))
        (spec,) = requirement.specifier
        assert spec.operator == "==", entry
        found[canonicalize_name(requirement.name)] = (spec.version, str(requirement.marker or ""))
    return found


LOCKED = pins(LOCK.read_text())


def declared() -> list[Requirement]:
    return [
        Requirement(r)
        for r in [*PROJECT["dependencies"], *PROJECT["optional-dependencies"]["test"]]
    ]


@pytest.mark.parametrize("requirement", declared(), ids=str)
def test_every_declared_dependency_is_locked_inside_its_range(requirement):
    name = canonicalize_name(requirement.name)
    assert name in LOCKED, REGENERATE
    version, marker = LOCKED[name]
    assert requirement.specifier.contains(version, prereleases=True), REGENERATE
    if requirement.marker:  # a platform-limited dependency keeps its limit in the lock
        assert Marker(marker) == requirement.marker


def test_the_lock_checker_sees_a_pin_outside_its_range():
    assert not Requirement("pulumi>=3.261,<3.273").specifier.contains("3.273.0")


def test_every_locked_requirement_is_hash_pinned():
    unhashed = [e.split()[0] for e in entries(LOCK.read_text()) if "--hash=sha256:" not in e]
    assert unhashed == []
    assert len(LOCKED) > 40


def test_the_constraints_are_the_lock_without_hashes():
    text = CONSTRAINTS.read_text()
    assert "--hash" not in text
    assert pins(text) == LOCKED


def test_the_policy_pack_requirements_are_hashed_at_the_locks_versions():
    text = POLICY.read_text()
    policy = pins(text)
    assert {"pulumi-policy", "pulumi", "pydantic", "pyyaml"} <= set(policy)
    assert {name: v for name, (v, _) in policy.items()} == {
        name: LOCKED[name][0] for name in policy
    }
    assert all("--hash=sha256:" in e for e in entries(text))
    # installs on its own: no local path, no editable project
    assert not re.search(r"^\s*(-e|\.|/)", text, re.MULTILINE)


def test_the_lock_covers_the_pythons_the_project_supports():
    header = LOCK.read_text().splitlines()[:3]
    assert any("uv pip compile --universal" in line for line in header)
    assert PROJECT["requires-python"] == ">=3.11"


def test_the_plugin_installs_the_project_at_the_locks_versions():
    lines = (ROOT / "provider" / "requirements.txt").read_text().splitlines()
    active = [line for line in lines if line and not line.startswith("#")]
    assert active == ["-c ../requirements/constraints.txt", ".."]
