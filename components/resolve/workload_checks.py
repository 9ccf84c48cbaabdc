"""The checks of each workload and shared service against the rest of its stack: its pool, slices
and team, its slice restarts against the controller's int32, priority and mode against Kueue,
its pathwaysDir against its team's prefix, where its head pod fits, unique names per namespace,
room for a shared service's clients, and each PathwaysJob's size against the API server's limit.
They read the pools and the CPU pool, so they run once the schema holds
(``checks.parse_stack_config``)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator

from components.config import grammars
from components.config.schema import (
    SharedServiceConfig,
    StackConfig,
    WorkloadConfig,
    WorkloadMode,
)
from components.errors import ConfigIssue
from components.pathways.head_sizing import head_fit_problem
from components.pathways.scheduler_model import NodePoolModel
from components.pathways.service_client import (
    SERVICE_NAMESPACE,
    capacity_problem,
    client_capacity,
    slice_restarts_limit,
)
from components.resolve.storage_checks import workload_storage_issues
from components.resolve.workload_specs import (
    deployment_namespace,
    holds_client_port,
    node_pool_pins,
    shared_service_spec,
    workload_spec,
)
from components.tpu.machines import tpu_host


def workload_issues(config: StackConfig) -> list[ConfigIssue]:
    issues: list[ConfigIssue] = []
    for key, entry in config.deployments():
        problems = (
            _workload_problems(config, entry)
            if isinstance(entry, WorkloadConfig)
            else _service_problems(config, entry)
        )
        issues += _located(key, problems)
    issues += _duplicate_names(config) + workload_storage_issues(config)
    if not issues:  # the jobs' specs need valid pools and teams
        issues += client_capacity_issues(config) + object_size_issues(config)
    return issues


def object_size_issues(config: StackConfig) -> list[ConfigIssue]:
    """Each PathwaysJob, serialized as the API server stores it, against its object limit (the
    JobSet the controller makes of it carries the same command, flags and env)."""
    pins = node_pool_pins(config)
    issues = []
    for key, entry in config.deployments():
        spec = (
            workload_spec(config, entry, pins)
            if isinstance(entry, WorkloadConfig)
            else shared_service_spec(config, entry, pins)
        )
        text = json.dumps(spec.manifest(), ensure_ascii=False, separators=(",", ":"))
        if problem := grammars.object_size_problem("PathwaysJob", len(text.encode("utf-8"))):
            issues.append(ConfigIssue(key, problem))
    return issues


def _located(prefix: str, problems: Iterator[tuple[str, str]]) -> list[ConfigIssue]:
    return [ConfigIssue(f"{prefix}.{key}", message) for key, message in problems]


def _pool_problems(config: StackConfig, entry: WorkloadConfig | SharedServiceConfig):
    pool = config.pool(entry.pool)
    if pool is None:
        names = ", ".join(p.name for p in config.tpu_pools) or "none"
        yield "pool", f"{entry.pool!r} is not a TPU pool of {_whose(config)}; pools: {names}"
        return
    if entry.slices > pool.slices:
        yield "slices", f"{entry.slices} exceeds the {pool.slices} slice(s) of pool {pool.name!r}"
    shape = pool.shape
    if not shape.pathways_supported:
        yield (
            "pool",
            f"pool {pool.name!r} is {shape.machine_type} {shape.topology}, a shape the PathwaysJob "
            "controller v0.1.4 rejects at run time; choose a supported topology "
            "(python -m components shapes lists them)",
        )
    if entry.team not in {t.name for t in config.teams}:
        teams = ", ".join(t.name for t in config.teams)
        yield "team", f"{entry.team!r} is not a team of this stack; teams: {teams or 'none'}"


def _slice_restarts_problems(config: StackConfig, entry: WorkloadConfig | SharedServiceConfig):
    """The v0.1.4 controller sets a slice's Job backoffLimit to int32(hosts x maxSliceRestarts)
    when elasticSlices > 0 (pathwaysjob_controller.go ~692-715; a shared service always has
    elastic slices): an overflow turns negative and the API server refuses the Job."""
    pool = config.pool(entry.pool)
    restarts = entry.max_slice_restarts
    elastic = entry.elastic_slices if isinstance(entry, WorkloadConfig) else 1
    if pool is None or restarts is None or not elastic:
        return
    hosts = pool.shape.hosts
    if restarts > slice_restarts_limit(hosts):
        yield (
            "maxSliceRestarts",
            f"{restarts} x the {hosts} hosts of a slice of pool {pool.name!r} overflows the "
            f"worker Job's backoffLimit (an int32 in the PathwaysJob controller v0.1.4); at most "
            f"{slice_restarts_limit(hosts)}",
        )


def _whose(config: StackConfig) -> str:
    owner = config.shared_cluster
    return f"owner stack {owner.owner_stack!r}" if owner is not None else "this stack"


def _workload_problems(config: StackConfig, workload: WorkloadConfig):
    yield from _pool_problems(config, workload)
    yield from _slice_restarts_problems(config, workload)
    if workload.priority is not None and not config.queues_jobs:
        where = "addons.kueue.enabled: true"
        if config.shared_cluster is not None:
            where = f"{where} on {_whose(config)}"
        yield (
            "priority",
            f"{workload.priority.value!r} needs {where} (it installs the priority classes); "
            "or remove priority",
        )
    if workload.mode is WorkloadMode.INFERENCE and config.queues_jobs:
        yield (
            "mode",
            "inference (head colocated with the workers) cannot be queued by Kueue here: Kueue "
            "would place the head's CPU and memory on the CPU-pool flavor while the controller "
            "pins the head to TPU nodes; use mode training or headless, or set "
            f"{_kueue_off(config)}",
        )
    prefix = config.team_scratch_url(workload.team)
    if workload.pathways_dir is not None and not workload.pathways_dir.startswith(prefix):
        yield (
            "pathwaysDir",
            f"{workload.pathways_dir!r} is not under the prefix of team {workload.team!r} in the "
            f"scratch bucket; use {prefix}<path> (each team's service accounts may write only "
            "under their own prefix)",
        )
    yield from _head_fit(config, workload)


def _kueue_off(config: StackConfig) -> str:
    """Where Kueue is switched off: this stack's addons, or its owner stack's."""
    where = "addons.kueue.enabled: false"
    return where if config.shared_cluster is None else f"{where} on {_whose(config)}"


def _head_fit(config: StackConfig, workload: WorkloadConfig):
    """Where the head pod runs decides which node it must fit on."""
    pool = config.pool(workload.pool)
    user = workload.resources.pod_resources
    cpu = config.team_cpu_pool(workload.team) or config.cpu_pool
    if workload.mode is WorkloadMode.TRAINING:
        problem = head_fit_problem(cpu.machine, user)
        where = f"the CPU pool {cpu.name!r} ({cpu.machine_type})"
    elif workload.mode is WorkloadMode.INFERENCE and pool is not None:
        host = tpu_host(pool.shape.machine_type)
        if host is None:  # no published host size to check against (see machines.py)
            return
        problem = head_fit_problem(host, user)
        where = f"a TPU host of pool {pool.name!r} (colocated head)"
    else:
        problem = head_fit_problem(cpu.machine, None)
        where = f"the CPU pool {cpu.name!r} ({cpu.machine_type})"
    if problem:
        yield "resources", f"the head pod does not fit on {where}: {problem}"


def _service_problems(config: StackConfig, service: SharedServiceConfig):
    yield from _pool_problems(config, service)
    pool = config.pool(service.pool)
    if pool is not None and not pool.shape.pathwaysutils_supported:
        yield (
            "pool",
            f"{pool.shape.pathways_instance_type!r} is not an instance type pathwaysutils' shared "
            "service accepts (tpuv5e, tpuv5, tpuv6e or tpu7x with a topology); use a v5e, v5p, "
            "v6e or tpu7x pool of 4-chip hosts",
        )
    yield from _slice_restarts_problems(config, service)
    owner = config.shared_cluster
    if owner is not None and service.name in owner.shared_services:
        yield (
            "name",
            f"{service.name!r} is already a shared service of owner stack {owner.owner_stack!r} "
            f"in namespace {SERVICE_NAMESPACE!r}, where every team's shared services run; "
            "choose another name",
        )


def client_capacity_issues(config: StackConfig) -> list[ConfigIssue]:
    """No node for a single client makes the shared services unusable. Counted as the plan's
    summary counts it (``service_client.client_capacity``): the CPU pools a client's proxy fits,
    less one node per head that holds the proxy's host port (``holds_client_port``)."""
    if not config.shared_services:
        return []
    # not the system pool: its taint keeps every pod but the cluster's controllers off
    cpu_pools = [config.cpu_pool]
    pools = [
        NodePoolModel(p.name, p.name, p.machine, {}, (), p.max_nodes, 0, None) for p in cpu_pools
    ]
    heads = sum(1 for _, entry in config.deployments() if holds_client_port(config, entry))
    problem = capacity_problem(client_capacity(pools, heads), config.creates_cluster)
    return [ConfigIssue("cpuPool.maxNodes", problem)] if problem else []


def _duplicate_names(config: StackConfig) -> list[ConfigIssue]:
    """PathwaysJob names must be unique per namespace (workloads and services share them; every
    team's shared services share namespace default)."""
    entries = config.deployments()
    counts = Counter((deployment_namespace(e), e.name) for _, e in entries)
    return [
        ConfigIssue(
            f"{key}.name",
            f"{e.name!r} is used twice in namespace {deployment_namespace(e)!r}",
        )
        for key, e in entries
        if counts[(deployment_namespace(e), e.name)] > 1
    ]
