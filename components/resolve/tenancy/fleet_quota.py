"""The manager's TPU quota: what of its workers' pools a worker set's ClusterQueues count, and
the worker sets they cannot serve.

A worker set's own ClusterQueue on the manager holds the chips of its workers' **shared** TPU
pools, one flavor per shape (``shared_pools``; the program's ``manager_flavors``), which the
set's teams share (and their shares, ``fleet_shares``). A pool dedicated to a worker's team is
that team's only: a team with pools dedicated to it on every worker of the set has a queue of
its own holding those pools and no shared chips (``fleet_dedicated``), as on each worker.
Refused, at the keys that chose the workers, naming the pools dedicated to teams:
a set none of whose workers has a shared pool, with a team queued on the shared chips (one
  without pools dedicated to it): the set's ClusterQueue would have no TPU flavor for it, and
  a resource group needs one (v0.17.1 ``ResourceGroup.flavors``: MinItems=1,
  config/components/crd/bases/kueue.x-k8s.io_clusterqueues.yaml), so it would never admit the
  team's JobSets; a set whose every team has pools dedicated to it is accepted (its own queue
  then holds CPU and memory only).

A workload's pool has a shape its team's queue holds: the workers' own checks require a team's
jobs on its dedicated pools where it has some and on shared pools elsewhere (``resolve.tenancy.
isolation``), on every worker of its set (``fleet_placement``), and a team with dedicated pools
on some workers of the set only is refused (``fleet_dedicated``). Pure: schema objects in,
issues out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from components.config.schema import StackConfig
from components.config.schema.fleet import FleetStackConfig
from components.config.schema.pools import TpuPoolConfig
from components.errors import ConfigIssue
from components.resolve.tenancy.fleet_sets import Nominations, WorkerSet, set_key


def shared_pools(clusters: Iterable[StackConfig]) -> list[TpuPoolConfig]:
    """The TPU pools of ``clusters`` the manager counts: those no team has to itself."""
    return [p for c in clusters for p in c.tpu_pools if p.team is None]


def _dedicated(clusters: Mapping[str, StackConfig]) -> str:
    """The pools dedicated to teams, as `worker: pool 'NAME' (team T)`."""
    pools = [
        f"{name}: pool {p.name!r} (team {p.team})"
        for name, c in clusters.items()
        for p in c.tpu_pools
        if p.team is not None
    ]
    return ", ".join(pools) or "none"


def _teams(teams: list[str]) -> str:
    names = ", ".join(repr(t) for t in teams)
    return f"team {names} has" if len(teams) == 1 else f"teams {names} each have"


def quota_issues(
    config: FleetStackConfig,
    chosen: Nominations,
    clusters: Mapping[str, StackConfig],
) -> list[ConfigIssue]:
    """Sets whose ClusterQueue would have no TPU flavor for a team queued on it (``clusters``:
    every worker's cluster, ``worker_cluster``; ``chosen``: with its dedicated teams,
    ``fleet_dedicated``)."""
    issues: list[ConfigIssue] = []
    for worker_set in chosen.sets:
        dedicated = {d.team for d in chosen.dedicated.get(worker_set.name, ())}
        shared_teams = [t for t in worker_set.namespaces if t not in dedicated]
        if shared_teams and not shared_pools(clusters[w] for w in worker_set.workers):
            issues += _empty_set_issues(config, chosen, worker_set, clusters, shared_teams)
    return issues


def _empty_set_issues(
    config: FleetStackConfig,
    chosen: Nominations,
    worker_set: WorkerSet,
    clusters: Mapping[str, StackConfig],
    teams: list[str],
) -> list[ConfigIssue]:
    members = {w: clusters[w] for w in worker_set.workers}
    message = (
        f"the workers [{', '.join(worker_set.workers)}] have no TPU pool shared by all teams "
        f"(dedicated: {_dedicated(members)}), and {_teams(teams)} no pool dedicated to it on "
        f"each of them: the manager's ClusterQueue {worker_set.name}, where its JobSets queue, "
        "would have no TPU flavor and no quota for them (nor would the workers run them); add a "
        "shared TPU pool to one of them, dedicate pools to the team on each of them, or name "
        "workers that have a shared pool"
    )
    keys = [
        k
        for q in chosen.queues
        if q.set_name == worker_set.name and q.team in teams
        for k in set_key(config, q)
    ]
    return [ConfigIssue(key, message) for key in dict.fromkeys(keys or ["fleet.workers"])]
