"""`__main__.py`, the program `pulumi up` runs, takes its config from the engine and registers
exactly what the offline plan shows for the same stack file."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pulumi
import pytest

from components.plan.engine import plan_file, run_program
from components.resolve.stack_files import read_stack_file
from tests.examples import EXAMPLE_STACKS

ROOT = Path(__file__).resolve().parents[2]


def run_entrypoint(stack: str, config: dict[str, str], references=None):
    # The engine hands a Python program its config as strings (set_all_config), the secrets
    # key marked secret.
    program = lambda: (runpy.run_path(str(ROOT / "__main__.py")), {})[1]  # noqa: E731
    secret = ("tpu-pathways:secrets",) if "tpu-pathways:secrets" in config else ()
    return run_program(program, stack, stack_outputs=references, config=config, secret_keys=secret)


def owner_outputs(config: dict[str, str], example_plan) -> dict[str, dict]:
    """What the engine's StackReference would read: the owner stack's exported outputs (its
    offline plan, conftest's ``example_plan``)."""
    owner = config.get("tpu-pathways:owner")
    fleet = config.get("tpu-pathways:fleet")
    if fleet is not None:  # a fleet reads each of its workers
        return {w: example_plan(w).outputs for w in json.loads(fleet)["workers"]}
    if owner is None:
        return {}
    return {owner: example_plan(owner).outputs}


@pytest.mark.parametrize("stack", list(EXAMPLE_STACKS))
def test_entrypoint_registers_what_the_plan_shows(stack, example_plan):
    config = read_stack_file(stack)
    resources, _ = run_entrypoint(stack, config, owner_outputs(config, example_plan))
    planned = example_plan(stack).resources
    assert [(r.urn, r.inputs, r.dependencies) for r in resources] == [
        (r.urn, r.inputs, r.dependencies) for r in planned
    ]


def test_entrypoint_reports_bad_config_without_a_traceback():
    config = read_stack_file("dev")
    config["tpu-pathways:tpuPools"] = json.dumps(
        [{"name": "v5e", "generation": "v5e", "topology": "4x5"}]
    )
    with pytest.raises(pulumi.RunError) as caught:
        run_entrypoint("dev", config)
    message = str(caught.value)
    assert "tpuPools[0].topology: '4x5' is not a v5e topology" in message


@pytest.fixture
def registrations(monkeypatch):
    """Every registration any program run asks of the mock engine, across runs."""
    from components.plan import engine

    seen: list[str] = []

    class Recording(engine.RecordingMonitor):
        def RegisterResource(self, request):
            seen.append(request.type)
            return super().RegisterResource(request)

    monkeypatch.setattr(engine, "RecordingMonitor", Recording)
    return seen


def test_a_shared_services_unknown_config_secret_registers_nothing(registrations):
    config = read_stack_file("dev")
    # Room for a client of the service (the only other problem of this config).
    config["tpu-pathways:cpuPool"] = json.dumps({"machineType": "n2-standard-64", "maxNodes": 4})
    config["tpu-pathways:sharedServices"] = json.dumps(
        [
            {
                "name": "shared",
                "pool": "v5e",
                "customComponents": [{"type": "worker", "env": {"FOO": {"configSecret": "nope"}}}],
            }
        ]
    )
    with pytest.raises(pulumi.RunError) as caught:
        run_entrypoint("dev", config)
    assert str(caught.value) == (
        "stack config (tpu-pathways:): 1 problem\n"
        "  - sharedServices[0].customComponents[0].env.FOO: configSecret 'nope' is not an entry "
        "of `secrets` (known: none); set it with pulumi config set --secret --path "
        "'tpu-pathways:secrets.nope' VALUE\n"
        "  more checks run once these are fixed: the preflight"
    )
    assert registrations == ["pulumi:pulumi:Stack"]  # the root stack only, nothing of ours


def test_a_config_error_from_build_stack_is_the_same_report_under_both_entries(monkeypatch):
    """Whatever check raises it, a ConfigError in build_stack reaches `pulumi up` as the
    RunError message (no traceback) and the offline plan as its own report."""
    from components.errors import ConfigError, ConfigIssue
    from components.stack import program

    def refuse(config, owner_read=False):
        raise ConfigError([ConfigIssue("workloads[0].pool", "a late check failed")], "checks")

    monkeypatch.setattr(program, "build_stack", refuse)
    with pytest.raises(pulumi.RunError) as under_engine:
        run_entrypoint("dev", read_stack_file("dev"))
    with pytest.raises(ConfigError) as offline:
        plan_file("dev")
    expected = "checks: 1 problem\n  - workloads[0].pool: a late check failed"
    assert str(under_engine.value) == expected
    assert str(offline.value) == expected
