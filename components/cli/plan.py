"""`python -m components plan ...`: the offline plan of a stack (or of your own program:
``--program DIR --config KEY=VALUE``), its manifests (``--out``), its
guardrail report (``--policy``), its critical path (``--critical-path``) or its diff against a
saved plan (``--diff``/``--diff-dir``/``--all``; ``components.cli.diff``).

Exit codes: 0 fine, 1 a check failed (policy violations, critical-path structure violations,
a stack of a diff that failed to plan), 2 a user mistake (raised as ConfigError).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from components.cli import diff as diff_cli
from components.cli import path_argument, usage_error
from components.cli.deadline import PlanTimeout, add_timeout_argument, deadline
from components.cli.progress import progress
from components.errors import ConfigError
from components.files import FileProblem, read_regular_file

if TYPE_CHECKING:
    from components.plan.model import Plan

EXIT_CHECK_FAILED = 1


def add_arguments(plan: argparse.ArgumentParser) -> None:
    """The `plan` command's arguments (its parser is made by ``components.cli.main``)."""
    plan.add_argument(
        "--stack",
        help="stack name: stacks/Pulumi.<stack>.yaml (with --program DIR: the stack's name, "
        "default dev)",
    )
    plan.add_argument("--json", action="store_true", help="print the plan as one JSON document")
    plan.add_argument(
        "--verbose",
        action="store_true",
        help="show every input of every resource (the default view shows the ones that matter)",
    )
    plan.add_argument(
        "--out",
        type=path_argument,
        help="write every Kubernetes object, patch and release manifest URL of the stack here",
    )
    plan.add_argument(
        "--policy", action="store_true", help="check the guardrail rules; exit 1 on violations"
    )
    plan.add_argument("--stacks-dir", type=path_argument, default=None, help=argparse.SUPPRESS)
    plan.add_argument(
        "--program",
        type=path_argument,
        default=None,
        metavar="DIR|FILE",
        help="plan your own Pulumi program: a project directory (Pulumi.yaml and __main__.py, "
        "e.g. examples/python-api) configured by --config; or a program file run with --stack's "
        "stack file (default: the project's __main__.py)",
    )
    plan.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a config value for --program DIR, as `pulumi config set` gives it "
        "(e.g. gcp:project=my-project); repeat for more",
    )
    _add_deploy_arguments(plan)
    add_timeout_argument(plan)
    diff_cli.add_arguments(plan)
    plan.set_defaults(handler=run)


def _add_deploy_arguments(plan: argparse.ArgumentParser) -> None:
    """What `pulumi up` of the plan is modeled with: its critical path and parallelism."""
    plan.add_argument(
        "--critical-path",
        action="store_true",
        help="print the modeled critical path of `pulumi up`; exit 1 on structure violations",
    )
    plan.add_argument(
        "--parallel",
        type=_positive,
        default=None,
        metavar="N",
        help="with --critical-path: the `pulumi up --parallel` to model (default: the deploy "
        "parallelism, --deploy-parallelism)",
    )
    plan.add_argument(
        "--deploy-parallelism",
        action="store_true",
        help="print only the `pulumi up --parallel` to deploy the stack with (the most "
        "operations ready at once in its plan; the deploy workflow reads it)",
    )


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; a whole number of 1 or more")
    return value


def _error(key: str, message: str) -> ConfigError:
    return usage_error("plan", key, message)


MAX_PROGRAM_BYTES = 2**20
"""A Pulumi program larger than this is refused (the project's `__main__.py` is under 1 KB)."""


def check_program(path: Path) -> None:
    """``--program`` must be a Python file that compiles: a Pulumi program, not a YAML file or
    a binary (running one would end in a traceback, not a report)."""
    try:
        source = read_regular_file(path, MAX_PROGRAM_BYTES, "program").decode("utf-8")
        compile(source, str(path), "exec")
    except FileProblem as exc:
        raise _error("--program", f"{str(path)!r} {exc}; give a Pulumi program") from None
    except (UnicodeDecodeError, SyntaxError, ValueError) as exc:
        raise _error(
            "--program",
            f"{str(path)!r} is not a Python program ({type(exc).__name__}: "
            f"{_first_line(exc)}); give a Pulumi program such as __main__.py",
        ) from None


def _first_line(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return text if len(text) <= 100 else text[:97] + "..."


def run(args: argparse.Namespace) -> int:
    """The `plan` command, stopped after ``--timeout`` seconds."""
    try:
        with deadline(args.timeout, watchdog=args.program is not None):
            return _run(args)
    except PlanTimeout as exc:
        raise _error("--timeout", str(exc)) from None


def _run(args: argparse.Namespace) -> int:
    _check_critical_path(args)
    if args.program is not None and args.program.is_dir():
        return _run_program_dir(args)
    if args.config:
        raise _error("--config", "only with --program DIR (a stack's config is its stack file)")
    if args.program is not None:
        check_program(args.program)
    if args.diff or args.diff_dir or args.all:
        return diff_cli.run(args)
    if args.format is not None:
        raise _error("--format", "only with --diff or --diff-dir")
    if args.stack is None:
        raise _error("--stack", "required: a stack name (or --all with --diff-dir)")
    from components.plan.stack_source import read_stack

    if args.out is not None:  # before the plan runs: a refused --out prints no plan
        _check_out(args.out)
    with progress(f"planning stack {args.stack!r}"):
        # The stack file read and validated before the engine (and the provider SDKs) load: a
        # mistake in it is reported about 1 s of CPU sooner.
        stacks_dir = diff_cli.stacks_dir(args)
        source = read_stack(args.stack, stacks_dir)
        from components.plan.engine import PROGRAM, plan_read

        plan = plan_read(source, args.program or PROGRAM)
    code = _show(plan, args)
    if args.policy and not args.critical_path:
        environment = source.config.environment.value
        return _policy(plan, environment, sys.stderr if args.json else sys.stdout)
    return code


# What a program directory's plan is not made with: a diff base and the guardrails belong to
# the project's stacks (their stack files say the environment).
_STACK_ONLY = ("--diff", "--diff-dir", "--all", "--policy", "--format", "--stacks-dir")


def _run_program_dir(args: argparse.Namespace) -> int:
    """``--program DIR``: your own project planned with its Pulumi.yaml and ``--config``."""
    from components.plan.program_plan import check_program_dir, plan_program

    check_program_dir(args.program)
    for flag in _STACK_ONLY:
        if _given(args, flag):
            raise _error(flag, "not with --program DIR; it plans one program, not a stack file")

    if args.out is not None:
        _check_out(args.out)
    with progress(f"planning {str(args.program)!r}"):
        plan = plan_program(args.program, args.config, args.stack)
    return _show(plan, args)


def _show(plan: Plan, args: argparse.Namespace) -> int:
    """The plan as the arguments ask: its critical path, JSON or text, and ``--out``."""
    from components.plan import render

    if args.critical_path:  # instead of the plan itself (with --json: as JSON)
        return _critical_path(plan, args.json, args.parallel)
    if args.deploy_parallelism:
        return _deploy_parallelism(plan)
    if args.parallel is not None:
        raise _error("--parallel", "only with --critical-path")
    if args.json:
        try:
            sys.stdout.write(render.render_json(plan))
        except ValueError:  # a backstop: the config checks bound every number first
            message = "the plan holds a number JSON cannot carry (infinite or NaN)"
            raise _error("--json", message) from None
    else:
        print(render.render_text(plan, verbose=args.verbose))
    if args.out is not None:
        _write_manifests(plan, args.out)
    return 0


def _critical_path(plan: Plan, as_json: bool, parallel: int | None = None) -> int:
    from components.plan.critical_path import (
        critical_path,
        default_limits,
        default_table,
        render_json,
        render_text,
    )

    table = default_table()
    limits = default_limits(table, parallel) if parallel else None  # None: the deploy parallelism
    path = critical_path(plan.resources, table, limits, with_sensitivity=True)
    if as_json:
        sys.stdout.write(render_json(path, plan.stack))
    else:
        print(render_text(path, plan.stack))
    return EXIT_CHECK_FAILED if path.violations else 0


def _deploy_parallelism(plan: Plan) -> int:
    from components.plan.critical_path import default_table, deploy_parallel
    from components.plan.schedule import Graph

    print(deploy_parallel(Graph(plan.resources), default_table()))
    return 0


def _check_critical_path(args: argparse.Namespace) -> None:
    """``--critical-path`` and ``--deploy-parallelism`` print the modeled deploy instead of the
    plan: what would be dropped silently with them is refused."""
    for option, prints, instead in (
        (
            "--critical-path",
            "the modeled deploy time",
            ("--policy", "--out", "--diff", "--diff-dir"),
        ),
        (
            "--deploy-parallelism",
            "the deploy parallelism",
            (
                "--critical-path",
                "--json",
                "--parallel",
                "--policy",
                "--out",
                "--diff",
                "--diff-dir",
            ),
        ),
    ):
        if not _given(args, option):
            continue
        for flag in instead:
            if _given(args, flag):
                raise _error(
                    option,
                    f"prints {prints} instead of the plan, so {flag} would do "
                    f"nothing with it; run {flag} on its own",
                )


def _given(args: argparse.Namespace, flag: str) -> bool:
    """Whether ``--flag`` was given a value (argparse stores it as ``flag`` with ``_``)."""
    return bool(getattr(args, flag.removeprefix("--").replace("-", "_")))


def _check_out(out: Path) -> None:
    """Before the plan runs: a refused --out prints no plan. The directory is made here, so one
    that cannot be made (a read-only or virtual file system) is refused now too."""
    from components.plan import render

    try:
        render.check_out_dir(out)
        out.mkdir(parents=True, exist_ok=True)
    except render.OutputExists as exc:
        raise _error("--out", str(exc)) from None
    except OSError as exc:  # e.g. a directory it may not list or create
        raise _error("--out", f"cannot use {str(out)!r}: {exc}") from None


def _write_manifests(plan: Plan, out: Path) -> None:
    from components.plan import render

    try:
        written = render.write_manifests(plan, out)
    except render.OutputExists as exc:
        raise _error("--out", str(exc)) from None
    except OSError as exc:
        raise _error("--out", f"cannot write manifests to {str(out)!r}: {exc}") from None
    print(written.summary(out), file=sys.stderr)


def _policy(plan: Plan, environment: str, out: TextIO) -> int:
    """The guardrail report; the stack's environment says which rules apply."""
    from components.policy.report import check_plan, render_violations

    violations = check_plan(plan, environment)
    print(render_violations(violations, environment, plan.stack), file=out)
    return EXIT_CHECK_FAILED if violations else 0
