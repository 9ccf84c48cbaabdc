"""`python -m components ...`: the offline plan and catalog lookups, no cloud account needed.

User mistakes (unknown stack, bad config, bad arguments) print a clear message and exit 2;
they never end in a traceback. Every command's arguments, output and exit code live in
``components.cli``; the modules it calls return data and text.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import import_module

from components.cli import path_argument
from components.errors import ConfigError

EXIT_USAGE = 2

# The commands whose arguments live in their own module (``add_arguments(parser)``, which also
# sets the handler): only the module of the command run is imported, so `shapes` loads the TPU
# catalog and not the plan's modules (pydantic, Pulumi).
_MODULES = {
    "plan": (
        "components.cli.plan",
        "plan a stack or a Pulumi program offline under Pulumi's mock engine",
    ),
    "shapes": ("components.cli.shapes", "list the TPU catalog (filtered) or resolve one name"),
    "drift-report": (
        "components.cli.drift",
        "the drift issue's Markdown from the drift workflow's per-stack preview results",
    ),
    "stack-schema": (
        "components.cli.stack_schema",
        "print (or --out FILE) the JSON Schema of a stack file, for editors",
    ),
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser(_command(argv))
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _command(argv: Sequence[str]) -> str | None:
    """The command named (the top-level parser has no option that takes a value)."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The CLI's parser; only ``command``'s module adds its arguments (the others are listed
    by name and help, which is all `--help` and a usage error show)."""
    parser = argparse.ArgumentParser(prog="python -m components", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    for name, (module, text) in _MODULES.items():
        sub = commands.add_parser(name, help=text, description=text)
        if name == command:
            import_module(module).add_arguments(sub)

    stacks = commands.add_parser(
        "stacks", help="list the stacks: owners (create a cluster) first, then team stacks"
    )
    stacks.add_argument("--stacks-dir", type=path_argument, default=None, help="default: stacks/")
    stacks.add_argument(
        "--github-output", action="store_true", help="print owners=[...] and teams=[...] lines"
    )
    stacks.set_defaults(handler=_stacks)

    reference = commands.add_parser("config-reference", help="print the config reference")
    reference.set_defaults(handler=_config_reference)
    return parser


def _stacks(args: argparse.Namespace) -> int:
    from components.cli.diff import stacks_dir
    from components.resolve.tenancy.ownership import classify_stacks

    kinds = classify_stacks(stacks_dir(args))
    if kinds.conflicts:  # two owners of one cluster: nothing may deploy until it is fixed
        raise ConfigError(kinds.conflicts, "stacks")
    owners, teams = kinds.owners, kinds.teams
    if args.github_output:
        import json

        print(f"owners={json.dumps(owners)}\nteams={json.dumps(teams)}")
    else:
        print("\n".join([*(f"{s}  (owns its cluster)" for s in owners), *teams]))
    # A broken stack file is named (with its problems) but does not hide the others.
    for stack, exc in kinds.errors.items():
        print(f"error: stack {stack!r} left out: {exc}", file=sys.stderr)
    return EXIT_USAGE if kinds.errors else 0


def _config_reference(_: argparse.Namespace) -> int:
    from components.cli.reference import render_reference

    print(render_reference())
    return 0
