"""One version: pyproject's, the top released CHANGELOG section's, the policy pack's and the
component package's schema."""

from __future__ import annotations

import json
import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
PROJECT_VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def released_versions(changelog: str) -> list[str]:
    return re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", changelog, re.MULTILINE)


def test_the_changelog_reader_skips_unreleased():
    text = "## [Unreleased]\n\n## [1.2.0] - 2026-01-02\n\n## [1.1.0] - 2025-01-01\n"
    assert released_versions(text) == ["1.2.0", "1.1.0"]


def test_pyproject_has_the_version_of_the_top_released_changelog_section():
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in changelog
    assert released_versions(changelog)[0] == PROJECT_VERSION


def test_the_installed_metadata_policy_pack_and_package_schema_carry_it():
    assert version("tpu-pathways") == PROJECT_VERSION
    pack = yaml.safe_load((ROOT / "policy" / "PulumiPolicy.yaml").read_text())
    assert pack["version"] == PROJECT_VERSION
    schema = json.loads((ROOT / "provider" / "schema.json").read_text())
    assert schema["version"] == PROJECT_VERSION


def test_the_package_ships_its_annotations():
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "py.typed" in package_data["package-data"]["components"]
    assert (ROOT / "components" / "py.typed").is_file()
