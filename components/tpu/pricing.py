"""Prices for the offline plan's cost estimate: the list-price table kept in the repo as data
(``components/tpu/data/prices.yaml``) and a stack's own overrides (``tpu-pathways:pricing``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator

from components.files import read_data_yaml
from components.model import ConfigModel
from components.tpu.catalog import TpuGeneration
from components.vocabulary import FilestoreTier, LustreThroughput

PRICE_TABLE = Path(__file__).resolve().parent / "data" / "prices.yaml"
_REGION = re.compile(r"[a-z]+-[a-z]+\d+")


def _region(value: str) -> str:
    if not _REGION.fullmatch(value):
        raise ValueError(f"{value!r} is not a GCP region such as 'us-east5'")
    return value


MAX_CHIP_HOUR_USD = 1000.0
"""The highest chip-hour price an override may give: list prices are a few dollars (the table's
highest is v5p on-demand, $4.20), so anything above is a typo, and an unbounded one (1e308)
overflows the monthly estimate to infinity."""


def _chip_hour(value: float) -> float:
    if not (math.isfinite(value) and 0 <= value <= MAX_CHIP_HOUR_USD):
        shown = repr(value) if len(repr(value)) <= 30 else f"{value:.3g}"
        raise ValueError(
            f"{shown} is not a chip-hour price; give USD per chip-hour from 0 to "
            f"{MAX_CHIP_HOUR_USD:g} (list prices are a few dollars)"
        )
    return value


ChipHourPrice = Annotated[float, AfterValidator(_chip_hour)]
MAX_GIB_MONTH_USD = 10.0
"""The highest GiB-month price an override may give (list prices are cents)."""


def _gib_month(value: float) -> float:
    if not (math.isfinite(value) and 0 <= value <= MAX_GIB_MONTH_USD):
        raise ValueError(
            f"{value!r} is not a GiB-month price; give USD per GiB-month from 0 to "
            f"{MAX_GIB_MONTH_USD:g} (list prices are cents)"
        )
    return value


GibMonthPrice = Annotated[float, AfterValidator(_gib_month)]


class TpuChipHourPrices(ConfigModel):
    """USD per chip-hour of one TPU generation by capacity type; unset keys use the table."""

    on_demand: ChipHourPrice | None = None
    """On-demand price per chip-hour."""
    spot: ChipHourPrice | None = None
    """Spot price per chip-hour (the table holds one dated reading; spot prices change often)."""
    reservation: ChipHourPrice | None = None
    """Price of reserved capacity, e.g. your committed use discount rate (default: on-demand)."""
    flex_start: ChipHourPrice | None = None
    """Flex-start (Dynamic Workload Scheduler) price per chip-hour."""


class PricingOverrides(ConfigModel):
    """The stack's own prices for the plan's cost estimate (list prices otherwise)."""

    region: Annotated[str, AfterValidator(_region)] | None = None
    """Price the node pools as if in this region (default: the region they are in)."""
    tpu_chip_hour: dict[TpuGeneration, TpuChipHourPrices] = {}
    """USD per chip-hour by TPU generation and capacity type, e.g. {v5p: {reservation: 2.94}}."""
    lustre_gib_month: dict[LustreThroughput, GibMonthPrice] = {}
    """USD per GiB-month of Managed Lustre by throughput tier (no public list price was found:
    not priced unless given), e.g. {1000: 0.60}."""
    filestore_gib_month: dict[FilestoreTier, GibMonthPrice] = {}
    """USD per GiB-month of Filestore by tier (the table prices BASIC_HDD only), e.g.
    {ZONAL: 0.25}."""

    def chip_hour(self, generation: str, capacity: str) -> float | None:
        """The override for a generation and capacity type (onDemand, spot, ...), if any."""
        prices = next((p for g, p in self.tpu_chip_hour.items() if g.value == generation), None)
        if prices is None:
            return None
        return prices.model_dump(by_alias=True).get(capacity)

    def gib_month(self, service: str, tier: str) -> float | None:
        """The override for a storage service's tier (``lustre``: "1000"; ``filestore``:
        "BASIC_HDD"), if any."""
        prices = self.lustre_gib_month if service == "lustre" else self.filestore_gib_month
        return next((p for t, p in prices.items() if str(t.value) == tier), None)


@dataclass(frozen=True)
class Price:
    """One looked-up price: ``value`` is None when not priced; ``basis`` says where it came from."""

    value: float | None
    basis: str


@dataclass(frozen=True)
class PriceTable:
    """The list prices of ``prices.yaml``: region entries win over ``default``, key by key."""

    data: dict[str, Any]
    source: str = "components/tpu/data/prices.yaml"

    @property
    def currency(self) -> str:
        return str(self.data.get("currency", "USD"))

    @property
    def hours_per_month(self) -> float:
        return float(self.data.get("hoursPerMonth", 730))

    @property
    def taken(self) -> str:
        return str(self.data.get("taken", "unknown date"))

    def _entry(self, section: str, key: str, region: str | None) -> dict[str, Any]:
        """The entry for ``key``: the region's keys over the default's ({} = not priced)."""
        table = self.data.get(section) or {}
        default = (table.get("default") or {}).get(key) or {}
        regional = ((table.get("regions") or {}).get(region) or {}).get(key) if region else None
        return {**default, **(regional or {})}

    def tpu_chip_hour(self, generation: str, capacity: str, region: str | None) -> Price:
        entry = self._entry("tpu", generation, region)
        value = entry.get(capacity)
        if value is not None:
            # spot prices move (daily at most): the table holds one dated reading
            return Price(float(value), "spot price as read" if capacity == "spot" else "list price")
        if capacity == "reservation" and "reservation" not in entry:
            on_demand = entry.get("onDemand")
            if on_demand is not None:
                return Price(float(on_demand), "list price (reservation billed as on-demand)")
        return Price(None, f"not priced: no {generation} {capacity} price in the table")

    def storage_gib_month(self, service: str, tier: str, region: str | None) -> Price:
        """USD per GiB-month of a storage service's tier (``lustre``: "1000"; ``filestore``:
        "BASIC_HDD")."""
        value = self._entry("storage", service, region).get(tier)
        if value is None:
            return Price(None, f"not priced: no public {service} {tier} price in the table")
        return Price(float(value), "list price")

    def cpu_rates(self, family: str, region: str | None) -> tuple[float, float] | None:
        """(USD per vCPU-hour, USD per GiB-hour) of a machine family, or None if not priced."""
        entry = self._entry("cpu", family, region)
        if entry.get("vcpuHour") is None or entry.get("gibHour") is None:
            return None
        return float(entry["vcpuHour"]), float(entry["gibHour"])


@cache
def price_table(path: Path = PRICE_TABLE) -> PriceTable:
    """The repo's price table (read once)."""
    return PriceTable(read_data_yaml(path) or {})
