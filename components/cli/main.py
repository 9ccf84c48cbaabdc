"""`python -m components ...`: the offline plan and catalog lookups, no cloud account needed.

User mistakes (unknown stack, bad config, bad arguments) print a clear message and exit 2;
they never end in a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from components.cli import diff as diff_cli
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

    plan = commands.add_parser("plan", help="plan a stack offline under Pulumi's mock engine")
    plan.add_argument("--stack", help="stack name: stacks/Pulumi.<stack>.yaml")
    plan.add_argument("--json", action="store_true", help="print the plan as one JSON document")
    plan.add_argument(
        "--out",
        type=Path,
        help="write every Kubernetes object, patch and release manifest URL of the stack here",
    )
    plan.add_argument(
        "--policy", action="store_true", help="check the guardrail rules; exit 1 on violations"
    )
    plan.add_argument("--stacks-dir", type=Path, default=None, help=argparse.SUPPRESS)
    plan.add_argument(
        "--critical-path",
        action="store_true",
        help="print the modeled critical path of `pulumi up`; exit 1 on structure violations",
    )
    diff_cli.add_arguments(plan)
    plan.set_defaults(handler=_plan)

    shapes = commands.add_parser("shapes", help="list the TPU catalog or resolve one name")
    shapes.add_argument("name", nargs="?", help="an accelerator name such as v5litepod-16")
    shapes.add_argument("--json", action="store_true", help="print JSON")
    shapes.set_defaults(handler=_shapes)

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


def _plan(args: argparse.Namespace) -> int:
    if (code := diff_cli.run(args)) is not None:  # --diff / --diff-dir / --all
        return code
    from components.plan import render
    from components.plan.engine import plan_stack
    from components.stack.loader import STACKS_DIR, load_stack

    config = load_stack(args.stack, args.stacks_dir or STACKS_DIR)
    plan = plan_stack(config, args.stack)
    if args.critical_path:  # instead of the plan itself (with --json: as JSON)
        from components.plan.critical_path import report_critical_path

        return report_critical_path(plan, sys.stdout, as_json=args.json)
    if args.json:
        sys.stdout.write(render.render_json(plan))
    else:
        print(render.render_text(plan))
    if args.out is not None:
        try:
            written = render.write_manifests(plan, args.out)
        except render.OutputExists as exc:
            raise ConfigError([ConfigIssue("--out", str(exc))], "plan") from None
        except OSError as exc:
            raise ConfigError(
                [ConfigIssue("--out", f"cannot write manifests to {str(args.out)!r}: {exc}")],
                "plan",
            ) from None
        print(written.summary(args.out), file=sys.stderr)
    if args.policy:
        from components.policy.report import report_policy

        return report_policy(
            plan, config.environment.value, sys.stderr if args.json else sys.stdout
        )
    return 0


def _shapes(args: argparse.Namespace) -> int:
    from components.tpu import catalog

    if args.name:
        try:
            shapes = [catalog.resolve_accelerator(args.name)]
        except catalog.CatalogError as exc:
            raise ConfigError([ConfigIssue("name", str(exc))], "shapes") from None
    else:
        shapes = catalog.all_shapes()
    rows = [_shape_row(s) for s in shapes]
    text = json.dumps(rows if not args.name else rows[0], indent=2) if args.json else None
    try:
        print(text if text is not None else _shape_table(rows))
    except BrokenPipeError:  # `shapes | head`: the reader left; not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


# The text table: (header, row key, right-aligned). Booleans print as yes/no.
_SHAPE_COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("accelerator", "accelerator", False),
    ("topology", "topology", False),
    ("machine type", "machineType", False),
    ("hosts", "hosts", True),
    ("chips/host", "chipsPerHost", True),
    ("chips", "chips", True),
    ("pathways instance", "pathwaysInstanceType", False),
    ("controller v0.1.4", "pathwaysSupported", False),
    ("pathwaysutils", "pathwaysutilsSupported", False),
)


def _cell(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _shape_table(rows: list[dict[str, object]]) -> str:
    """Columns as wide as their widest cell; numbers right-aligned."""
    cells = [[_cell(row[key]) for _, key, _ in _SHAPE_COLUMNS] for row in rows]
    widths = [
        max([len(header), *(len(line[i]) for line in cells)])
        for i, (header, _, _) in enumerate(_SHAPE_COLUMNS)
    ]

    def line(values: list[str]) -> str:
        parts = (
            v.rjust(w) if right else v.ljust(w)
            for v, w, (_, _, right) in zip(values, widths, _SHAPE_COLUMNS, strict=True)
        )
        return "  ".join(parts).rstrip()

    return "\n".join([line([h for h, _, _ in _SHAPE_COLUMNS]), *(line(c) for c in cells)])


def _shape_row(shape) -> dict[str, object]:
    from components.tpu.catalog import accepted_names

    return {
        "accelerator": shape.accelerator_name,
        "names": accepted_names(shape),
        "generation": shape.generation.value,
        "topology": shape.topology,
        "machineType": shape.machine_type,
        "acceleratorLabel": shape.accelerator_label,
        "hosts": shape.hosts,
        "chipsPerHost": shape.chips_per_host,
        "chips": shape.chips,
        "tensorcoresPerChip": shape.tensorcores_per_chip,
        "multiHost": shape.multi_host,
        "pathwaysInstanceType": shape.pathways_instance_type,
        "pathwaysSupported": shape.pathways_supported,
        "pathwaysutilsSupported": shape.pathwaysutils_supported,
    }


def _stacks(args: argparse.Namespace) -> int:
    from components.stack.loader import STACKS_DIR, classify_stacks

    kinds = classify_stacks(args.stacks_dir or STACKS_DIR)
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
    from components.stack.reference import render_reference

    print(render_reference())
    return 0
