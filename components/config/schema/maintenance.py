"""When GKE may upgrade the cluster: its recurring maintenance window and its exclusions.

GKE's rules this schema enforces (GKE docs, "Configure maintenance windows and exclusions";
pulumi-gcp ``ClusterMaintenancePolicyArgs``): one recurring window per cluster, given as an RFC
3339 UTC start and end (the end only sets the duration) and an RFC 5545 RRULE whose days are
UTC days; the window must allow at least 48 hours of maintenance in any 32 days, counting only
stretches of at least 4 hours; at most 20 exclusions; an exclusion ends either at a fixed time
or at the end of support of the cluster's minor version (``UNTIL_END_OF_SUPPORT``, only for the
scopes that still allow patches); a ``NO_UPGRADES`` exclusion lasts at most 30 days.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated

from pydantic import AfterValidator, StrictBool, model_validator

from components.config.schema.base import pattern
from components.errors import ConfigIssue, KeyedError
from components.model import ConfigModel
from components.vocabulary import (
    DEFAULT_RECURRENCE,
    DEFAULT_WINDOW_END,
    DEFAULT_WINDOW_START,
    ExclusionScope,
)

# RFC 3339 in UTC ("Zulu"): GKE returns times in UTC, so any other form is a permanent diff.
_UTC_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
_RANGES = "months run 01-12, hours 00-23, minutes and seconds 00-59"


def _real_time(value: str) -> str:
    """A time of the calendar: no 24:00, no February 30, no leap second (:60), which RFC 3339
    allows but GKE's API does not take."""
    try:
        datetime.strptime(value, _UTC_FORMAT)
    except ValueError as exc:
        # strptime's own words name the field ("second must be in 0..59") except for a field
        # out of its format's range (hour 24, minute 60), which it reports as a mismatch.
        why = str(exc) if not str(exc).startswith("time data") else _RANGES
        raise ValueError(f"{value!r} is not a valid time: {why}") from None
    return value


UtcTime = Annotated[
    str,
    pattern(
        r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z",
        "an RFC 3339 UTC time such as '2025-01-04T00:00:00Z'",
    ),
    AfterValidator(_real_time),
]

# GKE's limits (see the module docstring).
MIN_HOURS_PER_32_DAYS = 48
MIN_STRETCH_HOURS = 4
MAX_EXCLUSIONS = 20
MAX_NO_UPGRADES_DAYS = 30
# Every weekday occurs at least 4 times in any 32 days.
_WEEKS_IN_32_DAYS = 4
_DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
_DAILY = re.compile(r"FREQ=DAILY")
_WEEKLY = re.compile(r"FREQ=WEEKLY;BYDAY=([A-Z]{2}(?:,[A-Z]{2})*)")

# The staging/production default exclusion: no minor or node upgrade until the cluster's minor
# version reaches its end of support (GKE then upgrades regardless, and computes the end itself).
DEFAULT_EXCLUSION_NAME = "no-minor-or-node-upgrades"
DEFAULT_EXCLUSION_START = "2025-01-01T00:00:00Z"


def parse_utc(value: str) -> datetime:
    return datetime.strptime(value, _UTC_FORMAT).replace(tzinfo=UTC)


class MaintenanceWindowConfig(ConfigModel):
    """The recurring window in which GKE may upgrade the cluster and its nodes (UTC)."""

    start_time: UtcTime = DEFAULT_WINDOW_START
    """First start of the window (RFC 3339, UTC); its time of day is when every window opens."""
    end_time: UtcTime = DEFAULT_WINDOW_END
    """End of the first window (RFC 3339, UTC): sets the window's length (at least 4 hours)."""
    recurrence: str = DEFAULT_RECURRENCE
    """RFC 5545 RRULE, `FREQ=DAILY` or `FREQ=WEEKLY;BYDAY=<days>` (UTC days, e.g. `SA,SU`);
    the window must allow at least 48 hours in any 32 days."""

    @model_validator(mode="after")
    def _gke_accepts(self) -> MaintenanceWindowConfig:
        issues = []
        hours = (parse_utc(self.end_time) - parse_utc(self.start_time)) / timedelta(hours=1)
        if hours < MIN_STRETCH_HOURS:
            issues.append(
                ConfigIssue(
                    "endTime",
                    f"{self.end_time!r} is {hours:g} hours after startTime {self.start_time!r}; "
                    f"a window lasts at least {MIN_STRETCH_HOURS} hours (GKE counts only "
                    "stretches that long)",
                )
            )
        days, problem = _days_per_week(self.recurrence)
        if problem:
            issues.append(ConfigIssue("recurrence", problem))
        elif not issues and (total := days * _WEEKS_IN_32_DAYS * hours) < MIN_HOURS_PER_32_DAYS:
            issues.append(
                ConfigIssue(
                    "recurrence",
                    f"{self.recurrence!r} with {hours:g}-hour windows allows {total:g} hours in "
                    f"32 days; GKE needs at least {MIN_HOURS_PER_32_DAYS}: add days or lengthen "
                    "the window",
                )
            )
        if issues:
            raise KeyedError(issues)
        return self


def _days_per_week(recurrence: str) -> tuple[int, str | None]:
    """Window days per week of a recurrence, or the problem with it."""
    if _DAILY.fullmatch(recurrence):
        return 7, None
    weekly = _WEEKLY.fullmatch(recurrence)
    allowed = "FREQ=DAILY or FREQ=WEEKLY;BYDAY=<days> with days from MO,TU,WE,TH,FR,SA,SU"
    if weekly is None:
        return 0, f"{recurrence!r} is not a supported RRULE; use {allowed}"
    days = weekly[1].split(",")
    unknown = [d for d in days if d not in _DAYS]
    if unknown or len(set(days)) != len(days):
        return 0, f"{recurrence!r} names unknown or repeated days; use {allowed}"
    return len(days), None


class MaintenanceExclusionConfig(ConfigModel):
    """A period in which GKE holds back the upgrades of its scope."""

    name: Annotated[str, pattern(r"[A-Za-z0-9][-_ A-Za-z0-9]{0,62}", "an exclusion name")]
    """Name of the exclusion (unique in the cluster)."""
    scope: ExclusionScope = ExclusionScope.NO_MINOR_OR_NODE_UPGRADES
    """NO_UPGRADES, NO_MINOR_UPGRADES or NO_MINOR_OR_NODE_UPGRADES (no node is upgraded)."""
    start_time: UtcTime
    """Start (RFC 3339, UTC)."""
    end_time: UtcTime | None = None
    """Fixed end (RFC 3339, UTC); NO_UPGRADES lasts at most 30 days. Or untilEndOfSupport."""
    until_end_of_support: StrictBool = False
    """End when the cluster's minor version reaches its end of support (GKE computes it);
    not for NO_UPGRADES."""

    @model_validator(mode="after")
    def _one_end(self) -> MaintenanceExclusionConfig:
        if (self.end_time is None) == (not self.until_end_of_support):
            raise KeyedError.at("endTime", "give exactly one of endTime and untilEndOfSupport")
        no_upgrades = self.scope is ExclusionScope.NO_UPGRADES
        if self.until_end_of_support and no_upgrades:
            raise KeyedError.at(
                "untilEndOfSupport",
                "GKE ends a NO_UPGRADES exclusion at a fixed time (at most 30 days); use "
                "endTime, or scope NO_MINOR_UPGRADES / NO_MINOR_OR_NODE_UPGRADES",
            )
        if self.end_time is not None:
            length = parse_utc(self.end_time) - parse_utc(self.start_time)
            if length <= timedelta(0):
                raise KeyedError.at("endTime", f"{self.end_time!r} is not after startTime")
            if no_upgrades and length > timedelta(days=MAX_NO_UPGRADES_DAYS):
                raise KeyedError.at(
                    "endTime",
                    f"{self.end_time!r} is {length.days} days after startTime; a NO_UPGRADES "
                    f"exclusion lasts at most {MAX_NO_UPGRADES_DAYS} days",
                )
        return self


DEFAULT_EXCLUSION = MaintenanceExclusionConfig(
    name=DEFAULT_EXCLUSION_NAME,
    scope=ExclusionScope.NO_MINOR_OR_NODE_UPGRADES,
    start_time=DEFAULT_EXCLUSION_START,
    until_end_of_support=True,
)


class MaintenanceConfig(ConfigModel):
    """When GKE may upgrade the cluster: a recurring window, and exclusions from it."""

    window: MaintenanceWindowConfig = MaintenanceWindowConfig()
    """The recurring maintenance window (default: Saturday and Sunday 00:00-08:00 UTC)."""
    exclusions: list[MaintenanceExclusionConfig] | None = None
    """Up to 20 exclusions. Default: none in dev; in staging and production one
    NO_MINOR_OR_NODE_UPGRADES exclusion until end of support (nodes, and so TPU slices, are
    upgraded only when you remove it, or when GKE ends the version's support). `[]`: none."""

    @model_validator(mode="after")
    def _unique_names(self) -> MaintenanceConfig:
        names = [e.name for e in self.exclusions or []]
        if len(names) > MAX_EXCLUSIONS:
            raise KeyedError.at(
                "exclusions", f"{len(names)} exclusions; GKE allows at most {MAX_EXCLUSIONS}"
            )
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise KeyedError.at("exclusions", f"names must be unique; repeated: {repeated}")
        return self
