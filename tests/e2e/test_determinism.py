"""Planning the same stack twice gives byte-identical `plan --json`, even across processes with
different hash seeds, so PR diffs show only real changes.

Two processes (hash seeds 1 and 2) each run `plan --stack S --json` for every example stack;
both outputs must equal this process's plan of the same file (planned once per test session,
after whatever other tests planned before it), stack by stack."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from components.plan.render import render_json
from tests.examples import EXAMPLES_DIR

ROOT = Path(__file__).resolve().parents[2]
STACKS = sorted(
    p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in EXAMPLES_DIR.glob("Pulumi.*.yaml")
)

# `plan --stack S --json` for each stack named in argv, in one process as `python -m components`
# runs it (the cyclic GC off, and os._exit instead of the interpreter's teardown, as there);
# prints {stack: [exit code, stdout]}.
PLAN_EACH = """
import contextlib, gc, io, json, os, sys
gc.disable()
from components.cli.main import main
found = {}
for stack in sys.argv[1:]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["plan", "--stack", stack, "--json"])
    found[stack] = [code, out.getvalue()]
json.dump(found, sys.stdout)
sys.stdout.flush()
os._exit(0)
"""


def _plan_each(seed: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    command = [sys.executable, "-c", PLAN_EACH, *STACKS]
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.mark.parametrize("seed", ["1", "2"])
def test_plan_json_is_byte_identical_across_processes(seed, example_plan):
    out, err = (process := _plan_each(seed)).communicate(timeout=300)
    assert process.returncode == 0, err
    other = json.loads(out)
    assert sorted(other) == STACKS
    assert {stack: code for stack, (code, _) in other.items()} == dict.fromkeys(STACKS, 0)
    differ = [stack for stack in STACKS if other[stack][1] != render_json(example_plan(stack))]
    assert differ == []
    assert all('"resources"' in text for _, text in other.values())
