"""How long each resource takes to create: ``components/plan/data/durations.yaml`` (per type,
with sources) parsed into a ``DurationTable``; a resource the table does not list takes its
default if it is a custom resource and no time if it is a component."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from components.files import read_data_yaml
from components.plan.model import PlannedResource
from components.plan.views import value_at

DURATIONS_PATH = Path(__file__).resolve().parent / "data" / "durations.yaml"
ESTIMATES = ("low", "typical", "high")


@dataclass(frozen=True)
class Duration:
    low: float
    high: float
    label: str
    source: str

    def at(self, estimate: str) -> float:
        if estimate == "typical":
            return (self.low + self.high) / 2
        return self.low if estimate == "low" else self.high


NO_TIME = Duration(0, 0, "component", "does no work of its own")


def _matches(when: Mapping[str, Any] | None, inputs: Mapping[str, Any]) -> bool:
    if not when:
        return True
    value = value_at(inputs, when["input"])
    if "equals" in when:
        return value == when["equals"]
    prefixes = when.get("prefix", ())
    prefixes = (prefixes,) if isinstance(prefixes, str) else tuple(prefixes)
    return isinstance(value, str) and value.startswith(prefixes)


@dataclass(frozen=True)
class DurationTable:
    """Per-type creation times: the parsed ``durations.yaml`` (or any dict of that shape)."""

    types: Mapping[str, list[dict[str, Any]]]
    default_custom: Duration
    default_parallel: int | None = None
    """`pulumi up`'s default ``--parallel`` on the runner the table assumes (its ``engine``
    section); None: unbounded."""
    job_limit_s: int | None = None
    """How long one CI job may run on that runner (``engine.jobLimitMinutes``); None: no limit."""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DurationTable:
        low, high = data["defaultCustom"]["seconds"]
        default = Duration(low, high, "default", data["defaultCustom"]["source"])
        engine = data.get("engine") or {}
        parallel = engine["parallelPerCpu"] * engine["runnerCpus"] if engine else None
        limit = engine.get("jobLimitMinutes")
        return cls(dict(data.get("types", {})), default, parallel, limit * 60 if limit else None)

    @classmethod
    def load(cls, path: Path = DURATIONS_PATH) -> DurationTable:
        return cls.from_dict(read_data_yaml(path))

    def duration(self, resource: PlannedResource) -> Duration:
        for rule in self.types.get(resource.type, ()):
            if _matches(rule.get("when"), resource.inputs):
                low, high = rule["seconds"]
                return Duration(low, high, rule.get("label", resource.type), rule["source"])
        return self.default_custom if resource.custom else NO_TIME


@cache
def default_table() -> DurationTable:
    return DurationTable.load()


def minutes(seconds: float) -> str:
    """A duration as 12m05s (or 3h02m05s)."""
    hours, rest = divmod(round(seconds), 3600)
    text = f"{rest // 60:02d}m{rest % 60:02d}s" if hours else f"{rest // 60}m{rest % 60:02d}s"
    return f"{hours}h{text}" if hours else text
