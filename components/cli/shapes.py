"""`python -m components shapes [NAME|GENERATION] [--chips N | --min-chips N | --max-chips N]
[--zone ZONE]`: the TPU catalog (every shape, one generation's, filtered by chip count or by the
zones that offer it), or one accelerator name resolved; each with the zones that offer its
generation (``components.tpu.zones``).

Reads only the catalog (no Pulumi, no provider SDK): it answers in a fraction of a second.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from components.cli import usage_error
from components.errors import ConfigError
from components.tpu import catalog
from components.tpu.generations import TpuGeneration
from components.tpu.zones import zone_table


def add_arguments(shapes: argparse.ArgumentParser) -> None:
    """The `shapes` command's arguments (its parser is made by ``components.cli.main``)."""
    generations = ", ".join(g.value for g in TpuGeneration)
    shapes.add_argument(
        "name",
        nargs="?",
        metavar="NAME|GENERATION",
        help=f"an accelerator name such as v5litepod-16 (that shape), or a generation "
        f"({generations}: its shapes)",
    )
    shapes.add_argument("--chips", type=_count, metavar="N", help="only shapes of exactly N chips")
    shapes.add_argument(
        "--min-chips", type=_count, metavar="N", help="only shapes of N chips or more"
    )
    shapes.add_argument(
        "--max-chips", type=_count, metavar="N", help="only shapes of N chips or fewer"
    )
    shapes.add_argument(
        "--zone",
        metavar="ZONE",
        help="only shapes whose generation ZONE offers (e.g. us-east5-a), with its capacity types",
    )
    shapes.add_argument("--json", action="store_true", help="print JSON")
    shapes.set_defaults(handler=run)


def _count(text: str) -> int:
    """A chip count: a whole number from 1 (argparse reports anything else as a usage error
    naming the option)."""
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


_count.__name__ = "chip count"  # argparse's message: "invalid chip count value: '0'"


@dataclass(frozen=True)
class ChipFilter:
    """Which chip counts the listing keeps (None: no bound)."""

    exact: int | None = None
    least: int | None = None
    most: int | None = None

    @property
    def active(self) -> bool:
        return (self.exact, self.least, self.most) != (None, None, None)

    def keeps(self, chips: int) -> bool:
        return (
            (self.exact is None or chips == self.exact)
            and (self.least is None or chips >= self.least)
            and (self.most is None or chips <= self.most)
        )

    def contradiction(self) -> str | None:
        """Why no chip count can pass these bounds (None: some can)."""
        if self.least is not None and self.most is not None and self.least > self.most:
            return (
                f"--min-chips {self.least} is more than --max-chips {self.most}, so no shape "
                "can match; give a --min-chips no larger than --max-chips"
            )
        exact, alone = self.exact, "so no shape can match; give --chips alone"
        if exact is not None and self.least is not None and exact < self.least:
            return f"--chips {exact} is less than --min-chips {self.least}, {alone}"
        if exact is not None and self.most is not None and exact > self.most:
            return f"--chips {exact} is more than --max-chips {self.most}, {alone}"
        return None

    def describe(self) -> str:
        parts = [f"--chips {self.exact}"] if self.exact is not None else []
        parts += [f"--min-chips {self.least}"] if self.least is not None else []
        parts += [f"--max-chips {self.most}"] if self.most is not None else []
        return " ".join(parts)


def _error(key: str, message: str) -> ConfigError:
    return usage_error("shapes", key, message)


def selected(name: str | None, chips: ChipFilter) -> tuple[list[catalog.TpuShape], bool]:
    """The shapes asked for, and whether it is one resolved name (printed as one object)."""
    if contradiction := chips.contradiction():
        raise _error(chips.describe(), contradiction)
    if name is not None and not name.strip():
        raise _error("name", f"{name!r} names nothing; give an accelerator name or a generation")
    generation = next((g for g in TpuGeneration if g.value == name), None)
    if name and generation is None:
        if chips.active:
            raise _error(chips.describe(), f"filters a listing, not the one shape {name!r} names")
        try:
            return [catalog.resolve_accelerator(name)], True
        except catalog.CatalogError as exc:
            raise _error("name", str(exc)) from None
    listed = catalog.all_shapes()
    if generation is not None:
        listed = [s for s in listed if s.generation == generation]
    kept = [s for s in listed if chips.keeps(s.chips)]
    if not kept:
        counts = ", ".join(str(n) for n in sorted({s.chips for s in listed}))
        where = f"{generation.value} shape" if generation else "shape"
        raise _error(chips.describe(), f"no {where} matches; chip counts there are: {counts}")
    return kept, False


def in_zone(shapes: list[catalog.TpuShape], zone: str | None) -> list[catalog.TpuShape]:
    """The shapes whose generation ``zone`` offers (all of them without a zone)."""
    if zone is None:
        return shapes
    table = zone_table()
    offered = table.generations_in(zone.strip().lower())
    if not offered:
        raise _error(
            "--zone",
            f"{zone!r} offers no TPU generation in the zone catalog (Google's table as of "
            f"{table.seen}); zones that do: {', '.join(table.known_zones())}",
        )
    kept = [s for s in shapes if s.generation in offered]
    if not kept:
        names = ", ".join(g.value for g in offered)
        raise _error("--zone", f"{zone!r} offers {names}, and none of the shapes asked for")
    return kept


def run(args: argparse.Namespace) -> int:
    chips = ChipFilter(args.chips, args.min_chips, args.max_chips)
    shapes, one = selected(args.name, chips)
    shapes = in_zone(shapes, args.zone)
    zone = args.zone.strip().lower() if args.zone else None
    rows = [_shape_row(s, zone) for s in shapes]
    if args.json:
        import json  # only here: `shapes NAME` answers without loading it

        shown = [{k: v for k, v in row.items() if k != "zonesText"} for row in rows]
        text = json.dumps(shown[0] if one else shown, indent=2)
    else:
        text = _shape_table(rows)
    print(text)  # a reader that leaves early (`shapes | head`) is handled by components.__main__
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
    ("zones", "zonesText", False),
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


def _zones(shape: catalog.TpuShape, zone: str | None) -> dict[str, list[str]]:
    """The zones offering the shape's generation (only ``zone`` when given) and their
    capacity types."""
    table = zone_table()
    zones = [zone] if zone else table.zones_of(shape.generation)
    return {z: list(table.capacity_in(shape.generation, z) or ()) for z in zones}


def _zones_text(zones: dict[str, list[str]], one_zone: bool) -> str:
    if one_zone:
        return "; ".join(f"{z} ({', '.join(kinds)})" for z, kinds in zones.items())
    return ", ".join(zones) or "none listed"


def _shape_row(shape: catalog.TpuShape, zone: str | None = None) -> dict[str, object]:
    zones = _zones(shape, zone)
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
        "zones": zones,
        "zonesText": _zones_text(zones, zone is not None),
    }
