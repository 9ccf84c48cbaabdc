"""Helpers the test modules share (fixtures live in conftest.py).

``run_cli`` runs ``python -m components`` in-process; ``assert_error_report`` checks that a
refusal printed the CLI's report and nothing else.
"""

from __future__ import annotations

import re

from components.cli import main as cli

# The CLI's report of a user mistake: `error: <source>: N problem(s)` then one `  - key: problem`
# line each, or a one-line `error: ...`; argparse's usage error is `usage: ...` then
# `<prog>: error: ...`.
_REPORT = re.compile(r"error: [^\n]+(\n  (- |  )[^\n]*)*\n?")
_USAGE = re.compile(r"usage: .+\n[^\n]*: error: [^\n]+\n?", re.DOTALL)


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``python -m components ARGV`` run in-process."""
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_error_report(err: str) -> None:
    """``err`` is exactly the CLI's error report (or argparse's usage error): no traceback, no
    stray lines before or after it."""
    assert _REPORT.fullmatch(err) or _USAGE.fullmatch(err), err
