"""However the CLI is stopped (a full disk under its output, Ctrl-C while it starts, the user's
program raising or never returning), it leaves with one line and a status, never a traceback
or a hang."""

from __future__ import annotations

import importlib
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from components.cli import main as cli

ROOT = Path(__file__).resolve().parents[2]


def _cli(*argv: str, stdout=subprocess.PIPE, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "components", *argv],
        cwd=ROOT,
        stdout=stdout,
        stderr=subprocess.PIPE,
        timeout=timeout,
        check=False,
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
@pytest.mark.parametrize("argv", [("plan", "--stack", "dev", "--json"), ("shapes", "v5e")])
def test_output_to_a_full_disk_is_one_line_and_status_2(argv):
    with open("/dev/full", "wb") as full:
        done = _cli(*argv, stdout=full)
    assert (done.returncode, done.stderr.decode()) == (
        2,
        f"error: {argv[0]}: cannot write the output to standard output: [Errno 28] No space "
        "left on device\n",
    )


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="needs /proc")
def test_ctrl_c_while_the_cli_starts_is_one_line_and_status_130():
    process = subprocess.Popen(
        [sys.executable, "-m", "components", "plan", "--stack", "dev"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    maps = Path(f"/proc/{process.pid}/maps")
    deadline = time.monotonic() + 60
    while "cygrpc" not in maps.read_text() and time.monotonic() < deadline:  # importing Pulumi
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert (process.returncode, err.decode()) == (130, "error: interrupted (Ctrl-C)\n")


def _program(tmp_path: Path, source: str) -> Path:
    directory = tmp_path / "prog"
    directory.mkdir()
    (directory / "Pulumi.yaml").write_text("name: mine\nruntime: python\n")
    (directory / "__main__.py").write_text(source)
    return directory


def test_a_failing_program_shows_its_own_frames_under_one_line(tmp_path, capsys):
    source = "import pulumi\n\ndef helper(x):\n    return 1 / x\n\nhelper(0)\n"
    directory = _program(tmp_path, source)
    code = cli.main(["plan", "--program", str(directory)])
    err = capsys.readouterr().err
    main = directory / "__main__.py"
    assert code == 2
    assert err == (
        f"error: the program {directory} failed: ZeroDivisionError: division by zero\n"
        "Traceback (the program's own frames):\n"
        f'  File "{main}", line 6, in <module>\n'
        "    helper(0)\n"
        f'  File "{main}", line 4, in helper\n'
        "    return 1 / x\n"
        "           ~~^~~\n"
        "ZeroDivisionError: division by zero\n"
    )


def test_a_program_file_that_fails_is_reported_the_same_way(tmp_path, capsys):
    program = tmp_path / "bad.py"
    program.write_text("raise RuntimeError('no quota')\n")
    code = cli.main(["plan", "--stack", "dev", "--program", str(program)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"error: the program {program} failed: RuntimeError: no quota\n")
    assert "components/" not in err and "site-packages" not in err


def test_the_default_timeout_is_ten_minutes():
    from components.cli.deadline import DEFAULT_SECONDS

    parser = cli._parser("plan")
    assert parser.parse_args(["plan", "--stack", "dev"]).timeout == DEFAULT_SECONDS == 600


def test_a_program_that_never_returns_is_stopped_by_the_timeout(tmp_path, capsys):
    # The plan's modules are loaded before the timer starts (a worker's first plan loads the
    # provider SDKs, seconds): the program's busy loop gets the second, not an import.
    importlib.import_module("components.plan.engine")
    directory = _program(tmp_path, "while True:\n    pass\n")
    started = time.monotonic()
    code = cli.main(["plan", "--program", str(directory), "--timeout", "1"])
    err = capsys.readouterr().err
    assert code == 2
    assert "--timeout: the plan did not finish within 1 seconds (--timeout)" in err
    assert time.monotonic() - started < 30


# `python -m components` with the watchdog's grace after the timer (GRACE_SECONDS, 10 s) cut to
# 0.5 s, and the plan's modules loaded before the command starts its timer, so the 2 s are the
# program's and not the imports' (it ignores SIGALRM within milliseconds of the timer's start):
# the test waits 2.5 s instead of 12. What it checks does not depend on either.
_SHORT_GRACE = """
import runpy, sys
import components.cli.deadline as deadline
import components.plan.engine
assert deadline.GRACE_SECONDS == 10  # the name the watchdog reads, so the change below counts
deadline.GRACE_SECONDS = 0.5
sys.argv[0] = "components"
runpy.run_module("components", run_name="__main__", alter_sys=True)
"""


def test_a_program_that_defeats_the_timer_is_killed_by_the_watchdog(tmp_path):
    source = "import signal, time\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\ntime.sleep(600)\n"
    directory = _program(tmp_path, source)
    argv = ["plan", "--program", str(directory), "--timeout", "2"]
    done = subprocess.run(
        [sys.executable, "-c", _SHORT_GRACE, *argv],
        cwd=ROOT,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL
    assert done.stderr.decode() == (
        "error: plan: the plan did not finish within 2 seconds (--timeout); a program that "
        "never returns is stopped here (raise --timeout, or 0 for no limit); killed\n"
    )


@pytest.mark.parametrize("value", ["-1", "nan", "soon", "1e12"])
def test_a_timeout_that_is_not_a_number_of_seconds_is_a_usage_error(value, capsys):
    with pytest.raises(SystemExit) as caught:
        cli.main(["plan", "--stack", "dev", "--timeout", value])
    assert caught.value.code == 2
    assert f"argument --timeout: {value!r} is not allowed" in capsys.readouterr().err


# --- the same classes, fresh cases ---------------------------------------------------------
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
@pytest.mark.parametrize("argv", [("config-reference",), ("stacks",)])
def test_other_commands_to_a_full_disk_are_one_line_too(argv):
    with open("/dev/full", "wb") as full:
        done = _cli(*argv, stdout=full)
    assert done.returncode == 2
    assert done.stderr.decode().count("\n") == 1
    assert b"No space left on device" in done.stderr and b"Traceback" not in done.stderr


def test_ctrl_c_while_the_users_program_runs_is_one_line_and_status_130(tmp_path):
    program = tmp_path / "slow.py"
    marker = tmp_path / "started"
    program.write_text(
        f"import time, pathlib\npathlib.Path({str(marker)!r}).touch()\ntime.sleep(60)\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "components", "plan", "--stack", "dev", "--program", str(program)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert (process.returncode, err.decode()) == (130, "error: interrupted (Ctrl-C)\n")


@pytest.mark.parametrize(
    ("source", "helper", "summary", "frames"),
    [
        ("import sys\nsys.exit(3)\n", None, "SystemExit: 3", ["sys.exit(3)"]),
        (
            "import helper\nhelper.go()\n",
            "def go():\n    {}['missing']\n",
            "KeyError: 'missing'",
            ["helper.go()", "{}['missing']"],
        ),
        (  # raised inside this project's code: only the program's call is shown
            "from components import resolve_accelerator\nresolve_accelerator(None)\n",
            None,
            "TypeError: object of type 'NoneType' has no len()",
            ["resolve_accelerator(None)"],
        ),
        (
            "import pulumi\npulumi.Output.from_input(1).apply(lambda v: 1 / 0)\n",
            None,
            "ZeroDivisionError: division by zero",
            ["pulumi.Output.from_input(1).apply(lambda v: 1 / 0)"],
        ),
    ],
    ids=["sys-exit", "in-a-helper-module", "in-the-project-api", "in-an-apply"],
)
def test_a_failing_program_is_one_line_then_its_own_frames(
    source, helper, summary, frames, tmp_path, capsys
):
    directory = _program(tmp_path, source)
    if helper is not None:
        (directory / "helper.py").write_text(helper)
    code = cli.main(["plan", "--program", str(directory)])
    err = capsys.readouterr().err
    head, *rest = err.splitlines()
    assert code == 2
    assert head.startswith(f"error: the program {directory} failed: ")
    assert summary in head
    assert all(f"    {line}" in rest for line in frames), err
    assert "/components/" not in err and "site-packages" not in err and "<frozen" not in err
