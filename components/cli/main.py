"""`python -m components ...`: the offline plan and catalog lookups, no cloud account needed.

User mistakes (unknown stack, bad config, bad arguments) print a clear message and exit 2;
they never end in a traceback. Every command's arguments, output and exit code live in
``components.cli``; the modules it calls return data and text.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from components.cli import plan, shapes
from components.errors import ConfigError, ConfigIssue

EXIT_USAGE = 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m components", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    plan.add_parser(commands)
    shapes.add_parser(commands)

    stacks = commands.add_parser(
        "stacks", help="list the stacks: owners (create a cluster) first, then team stacks"
    )
    stacks.add_argument("--stacks-dir", type=Path, default=None, help="default: stacks/")
    stacks.add_argument(
        "--github-output", action="store_true", help="print owners=[...] and teams=[...] lines"
    )
    stacks.set_defaults(handler=_stacks)

    reference = commands.add_parser("config-reference", help="print the config reference")
    reference.set_defaults(handler=_config_reference)
    return parser


def _stacks(args: argparse.Namespace) -> int:
    from components.config.loader import STACKS_DIR, classify_stacks

    stacks_dir = args.stacks_dir or STACKS_DIR
    if not stacks_dir.is_dir():
        where = f"{str(stacks_dir)!r} is not a directory of stack files"
        issue = ConfigIssue("--stacks-dir", where)
        raise ConfigError([issue], "stacks")
    kinds = classify_stacks(stacks_dir)
    if kinds.conflicts:  # two owners of one cluster: nothing may deploy until it is fixed
        raise ConfigError(kinds.conflicts, "stacks")
    owners, teams = kinds.owners, kinds.teams
    if args.github_output:
        print(f"owners={json.dumps(owners)}\nteams={json.dumps(teams)}")
    else:
        print("\n".join([*(f"{s}  (owns its cluster)" for s in owners), *teams]))
    # A broken stack file is named (with its problems) but does not hide the others.
    for stack, exc in kinds.errors.items():
        print(f"error: stack {stack!r} left out: {exc}", file=sys.stderr)
    return EXIT_USAGE if kinds.errors else 0


def _config_reference(_: argparse.Namespace) -> int:
    from components.config.reference import render_reference

    print(render_reference())
    return 0
