"""`python -m components ...` (or `tpu-pathways ...`): the commands, their parser, and the exit
codes; each command's arguments and output live in its own module of ``components.cli``.

User mistakes (unknown stack, bad config, bad arguments) print a clear message and exit 2;
they never end in a traceback.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Sequence
from importlib import import_module
from pathlib import Path

from components.cli import EXIT_USAGE, path_argument
from components.errors import ConfigError
from components.program_failure import ProgramFailed

# The commands whose arguments live in their own module (``add_arguments(parser)``, which also
# sets the handler): only the module of the command run is imported, so `shapes` loads the TPU
# catalog and not the plan's modules (pydantic, Pulumi).
_MODULES = {
    "plan": (
        "components.cli.plan",
        "plan a stack (or your own Pulumi program) offline: what `pulumi up` would create",
    ),
    "shapes": (
        "components.cli.shapes",
        "list TPU shapes (by generation, chips or zone) or resolve one accelerator name",
    ),
    "new": ("components.cli.new", "write a new stack file from a few flags"),
    "drift-report": (
        "components.cli.drift",
        "the drift issue's Markdown from the drift workflow's per-stack preview results",
    ),
    "stack-schema": (
        "components.cli.stack_schema",
        "print (or --out FILE) the JSON Schema of a stack file, for editors",
    ),
}
_OTHER_COMMANDS = ("stacks", "config-reference")

DESCRIPTION = """\
tpu-pathways: GKE clusters with TPU node pools and Pathways workloads, as Pulumi stacks.
Everything here runs offline: no cloud account, no Pulumi CLI, no network."""

EPILOG = """\
examples:
  tpu-pathways new research --team research --tpu v6e-16 --capacity spot --region us-east5
  tpu-pathways plan --stack research            what `pulumi up` would create, its cost and time
  tpu-pathways shapes v6e --zone us-east5-b     the TPU shapes a zone offers

exit codes:
  0  done
  1  a check failed: policy violations (--policy), critical-path structure (--critical-path),
     a stack of a diff that failed to plan
  2  a mistake in the command or the stack file: the message names the key and what is allowed
  141  the reader closed the output early (plan | head)

docs: README.md and docs/ (getting-started.md first)."""


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--version"] or argv == ["-V"]:
        print(f"tpu-pathways {_version()}")
        return 0
    command = _command(argv)
    if command is not None and command not in (*_MODULES, *_OTHER_COMMANDS):
        return _unknown_command(command)
    parser = _parser(command)
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except (ConfigError, ProgramFailed) as exc:  # the user's mistake, or the user's program's
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _prog() -> str:
    """How the user ran it: the ``tpu-pathways`` command or ``python -m components``."""
    name = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    return "tpu-pathways" if name == "tpu-pathways" else "python -m components"


def _version() -> str:
    """The installed package's version (its metadata, set in pyproject.toml)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tpu-pathways")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed: pip install -e .)"


def _unknown_command(command: str) -> int:
    """A mistyped command: the closest one named, like git's "did you mean"."""
    commands = [*_MODULES, *_OTHER_COMMANDS]
    close = difflib.get_close_matches(command, commands, n=1, cutoff=0.5)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    print(
        f"error: {command!r} is not a command{hint} (commands: {', '.join(commands)}; "
        "--help shows what each does)",
        file=sys.stderr,
    )
    return EXIT_USAGE


def _command(argv: Sequence[str]) -> str | None:
    """The command named (the top-level parser has no option that takes a value)."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The CLI's parser; only ``command``'s module adds its arguments (the others are listed
    by name and help, which is all `--help` and a usage error show)."""
    parser = argparse.ArgumentParser(
        prog=_prog(),
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "-V", "--version", action="store_true", help="print the installed version and exit"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
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

    reference = commands.add_parser(
        "config-reference", help="print every key of a stack file (docs/config-reference.md)"
    )
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
