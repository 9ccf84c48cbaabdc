"""Whether a fleet's workloads run on the workers they may go to: each workload validated as a
stack on each worker of its set (``worker_view``: the worker's contract becomes the cluster part
of a stack config, as a team stack's owner part does), and why a worker of the set cannot run
it (``placements_of``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from components.config.schema import StackConfig
from components.config.schema.contract import SharedCluster
from components.config.schema.fleet import (
    FleetStackConfig,
    FleetWorkloadConfig,
)
from components.config.schema.teams import TeamConfig
from components.errors import ConfigError, ConfigIssue
from components.resolve.checks import parse_stack_config
from components.resolve.preflight import run_preflight
from components.resolve.tenancy.fleet_sets import Nominations
from components.resolve.workload_specs import cpu_pool_selector, node_pool_pins, workload_spec
from components.vocabulary import WorkloadBackend


def _worker_team_values(values: Mapping[str, Any], key: str) -> dict[str, Any]:
    """Team -> its ``key`` (a TeamConfig field's name) in a worker's decoded stack file
    (``fleet_checks.read_workers``: its contract lists the team namespaces only), as its
    ownership is read."""
    teams = values.get("teams")
    field = TeamConfig.model_fields[key]
    return {
        t["name"]: t.get(field.alias or key, field.default)
        for t in (teams if isinstance(teams, list) else [])
        if isinstance(t, dict) and isinstance(t.get("name"), str)
    }


def worker_service_accounts(values: Mapping[str, Any]) -> dict[str, str]:
    """Team -> the Kubernetes service account its pods run as on a worker (``values``:
    its decoded stack file)."""
    return _worker_team_values(values, "service_account")


def worker_groups(values: Mapping[str, Any]) -> dict[str, str | None]:
    """Team -> the Google group bound to `edit` in its namespace on a worker (``values``:
    its decoded stack file; None: none)."""
    return _worker_team_values(values, "group")


def group_issues(
    config: FleetStackConfig, chosen: Nominations, groups: Mapping[str, Mapping[str, str | None]]
) -> list[ConfigIssue]:
    """A fleet team's group gets `edit` in its namespace on the manager, so its members queue
    JobSets that run in that namespace on each worker the team's JobSets may go to (its service
    account, its node pools and scratch prefix): the group must be the one that worker binds
    there. A team with no group on the manager binds no one, and is accepted."""
    issues = []
    for i, team in enumerate(config.teams):
        workers = dict.fromkeys(w for q in chosen.queues if q.team == team.name for w in q.workers)
        for worker in workers:
            there = groups.get(worker, {})
            if team.group is None or team.name not in there or there[team.name] == team.group:
                continue
            bound = "binds no group" if there[team.name] is None else f"binds {there[team.name]}"
            issues.append(
                ConfigIssue(
                    f"teams[{i}].group",
                    f"{team.group} would queue JobSets into namespace {team.name!r} on worker "
                    f"{worker!r}, which {bound} there (its teams[].group): the fleet's group "
                    "must be the worker's, or another group would run pods as that team; set "
                    "the same in both, or leave it out here",
                )
            )
    return issues


def placements_of(
    config: FleetStackConfig,
    workload: FleetWorkloadConfig,
    candidates: Sequence[str],
    workers: dict[str, SharedCluster],
    accounts: Mapping[str, Mapping[str, str]] | None = None,
) -> tuple[dict[str, StackConfig], list[tuple[str, str]]]:
    """The views of ``workload`` on each of ``candidates`` (its worker set: MultiKueue may send
    it to any of them) and the problems, as (key suffix, message): a worker of the set that
    cannot run it, workers that would render it differently, a pathwaysDir it needs."""
    found: dict[str, StackConfig] = {}
    refusals: dict[str, str] = {}
    for name in candidates:
        view, problem = worker_view(
            config, workload, name, workers[name], (accounts or {}).get(name, {}), len(candidates)
        )
        if view is not None:
            found[name] = view
        else:
            refusals[name] = problem
    problems: list[tuple[str, str]] = []
    if not found:
        problems.append(("", _fits_no_worker(workload, refusals, workers, candidates)))
    elif refusals:
        problems += [
            (
                ".workers" if workload.workers else "",
                f"{name!r}, one of the workers it may go to, cannot run it ({why}): MultiKueue "
                f"may dispatch it there; give it workers: [{', '.join(found)}]",
            )
            for name, why in refusals.items()
        ]
    elif len({_rendering(v) for v in found.values()}) > 1:
        problems.append(
            (
                ".workers",
                f"the workers it may go to ({', '.join(found)}) would need different JobSets "
                "(CPU pool or node pool names differ), and MultiKueue may dispatch it to any of "
                "them; name one of them in workers",
            )
        )
    if len(candidates) > 1 and workload.pathways_dir is None:
        problems.append(
            (
                ".pathwaysDir",
                f"is required for a workload that may go to more than one worker "
                f"({', '.join(candidates)}): MultiKueue chooses the worker at admission and one "
                "JobSet has one pathwaysDir; name a gs:// path every one of them can write, or "
                "name one worker in workers to use its scratch bucket",
            )
        )
    return found, problems


def _rendering(view: StackConfig) -> str:
    """What of a worker shapes the workload's JobSet (pathwaysDir aside): its spec and where
    its head runs."""
    workload = view.workloads[0]
    spec = workload_spec(view, workload, node_pool_pins(view))
    spec = spec.model_copy(update={"pathways_dir": ""})
    return repr((spec.model_dump(mode="json"), cpu_pool_selector(view, workload.team)))


def _fits_no_worker(
    workload: FleetWorkloadConfig,
    refusals: Mapping[str, str],
    workers: dict[str, SharedCluster],
    candidates: Sequence[str],
) -> str:
    shapes = "; ".join(f"{name}: {worker_shapes(workers[name])}" for name in candidates)
    why = " | ".join(f"{name}: {problem}" for name, problem in refusals.items())
    return (
        f"{workload.name!r} (pool {workload.pool!r}, {workload.slices} slice(s)) fits no worker "
        f"it may go to ({why}); they have {shapes}"
    )


def worker_shapes(contract: SharedCluster) -> str:
    """A worker's TPU pools as `pool (accelerator generation-topology x slices)`."""
    pools = [
        f"pool {p.name!r} ({p.generation} {p.topology} x{p.slices})" for p in contract.tpu_pools
    ]
    return ", ".join(pools) or "no TPU pools"


def worker_view(
    config: FleetStackConfig,
    workload: FleetWorkloadConfig,
    name: str,
    contract: SharedCluster,
    accounts: Mapping[str, str] | None = None,
    set_size: int = 1,
) -> tuple[StackConfig | None, str]:
    """The workload validated as a stack on worker ``name``'s cluster (its pools, CPU pool and
    bucket from the contract), or None and why it cannot run there. ``accounts``: the worker's
    team service accounts (``worker_service_accounts``); ``set_size``: how many workers it may
    go to."""
    teams = [t for t in config.teams if t.name == workload.team]
    if workload.team not in contract.team_namespaces:
        owned = ", ".join(contract.team_namespaces) or "none"
        return None, f"has no team namespace {workload.team!r} (it has {owned})"
    wanted = teams[0].service_account if teams else None
    there = (accounts or {}).get(workload.team, wanted)
    if not workload.host_network and there != wanted:
        # Off the host network the pods run as the service account the JobSet names, which
        # must exist in the worker's namespace (and hold its Workload Identity grants).
        return None, (
            f"runs the pods of team {workload.team!r} as service account {there!r}, and the "
            f"JobSet names the fleet's {wanted!r} (teams[].serviceAccount): set the same in both"
        )
    # With one worker it may go to, pathwaysDir is that worker's (its scratch bucket by default);
    # with more, it is a bucket outside every worker's scratch bucket (module doc of ``fleet``).
    dropped = {"workers"} if set_size == 1 else {"workers", "pathways_dir"}
    values = {
        **contract.team_values(),
        "environment": config.environment.value,
        "teams": [t.model_dump(mode="json", by_alias=True, exclude={"workers"}) for t in teams],
        "workloadBackend": WorkloadBackend.JOBSET.value,
        "workloads": [
            workload.model_dump(mode="json", by_alias=True, exclude_unset=True, exclude=dropped)
        ],
    }
    # The manager's Kueue queues the JobSet (and installs the priority classes).
    values["addons"] = {**values["addons"], "kueue": {"enabled": True}}
    try:
        view = parse_stack_config(values, f"worker {name!r}")
        # Its pods scheduled on the worker's pools, as the stack's own preflight does.
        run_preflight(view)
        return view, ""
    except ConfigError as exc:
        return None, "; ".join(
            f"{i.key.removeprefix('workloads[0]')}: {i.message}".lstrip(": ") for i in exc.issues
        )


def worker_cluster(name: str, contract: SharedCluster) -> StackConfig:
    """Worker ``name``'s cluster as a stack config (its pools and CPU pool, no workloads): what
    the manager's quota and flavors are computed from."""
    return parse_stack_config(contract.team_values(), f"worker {name!r}")
