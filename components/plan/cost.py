"""The estimated hourly and monthly cost of a plan's node pools, at list prices.

Everything is read from the plan document's node pool resources, so a saved ``plan --json`` of
another commit is priced exactly like the current plan:

- TPU pools: chips per host from the catalog's machine type, times the most nodes the pool can
  have (its fixed count, or its autoscaling maximum: a flex-start pool's is what it grows to
  when capacity is granted); the capacity type from ``nodeConfig`` (spot, flexStart,
  reservationAffinity; otherwise on-demand).
- The CPU pool: vCPUs and memory of its machine type, times its autoscaling minimum (the
  baseline it always runs), else its fixed count.

Node counts, zones, regions and capacity types are read by ``components.plan.views``.

Storage the stack creates is priced per GiB-month of provisioned capacity (``storage``): a Managed
Lustre instance at its throughput tier's rate (the tier's provisioned throughput, MB/s per TiB, is
billed in that rate), a Filestore instance at its tier's. ``hourly`` stays the node pools';
``monthly`` adds the storage (``storageMonthly``). Buckets are billed by use and not created here:
not priced.

Prices come from ``components/tpu/data/prices.yaml`` and the stack's ``pricing`` overrides, which
the plan records in ``summary.cost.overrides``. A pool or instance without a price is listed as
not priced and left out of the totals; nothing is guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cache
from typing import Any

from pydantic.alias_generators import to_camel

from components.plan.model import UNKNOWN, Plan
from components.plan.views import Bound, NodePoolView, count, value_at
from components.tokens import FILESTORE_INSTANCE, LUSTRE_INSTANCE, NODE_POOL
from components.tpu import catalog
from components.tpu.machines import machine_type
from components.tpu.pricing import Price, PriceTable, PricingOverrides, price_table
from components.vocabulary import CapacityType

GIB = 1024**3
UNKNOWN_COUNT = "node count not known before deploy"


@cache
def _camel_fields(row_type: type) -> tuple[tuple[str, str], ...]:
    """A cost row's fields with their camelCase keys (``to_camel`` once per field)."""
    return tuple((f.name, to_camel(f.name)) for f in fields(row_type))


def _camel_row(row: Any) -> dict[str, Any]:
    """A cost row as a dict keyed in camelCase. Its values are plain (text, numbers, None), so
    they are shared, not copied as ``dataclasses.asdict`` would."""
    return {camel: getattr(row, name) for name, camel in _camel_fields(type(row))}


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
        row = _camel_row(self)
        if self.hourly is not None:
            row["hourly"] = round(self.hourly, 6)
        return {k: v for k, v in row.items() if v is not None or k == "hourly"}


@cache
def _tpu_machines() -> dict[str, tuple[str, int]]:
    """TPU machine type -> (generation, chips per host), from the catalog."""
    return {s.machine_type: (s.generation.value, s.chips_per_host) for s in catalog.all_shapes()}


def _tpu_nodes(pool: NodePoolView) -> tuple[int | None, str]:
    """A TPU pool at the most nodes it can have: its fixed count, or its autoscaling maximum
    (flex-start: what it grows to when capacity is granted)."""
    found = pool.node_count(Bound.MAXIMUM)
    if pool.flex_start and not found.autoscaled:
        return None, "flex-start pool without an autoscaling maximum"
    if found.nodes is None:
        return None, UNKNOWN_COUNT
    if not found.autoscaled:
        return found.nodes, ""
    return found.nodes, f"{'flex-start: ' if pool.flex_start else ''}at its autoscaling maximum"


def _cpu_nodes(pool: NodePoolView) -> tuple[int | None, str]:
    """A CPU pool at the baseline it always runs: its autoscaling minimum, or its fixed count."""
    found = pool.node_count(Bound.MINIMUM)
    if found.nodes is None:
        return None, UNKNOWN_COUNT
    return found.nodes, "at its autoscaling minimum" if found.autoscaled else ""


def _join(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def price_pool(
    resource: dict[str, Any], overrides: PricingOverrides, table: PriceTable
) -> PoolCost | None:
    """The cost of one node pool resource of a plan document (None for other resources)."""
    if resource.get("type") != NODE_POOL:
        return None
    pool = NodePoolView(resource.get("inputs") or {})
    machine = pool.machine_type if isinstance(pool.machine_type, str) else UNKNOWN
    capacity = pool.capacity.value
    region = overrides.region or pool.region
    common = {
        "urn": resource.get("urn", ""),
        "pool": pool.name or resource["name"],
        "machine_type": machine,
        "capacity": capacity,
        "region": region,
    }
    tpu = _tpu_machines().get(machine)
    if tpu is not None:
        generation, chips_per_host = tpu
        nodes, note = _tpu_nodes(pool)
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
    nodes, note = _cpu_nodes(pool)
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


@dataclass(frozen=True)
class StorageCost:
    """The priced capacity of one file system instance."""

    urn: str
    name: str
    kind: str  # "lustre" or "filestore"
    tier: str  # Lustre: MB/s per TiB ("1000"); Filestore: BASIC_HDD, ZONAL, ...
    gib: int | None
    region: str | None
    monthly: float | None = None  # None: not priced
    basis: str = ""

    def to_dict(self) -> dict[str, Any]:
        row = _camel_row(self)
        if self.monthly is not None:
            row["monthly"] = round(self.monthly, 6)
        return {k: v for k, v in row.items() if v is not None or k == "monthly"}


_STORAGE = {
    LUSTRE_INSTANCE: ("lustre", "instanceId", "perUnitStorageThroughput", "capacityGib"),
    FILESTORE_INSTANCE: ("filestore", "name", "tier", "fileShares.capacityGb"),
}


def price_storage(
    resource: dict[str, Any], overrides: PricingOverrides, table: PriceTable
) -> StorageCost | None:
    """The monthly cost of one file system instance of a plan document (None: not one)."""
    shape = _STORAGE.get(resource.get("type", ""))
    if shape is None:
        return None
    kind, name_key, tier_key, size_key = shape
    inputs = resource.get("inputs") or {}
    tier = str(value_at(inputs, tier_key))
    gib = count(_number_text(value_at(inputs, size_key)))
    location = value_at(inputs, "location")
    region = overrides.region or (_region_of(location) if isinstance(location, str) else None)
    override = overrides.gib_month(kind, tier)
    price = (
        Price(override, "stack pricing override")
        if override is not None
        else table.storage_gib_month(kind, tier, region)
    )
    monthly = None if price.value is None or gib is None else gib * price.value
    name = value_at(inputs, name_key)
    return StorageCost(
        urn=resource.get("urn", ""),
        name=name if isinstance(name, str) else resource.get("name", ""),
        kind=kind,
        tier=tier,
        gib=gib,
        region=region,
        monthly=monthly,
        basis=price.basis if gib is not None else "capacity not known before deploy",
    )


def _number_text(value: Any) -> Any:
    """Lustre's capacity is a string input ("9000")."""
    return int(value) if isinstance(value, str) and value.isdigit() else value


def _region_of(location: str) -> str:
    region, _, suffix = location.rpartition("-")
    return region if len(suffix) == 1 and region else location


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
    storage = [c for r in resources if (c := price_storage(r, overrides, table)) is not None]
    hourly = sum(p.hourly for p in pools if p.hourly is not None)
    stored = sum(s.monthly for s in storage if s.monthly is not None)
    summary = {
        "currency": table.currency,
        "hoursPerMonth": table.hours_per_month,
        "priceTable": {"source": table.source, "taken": table.taken},
        "overrides": overrides.model_dump(by_alias=True, mode="json", exclude_defaults=True),
        "hourly": round(hourly, 6),
        "monthly": round(hourly * table.hours_per_month + stored, 6),
        "notPriced": [p.pool for p in pools if not p.priced],
        "pools": [p.to_dict() for p in pools],
    }
    if storage:  # plans without file systems keep their old shape
        summary["storageMonthly"] = round(stored, 6)
        summary["storage"] = [s.to_dict() for s in storage]
        summary["storageNotPriced"] = [s.name for s in storage if s.monthly is None]
    return summary


def plan_cost(document: dict[str, Any], table: PriceTable | None = None) -> dict[str, Any]:
    """Price a plan document (e.g. a saved ``plan --json``) with the given price table."""
    return cost_summary(document.get("resources") or [], overrides_of(document), table)


def pool_chips(cost: dict[str, Any]) -> int:
    """TPU chips of every pool a ``summary.cost`` lists."""
    return sum(p.get("chips") or 0 for p in cost.get("pools") or [])


def unpriced_chips(cost: dict[str, Any]) -> int:
    """TPU chips of the pools a ``summary.cost`` could not price (left out of its totals)."""
    return sum(p.get("chips") or 0 for p in cost.get("pools") or [] if p.get("hourly") is None)
