"""Planning the same stack twice gives byte-identical `plan --json`, even across processes with
different hash seeds, so PR diffs show only real changes.

One other process (with a hash seed other than this one's) runs `plan --stack S --json` for
every example stack; its output must equal this process's plan of the same file (planned once
per test session, after whatever other tests planned before it), stack by stack."""

import json
import os
import subprocess
import sys
from pathlib import Path

from components.plan.render import render_json

ROOT = Path(__file__).resolve().parents[2]
STACKS = sorted(
    p.name.removeprefix("Pulumi.").removesuffix(".yaml")
    for p in (ROOT / "stacks").glob("Pulumi.*.yaml")
)

# `plan --stack S --json` for each stack named in argv, in one process as `python -m components`
# runs it (the cyclic GC off, as there); prints {stack: [exit code, stdout]}.
PLAN_EACH = """
import contextlib, gc, io, json, sys
gc.disable()
from components.cli.main import main
found = {}
for stack in sys.argv[1:]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["plan", "--stack", stack, "--json"])
    found[stack] = [code, out.getvalue()]
json.dump(found, sys.stdout)
"""


def other_seed() -> str:
    """A hash seed this process does not have (unset here: a random one, so 1 differs)."""
    return "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"


def test_plan_json_is_byte_identical_across_processes(example_plan):
    env = {**os.environ, "PYTHONHASHSEED": other_seed()}
    done = subprocess.run(
        [sys.executable, "-c", PLAN_EACH, *STACKS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    other = json.loads(done.stdout)
    assert sorted(other) == STACKS
    assert {stack: code for stack, (code, _) in other.items()} == dict.fromkeys(STACKS, 0)
    differ = [stack for stack in STACKS if other[stack][1] != render_json(example_plan(stack))]
    assert differ == []
    assert all('"resources"' in out for _, out in other.values())
