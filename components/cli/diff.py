"""The diff options of `python -m components plan`:

    plan --stack NAME --diff BASE.json [--format text|markdown|json]
    plan --all --diff-dir BASE_DIR --format markdown     # what the PR workflow posts

``BASE.json`` is a saved ``plan --json`` (e.g. of the PR's base commit); ``BASE_DIR`` holds one
``<stack>.json`` per stack. A stack missing from ``BASE_DIR`` is new (everything added); a base
plan whose stack is gone is shown as removed.

The plan modules (which load Pulumi and the provider SDKs) are imported by the functions that
run a diff, not by this module: the CLI's parser is built from it for every command.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from components.cli import path_argument, usage_error
from components.errors import ConfigError, ConfigIssue, issues_from_validation
from components.files import FileProblem, read_regular_file

if TYPE_CHECKING:
    from components.plan.diff import StackDiff
    from components.plan.model import Plan

EXIT_PLAN_FAILED = 1
_PLAN_JSON = "give a file written by `python -m components plan --stack NAME --json`"


def add_arguments(plan: argparse.ArgumentParser) -> None:
    """The diff options, on the `plan` subcommand's parser."""
    plan.add_argument(
        "--diff", type=path_argument, metavar="BASE.json", help="compare with a saved `plan --json`"
    )
    plan.add_argument(
        "--diff-dir",
        type=path_argument,
        metavar="BASE_DIR",
        help="compare with BASE_DIR/<stack>.json (with --all: every stack)",
    )
    plan.add_argument(
        "--all", action="store_true", help="diff every stack of stacks/ (with --diff-dir)"
    )
    plan.add_argument(
        # The formats are components.plan.diff_render.FORMATS; not imported here, as the plan
        # modules load Pulumi and `shapes` must answer without it.
        "--format",
        metavar="FORMAT",
        help="diff output: text (default), markdown or json",
    )


def _error(key: str, message: str) -> ConfigError:
    return usage_error("plan", key, message)


def stacks_dir(args: argparse.Namespace) -> Path:
    """The directory of stack files (``--stacks-dir``, default stacks/), refused when it is
    not a directory (every stack would otherwise be reported unknown)."""
    from components.resolve.stack_files import STACKS_DIR

    directory = args.stacks_dir or STACKS_DIR
    if not directory.is_dir():
        message = f"{str(directory)!r} is not a directory of stack files"
        raise usage_error(args.command, "--stacks-dir", message)
    return directory


def run(args: argparse.Namespace) -> int:
    """The diff the arguments ask for (``--diff``, ``--diff-dir``, ``--all``), printed; the exit
    code: 1 if a stack failed to plan, else 0."""
    from components.plan.diff import diff_plans
    from components.plan.diff_render import render

    fmt = _format(args)
    _check_combination(args)
    directory = stacks_dir(args)
    if args.all:
        diffs = diff_all(directory, args.diff_dir, args.program)
    else:
        base = args.diff if args.diff is not None else args.diff_dir / f"{args.stack}.json"
        argument = "--diff" if args.diff is not None else "--diff-dir"
        before = load_plan_document(base, argument, missing_ok=args.diff is None)
        if before is not None and before.stack != args.stack:
            raise _error(
                argument, f"{base} is the plan of stack {before.stack!r}, not {args.stack!r}"
            )
        diffs = [diff_plans(before, current_plan(args.stack, directory, args.program))]
    sys.stdout.write(render(diffs, fmt))
    return EXIT_PLAN_FAILED if any(d.error for d in diffs) else 0


def _format(args: argparse.Namespace) -> str:
    from components.plan.diff_render import FORMATS

    fmt = args.format or ("json" if args.json else "text")
    if fmt not in FORMATS:
        raise _error("--format", f"{fmt!r} is not a diff format; allowed: {', '.join(FORMATS)}")
    return fmt


def _check_combination(args: argparse.Namespace) -> None:
    if args.diff is not None and args.diff_dir is not None:
        raise _error("--diff", "give either --diff BASE.json or --diff-dir BASE_DIR, not both")
    if args.all and args.stack is not None:
        raise _error("--all", "give either --stack NAME or --all, not both")
    if args.all and args.diff_dir is None:
        raise _error("--all", "needs --diff-dir BASE_DIR (one <stack>.json per stack)")
    if not args.all and args.stack is None:
        raise _error("--stack", "required with --diff (or use --all with --diff-dir)")
    if args.diff_dir is not None and not args.diff_dir.is_dir():
        raise _error("--diff-dir", f"{args.diff_dir} is not a directory of `plan --json` files")
    for flag, value in (("--out", args.out), ("--policy", getattr(args, "policy", False))):
        if value:
            raise _error(flag, "not with --diff or --diff-dir; run it on a plain plan")


# Bounds on what is read. The example stacks' plans are 8-13 levels deep and 8-55 KB
# (`plan --stack S --json`), 1-6 KB a resource, about 1.9 KB on average for what a big cluster
# has many of (node pools, workloads, team objects: benchmarks/diff_base.py); a plan grows
# with resources, not depth. A fleet's or a big cluster's plan of 70,000 resources is about
# 135 MB: these bounds admit about twice that.
MAX_PLAN_BYTES = 256 * 2**20
MAX_PLAN_DEPTH = 64


def load_plan_document(path: Path, argument: str, missing_ok: bool = False) -> Plan | None:
    """A saved ``plan --json``; None if it is missing and that is allowed (a new stack).

    The document must be a plan document (``Plan.load`` validates it against
    ``PlanDocument``); anything else is refused with a message, never followed into the diff."""
    if not path.exists():
        if missing_ok:
            return None
        raise _error(argument, f"cannot read {path}: no such file; {_PLAN_JSON}")
    text = _read_bounded(path, argument)
    document = _parse_json(text, path, argument)
    surrogates = _SURROGATE_ESCAPE.search(text) is not None
    del text  # the document is what is kept: the text goes before the current plan is made
    if _too_deep(document):
        depth = MAX_PLAN_DEPTH + 1
        raise _error(
            argument, f"{path} is nested {depth} levels deep, more than a plan; {_PLAN_JSON}"
        )
    if surrogates:
        document = encodable(document)
    from pydantic import ValidationError

    from components.plan.model import Plan

    try:
        plan = Plan.load(document)
    except ValidationError as exc:
        raise ConfigError(
            [ConfigIssue(argument, f"{path}, {i}") for i in _schema_issues(exc)]
            + [ConfigIssue(argument, f"{path} is not a plan document; {_PLAN_JSON}")],
            "plan",
        ) from None
    from components.plan.cost import overrides_of

    try:
        overrides_of(plan)
    except ValidationError:
        raise _error(
            argument, f"{path} has unreadable summary.cost.overrides; " + _PLAN_JSON
        ) from None
    return plan


def _read_bounded(path: Path, argument: str) -> str:
    """The base's text: a regular file of at most MAX_PLAN_BYTES (a FIFO, /dev/zero or a huge
    file is refused, never waited on or read to the end)."""
    try:
        return read_regular_file(path, MAX_PLAN_BYTES, "plan").decode("utf-8")
    except FileProblem as exc:
        raise _error(argument, f"{path} {exc}; {_PLAN_JSON}") from None
    except UnicodeDecodeError as exc:
        raise _error(argument, f"cannot read {path}: {exc}; {_PLAN_JSON}") from None


def _finite(text: str) -> float:
    """A JSON number as a float; ``1e999`` (infinite) is not one a plan can hold."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is not a finite number")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON (Python writes it for infinite and NaN numbers)")


def _parse_json(text: str, path: Path, argument: str) -> Any:
    try:
        return json.loads(text, parse_float=_finite, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        message = f"{path} is not JSON ({exc.msg}, line {exc.lineno}); {_PLAN_JSON}"
        raise _error(argument, message) from None
    except RecursionError:
        message = f"{path} is nested too deeply to be a plan; {_PLAN_JSON}"
        raise _error(argument, message) from None
    except ValueError as exc:  # a non-finite number
        raise _error(argument, f"{path} holds {exc}; {_PLAN_JSON}") from None


# A JSON escape of a UTF-16 surrogate (\ud800-\udfff): only such an escape can put a lone
# surrogate into a parsed document (UTF-8 text holds none); a text without one needs no
# ``encodable`` pass over every value.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def encodable(value: Any) -> Any:
    """``value`` with every string UTF-8 can encode: JSON's ``\\ud800`` escapes decode to lone
    surrogates, which no output (terminal, Markdown comment, JSON file) can carry; each is
    written out as the same escape, as text (``\\ud800``), in keys and values alike. Called
    on a document already bounded in depth."""
    if isinstance(value, str):
        return value if value.isascii() else _escaped(value)
    if isinstance(value, dict):
        return {encodable(k): encodable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [encodable(v) for v in value]
    return value


def _escaped(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _too_deep(value: Any, depth: int = 1) -> bool:
    """Is anything in the JSON value ``value`` (at ``depth``; a scalar counts as a level)
    deeper than MAX_PLAN_DEPTH? Recurses at most MAX_PLAN_DEPTH calls deep: only into objects
    and arrays, never past the bound; stops at the first value past it."""
    if not isinstance(value, dict | list):
        return depth > MAX_PLAN_DEPTH
    children = value.values() if isinstance(value, dict) else value
    if depth >= MAX_PLAN_DEPTH:
        return len(children) > 0
    return any(_too_deep(c, depth + 1) for c in children if isinstance(c, dict | list))


def _schema_issues(exc: Any) -> list[ConfigIssue]:
    from components.plan.model import PlanDocument

    issues = issues_from_validation(exc, PlanDocument)
    if len(issues) > 10:
        issues = [*issues[:10], ConfigIssue("", f"and {len(issues) - 10} more problems")]
    return issues


def current_plan(stack: str, directory: Path, program: Path | None = None) -> Plan:
    """The stack's plan now: ``program`` (default: the project's `__main__.py`) planned with
    the stack's file."""
    from components.plan.engine import PROGRAM, plan_file

    return plan_file(stack, directory, program or PROGRAM)


def diff_all(directory: Path, base_dir: Path, program: Path | None = None) -> list[StackDiff]:
    """Every stack against ``base_dir/<stack>.json``; a stack that fails to plan is reported."""
    from components.resolve.stack_files import available_stacks

    stacks = available_stacks(directory)
    base_only = sorted(p.stem for p in base_dir.glob("*.json") if p.stem not in stacks)
    diffs = []
    for stack in sorted([*stacks, *base_only]):
        diffs.append(_diff_one(stack, directory, base_dir, program, stack in base_only))
    return diffs


def _diff_one(
    stack: str, directory: Path, base_dir: Path, program: Path | None, base_only: bool
) -> StackDiff:
    """One stack of ``diff_all``: its diff, or its error."""
    from components.plan.diff import StackDiff, diff_plans

    try:  # one unreadable base or stack file is reported with its stack; the rest go on
        before = load_plan_document(base_dir / f"{stack}.json", "--diff-dir", missing_ok=True)
    except ConfigError as exc:
        return StackDiff(stack=stack, error=str(exc))
    if base_only:
        return diff_plans(before, None)
    try:
        after = current_plan(stack, directory, program)
    except ConfigError as exc:
        return StackDiff(stack=stack, error=str(exc))
    return diff_plans(before, after)
