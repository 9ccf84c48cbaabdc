"""Pools dedicated to a team on a fleet's workers: the team's own ClusterQueue on the manager.

On a worker, a team with pools dedicated to it (``tpuPools[].team``, ``teamCpuPools``) queues
on a ClusterQueue of its own holding exactly those pools, through flavors that add the pools'
label and toleration to the pods it admits; its LocalQueue points there, and its jobs must name
its pools (``components.addons.kueue``, ``resolve.tenancy.isolation``). It gets no shared
chips there, and no other team gets its pools.

How the manager's admission relates to the worker's (kubernetes-sigs/kueue v0.17.1):

- the manager reserves quota for the Workload with its own ClusterQueue, and only then creates a
  copy of the Workload on every worker of the set (pkg/controller/admissionchecks/multikueue/
  workload.go ``reconcileGroup``: remote workloads are deleted while the local one has no quota
  reservation; ``cloneForCreate`` copies the spec, not the admission);
- each worker admits the copy again with its own ClusterQueue, the one its LocalQueue of that
  name in that namespace points at; the JobSet is created on the worker that reserved first,
  from the manager's JobSet spec with ``managedBy`` cleared (pkg/controller/jobs/jobset/
  jobset_multikueue_adapter.go ``SyncJob``), before the manager's check is Ready and so before
  the manager would inject its flavors into the JobSet (pkg/controller/jobframework/
  reconciler.go ``startJob``, which the MultiKueue check gates): the pods carry the worker's
  flavors' node labels and tolerations, never the manager's;
- a flavor fits a pod set when its node labels match the pods' nodeSelector and required
  affinity on the keys some flavor of that resource group has (pkg/scheduler/flavorassigner/
  flavorassigner.go ``flavorSelector``, ``checkFlavorForPodSets``).

So the manager's quota is a gate in front of each worker's: it must hold for a team what the
workers hold for it. Where a team has pools dedicated to it on **every** worker of a set, its
queue of that set (``team_queue_name``) holds exactly those pools, summed over the workers, on
flavors with their node labels and toleration (named after the worker's with ``.<team>``), and
no shared chips; its quota is neither lent nor borrowed (``lendingLimit``/``borrowingLimit`` 0,
which Kueue allows only in a cohort: pkg/webhooks/clusterqueue_webhook.go ``validateLimit``), and
no other team's queue holds them. A team dedicated on some workers of its set and not others
would need both the worker's dedicated and shared quota in one queue, and is refused
(``mixed_issues``). Pure: schema objects in, shares and issues out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from components.config.schema import StackConfig
from components.config.schema.fleet import FleetStackConfig
from components.errors import ConfigIssue
from components.resolve.tenancy.fleet_sets import (
    DedicatedShare,
    Nominations,
    WorkerSet,
    set_key,
    team_queue_name,
)
from components.tpu.machines import pods_capacity


def _chips(clusters: list[StackConfig], team: str) -> dict[str, int]:
    chips: dict[str, int] = {}
    for cluster in clusters:
        for pool in cluster.tpu_pools:
            if pool.team == team:
                name = pool.shape.accelerator_name
                chips[name] = chips.get(name, 0) + pool.slices * pool.shape.chips
    return dict(sorted(chips.items()))


def _cpu_pools(clusters: list[StackConfig], team: str) -> dict[str, tuple[str, str]]:
    by_name: dict[str, list[tuple[str, int]]] = {}
    for cluster in clusters:
        if (pool := cluster.team_cpu_pool(team)) is not None:
            by_name.setdefault(pool.name, []).append((pool.machine_type, pool.max_nodes))
    return {name: pods_capacity(pools) for name, pools in sorted(by_name.items())}


def set_dedicated(
    worker_set: WorkerSet, clusters: Mapping[str, StackConfig]
) -> tuple[DedicatedShare, ...]:
    """The teams of ``worker_set`` with pools dedicated to them on each of its workers."""
    members = [clusters[w] for w in worker_set.workers]
    return tuple(
        DedicatedShare(
            team,
            team_queue_name(worker_set.name, team),
            _chips(members, team),
            _cpu_pools(members, team),
        )
        for team in worker_set.namespaces
        if all(team in c.dedicated_teams for c in members)
    )


def with_dedicated(chosen: Nominations, clusters: Mapping[str, StackConfig]) -> Nominations:
    """``chosen`` with each set's dedicated teams (``clusters``: every worker's cluster)."""
    dedicated = {s.name: set_dedicated(s, clusters) for s in chosen.sets}
    return replace(chosen, dedicated={k: v for k, v in dedicated.items() if v})


def mixed_issues(
    config: FleetStackConfig, chosen: Nominations, clusters: Mapping[str, StackConfig]
) -> list[ConfigIssue]:
    """Teams with pools dedicated to them on some workers of a set they queue on, not all."""
    issues = []
    for queue in chosen.queues:
        dedicated = [w for w in queue.workers if queue.team in clusters[w].dedicated_teams]
        if not dedicated or len(dedicated) == len(queue.workers):
            continue
        shared = [w for w in queue.workers if w not in dedicated]
        message = (
            f"team {queue.team!r} has pools dedicated to it on [{', '.join(dedicated)}] and "
            f"none on [{', '.join(shared)}]: those workers admit its jobs on its own pools "
            "only, these on their shared pools only, and one manager queue of the set cannot "
            "hold both (it would admit against one what the other runs); name workers that "
            f"all dedicate pools to {queue.team!r} ([{', '.join(dedicated)}]), or none "
            f"([{', '.join(shared)}])"
        )
        issues += [ConfigIssue(key, message) for key in set_key(config, queue) or ["fleet.workers"]]
    return list(dict.fromkeys(issues))
