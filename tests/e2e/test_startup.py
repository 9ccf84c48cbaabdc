"""Startup follows the layers: the CLI and the TPU catalog load no provider SDK; only a plan,
which registers resources, does. Checked in a fresh interpreter (what a command imports is a
property of the process, not of a test session that has imported everything already). The
time `shapes NAME` takes is measured in docs/offline-plan.md, not asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SDKS = ("pulumi_gcp", "pulumi_kubernetes")

# Runs one CLI command in-process, then prints which provider SDK modules it loaded. As in
# `python -m components`, the cyclic GC is off and the process ends with os._exit, skipping the
# interpreter's teardown: a plan takes half the time (what it imports is the same).
PROBE = """
import contextlib, gc, io, json, os, sys
gc.disable()
from components.cli.main import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = main(sys.argv[1:])
sdks = sorted({name.split(".")[0] for name in sys.modules} & {"pulumi_gcp", "pulumi_kubernetes"})
# pulumi-gcp's modules are lazy: each is in sys.modules from the start, its _inputs once it ran.
ran = [m.split(".") for m in sys.modules if m.startswith("pulumi_gcp.") and m.endswith("._inputs")]
gcp = sorted(parts[1] for parts in ran if len(parts) == 3)
print(json.dumps({"code": code, "sdks": sdks, "gcp": gcp}), flush=True)
os._exit(0)
"""


def loaded_sdks(*argv: str) -> tuple[int, list[str]]:
    result = probe(*argv)
    return result["code"], result["sdks"]


def probe(*argv: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    "argv",
    [("shapes", "v5litepod-16"), ("shapes", "--json"), ("shapes", "v9-nonsense")],
)
def test_shapes_loads_no_provider_sdk(argv):
    code, sdks = loaded_sdks(*argv)
    assert code in (0, 2)
    assert sdks == []


def test_a_plan_loads_the_provider_sdks():
    """The other side: the probe sees the SDKs when a plan registers resources."""
    code, sdks = loaded_sdks("plan", "--stack", "dev", "--json")
    assert code == 0
    assert sdks == list(SDKS)


def test_a_plan_runs_the_gcp_modules_of_what_it_makes_and_looks_up_only():
    """A team stack makes a bucket grant and looks up its cluster and project number, no
    Compute Engine resource: pulumi_gcp.compute (about 0.3 s of CPU) never runs in its plan.
    The dev stack makes a VPC, so its plan runs it."""
    from tests.examples import EXAMPLES_DIR

    team = probe("plan", "--stack", "team-research", "--stacks-dir", str(EXAMPLES_DIR), "--json")
    assert team["code"] == 0
    assert team["gcp"] == ["container", "organizations", "storage"]
    dev = probe("plan", "--stack", "dev", "--stacks-dir", str(EXAMPLES_DIR), "--json")
    assert "compute" in dev["gcp"]


# What `shapes NAME` imports beyond the catalog; its time (at most 60 ms wall on the reference
# machine, issue 23) is measured in docs/offline-plan.md.
SHAPES_PROBE = """
import contextlib, io, json, sys
from components.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["shapes", "v5p-16"])
heavy = ("pydantic", "pulumi", "yaml", "components.cli.plan", "components.cli.diff",
         "components.plan")
print(json.dumps({"code": code, "loaded": sorted(m for m in sys.modules if m.startswith(heavy))}))
"""


def test_shapes_name_imports_only_the_catalog():
    done = subprocess.run(
        [sys.executable, "-c", SHAPES_PROBE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(done.stdout) == {"code": 0, "loaded": []}


@pytest.mark.parametrize(
    "stack_file",
    [
        None,  # no such stack file
        "config:\n  tpu-pathways:tpuPools:\n    - {name: x, generation: v6e, topology: 3x3}\n",
    ],
    ids=["missing", "a bad topology"],
)
def test_a_stack_files_mistake_is_reported_before_the_provider_sdks_load(tmp_path, stack_file):
    """`plan` reads and validates the stack file before it loads the engine: a mistake costs
    the time of reading it, not the SDKs' imports too (components.plan.stack_source)."""
    if stack_file is not None:
        (tmp_path / "Pulumi.mine.yaml").write_text(stack_file)
    code, sdks = loaded_sdks("plan", "--stack", "mine", "--stacks-dir", str(tmp_path))
    assert code == 2
    assert sdks == []
