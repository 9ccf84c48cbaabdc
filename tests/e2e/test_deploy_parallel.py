"""The deploy action passes `pulumi up --parallel` from the plan (`plan --deploy-parallelism`):
the most operations ready or in flight at once, so nothing that can start waits for a slot, never
below Pulumi's default (8 on the runner). Its step is run here for real on a 64-slice stack; on
dev, its plan command runs in this process. Both against counts of what is ready at once worked
out by hand."""

from __future__ import annotations

import importlib.util
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
    """What the step's command substitution passes `python -m components` for ``stack``."""
    script = _parallel_step()["run"].replace(STACK_INPUT, shlex.quote(stack))
    words = shlex.split(script.splitlines()[0])
    command = words[words.index("components") + 1 :]
    return [*command[:-1], command[-1].removesuffix(")")]


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


def test_sixty_four_slices_deploy_with_everything_ready_at_once(sixty_four_slices, tmp_path):
    work, stack = sixty_four_slices
    # Just before 18 min the installs are done and the jobs go in while GKE still queues the
    # slices (10 at once until 1h20m): 64 TPU node pools, 16 PathwaysJobs (one per pool of 4
    # slices; they wait for Kueue's controller to roll onto its configuration, so the
    # controller patches are done by then), and Kueue's metrics scraper objects (its token
    # Secret, its cluster role binding and its collector's role binding).
    assert _run_step(tmp_path, stack, work) == f"parallel={64 + 16 + 3}\n"


def test_a_small_stack_gets_what_is_ready_when_its_cluster_is(capsys):
    # dev at 10 min, its cluster up: its 3 node pools (system, CPU, one v5e slice), 5 priority
    # classes and the controllers' own, the team namespace and the team's 2 bucket grants (the
    # scratch bucket, the datasets bucket): 12, more than Pulumi's 8. The admission policies
    # every team namespace shares wait for the system pool and JobSet's install.
    arguments = _step_plan_arguments("dev")
    assert arguments == ["plan", "--stack", "dev", "--deploy-parallelism"]
    code, out, err = run_cli(capsys, *arguments)
    assert code == 0, err
    assert out == f"{3 + 5 + 1 + 1 + 2}\n"


def test_the_cli_refuses_what_it_would_drop(capsys):
    from components.cli.main import main

    code = main(["plan", "--stack", "dev", "--deploy-parallelism", "--json"])
    assert code == 2
    assert "--json would do nothing" in capsys.readouterr().err
