"""Planning the same stack twice gives byte-identical `plan --json`, even across processes with
different hash seeds, so PR diffs show only real changes."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.examples import EXAMPLES_DIR

ROOT = Path(__file__).resolve().parents[2]
STACKS = sorted(
    p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in EXAMPLES_DIR.glob("Pulumi.*.yaml")
)


def _plan_json(stack: str, seed: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    command = [sys.executable, "-m", "components", "plan", "--stack", stack, "--json"]
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


@pytest.mark.parametrize("stack", STACKS)
def test_plan_json_is_byte_identical_across_runs(stack):
    first, second = _plan_json(stack, "1"), _plan_json(stack, "2")
    out1, err1 = first.communicate(timeout=120)
    out2, err2 = second.communicate(timeout=120)
    assert first.returncode == 0, err1.decode()
    assert second.returncode == 0, err2.decode()
    assert out1 == out2
    assert b'"resources"' in out1
