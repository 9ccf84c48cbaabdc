"""`__main__.py`, the program `pulumi up` runs, takes its config from the engine and registers
exactly what the offline plan shows for the same stack file."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pulumi
import pytest

from components.plan.engine import plan_file, run_program
from components.stack.loader import available_stacks, read_stack_file

ROOT = Path(__file__).resolve().parents[2]


def run_entrypoint(stack: str, config: dict[str, str], references=None):
    # The engine hands a Python program its config as strings (set_all_config), the secrets
    # key marked secret.
    program = lambda: (runpy.run_path(str(ROOT / "__main__.py")), {})[1]  # noqa: E731
    secret = ("tpu-pathways:secrets",) if "tpu-pathways:secrets" in config else ()
    return run_program(program, stack, stack_outputs=references, config=config, secret_keys=secret)


def owner_outputs(config: dict[str, str]) -> dict[str, dict]:
    """What the engine's StackReference would read: the owner stack's exported outputs."""
    owner = config.get("tpu-pathways:owner")
    if owner is None:
        return {}
    return {owner: plan_file(owner).outputs}


@pytest.mark.parametrize("stack", available_stacks())
def test_entrypoint_registers_what_the_plan_shows(stack):
    config = read_stack_file(stack)
    resources, _ = run_entrypoint(stack, config, owner_outputs(config))
    planned = plan_file(stack).resources
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
