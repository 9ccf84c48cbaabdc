"""The estimated hourly and monthly cost of a plan's node pools, at list prices.

Everything is read from the plan document's node pool resources, so a saved ``plan --json`` of
another commit is priced exactly like the current plan:

- TPU pools: chips per host from the catalog's machine type, times the node count (flex-start
  pools: the autoscaling maximum, what the pool grows to when capacity is granted); the capacity
  type from ``nodeConfig`` (spot, flexStart, reservationAffinity; otherwise on-demand).
- The CPU pool: vCPUs and memory of its machine type, times its autoscaling minimum (the
  baseline it always runs).

Prices come from ``components/tpu/data/prices.yaml`` and the stack's ``pricing`` overrides, which
the plan records in ``summary.cost.overrides``. A pool without a price is listed as not priced
and left out of the totals; nothing is guessed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import cache
from typing import Any

from pydantic.alias_generators import to_camel

from components.plan.model import UNKNOWN, Plan
from components.stack.schema import CapacityType
from components.tokens import NODE_POOL
from components.tpu import catalog
from components.tpu.machines import machine_type
from components.tpu.pricing import PriceTable, PricingOverrides, price_table

GIB = 1024**3


@dataclass(frozen=True)
class PoolCost:
    """The priced capacity of one node pool resource."""

    urn: str
    pool: str  # the GKE node pool name
    kind: str  # "tpu" or "cpu"
    machine_type: str
    capacity: str  # onDemand, spot, reservation, flexStart
    region: str | None
    nodes: int | None
    generation: str | None = None
    chips: int | None = None
    hourly: float | None = None  # None: not priced
    basis: str = ""

    @property
    def priced(self) -> bool:
        return self.hourly is not None

    def to_dict(self) -> dict[str, Any]:
        row = {to_camel(k): v for k, v in asdict(self).items()}
        if self.hourly is not None:
            row["hourly"] = round(self.hourly, 6)
        return {k: v for k, v in row.items() if v is not None or k == "hourly"}


@cache
def _tpu_machines() -> dict[str, tuple[str, int]]:
    """TPU machine type -> (generation, chips per host), from the catalog."""
    return {s.machine_type: (s.generation.value, s.chips_per_host) for s in catalog.all_shapes()}


def _get(inputs: dict[str, Any], path: str) -> Any:
    value: Any = inputs
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def pool_region(inputs: dict[str, Any]) -> str | None:
    """The region a node pool's nodes run in: from its zone, else its location."""
    zones = inputs.get("nodeLocations")
    place = zones[0] if isinstance(zones, list) and zones else inputs.get("location")
    if not isinstance(place, str) or place == UNKNOWN:
        return None
    region, _, suffix = place.rpartition("-")
    return region if len(suffix) == 1 and region else place


def capacity_type(inputs: dict[str, Any]) -> str:
    """onDemand, spot, reservation or flexStart, from the node config."""
    config = inputs.get("nodeConfig") or {}
    if config.get("flexStart") is True:
        return CapacityType.FLEX_START.value
    if config.get("spot") is True or config.get("preemptible") is True:
        return CapacityType.SPOT.value
    affinity = _get(config, "reservationAffinity.consumeReservationType")
    if affinity in ("SPECIFIC_RESERVATION", "ANY_RESERVATION"):
        return CapacityType.RESERVATION.value
    return CapacityType.ON_DEMAND.value


def _zones(inputs: dict[str, Any]) -> int:
    zones = inputs.get("nodeLocations")
    return len(zones) if isinstance(zones, list) and zones else 1


def _tpu_nodes(inputs: dict[str, Any], capacity: str) -> tuple[int | None, str]:
    autoscaling = inputs.get("autoscaling") or {}
    if capacity == CapacityType.FLEX_START.value:
        total = _count(autoscaling.get("totalMaxNodeCount"))
        per_zone = _count(autoscaling.get("maxNodeCount"))
        if total is not None:
            return total, "flex-start: at its autoscaling maximum"
        if per_zone is not None:
            return per_zone * _zones(inputs), "flex-start: at its autoscaling maximum"
        return None, "flex-start pool without an autoscaling maximum"
    per_zone = _count(inputs.get("nodeCount"))
    if per_zone is None:
        per_zone = _count(inputs.get("initialNodeCount"))
    if per_zone is None:
        return None, "node count not known before deploy"
    return per_zone * _zones(inputs), ""


def _cpu_nodes(inputs: dict[str, Any]) -> tuple[int | None, str]:
    autoscaling = inputs.get("autoscaling") or {}
    total = _count(autoscaling.get("totalMinNodeCount"))
    if total is not None:
        return total, "at its autoscaling minimum"
    per_zone = _count(autoscaling.get("minNodeCount"))
    if per_zone is not None:
        return per_zone * _zones(inputs), "at its autoscaling minimum"
    for key in ("nodeCount", "initialNodeCount"):
        count = _count(inputs.get(key))
        if count is not None:
            return count * _zones(inputs), ""
    return None, "node count not known before deploy"


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def price_pool(
    resource: dict[str, Any], overrides: PricingOverrides, table: PriceTable
) -> PoolCost | None:
    """The cost of one node pool resource of a plan document (None for other resources)."""
    if resource.get("type") != NODE_POOL:
        return None
    inputs = resource.get("inputs") or {}
    machine = _get(inputs, "nodeConfig.machineType")
    machine = machine if isinstance(machine, str) else UNKNOWN
    capacity = capacity_type(inputs)
    region = overrides.region or pool_region(inputs)
    common = {
        "urn": resource.get("urn", ""),
        "pool": inputs.get("name") if isinstance(inputs.get("name"), str) else resource["name"],
        "machine_type": machine,
        "capacity": capacity,
        "region": region,
    }
    tpu = _tpu_machines().get(machine)
    if tpu is not None:
        generation, chips_per_host = tpu
        nodes, note = _tpu_nodes(inputs, capacity)
        chips = None if nodes is None else nodes * chips_per_host
        override = overrides.chip_hour(generation, capacity)
        if override is not None:
            price_value, basis = override, "stack pricing override"
        else:
            price = table.tpu_chip_hour(generation, capacity, region)
            price_value, basis = price.value, price.basis
        hourly = None if chips is None or price_value is None else chips * price_value
        return PoolCost(
            **common,
            kind="tpu",
            nodes=nodes,
            generation=generation,
            chips=chips,
            hourly=hourly,
            basis=_join(basis, note),
        )
    nodes, note = _cpu_nodes(inputs)
    return PoolCost(
        **common,
        kind="cpu",
        nodes=nodes,
        **_cpu_price(machine, capacity, nodes, region, table, note),
    )


def _cpu_price(
    machine: str, capacity: str, nodes: int | None, region: str | None, table: PriceTable, note: str
) -> dict[str, Any]:
    try:
        shape = machine_type(machine)
    except ValueError:
        return {"basis": _join(f"not priced: unknown machine type {machine}", note)}
    if capacity != CapacityType.ON_DEMAND.value:
        return {"basis": _join(f"not priced: no {capacity} CPU prices in the table", note)}
    family = machine.split("-", 1)[0]
    rates = table.cpu_rates(family, region)
    if rates is None:
        return {"basis": _join(f"not priced: no {family} price in the table", note)}
    if nodes is None:
        return {"basis": note}
    vcpu_hour, gib_hour = rates
    per_node = shape.vcpus * vcpu_hour + shape.memory_bytes / GIB * gib_hour
    return {"hourly": nodes * per_node, "basis": _join("list price", note)}


def overrides_of(plan: Plan | dict[str, Any]) -> PricingOverrides:
    """The pricing overrides a plan was made with (none for older plans)."""
    summary = plan.summary if isinstance(plan, Plan) else plan.get("summary")
    recorded = ((summary or {}).get("cost") or {}).get("overrides") or {}
    return PricingOverrides.model_validate(recorded)


def cost_summary(
    resources: list[dict[str, Any]],
    overrides: PricingOverrides | None = None,
    table: PriceTable | None = None,
) -> dict[str, Any]:
    """``summary.cost`` of a plan: every node pool priced, and the totals of the priced ones."""
    overrides = overrides or PricingOverrides()
    table = table or price_table()
    pools = [c for r in resources if (c := price_pool(r, overrides, table)) is not None]
    hourly = sum(p.hourly for p in pools if p.hourly is not None)
    return {
        "currency": table.currency,
        "hoursPerMonth": table.hours_per_month,
        "priceTable": {"source": table.source, "taken": table.taken},
        "overrides": overrides.model_dump(by_alias=True, mode="json", exclude_defaults=True),
        "hourly": round(hourly, 6),
        "monthly": round(hourly * table.hours_per_month, 6),
        "notPriced": [p.pool for p in pools if not p.priced],
        "pools": [p.to_dict() for p in pools],
    }


def plan_cost(document: dict[str, Any], table: PriceTable | None = None) -> dict[str, Any]:
    """Price a plan document (e.g. a saved ``plan --json``) with the given price table."""
    return cost_summary(document.get("resources") or [], overrides_of(document), table)
