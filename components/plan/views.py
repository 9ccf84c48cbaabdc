"""Typed views of planned resources: what cost, diff, critical path, render and the guardrails read
from a resource's inputs, each read in one place.

Inputs are in the engine's camelCase wire form, as a plan document records them and as a policy
pack receives them: any value may be ``UNKNOWN`` (only the cloud knows it yet: a preview, the
mocks) or ``SECRET``, and numbers may be floats (the wire) or ints (the plan). A view never
guesses what it cannot see: an unknown value reads as unknown, not as absent and not as a default.
Pure: no Pulumi.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from components.plan.model import SECRET, UNKNOWN
from components.tpu.catalog import is_tpu_machine_type
from components.vocabulary import CapacityType


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""What ``value_at`` gives for a path that is not there (absent, null, or through a non-mapping)."""


def is_unknown(value: Any) -> bool:
    """Not visible: computed by the cloud later (``UNKNOWN``), or a secret (``SECRET``)."""
    return isinstance(value, str) and value in (UNKNOWN, SECRET)


def value_at(inputs: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path of keys (``nodeConfig.machineType``):

    - ``MISSING`` when a step is absent or null (the engine sends no nulls; a plan document may
      hold them, and they mean "not set" to the provider), or the path runs through a value
      that is not a mapping (a list, a string, a number: keys do not index them);
    - the marker itself (``UNKNOWN`` or ``SECRET``) when a step meets one before the path ends:
      the value is there, it is only not visible yet;
    - otherwise the value as recorded (at the last step, a marker or anything else).
    """
    value: Any = inputs
    for part in path.split("."):
        if is_unknown(value):
            return value
        if not isinstance(value, Mapping) or value.get(part) is None:
            return MISSING
        value = value[part]
    return value


def number(value: Any) -> int | float | None:
    """A wire number (the engine sends floats) as an int when whole; None if not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if float(value).is_integer() else value


def count(value: Any) -> int | None:
    """A whole, non-negative number (2, 2.0) as an int; None for anything else."""
    found = number(value)
    return found if isinstance(found, int) and found >= 0 else None


class Bound(Enum):
    """Which node count of a pool: what it always runs, or what it can grow to."""

    MINIMUM = "Min"
    MAXIMUM = "Max"


@dataclass(frozen=True)
class NodeCount:
    """A pool's node count. ``nodes`` None: not known from the plan (see ``node_count``)."""

    nodes: int | None
    autoscaled: bool = False  # read from the autoscaling bound, not from the fixed count


@dataclass(frozen=True)
class NodePoolView:
    """A ``gcp:container/nodePool:NodePool`` (or a cluster's default pool) by its inputs."""

    inputs: Mapping[str, Any]

    @property
    def name(self) -> str | None:
        name = value_at(self.inputs, "name")
        return name if isinstance(name, str) and not is_unknown(name) else None

    @property
    def machine_type(self) -> Any:
        """``nodeConfig.machineType`` as recorded (``MISSING`` when not set)."""
        return value_at(self.inputs, "nodeConfig.machineType")

    @property
    def is_tpu(self) -> bool:
        return is_tpu_machine_type(self.machine_type)

    @property
    def flex_start(self) -> bool:
        return value_at(self.inputs, "nodeConfig.flexStart") is True

    @property
    def capacity(self) -> CapacityType:
        """How the nodes are obtained, from the node config; a flag not visible counts as unset."""
        if self.flex_start:
            return CapacityType.FLEX_START
        flags = ("nodeConfig.spot", "nodeConfig.preemptible")
        if any(value_at(self.inputs, flag) is True for flag in flags):
            return CapacityType.SPOT
        affinity = value_at(self.inputs, "nodeConfig.reservationAffinity.consumeReservationType")
        if affinity in ("SPECIFIC_RESERVATION", "ANY_RESERVATION"):
            return CapacityType.RESERVATION
        return CapacityType.ON_DEMAND

    @property
    def region(self) -> str | None:
        """The region the nodes run in: from the first zone, else the location (None: unknown)."""
        zones = value_at(self.inputs, "nodeLocations")
        place = zones[0] if isinstance(zones, list) and zones else value_at(self.inputs, "location")
        if not isinstance(place, str) or is_unknown(place):
            return None
        region, _, suffix = place.rpartition("-")
        return region if len(suffix) == 1 and region else place

    @property
    def zones(self) -> int | None:
        """How many zones the pool's per-zone counts apply to: its ``nodeLocations``; 1 when it
        sets none (its zones are then the cluster's, which a view of one pool cannot see; every
        pool this project registers sets them); None when they are not known yet."""
        zones = value_at(self.inputs, "nodeLocations")
        if is_unknown(zones):
            return None
        return len(zones) if isinstance(zones, list) and zones else 1

    def node_count(self, bound: Bound) -> NodeCount:
        """Nodes of the whole pool (every zone) at ``bound``, read from the first of these that
        is set (not absent, not null):

        1. ``autoscaling.total{Min,Max}NodeCount`` (for the whole pool);
        2. ``autoscaling.{min,max}NodeCount`` times the zones;
        3. ``nodeCount`` times the zones (a fixed-size pool);
        4. ``initialNodeCount`` times the zones.

        The first field that is set decides: when it is unknown, secret or not a whole number,
        or a per-zone count meets unknown zones, the count is unknown (``nodes`` None), never the
        next field's (a different quantity) and never a default. None of them set: unknown too.
        """
        per_zone = (
            (f"autoscaling.total{bound.value}NodeCount", False),
            (f"autoscaling.{bound.value.lower()}NodeCount", True),
            ("nodeCount", True),
            ("initialNodeCount", True),
        )
        for index, (path, zonal) in enumerate(per_zone):
            value = value_at(self.inputs, path)
            if value is MISSING:
                continue
            nodes = count(value)
            zones = self.zones if zonal else 1
            total = None if nodes is None or zones is None else nodes * zones
            return NodeCount(total, autoscaled=index < 2)
        return NodeCount(None)


@dataclass(frozen=True)
class ClusterView:
    """A ``gcp:container/cluster:Cluster`` by its inputs."""

    inputs: Mapping[str, Any]

    @property
    def name(self) -> str | None:
        name = value_at(self.inputs, "name")
        return name if isinstance(name, str) and not is_unknown(name) else None
