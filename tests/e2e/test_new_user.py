"""A new user's first hour on a copy of the example stacks, each step in one pass:

1. a team's spot v6e stack as docs/getting-started.md shows it (written by `new`, planned);
2. a stack file with seven mistakes: all seven in one run, exit 2, no traceback;
3. a Python program of their own: every missing --config key at once, a bad Args value and a
   job the preflight refuses as exit 2 reports, then the plan;
4. a pull request that changes the CPU pool: the headline names the recreated head pool and the
   jobs it interrupts.

Step 2 runs as a process: the installed `tpu-pathways` command when the package's scripts are
installed, else `python -m components` (the same commands), so the exit status and the streams are
the ones a user sees. The others run the same commands in this process, as ``run_cli`` does
(about 2 CPU-seconds less per command: a process imports the provider SDKs again); what a process
adds (its exit status, the whole output flushed at exit, a closed pipe, Ctrl-C) is checked by
tests/e2e/test_cli_process.py and tests/e2e/test_leaving_cleanly.py."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.examples import EXAMPLES_DIR, PROJECT_ROOT
from tests.helpers import run_cli
from tests.unit.resolve.test_every_problem import SEVEN_MISTAKES

SCRIPT = Path(sys.executable).with_name("tpu-pathways")
CLI = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "components"]
GUIDE = PROJECT_ROOT / "docs" / "getting-started.md"
EXAMPLE = PROJECT_ROOT / "examples" / "python-api"


def process(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *argv], capture_output=True, text=True, timeout=300, cwd=PROJECT_ROOT
    )


@pytest.fixture
def cli(capsys, monkeypatch) -> Callable[..., subprocess.CompletedProcess[str]]:
    """The CLI in this process, from the project's root as ``process`` runs it: the exit code,
    stdout and stderr of one command, as a CompletedProcess."""
    monkeypatch.chdir(PROJECT_ROOT)

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        code, out, err = run_cli(capsys, *argv)
        return subprocess.CompletedProcess(["tpu-pathways", *argv], code, out, err)

    return run


def _block(marker: str) -> str:
    """The fenced block after ``<!-- marker -->`` in the getting-started guide."""
    text = GUIDE.read_text()
    after = text.split(f"<!-- {marker} -->\n", 1)[1]
    return after.split("```", 2)[1].split("\n", 1)[1]


@pytest.fixture
def stacks(tmp_path: Path) -> Path:
    directory = tmp_path / "stacks"
    shutil.copytree(EXAMPLES_DIR, directory)
    return directory


def test_1_a_teams_spot_v6e_stack_from_the_docs(stacks: Path, cli):
    commands = _block("new-user:command").splitlines()
    new = commands[0].split()[1:]  # without .venv/bin/tpu-pathways
    assert new[0] == "new"
    done = cli(*new, "--stacks-dir", str(stacks))
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    written = stacks / "Pulumi.vision.yaml"
    assert written.read_text() == _block("new-user:stack")  # the guide shows the file as written
    plan = cli(*commands[1].split()[1:], "--stacks-dir", str(stacks))
    assert plan.returncode == 0, plan.stderr
    lines = plan.stdout.splitlines()
    top = int(re.search(r"creates (\d+) resources", lines[0])[1])
    bottom = int(re.search(r"^Creates (\d+) resources", plan.stdout, re.M)[1])
    assert top == bottom
    assert any(
        line.startswith("  + NodePool pathways-vision-v6e-0 (name v6e-0)  machineType=ct6e-")
        and "spot=true" in line
        for line in lines
    )
    assert re.search(r"^Deploy time \(modeled `pulumi up`\): about \d+m\d\ds", plan.stdout, re.M)
    assert "  pulumi stack select vision --create" in plan.stdout
    assert "Outputs:\n\n" not in plan.stdout


def test_2_seven_mistakes_in_one_run(stacks: Path):
    (stacks / "Pulumi.seven.yaml").write_text(SEVEN_MISTAKES)
    done = process("plan", "--stack", "seven", "--stacks-dir", str(stacks))
    assert (done.returncode, done.stdout) == (2, "")
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("error: Pulumi.seven.yaml (tpu-pathways:): 7 problems\n")
    keys = re.findall(r"^  - (\S+):", done.stderr, re.M)
    assert keys == [
        "cluster.nodeCount",
        "tpuPools[0].generation",
        "tpuPools[1].topology",
        "workloads[0]",
        "workloads[0].image",
        "workloads[1].slices",
        "workloads[1].image",
    ]


def _program(tmp_path: Path, *changes: tuple[str, str]) -> Path:
    directory = tmp_path / "program"
    directory.mkdir(exist_ok=True)
    source = (EXAMPLE / "__main__.py").read_text()
    for old, new in changes:
        assert old in source, old
        source = source.replace(old, new)
    (directory / "__main__.py").write_text(source)
    (directory / "Pulumi.yaml").write_text((EXAMPLE / "Pulumi.yaml").read_text())
    return directory


CONFIG = ["--config", "gcp:project=acme-ml", "--config", "gcp:region=us-east5"]
CONFIG += ["--config", "gcp:zone=us-east5-a"]


def test_3_a_python_program(tmp_path: Path, cli):
    missing = cli("plan", "--program", str(EXAMPLE))
    assert missing.returncode == 2
    assert missing.stderr.startswith("error: plan: 3 problems\n")
    assert missing.stderr.count("the program requires gcp:") == 3
    bad_args = cli(
        "plan", "--program", str(_program(tmp_path, ("slices=2)", "slices=-1)"))), *CONFIG
    )
    assert (bad_args.returncode, bad_args.stderr) == (
        2,
        "error: TpuNodePoolArgs 'v5p': 1 problem\n  - slices: -1 is not allowed; at least 1\n",
    )
    default = _program(tmp_path, ("namespace=team.namespace,", 'namespace="default",'))
    refused = cli("plan", "--program", str(default), *CONFIG)
    assert refused.returncode == 2
    assert "namespace 'default' is a system namespace" in refused.stderr
    assert "Traceback" not in refused.stderr
    planned = cli("plan", "--program", str(EXAMPLE), *CONFIG)
    assert planned.returncode == 0, planned.stderr
    assert "(in your program's directory):" in planned.stdout


def test_4_a_pr_that_changes_the_cpu_pool(stacks: Path, tmp_path: Path, cli):
    base = cli("plan", "--stack", "dev", "--stacks-dir", str(stacks), "--json")
    assert base.returncode == 0, base.stderr
    (tmp_path / "base.json").write_text(base.stdout)
    dev = stacks / "Pulumi.dev.yaml"
    dev.write_text(
        dev.read_text().replace("machineType: n2-standard-64", "machineType: n2-highmem-64")
    )
    diff = cli(
        "plan",
        "--stack",
        "dev",
        "--stacks-dir",
        str(stacks),
        "--diff",
        str(tmp_path / "base.json"),
        "--format",
        "markdown",
    )
    assert diff.returncode == 0, diff.stderr
    summary = re.search(r"<summary><b>dev</b>: (.*)</summary>", diff.stdout)[1]
    assert summary.startswith(
        "recreates the nodes of node pool pathways-dev-cpu-np: the pods on them restart "
        "(interrupts pathways/hello-train, pathways/notebook) · "
    )
    assert "(≈ 749636.6Mi)" in diff.stdout  # the quota's memory in one unit on both sides
