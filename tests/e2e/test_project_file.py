"""Pulumi.yaml: what `pulumi up` on a user's machine relies on."""

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def project() -> dict:
    return yaml.safe_load((ROOT / "Pulumi.yaml").read_text())


def test_project_name_runtime_and_stack_dir():
    doc = project()
    assert doc["name"] == "tpu-pathways"
    assert doc["runtime"]["name"] == "python"
    assert doc["runtime"]["options"]["virtualenv"] == ".venv"
    assert doc["stackConfigDir"] == "stacks"


def test_state_backend_needs_no_account():
    assert project()["backend"]["url"].startswith("file://")


def test_default_kubernetes_provider_is_disabled_for_every_stack():
    config = project()["config"]
    assert config["pulumi:disable-default-providers"]["value"] == ["kubernetes"]


def test_the_engine_installs_this_project():
    # Pulumi's pip toolchain installs requirements.txt; it must pull in pyproject's dependencies,
    # at the lock's versions.
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    active = [line for line in lines if line and not line.startswith("#")]
    assert active == ["-c requirements/constraints.txt", "-e ."]


def test_pulumi_kubernetes_never_adopts_an_existing_namespace():
    # Before 4.29 a create was a server-side apply that silently took over an existing object
    # (another team stack's namespace); from 4.29 it fails with AlreadyExists.
    import tomllib
    from importlib.metadata import version

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert "pulumi-kubernetes>=4.29,<5" in deps
    installed = tuple(int(part) for part in version("pulumi_kubernetes").split(".")[:2])
    assert installed >= (4, 29)
