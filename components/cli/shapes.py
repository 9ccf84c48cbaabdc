"""`python -m components shapes [NAME]`: the TPU catalog, or one accelerator name resolved.

Reads only the catalog (no Pulumi, no provider SDK): it answers in a fraction of a second.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from components.errors import ConfigError, ConfigIssue
from components.tpu import catalog


def add_parser(commands: argparse._SubParsersAction) -> None:
    shapes = commands.add_parser("shapes", help="list the TPU catalog or resolve one name")
    shapes.add_argument("name", nargs="?", help="an accelerator name such as v5litepod-16")
    shapes.add_argument("--json", action="store_true", help="print JSON")
    shapes.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
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


def _shape_row(shape: catalog.TpuShape) -> dict[str, object]:
    return {
        "accelerator": shape.accelerator_name,
        "names": catalog.accepted_names(shape),
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
