"""Where a fleet's JobSets may go: nomination per team and per workload.

A team's JobSets go to the workers its ``teams[].workers`` names (default: every worker of
``fleet.workers``, MultiKueue's own meaning of a config); a workload may name its own
``workloads[].workers`` instead. MultiKueue has no per-workload nomination (kubernetes-sigs/kueue
v0.19.2 apis/kueue/v1beta2/multikueue_types.go: a MultiKueueConfig's clusters are "where the
workloads from the ClusterQueue should be distributed"), and a ClusterQueue may hold one
MultiKueue check only (v0.17.1 pkg/cache/scheduler/clusterqueue.go): so the manager gets one
MultiKueueConfig, AdmissionCheck and ClusterQueue per **distinct worker set**, named
``set_name``, and a JobSet reaches its set through the LocalQueue it is queued on:

- a team's own set: the LocalQueue every worker already has in the team's namespace
  (``multislice-queue``, the owner stacks' ``queues.local_queue``), on the manager pointing at
  the set's ClusterQueue;
- a workload's set that is not its team's: a LocalQueue named after the set, in the team's
  namespace on the manager and, created by the fleet, on each worker of the set (pointing at
  that worker's ClusterQueue for the team), since MultiKueue copies the queue name
  (``cloneForCreate``).

Pure: the program (``components.stack.fleet``) creates what this names, and the MultiKueue model
(``fleet_dispatch``) checks it against the workers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from components.config.schema.fleet import FleetStackConfig, FleetWorkloadConfig
from components.errors import ConfigIssue
from components.vocabulary import LOCAL_QUEUE, truncated

SET_PREFIX = "mk-"
# An AdmissionCheck's parameters.name is a DNS label (v0.17.1 admissioncheck_types.go) and a
# queue name a label value: at most 63 characters either way.
MAX_NAME = 63


def set_name(workers: Sequence[str]) -> str:
    """The manager's MultiKueueConfig, AdmissionCheck and ClusterQueue of a worker set (and the
    LocalQueue of a workload's own set): ``mk-`` and the sorted workers, shortened with a hash
    of the whole past 63 characters."""
    return truncated(SET_PREFIX + "-".join(sorted(workers)), MAX_NAME)


def team_queue_name(set_name: str, team: str) -> str:
    """The manager's ClusterQueue of ``team``'s own queue of worker set ``set_name`` (its share,
    ``fleet_shares``, or its dedicated pools, ``fleet_dedicated``): the set's name, a dot and
    the team's. Past 63 characters the set's part is shortened with a hash of it, the team's
    kept whole (a team's name is at most 30 characters: ``DnsLabel``), so ``kubectl get
    clusterqueues`` still says whose queue it is. Worker stack and team names have no dot (a
    set's name is a DNS label, a team a namespace), so no set's own queue takes a team queue's
    name, and two team queues share one only if their sets' shortened parts do (a hash
    collision, refused: ``team_queue_name_issues``); with a hyphen, set ``a-b`` with team ``c``
    and set ``a`` with team ``b-c`` were both ``mk-a-b-c``. A ClusterQueue's name, and the
    LocalQueue's ``clusterQueue``, may hold dots (kueue v0.17.1 apis/kueue/v1beta2/
    clusterqueue_types.go ``ClusterQueueReference``: a DNS subdomain)."""
    return f"{truncated(set_name, MAX_NAME - 1 - len(team))}.{team}"


@dataclass(frozen=True)
class TeamShare:
    """A team's guaranteed share of a worker set: its own ClusterQueue on the manager."""

    team: str
    name: str
    """The ClusterQueue (``team_queue_name``)."""
    chips: Mapping[str, int]
    """Nominal chips per TPU shape (accelerator name: v5litepod-8), summed over the set's
    workers."""
    borrowing_limit: int | None
    """Chips per flavor it may borrow from the set's cohort (None: all that is idle)."""


@dataclass(frozen=True)
class DedicatedShare:
    """A team's pools dedicated to it on every worker of a set: its own ClusterQueue on the
    manager holding exactly those pools (``fleet_dedicated``), as each worker's own does."""

    team: str
    name: str
    """The ClusterQueue (``team_queue_name``)."""
    chips: Mapping[str, int]
    """Chips of its dedicated TPU pools per TPU shape (accelerator name), summed over the set's
    workers."""
    cpu_pools: Mapping[str, tuple[str, str]]
    """Its CPU pool's name (where its heads run) -> CPU and memory of the pools of that name at
    their maximum size, summed over the set's workers."""


@dataclass(frozen=True)
class WorkerSet:
    name: str
    workers: tuple[str, ...]
    """Sorted."""
    namespaces: tuple[str, ...]
    """The team namespaces queued on it (its ClusterQueue selects only them)."""


@dataclass(frozen=True)
class FleetQueue:
    """A LocalQueue of the fleet on the manager, in a team's namespace, on a worker set."""

    team: str
    name: str
    workers: tuple[str, ...]
    own: bool
    """A workload's own set: the fleet also creates this LocalQueue on each of its workers."""

    @property
    def set_name(self) -> str:
        return set_name(self.workers)


@dataclass(frozen=True)
class Nominations:
    sets: tuple[WorkerSet, ...]
    queues: tuple[FleetQueue, ...]
    """Every LocalQueue of the fleet on the manager."""
    workloads: tuple[FleetQueue, ...]
    """The queue of each workload, by index."""
    shares: Mapping[str, tuple[TeamShare, ...]] = field(default_factory=dict)
    """Set name -> the teams' shares with a ClusterQueue of their own (``fleet_shares``)."""
    dedicated: Mapping[str, tuple[DedicatedShare, ...]] = field(default_factory=dict)
    """Set name -> the teams with pools dedicated to them on each of its workers
    (``fleet_dedicated``)."""

    def team_queues(self, set_name: str) -> tuple[TeamShare | DedicatedShare, ...]:
        """The ClusterQueues of the set's teams that have one of their own."""
        return (*self.shares.get(set_name, ()), *self.dedicated.get(set_name, ()))

    def cluster_queue(self, queue: FleetQueue) -> str:
        """The manager's ClusterQueue a LocalQueue points at: its team's own queue of the set,
        else the set's own."""
        mine = [s.name for s in self.team_queues(queue.set_name) if s.team == queue.team]
        return mine[0] if mine else queue.set_name

    def set_teams(self, worker_set: WorkerSet) -> tuple[str, ...]:
        """The teams queued on the set's own ClusterQueue (those without a queue of their
        own)."""
        own = {s.team for s in self.team_queues(worker_set.name)}
        return tuple(t for t in worker_set.namespaces if t not in own)

    def on_worker(self, worker: str) -> tuple[FleetQueue, ...]:
        return tuple(q for q in self.queues if worker in q.workers)

    def access_namespaces(self, worker: str) -> tuple[str, ...]:
        """The team namespaces the manager dispatches to on ``worker``."""
        return tuple(sorted({q.team for q in self.on_worker(worker)}))

    def placements(self, config: FleetStackConfig) -> dict[str, list[str]]:
        """team/name of each workload -> the workers it may go to."""
        return {
            f"{w.team}/{w.name}": list(self.workloads[i].workers)
            for i, w in enumerate(config.workloads)
        }


def team_workers(config: FleetStackConfig, team: str) -> tuple[str, ...]:
    chosen = next((t.workers for t in config.teams if t.name == team), None)
    return tuple(sorted(chosen or config.fleet.workers))


def workload_workers(config: FleetStackConfig, workload: FleetWorkloadConfig) -> tuple[str, ...]:
    """The workers a workload may go to: its own, else its team's."""
    if workload.workers:
        return tuple(sorted(workload.workers))
    return team_workers(config, workload.team)


def nominations(config: FleetStackConfig) -> Nominations:
    """The fleet's queues and worker sets (unknown worker names refused first:
    ``unknown_worker_issues``)."""
    queues = {
        (t.name, LOCAL_QUEUE): FleetQueue(t.name, LOCAL_QUEUE, team_workers(config, t.name), False)
        for t in config.teams
    }
    of_workloads = []
    for workload in config.workloads:
        workers = workload_workers(config, workload)
        queue = queues.get((workload.team, LOCAL_QUEUE))
        if queue is None or queue.workers != workers:
            queue = FleetQueue(workload.team, set_name(workers), workers, True)
            queues.setdefault((queue.team, queue.name), queue)
        of_workloads.append(queue)
    by_set: dict[tuple[str, ...], set[str]] = {}
    for queue in queues.values():
        by_set.setdefault(queue.workers, set()).add(queue.team)
    sets = tuple(
        WorkerSet(set_name(workers), workers, tuple(sorted(teams)))
        for workers, teams in sorted(by_set.items(), key=lambda item: set_name(item[0]))
    )
    return Nominations(sets, tuple(queues.values()), tuple(of_workloads))


def set_key(config: FleetStackConfig, queue: FleetQueue) -> list[str]:
    """Where the stack file chose a queue's workers: the keys to change."""
    if queue.own:
        return [
            f"workloads[{i}].workers"
            for i, w in enumerate(config.workloads)
            if w.team == queue.team and w.workers and set_name(w.workers) == queue.name
        ]
    return [f"teams[{i}].workers" for i, t in enumerate(config.teams) if t.name == queue.team]


def unknown_worker_issues(config: FleetStackConfig) -> list[ConfigIssue]:
    """Names in teams[].workers and workloads[].workers that are not fleet workers."""
    known = config.fleet.workers
    chosen = [(f"teams[{i}]", t.workers) for i, t in enumerate(config.teams)]
    chosen += [(f"workloads[{i}]", w.workers) for i, w in enumerate(config.workloads)]
    return [
        ConfigIssue(
            f"{key}.workers[{j}]",
            f"{name!r} is not one of fleet.workers ({', '.join(known)}): name workers of this "
            "fleet, or add it to fleet.workers",
        )
        for key, names in chosen
        for j, name in enumerate(names or [])
        if name not in known
    ]


def _chosen_at(config: FleetStackConfig, workers: tuple[str, ...]) -> list[str]:
    """The keys that choose the worker set ``workers``."""
    keys = [
        f"teams[{i}].workers"
        for i, t in enumerate(config.teams)
        if t.workers and tuple(sorted(t.workers)) == workers
    ]
    keys += [
        f"workloads[{i}].workers"
        for i, w in enumerate(config.workloads)
        if w.workers and tuple(sorted(w.workers)) == workers
    ]
    return keys or ["fleet.workers"]


def set_name_issues(config: FleetStackConfig) -> list[ConfigIssue]:
    """Worker sets whose names are one: the workers are joined by '-' and may hold '-' (the
    set [a-b] and the set [a, b] are both ``mk-a-b``), so one set's MultiKueueConfig,
    AdmissionCheck, ClusterQueue and LocalQueue would be the other's."""
    chosen = {team_workers(config, t.name) for t in config.teams}
    chosen |= {workload_workers(config, w) for w in config.workloads}
    by_name: dict[str, list[tuple[str, ...]]] = {}
    for workers in sorted(chosen):
        by_name.setdefault(set_name(workers), []).append(workers)
    issues = []
    for name, sets in by_name.items():
        if len(sets) < 2:
            continue
        listed = " and ".join(f"[{', '.join(s)}]" for s in sets)
        message = (
            f"the worker sets {listed} would both be named {name!r} on the manager (its "
            "MultiKueueConfig, AdmissionCheck and ClusterQueue: 'mk-' and the sorted workers "
            "joined by '-'), so one would take the other's queue; choose workers whose names "
            "do not run together, or rename a worker stack"
        )
        keys = [k for s in sets for k in _chosen_at(config, s)]
        issues += [ConfigIssue(key, message) for key in dict.fromkeys(keys)]
    return issues


def _team_set_keys(config: FleetStackConfig, team: str, workers: tuple[str, ...]) -> list[str]:
    """The keys that put ``team``'s JobSets on the worker set ``workers``."""
    keys = [
        f"teams[{i}].workers"
        for i, t in enumerate(config.teams)
        if t.name == team and team_workers(config, team) == workers
    ]
    keys += [
        f"workloads[{i}].workers"
        for i, w in enumerate(config.workloads)
        if w.team == team and w.workers and tuple(sorted(w.workers)) == workers
    ]
    return keys


def team_queue_name_issues(config: FleetStackConfig) -> list[ConfigIssue]:
    """Two teams' queues of worker sets (``team_queue_name``) that would share a name on the
    manager: the same team on two sets whose shortened names collide. Checked for every team
    a set serves, whether or not it gets a queue of its own (that depends on the workers)."""
    owners: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
    for worker_set in nominations(config).sets:
        for team in worker_set.namespaces:
            name = team_queue_name(worker_set.name, team)
            owners.setdefault(name, []).append((team, worker_set.workers))
    issues = []
    for name, queues in owners.items():
        if len(queues) < 2:
            continue
        listed = " and ".join(f"team {t!r} on [{', '.join(w)}]" for t, w in queues)
        message = (
            f"the manager's queues of {listed} would both be named {name!r} (the worker set's "
            "name, shortened with a hash past 63 characters, a dot and the team's), so one "
            "would take the other's quota; choose other workers for one of them, or rename a "
            "worker stack"
        )
        keys = [k for team, workers in queues for k in _team_set_keys(config, team, workers)]
        issues += [ConfigIssue(key, message) for key in dict.fromkeys(keys)]
    return issues
