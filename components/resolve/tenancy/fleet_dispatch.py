"""Would the fleet's JobSets be dispatched? The MultiKueue model
(``components.pathways.multikueue_model``) run on what the fleet plans: the manager's Kueue
objects as the program creates them from the nominations (``fleet_sets``), and each worker as
its ``shared_cluster`` contract describes it (Kueue and JobSet versions, team namespaces, the
LocalQueue in each and its ClusterQueue) plus what the fleet creates there (the manager's Role
in each team namespace it dispatches to, its ClusterRole, a workload's own LocalQueues). A
verdict with findings is refused at the key that chose the workers, naming the JobSets, the
worker and what it lacks.
"""

from __future__ import annotations

from collections.abc import Mapping

from components.config.schema.contract import SharedCluster
from components.config.schema.fleet import FleetStackConfig
from components.errors import ConfigIssue
from components.pathways.multikueue_model import (
    MULTIKUEUE_CONTROLLER,
    STOPS_ALL,
    Access,
    AdmissionCheck,
    ClusterQueue,
    Finding,
    Manager,
    QueuedJobSet,
    Verdict,
    Worker,
    queue_verdict,
)
from components.pathways.multikueue_rights import (
    KUEUE_GROUP,
    MANAGER_ROLE_RULES,
    MANAGER_WATCH_RULES,
)
from components.resolve.tenancy.fleet_sets import FleetQueue, Nominations, set_key


def manager_model(config: FleetStackConfig, chosen: Nominations, kueue_version: str) -> Manager:
    """The manager's Kueue objects as the program creates them: per worker set its
    ClusterQueue and one per team with a share (``fleet_shares``) or pools dedicated to it
    (``fleet_dedicated``), all on the set's check."""
    return Manager(
        kueue_version=kueue_version,
        jobsets=tuple(
            QueuedJobSet(w.team, w.name, chosen.workloads[i].name, MULTIKUEUE_CONTROLLER)
            for i, w in enumerate(config.workloads)
        ),
        local_queues={(q.team, q.name): chosen.cluster_queue(q) for q in chosen.queues},
        cluster_queues={
            **{s.name: ClusterQueue(((s.name, ()),), chosen.set_teams(s)) for s in chosen.sets},
            **{
                own.name: ClusterQueue(((s.name, ()),), (own.team,))
                for s in chosen.sets
                for own in chosen.team_queues(s.name)
            },
        },
        admission_checks={
            s.name: AdmissionCheck(MULTIKUEUE_CONTROLLER, KUEUE_GROUP, "MultiKueueConfig", s.name)
            for s in chosen.sets
        },
        configs={s.name: s.workers for s in chosen.sets},
        clusters=dict.fromkeys(config.fleet.workers, True),
    )


def worker_model(name: str, contract: SharedCluster, chosen: Nominations) -> Worker:
    """Worker ``name`` as its contract describes it, with what the fleet creates there."""
    queues, namespaces = contract.queues, set(contract.team_namespaces)
    local_queues = (
        {(ns, queues.local_queue): queues.cluster_queue(ns) for ns in namespaces}
        if queues.enabled
        else {}
    )
    local_queues.update(
        {
            (q.team, q.name): queues.cluster_queue(q.team)
            for q in own_queues(chosen, name)
            if q.team in namespaces
        }
    )
    granted = [ns for ns in chosen.access_namespaces(name) if ns in namespaces]
    return Worker(
        kueue_version=contract.versions.kueue if queues.enabled else None,
        jobset_crd=contract.versions.jobset is not None,
        namespaces=frozenset(namespaces),
        local_queues=local_queues,
        cluster_queues=frozenset(
            {queues.default_cluster_queue, *queues.team_cluster_queues.values()}
        ),
        access=Access(MANAGER_WATCH_RULES, dict.fromkeys(granted, MANAGER_ROLE_RULES)),
    )


def own_queues(chosen: Nominations, worker: str) -> tuple[FleetQueue, ...]:
    """The LocalQueues the fleet creates on ``worker``: those of workloads' own sets."""
    return tuple(q for q in chosen.on_worker(worker) if q.own)


def dispatch_issues(
    config: FleetStackConfig,
    chosen: Nominations,
    workers: Mapping[str, SharedCluster],
    kueue_version: str,
) -> tuple[list[ConfigIssue], set[int]]:
    """The refusals, and the workloads they are about (their placement waits for the fix)."""
    manager = manager_model(config, chosen, kueue_version)
    models = {name: worker_model(name, c, chosen) for name, c in workers.items()}
    issues: list[ConfigIssue] = []
    stopped: set[int] = set()
    for queue in chosen.queues:
        verdict = queue_verdict(manager, models, queue.team, queue.name)
        if verdict.dispatches:
            continue
        jobs = [i for i, q in enumerate(chosen.workloads) if q == queue]
        stopped.update(jobs)
        issues += _queue_issues(config, queue, verdict, jobs, workers)
    return issues, stopped


def _queue_issues(
    config: FleetStackConfig,
    queue: FleetQueue,
    verdict: Verdict,
    jobs: list[int],
    workers: Mapping[str, SharedCluster],
) -> list[ConfigIssue]:
    names = [f"{config.workloads[i].team}/{config.workloads[i].name}" for i in jobs]
    subject = ", ".join(names) if names else f"team {queue.team}'s JobSets"
    by_worker: dict[str | None, list[Finding]] = {}
    for finding in verdict.findings:
        by_worker.setdefault(finding.worker, []).append(finding)
    ready = [w for w in queue.workers if w not in by_worker]
    issues = []
    for key in set_key(config, queue) or ["fleet.workers"]:
        fix = _fix(config, queue, key, ready, workers)
        issues += [
            ConfigIssue(
                key,
                f"{_where(worker)} lacks {', '.join(f.missing for f in found)}: "
                f"{_effect(found)}; {subject} would not be dispatched; {fix}",
            )
            for worker, found in by_worker.items()
        ]
    return issues


def _where(worker: str | None) -> str:
    return "the manager" if worker is None else repr(worker)


def _effect(found: list[Finding]) -> str:
    """The gravest of what Kueue does about a worker's findings."""
    return next((f.effect for f in found if f.effect == STOPS_ALL), found[0].effect)


def _fix(
    config: FleetStackConfig,
    queue: FleetQueue,
    key: str,
    ready: list[str],
    workers: Mapping[str, SharedCluster],
) -> str:
    if ready:
        return f"set {key}: [{', '.join(ready)}]"
    having = [w for w in config.fleet.workers if queue.team in workers[w].team_namespaces]
    if having:
        return f"set {key} to workers that have namespace {queue.team}: [{', '.join(having)}]"
    return f"no worker has namespace {queue.team}: add team {queue.team} to a worker stack"
