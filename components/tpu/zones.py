"""The TPU zone catalog: for each generation, the zones that offer it and with which capacity
types, as Google's published tables list them (``components/tpu/data/zones.json``, with its
sources and the date they were read).

Pure data and lookups: no pydantic, no Pulumi, no YAML (``shapes`` reads it and stays fast).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from components.tpu.generations import TpuGeneration

ZONE_TABLE = Path(__file__).resolve().parent / "data" / "zones.json"
CAPACITY_TYPES = ("onDemand", "spot", "reservation", "flexStart")
"""The capacity types in the stack file's words (``tpuPools[].capacity``)."""


@dataclass(frozen=True)
class ZoneTable:
    """Per generation, zone -> the capacity types it lists; where the facts come from."""

    zones: dict[TpuGeneration, dict[str, tuple[str, ...]]]
    source: str
    seen: str

    def zones_of(self, generation: TpuGeneration) -> list[str]:
        """The zones offering ``generation``, sorted."""
        return sorted(self.zones.get(generation, {}))

    def capacity_in(self, generation: TpuGeneration, zone: str) -> tuple[str, ...] | None:
        """The capacity types ``zone`` lists for ``generation`` (None: it does not offer it)."""
        return self.zones.get(generation, {}).get(zone)

    def generations_in(self, zone: str) -> list[TpuGeneration]:
        """The generations ``zone`` offers, in catalog order."""
        return [g for g in TpuGeneration if zone in self.zones.get(g, {})]

    def known_zones(self) -> list[str]:
        return sorted({z for by_zone in self.zones.values() for z in by_zone})


@cache
def zone_table(path: Path = ZONE_TABLE) -> ZoneTable:
    """The zone catalog, read once. A malformed file is a bug of this repository: it raises."""
    document = json.loads(path.read_text(encoding="utf-8"))
    named: dict[str, list[str]] = document["capacity"]
    zones: dict[TpuGeneration, dict[str, tuple[str, ...]]] = {}
    for generation, by_zone in document["generations"].items():
        zones[TpuGeneration(generation)] = {
            zone: _capacity(named[kinds] if isinstance(kinds, str) else kinds)
            for zone, kinds in (by_zone or {}).items()
        }
    source = document["source"]
    return ZoneTable(zones, source["zones"], str(source["seen"]))


def _capacity(kinds: list[str]) -> tuple[str, ...]:
    unknown = [k for k in kinds if k not in CAPACITY_TYPES]
    if unknown:
        raise ValueError(f"{ZONE_TABLE.name}: unknown capacity types {unknown}")
    return tuple(k for k in CAPACITY_TYPES if k in kinds)


def zone_problem(generation: TpuGeneration, zone: str) -> str | None:
    """Why a ``generation`` pool cannot be created in ``zone`` (None: the table lists it)."""
    table = zone_table()
    if table.capacity_in(generation, zone) is not None:
        return None
    offered = table.zones_of(generation)
    where = f"zones that have it: {', '.join(offered)}" if offered else "no zone lists it"
    return (
        f"{generation.value} is not offered in zone {zone!r} ({where}; Google's TPU regions "
        f"and zones table as of {table.seen}); move the stack's gcp.zone, or set "
        "allowUnlistedZone: true on this pool if the zone is newer than the table"
    )


def capacity_note(generation: TpuGeneration, zone: str, capacity: str) -> str | None:
    """A warning when ``zone`` offers ``generation`` but does not list ``capacity`` there."""
    listed = zone_table().capacity_in(generation, zone)
    if listed is None or capacity in listed:
        return None
    return (
        f"{generation.value} in {zone} lists capacity {', '.join(listed)}, not {capacity} "
        f"(Google's tables as of {zone_table().seen}); creating the pool may fail"
    )
