"""The manager's TPU quota: what of its workers' pools a worker set's ClusterQueue counts, and
the placements it cannot admit.

A worker set's ClusterQueue on the manager holds the chips of its workers' **shared** TPU pools,
one flavor per shape (``shared_pools``; the program's ``manager_flavors``). A pool dedicated to
a worker's team is that team's only; the manager's queues of a set (its own and its teams'
shares, ``fleet_shares``) share its shared chips, so it does not count such pools. Two
placements follow that Kueue would not run:

- a set none of whose workers has a shared pool: its ClusterQueue would have no TPU flavor,
  which the API refuses (v0.17.1 ``ResourceGroup.flavors``: MinItems=1,
  config/components/crd/bases/kueue.x-k8s.io_clusterqueues.yaml);
- a workload whose pool's shape no shared pool of its set has: the manager would hold no quota
  of that shape and never admit it, so MultiKueue would never dispatch it.

Both are refused at the key that chose the workers (or the workload's pool), naming the pools
dedicated to teams. Pure: schema objects in, issues out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from components.config.schema import StackConfig
from components.config.schema.fleet import FleetStackConfig
from components.config.schema.pools import TpuPoolConfig
from components.errors import ConfigIssue
from components.resolve.tenancy.fleet_sets import Nominations, WorkerSet, set_key
from components.tpu.catalog import TpuShape


def shared_pools(clusters: Iterable[StackConfig]) -> list[TpuPoolConfig]:
    """The TPU pools of ``clusters`` the manager counts: those no team has to itself."""
    return [p for c in clusters for p in c.tpu_pools if p.team is None]


def _shape(shape: TpuShape) -> str:
    return f"{shape.generation.value} {shape.topology}"


def _dedicated(clusters: Mapping[str, StackConfig]) -> str:
    """The pools dedicated to teams, as `worker: pool 'NAME' (team T)`."""
    pools = [
        f"{name}: pool {p.name!r} (team {p.team})"
        for name, c in clusters.items()
        for p in c.tpu_pools
        if p.team is not None
    ]
    return ", ".join(pools) or "none"


def quota_issues(
    config: FleetStackConfig,
    chosen: Nominations,
    clusters: Mapping[str, StackConfig],
    placements: Mapping[int, Mapping[str, StackConfig]],
) -> list[ConfigIssue]:
    """Sets whose ClusterQueue would have no TPU flavor, and workloads whose shape their set's
    ClusterQueue has no quota of (``clusters``: every worker's cluster, ``worker_cluster``)."""
    issues: list[ConfigIssue] = []
    empty: set[str] = set()
    for worker_set in chosen.sets:
        if not shared_pools(clusters[w] for w in worker_set.workers):
            empty.add(worker_set.name)
            issues += _empty_set_issues(config, chosen, worker_set, clusters)
    for i, views in placements.items():
        queue = chosen.workloads[i]
        if queue.set_name in empty:
            continue
        issues += _shape_issues(config, i, queue.workers, views, clusters)
    return issues


def _empty_set_issues(
    config: FleetStackConfig,
    chosen: Nominations,
    worker_set: WorkerSet,
    clusters: Mapping[str, StackConfig],
) -> list[ConfigIssue]:
    members = {w: clusters[w] for w in worker_set.workers}
    message = (
        f"the workers [{', '.join(worker_set.workers)}] have no TPU pool shared by all teams "
        f"(dedicated: {_dedicated(members)}), and the manager's ClusterQueue "
        f"{worker_set.name} counts shared pools only: it would have no TPU flavor, which Kueue "
        "refuses (resourceGroups[].flavors needs at least one), and no quota for the team's "
        "JobSets (the manager does not give a team the pools dedicated to it); add a shared TPU "
        "pool to one of them, or name workers that have one"
    )
    keys = [k for q in chosen.queues if q.set_name == worker_set.name for k in set_key(config, q)]
    return [ConfigIssue(key, message) for key in dict.fromkeys(keys or ["fleet.workers"])]


def _shape_issues(
    config: FleetStackConfig,
    index: int,
    workers: Iterable[str],
    views: Mapping[str, StackConfig],
    clusters: Mapping[str, StackConfig],
) -> list[ConfigIssue]:
    workload = config.workloads[index]
    members = {w: clusters[w] for w in workers}
    offered = {p.shape for p in shared_pools(members.values())}
    pools = {name: v.pool(workload.pool) for name, v in views.items()}
    missing = {name: p for name, p in pools.items() if p is not None and p.shape not in offered}
    if not missing:
        return []
    name, pool = next(iter(missing.items()))
    shapes = ", ".join(sorted({_shape(s) for s in offered}))
    return [
        ConfigIssue(
            f"workloads[{index}].pool",
            f"{workload.pool!r} is {_shape(pool.shape)} on {name!r}, and the shared TPU pools "
            f"of the workers it may go to ([{', '.join(members)}]) have {shapes} only: the "
            "manager's ClusterQueue counts shared pools only (the manager does not give a team "
            "the pools dedicated to it) and would never admit it; use a pool of a shared shape",
        )
    ]
