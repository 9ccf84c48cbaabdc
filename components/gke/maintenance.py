"""The cluster's maintenance policy: when GKE may upgrade it, and what it holds back.

A TPU slice does not survive the upgrade of one of its hosts: the hosts are ICI-connected, so
when one VM goes the whole slice is interrupted and rescheduled (GKE docs, "Manage GKE node
disruption for GPUs and TPUs"). Upgrades therefore happen only in the recurring window, and
staging and production clusters exclude node upgrades until the user lifts the exclusion (or
GKE ends the version's support). Neither stops host maintenance of the TPU VMs themselves or
auto-repair: those bypass GKE's maintenance policies (same page).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi_gcp as gcp

from components.vocabulary import (
    DEFAULT_RECURRENCE,
    DEFAULT_WINDOW_END,
    DEFAULT_WINDOW_START,
    ExclusionScope,
    UpgradeStrategy,
)

# GKE MaintenanceExclusionOptions.EndTimeBehavior: the end is the version's end of support.
UNTIL_END_OF_SUPPORT = "UNTIL_END_OF_SUPPORT"


@dataclass(frozen=True)
class MaintenanceWindow:
    """A recurring window (RFC 3339 UTC start and end of its first occurrence, RFC 5545 RRULE)."""

    start_time: str = DEFAULT_WINDOW_START
    end_time: str = DEFAULT_WINDOW_END
    recurrence: str = DEFAULT_RECURRENCE


@dataclass(frozen=True)
class MaintenanceExclusion:
    """A period without the upgrades of ``scope``: until ``end_time``, or, without one, until
    the end of support of the cluster's minor version."""

    name: str
    scope: ExclusionScope
    start_time: str
    end_time: str | None = None


def maintenance_policy(
    window: MaintenanceWindow, exclusions: Sequence[MaintenanceExclusion]
) -> gcp.container.ClusterMaintenancePolicyArgs:
    return gcp.container.ClusterMaintenancePolicyArgs(
        recurring_window=gcp.container.ClusterMaintenancePolicyRecurringWindowArgs(
            start_time=window.start_time,
            end_time=window.end_time,
            recurrence=window.recurrence,
        ),
        maintenance_exclusions=[_exclusion(e) for e in exclusions] or None,
    )


def _exclusion(
    exclusion: MaintenanceExclusion,
) -> gcp.container.ClusterMaintenancePolicyMaintenanceExclusionArgs:
    # GKE takes exactly one of a fixed end time and an end-time behavior.
    until_end_of_support = exclusion.end_time is None
    return gcp.container.ClusterMaintenancePolicyMaintenanceExclusionArgs(
        exclusion_name=exclusion.name,
        start_time=exclusion.start_time,
        end_time=exclusion.end_time,
        exclusion_options=gcp.container.ClusterMaintenancePolicyMaintenanceExclusionExclusionOptionsArgs(
            scope=exclusion.scope.value,
            end_time_behavior=UNTIL_END_OF_SUPPORT if until_end_of_support else None,
        ),
    )


@dataclass(frozen=True)
class SliceUpgrade:
    """How GKE upgrades one TPU slice's node pool: a surge upgrade with no extra VM (a surge
    node would need spare TPU capacity of the slice's shape, which reservations and spot rarely
    have) that takes every host at once, so a slice is recreated once, whole, instead of losing
    its job once per host (a slice cannot run with a host missing). Blue-green would need a
    second slice's capacity. Flex-start pools get GKE's own short-lived upgrades instead."""

    hosts: int
    strategy: UpgradeStrategy = UpgradeStrategy.SURGE
    max_surge: int = 0

    @property
    def max_unavailable(self) -> int:
        return self.hosts
