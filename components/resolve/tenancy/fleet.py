"""A fleet stack validated as a whole: its schema (``schema/fleet.py``), its workers (stacks of
this project that own their cluster), where each team's and workload's JobSets may go
(``fleet_sets``), whether MultiKueue would dispatch them there (``fleet_dispatch``: the
MultiKueue model on the manager's objects and the workers' ``shared_cluster`` contracts, read
exactly as a team stack reads its owner's), and each workload against the pools of every worker
it may go to (``fleet_placement``). The checks that need no worker's contract are
``fleet_checks``.

How a workload is checked against a worker: the worker's contract becomes the cluster part of a
stack config (``SharedCluster.team_values``, the owner part of a team stack) and the workload is
validated in it with every check a stack's own workloads get (pool, slices, head fit on the
worker's CPU pool). MultiKueue may send it to any worker of its set, so each must accept it.

Where ``pathwaysDir`` resolves: MultiKueue picks the worker at admission, after the JobSet was
written, and one JobSet has one pathwaysDir; so a workload that may go to one worker defaults to
that worker's scratch bucket (its regional bucket), and one that may go to several must name a
pathwaysDir on a bucket every one of their node identities can write (granted outside the
fleet).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from components.config import grammars
from components.config.schema import StackConfig
from components.config.schema.contract import SharedCluster
from components.config.schema.fleet import (
    FLEET_KEY,
    FleetStackConfig,
)
from components.errors import ConfigError, ConfigIssue, issues_from_validation
from components.resolve.checks import parse_stack_config
from components.resolve.stack_files import (
    STACKS_DIR,
    decode_engine_values,
    read_stack_file,
    stack_path,
)
from components.resolve.tenancy.fleet_checks import (
    NOT_IN_A_FLEET,
    backend_issues,
    cluster_conflicts,
    config_secret_issues,
    contract_issues,
    foreign_key_issues,
    manager_issue,
    read_workers,
    storage_issues,
    team_quota_issues,
    token_issues,
    worker_issues,
    workload_name_issues,
)
from components.resolve.tenancy.fleet_dedicated import mixed_issues, with_dedicated
from components.resolve.tenancy.fleet_dispatch import dispatch_issues
from components.resolve.tenancy.fleet_placement import (
    group_issues,
    placements_of,
    worker_cluster,
    worker_groups,
    worker_service_accounts,
)
from components.resolve.tenancy.fleet_quota import quota_issues
from components.resolve.tenancy.fleet_sets import (
    Nominations,
    WorkerSet,
    nominations,
    set_name_issues,
    team_queue_name_issues,
    unknown_worker_issues,
)
from components.resolve.tenancy.fleet_shares import with_shares, worker_team_quotas
from components.resolve.tenancy.shared_cluster import contract_outputs, read_contract
from components.vocabulary import WorkloadBackend

WorkerReader = Callable[[str], Mapping[str, Any] | None]
"""A worker stack's name -> its exported outputs (the offline plan: ``loader.reference_reader``,
computed from its stack file)."""


@dataclass(frozen=True)
class FleetStack:
    """A validated fleet: its config, each worker's contract, its queues and worker sets, and
    each workload's view on every worker it may go to (workload index -> worker -> view)."""

    config: FleetStackConfig
    manager: StackConfig
    """The manager cluster as a stack config (system pool only is built; no TPU pools)."""
    workers: dict[str, SharedCluster]
    placements: dict[int, dict[str, StackConfig]]
    nominations: Nominations

    def worker_clusters(self, worker_set: WorkerSet | None = None) -> dict[str, StackConfig]:
        """Each worker's cluster (of ``worker_set``, or all) as a stack config (pools with
        their TPU shapes)."""
        names = worker_set.workers if worker_set is not None else self.workers
        return {name: worker_cluster(name, self.workers[name]) for name in names}

    @property
    def regions(self) -> dict[str, str]:
        """Worker stack -> its region."""
        return {name: c.region for name, c in self.workers.items()}


def load_fleet(
    stack: str,
    read_worker: WorkerReader,
    stacks_dir: Path = STACKS_DIR,
    raw: Mapping[str, str] | None = None,
) -> FleetStack:
    """Read and validate fleet stack ``stack`` (``raw``: its config map already read)."""
    raw = read_stack_file(stack, stacks_dir) if raw is None else raw
    return parse_fleet_config(stack, decode_engine_values(dict(raw)), read_worker, stacks_dir)


def worker_outputs(fleet: FleetStack) -> dict[str, dict[str, Any]]:
    """The StackReference answers of a fleet's workers (their contracts, as read)."""
    return {name: contract_outputs(c) for name, c in fleet.workers.items()}


def parse_fleet_config(
    stack: str, values: dict[str, Any], read_worker: WorkerReader, stacks_dir: Path = STACKS_DIR
) -> FleetStack:
    """Validate a fleet stack's decoded values: every problem at once (ConfigError)."""
    source = f"{stack_path(stack, stacks_dir).name} (tpu-pathways:)"
    foreign = foreign_key_issues(values)
    fleet_values = {k: v for k, v in values.items() if k not in NOT_IN_A_FLEET}
    try:
        config = FleetStackConfig.model_validate(fleet_values)
    except ValidationError as exc:
        issues = foreign + issues_from_validation(exc, FleetStackConfig, grammars.hides_value)
        fleet = values.get(FLEET_KEY)
        names = fleet.get("workers") if isinstance(fleet, dict) else None
        files: dict[str, dict[str, Any]] = {}
        if isinstance(names, list) and all(isinstance(n, str) for n in names):
            files = read_workers(stack, names, stacks_dir)
            issues += worker_issues(stack, names, files, stacks_dir)
        issues += cluster_conflicts(stack, values, files, stacks_dir)
        raise ConfigError(issues, source) from None
    files = read_workers(stack, config.fleet.workers, stacks_dir)  # each worker file, once
    issues = foreign + worker_issues(stack, config.fleet.workers, files, stacks_dir)
    issues += backend_issues(config) + config_secret_issues(config) + team_quota_issues(config)
    issues += workload_name_issues(config) + cluster_conflicts(stack, values, files, stacks_dir)
    names = set_name_issues(config)  # sets of one name: their teams' queues would be one too
    issues += unknown_worker_issues(config) + names + storage_issues(config)
    issues += [] if names else team_queue_name_issues(config)
    try:
        manager = parse_stack_config(manager_values(config), source)
    except ConfigError as exc:
        issues += [manager_issue(i) for i in exc.issues]
    if issues:
        raise ConfigError(issues, source)
    workers = {w: read_contract(read_worker(w), w) for w in config.fleet.workers}
    accounts = {w: worker_service_accounts(files[w]) for w in config.fleet.workers}
    issues += contract_issues(workers) + token_issues(config.fleet.workers, files)
    if issues:
        raise ConfigError(issues, source)
    clusters = {name: worker_cluster(name, contract) for name, contract in workers.items()}
    quotas = {w: worker_team_quotas(files[w]) for w in config.fleet.workers}
    chosen = with_dedicated(with_shares(nominations(config), quotas, clusters), clusters)
    issues, stopped = dispatch_issues(config, chosen, workers, manager.addons.kueue.version)
    issues += mixed_issues(config, chosen, clusters)
    placements: dict[int, dict[str, StackConfig]] = {}
    for i, workload in enumerate(config.workloads):
        if i in stopped:  # its workers change first
            continue
        candidates = chosen.workloads[i].workers
        found, problems = placements_of(config, workload, candidates, workers, accounts)
        placements[i] = found
        issues += [ConfigIssue(f"workloads[{i}]{key}", message) for key, message in problems]
    issues += quota_issues(config, chosen, clusters)
    issues += group_issues(config, chosen, {w: worker_groups(files[w]) for w in workers})
    if issues:
        raise ConfigError(issues, source)
    return FleetStack(config, manager, workers, placements, chosen)


def manager_values(config: FleetStackConfig) -> dict[str, Any]:
    """The manager cluster as stack values: its project, location and system pool; no TPU
    pools (MultiKueue's manager is never a worker)."""
    manager = config.fleet.manager
    return {
        "environment": config.environment.value,
        "team": config.team,
        "gcp": {"project": manager.project, "region": manager.region, "zone": manager.zone},
        "cluster": {
            "name": manager.cluster_name,
            **manager.model_dump(
                mode="json",
                by_alias=True,
                include={"security_group", "secrets_encryption"},
                exclude_none=True,
            ),
        },
        "systemPool": {
            "machineType": manager.machine_type,
            "minNodes": manager.nodes,
            "maxNodes": manager.nodes,
        },
        "teams": [
            t.model_dump(mode="json", by_alias=True, exclude={"workers"}) for t in config.teams
        ],
        "workloadBackend": WorkloadBackend.JOBSET.value,
        "addons": {"kueue": {"enabled": True}},
    }
