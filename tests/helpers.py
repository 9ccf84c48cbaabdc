"""Helpers the test modules share (fixtures live in conftest.py).

``run_cli`` runs ``python -m components`` in-process; ``ends_within`` bounds an in-process call
that once hung; ``assert_error_report`` checks that a refusal printed the CLI's report and
nothing else; ``deep_merge`` builds stack values from a base and overrides; ``SIGTERM_WRAPPER``
is a user command's wrapper prefix, written out.
"""

from __future__ import annotations

import contextlib
import copy
import faulthandler
import re
import sys
from collections.abc import Iterator
from functools import cache
from typing import Any

import yaml

from components.cli import main as cli
from tests.examples import EXAMPLES_DIR

# argparse's usage error: `usage: ...` lines, then `<prog>: error: ...`.
_USAGE = re.compile(r"usage: .+\n[^\n]*: error: [^\n]+\n?", re.DOTALL)
# The header of the CLI's report of a user mistake: `error: <source>: N problem(s)`, followed by
# one `  - key: problem` item each.
_COUNTED = re.compile(r"(\d+) problems?$")


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of ``python -m components ARGV`` run in-process."""
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@contextlib.contextmanager
def ends_within(seconds: float) -> Iterator[None]:
    """A hang in the block (a FIFO opened for reading, a pattern that backtracks for hours)
    ends this test process after ``seconds`` instead of stalling the run: faulthandler's
    watchdog, a C thread that needs no GIL (a regex holds it), prints every thread's stack to
    stderr and exits with status 1. Under xdist (the default run) that worker's test is then
    reported as failed ("worker crashed") and a new worker runs the rest; a run in one process
    ends there, the stack showing what hung."""
    faulthandler.dump_traceback_later(seconds, exit=True, file=sys.__stderr__)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


def assert_error_report(err: str) -> None:
    """``err`` is only the CLI's error reports (or argparse's usage error): each starts with an
    ``error: `` line, and one that counts its problems lists exactly that many."""
    if err.startswith("usage: "):
        assert _USAGE.fullmatch(err), err
        return
    assert err.startswith("error: ") and err.endswith("\n"), err
    for report in re.split(r"^(?=error: )", err, flags=re.MULTILINE)[1:]:
        header = report.split("\n", 1)[0]
        if counted := _COUNTED.search(header):
            assert report.count("\n  - ") == int(counted[1]), err


STACKS_DIR = EXAMPLES_DIR  # the declared examples only (tests/examples.py)


def stack_file_values(stack: str) -> dict[str, Any]:
    """The ``tpu-pathways:`` values of an example stack file, read as plain YAML (a copy the
    caller may change)."""
    return copy.deepcopy(_stack_file_values(stack))


@cache  # read at collection by several modules' parameters: once per process, with libyaml
def _stack_file_values(stack: str) -> dict[str, Any]:
    text = (STACKS_DIR / f"Pulumi.{stack}.yaml").read_text()
    config = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["config"]
    prefix = "tpu-pathways:"
    return {k.removeprefix(prefix): v for k, v in config.items() if k.startswith(prefix)}


def uses_jobset_backend(stack: str) -> bool:
    """Whether the example stack's file sets ``workloadBackend: jobset``."""
    return stack_file_values(stack).get("workloadBackend") == "jobset"


def is_fleet_stack(stack: str) -> bool:
    """Whether the example stack is a fleet (``tpu-pathways:fleet``): it owns a manager cluster
    from ``fleet.manager``, not from gcp/cluster keys (tests/e2e/test_fleet_stack.py)."""
    return "fleet" in stack_file_values(stack)


def deep_merge(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``overrides`` merged in: nested dicts merge, anything else replaces."""
    merged = copy.deepcopy(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


# A user container's command starts with this (components/pathways/spec.py's wrapper, written out
# here so a change to it fails the tests that compare commands).
SIGTERM_WRAPPER = [
    "/bin/sh",
    "-c",
    'child=\npending=0\nterm=0\ntrap \'term=1; if [ -n "$child" ]; then kill -TERM "$child" '
    '2>/dev/null; else pending=1; fi\' TERM\n"$@" &\nchild=$!\n'
    'if [ "$pending" = 1 ]; then kill -TERM "$child" 2>/dev/null; fi\n'
    'wait "$child"\nstatus=$?\nwhile [ "$term" = 1 ]; do\n  term=0\n  wait "$child"\n'
    '  again=$?\n  if [ "$again" = 127 ] && ! kill -0 "$child" 2>/dev/null; then break; fi\n'
    '  status=$again\ndone\nexit "$status"\n',
    "pathways-main",
]


def graph_resource(
    name: str,
    type_: str = "t:x:S10",
    deps: tuple[str, ...] = (),
    *,
    parent: str | None = None,
    provider: str | None = None,
    custom: bool = True,
    inputs: dict[str, Any] | None = None,
) -> Any:
    """A planned resource whose URN is its name, so edges (``deps``, ``parent``, ``provider``)
    name other resources: what the critical path and the schedule tests build graphs of."""
    from components.plan.model import PlannedResource

    return PlannedResource(
        urn=name,
        type=type_,
        name=name,
        parent=parent,
        custom=custom,
        provider=provider,
        inputs=inputs or {},
        dependencies=list(deps),
    )


# A string literal (skipped), or a logical operator: `!` but not the `!` of `!=`.
_CEL_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|&&|\|\||!(?!=)')


def logical_operators(expression: str) -> int:
    """The logical operators (``&&``, ``||``, ``!``) of a CEL expression, outside its string
    literals: what IAM counts against its limit of a condition (``MAX_LOGICAL_OPERATORS``)."""
    return sum(1 for t in _CEL_TOKENS.findall(expression) if not t.startswith('"'))
