"""The CLI a new user meets: a `tpu-pathways` command with --version, did-you-mean on a mistyped
command, help text for users with the exit codes, and `new`, which writes a stack file that
plans as written and never overwrites one."""

from __future__ import annotations

import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from components.cli.main import main
from tests.examples import EXAMPLES_DIR
from tests.helpers import run_cli

SCRIPT = Path(sys.executable).with_name("tpu-pathways")


def test_version_is_the_packages(capsys):
    code, out, _ = run_cli(capsys, "--version")
    assert (code, out) == (0, f"tpu-pathways {version('tpu-pathways')}\n")
    assert version("tpu-pathways") == "0.1.0"  # pyproject.toml's [project] version


@pytest.mark.skipif(not SCRIPT.exists(), reason="the package's scripts are not installed here")
def test_the_console_script_runs_the_same_commands():
    done = subprocess.run(
        [str(SCRIPT), "shapes", "v6e-16", "--json"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert '"topology": "4x4"' in done.stdout
    done = subprocess.run([str(SCRIPT), "--help"], capture_output=True, text=True, timeout=60)
    assert done.stdout.startswith("usage: tpu-pathways ")


@pytest.mark.parametrize(
    ("typed", "meant"), [("plann", "plan"), ("shape", "shapes"), ("stack", "stacks")]
)
def test_a_mistyped_command_gets_a_suggestion(capsys, typed, meant):
    code, out, err = run_cli(capsys, typed, "--stack", "dev")
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {typed!r} is not a command; did you mean {meant!r}? ")


def test_an_unknown_command_lists_the_commands(capsys):
    code, _, err = run_cli(capsys, "deploy")
    assert code == 2
    assert (
        "(commands: plan, shapes, new, drift-report, stack-schema, stacks, config-reference;" in err
    )


def test_help_is_for_users_and_has_the_exit_codes(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "exit codes:\n  0  done\n  1  a check failed" in out
    assert "  2  a mistake in the command or the stack file" in out
    for developer_text in ("components.cli", "traceback", "module", "handler"):
        assert developer_text not in out


def _new(tmp_path: Path, *flags: str) -> list[str]:
    stacks = tmp_path / "stacks"
    if not stacks.exists():
        shutil.copytree(EXAMPLES_DIR, stacks)
    return ["new", *flags, "--stacks-dir", str(stacks)]


def test_new_writes_a_stack_file_that_plans_as_written(capsys, tmp_path):
    flags = ("vision", "--team", "vision", "--tpu", "v6e-16", "--capacity", "spot")
    code, out, err = run_cli(capsys, *_new(tmp_path, *flags, "--region", "us-east5"))
    assert (code, err) == (0, "")
    written = tmp_path / "stacks" / "Pulumi.vision.yaml"
    assert out.startswith(f"wrote {written}\n")
    text = written.read_text()
    assert "    zone: us-east5-a\n" in text  # the region's first zone with v6e spot
    assert (
        "      accelerator: v6e-16\n      slices: 1\n      capacity:\n        spot: true\n" in text
    )
    code, out, _ = run_cli(capsys, "plan", "--stack", "vision", "--stacks-dir", str(written.parent))
    assert code == 0
    assert "  + NodePool pathways-vision-v6e-0 (name v6e-0)  machineType=ct6e-standard-4t" in out
    assert "Namespace vision" in out


def test_new_never_overwrites(capsys, tmp_path):
    flags = ("dev", "--team", "a", "--tpu", "v5litepod-8", "--region", "us-west4")
    before = (EXAMPLES_DIR / "Pulumi.dev.yaml").read_text()
    code, _, err = run_cli(capsys, *_new(tmp_path, *flags))
    assert code == 2
    assert "Pulumi.dev.yaml' exists; choose another stack name (nothing written)" in err
    assert (tmp_path / "stacks" / "Pulumi.dev.yaml").read_text() == before


def test_new_refuses_a_region_without_the_tpu_and_writes_nothing(capsys, tmp_path):
    flags = ("west", "--team", "a", "--tpu", "v5p-8", "--region", "us-west1")
    code, _, err = run_cli(capsys, *_new(tmp_path, *flags))
    assert code == 2
    assert (
        "--region: 'us-west1' has no zone with v5p in the zone catalog (zones that have it: "
        "us-central1-a, us-east5-a, us-east5-b, us-east5-c, us-south1-a)"
    ) in err
    assert not (tmp_path / "stacks" / "Pulumi.west.yaml").exists()
