"""The deploy action passes `pulumi up --parallel` sized to the stack: every node pool and
install in flight at once, never below Pulumi's default (8 on the runner). Its step is run here
for real on a 64-slice stack; on dev, its plan command runs in this process."""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / ".github" / "actions" / "deploy-stack" / "action.yml"
STACK_INPUT = '"${{ inputs.stack }}"'


def _parallel_step() -> dict:
    steps = yaml.safe_load(ACTION.read_text())["runs"]["steps"]
    (step,) = [s for s in steps if s.get("id") == "parallel"]
    return step


def _run_step(tmp_path: Path, stack: str, stacks_dir: Path | None) -> str:
    script = _parallel_step()["run"].replace(".venv/bin/python", sys.executable)
    where = f'"{stack}"' + (f' --stacks-dir "{stacks_dir}"' if stacks_dir else "")
    assert STACK_INPUT in script
    script = script.replace(STACK_INPUT, where)
    output = tmp_path / "github_output"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(output),
    }
    subprocess.run(["bash", "-e", "-c", script], cwd=ROOT, env=env, check=True, timeout=300)
    return output.read_text()


def _step_plan_arguments(stack: str) -> list[str]:
    """What the step's first command passes `python -m components` for ``stack`` (up to its
    redirection into the file the second command reads)."""
    words = shlex.split(_parallel_step()["run"].replace(STACK_INPUT, shlex.quote(stack)))
    command = words[words.index("components") + 1 : words.index(">")]
    return [word for word in command if word.strip()]  # the line continuation's newline


def test_pulumi_up_gets_the_steps_output():
    steps = yaml.safe_load(ACTION.read_text())["runs"]["steps"]
    (pulumi,) = [s for s in steps if str(s.get("uses", "")).startswith("pulumi/actions")]
    assert pulumi["with"]["parallel"] == "${{ steps.parallel.outputs.parallel }}"
    # pinned to v6.6.1's commit, as every action is (tests/e2e/test_workflows.py)
    assert pulumi["uses"] == "pulumi/actions@8582a9e8cc630786854029b4e09281acd6794b58"


@pytest.fixture(scope="module")
def sixty_four_slices(tmp_path_factory):
    spec = importlib.util.spec_from_file_location(
        "bench_stacks_for_deploy", ROOT / "benchmarks" / "stacks.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    work = tmp_path_factory.mktemp("stacks")
    return work, module.write_stack(work, 64)


def test_sixty_four_slices_deploy_with_every_pool_and_install_at_once(sixty_four_slices, tmp_path):
    work, stack = sixty_four_slices
    # 64 TPU node pools, the system and CPU pools, and 3 installs (JobSet, the PathwaysJob
    # controller, Kueue).
    assert _run_step(tmp_path, stack, work) == "parallel=69\n"


def test_a_small_stack_keeps_pulumis_default(capsys):
    # dev: 3 node pools and 3 installs, fewer than Pulumi's 8.
    arguments = _step_plan_arguments("dev")
    assert arguments == ["plan", "--stack", "dev", "--critical-path", "--json"]
    code, out, err = run_cli(capsys, *arguments)
    assert code == 0, err
    assert json.loads(out)["deploy_parallel"] == 8
