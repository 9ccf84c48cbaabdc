"""Each team's guaranteed share of a worker set on the manager: its own ClusterQueue.

A worker that gives a team a guaranteed share of its shared TPU pools (``addons.kueue.
teamQuotas``) admits that team's JobSets on a ClusterQueue of the team's own, in the worker's
cohort (``components.addons.kueue``). The manager mirrors this per worker set: a team with a
share on any of the set's workers gets a ClusterQueue of its own on the manager (``team_queue_
name``) whose nominal quota is that share summed over the set's workers, in a cohort named
after the set, so unused shares are borrowed and reclaimed by preemption as on the workers. The
set's own ClusterQueue (``set_name``) keeps the rest of the set's chips and its CPU pools'
CPU and memory, and admits the teams with no share, which share it as they share each
worker's default ClusterQueue. A team that may not borrow on any worker (``borrowingLimit``
on each) may borrow the sum of its limits on the manager; one that may borrow without limit on
a worker, or has no share there, may borrow without limit.

The quotas are read from the workers' stack files (their contracts export each team's
ClusterQueue, not its chips per shape), as the fleet reads the workers' teams; the fleet reads
each file once and passes its values here. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from components.config.schema import StackConfig
from components.config.schema.addons import TeamQuota
from components.resolve.tenancy.fleet_sets import (
    Nominations,
    TeamShare,
    WorkerSet,
    team_queue_name,
)
from components.tpu.catalog import resolve_accelerator


def worker_team_quotas(values: Mapping[str, Any]) -> list[TeamQuota]:
    """``addons.kueue.teamQuotas`` of a worker stack's decoded values (its own plan validated
    them)."""
    addons = values.get("addons")
    kueue = addons.get("kueue") if isinstance(addons, dict) else None
    quotas = kueue.get("teamQuotas") if isinstance(kueue, dict) else None
    return [TeamQuota.model_validate(q) for q in quotas or []]


def _shared_shapes(cluster: StackConfig) -> set[str]:
    """The accelerator names of the cluster's shared TPU pools (a teamQuota's shapes)."""
    return {p.shape.accelerator_name for p in cluster.tpu_pools if p.team is None}


def _quota_chips(quota: TeamQuota, shapes: set[str]) -> dict[str, int]:
    chips: dict[str, int] = {}
    for accelerator, count in quota.chips.items():
        name = resolve_accelerator(accelerator).accelerator_name
        if name in shapes:
            chips[name] = chips.get(name, 0) + count
    return chips


def set_shares(
    worker_set: WorkerSet,
    quotas: Mapping[str, Iterable[TeamQuota]],
    clusters: Mapping[str, StackConfig],
) -> tuple[TeamShare, ...]:
    """The shares of ``worker_set``'s teams (those with a teamQuota on one of its workers)."""
    chips: dict[str, dict[str, int]] = {}
    limits: dict[str, list[int | None]] = {}
    for worker in worker_set.workers:
        shapes = _shared_shapes(clusters[worker])
        there = {q.team: q for q in quotas.get(worker, ())}
        for team in worker_set.namespaces:
            quota = there.get(team)
            limits.setdefault(team, []).append(None if quota is None else quota.borrowing_limit)
            if quota is None:
                continue
            mine = chips.setdefault(team, {})
            for flavor, count in _quota_chips(quota, shapes).items():
                mine[flavor] = mine.get(flavor, 0) + count
    return tuple(
        TeamShare(
            team,
            team_queue_name(worker_set.name, team),
            dict(sorted(chips[team].items())),
            None if None in limits[team] else sum(x for x in limits[team] if x is not None),
        )
        for team in worker_set.namespaces
        if team in chips
    )


def with_shares(
    chosen: Nominations,
    quotas: Mapping[str, Iterable[TeamQuota]],
    clusters: Mapping[str, StackConfig],
) -> Nominations:
    """``chosen`` with each set's shares (``quotas``: each worker's teamQuotas)."""
    shares = {s.name: set_shares(s, quotas, clusters) for s in chosen.sets}
    return replace(chosen, shares=shares)
