"""A stack file of your own in stacks/ never fails the example tests: in a copy of the
repository's tests and stacks with a valid Pulumi.vision.yaml and a half-written Pulumi.wip.yaml
added, the tests that plan every example stack pass, and the one test that plans your stack
files fails for the broken one only, saying that it is yours and why. The inner run reads the
plans this run made of the example stacks and of the valid stack file of your own
(tests/plan_cache.py) instead of planning them again."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from components.plan.engine import plan_file
from tests import plan_cache
from tests.examples import EXAMPLE_STACKS, PROJECT_ROOT

VISION = """\
config:
  tpu-pathways:environment: dev
  tpu-pathways:team: vision
  tpu-pathways:gcp:
    project: tpu-pathways-vision
    region: us-east5
    zone: us-east5-b
  tpu-pathways:cluster:
    name: pathways-vision
  tpu-pathways:tpuPools:
    - name: v6e
      generation: v6e
      topology: 2x2
      capacity:
        spot: true
"""
WIP = VISION.replace("pathways-vision", "pathways-wip").replace("topology: 2x2", "topology: 3x3")

# The tests that plan or list every stack, and the one meant for your own stack files.
AFFECTED = [
    "tests/e2e/test_stacks.py",
    "tests/e2e/test_workflows.py::test_deploy_lists_cluster_owners_before_team_stacks",
    "tests/e2e/test_plan_view.py",
]


def test_your_own_stack_files_fail_only_their_own_test(tmp_path: Path, example_plan):
    for name in EXAMPLE_STACKS:  # planned in this run's plan directory: the inner run reads them
        example_plan(name)
    repo = tmp_path / "repo"
    # with the outer run's rewritten test modules (pytest reuses one only while its source's
    # time and size match, which copytree keeps): the inner run need not rewrite them again
    shutil.copytree(PROJECT_ROOT / "tests", repo / "tests")
    shutil.copytree(PROJECT_ROOT / "stacks", repo / "stacks")
    shutil.copytree(PROJECT_ROOT / ".github", repo / ".github")
    shutil.copy(PROJECT_ROOT / "pyproject.toml", repo)
    (repo / "stacks" / "Pulumi.vision.yaml").write_text(VISION)
    (repo / "stacks" / "Pulumi.wip.yaml").write_text(WIP)
    # vision's plan in the inner run's stacks/, made here: the inner run reads it too, and plans
    # nothing itself but the broken stack (refused before the engine)
    stacks = repo / "stacks"
    plan_cache.plan_of_file("vision", stacks, lambda: plan_file("vision", stacks))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", *AFFECTED],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=600,
    )
    failed = [
        line.split(" - ")[0] for line in done.stdout.splitlines() if line.startswith("FAILED")
    ]
    assert done.returncode == 1, done.stdout[-3000:]
    assert failed == ["FAILED tests/e2e/test_stacks.py::test_your_own_stack_file_plans[wip]"], (
        done.stdout[-3000:]
    )
    assert (
        "stacks/Pulumi.wip.yaml is a stack file of your own (not one of the examples "
        "tests/examples.py declares), and it does not plan yet:"
    ) in done.stdout
    assert "tpuPools[0].topology: '3x3' is not a v6e topology" in done.stdout
