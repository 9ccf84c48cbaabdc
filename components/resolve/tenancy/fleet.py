"""A fleet stack validated as a whole: its schema (``schema/fleet.py``), its workers (stacks of
this project that own their cluster) and each workload against every worker's pools, read from
the workers' ``shared_cluster`` contracts exactly as a team stack reads its owner's.

How a workload is checked against a worker: the worker's contract becomes the cluster part of a
stack config (``SharedCluster.team_values``, the owner part of a team stack) and the workload is
validated in it with every check a stack's own workloads get (pool, slices, head fit on the
worker's CPU pool). A workload no worker accepts is refused, naming each worker's shapes.

Where ``pathwaysDir`` resolves: MultiKueue picks the worker at admission, after the JobSet was
written, and one JobSet has one pathwaysDir; so a workload pinned to a worker (``worker:``)
defaults to that worker's scratch bucket (its regional bucket), and an unpinned one must name a
pathwaysDir on a bucket every worker's node identities can write (granted outside the fleet).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from components.config import grammars
from components.config.schema import StackConfig
from components.config.schema.cluster import ClusterConfig
from components.config.schema.contract import SharedCluster
from components.config.schema.fleet import (
    FLEET_KEY,
    FleetStackConfig,
    FleetWorkloadConfig,
    is_fleet,
)
from components.config.schema.teams import TeamConfig, TeamResourceQuotaConfig
from components.config.schema.workloads import EnvFromConfigSecret
from components.errors import ConfigError, ConfigIssue, issues_from_validation
from components.resolve.checks import parse_stack_config
from components.resolve.loader import (
    STACKS_DIR,
    classify_stacks,
    decode_engine_values,
    read_stack_file,
    read_stack_values,
    stack_path,
    targets_existing_cluster,
)
from components.resolve.preflight import run_preflight
from components.resolve.stack_checks import name_collisions
from components.resolve.tenancy.cross_stack import MANAGER_KEYS
from components.resolve.tenancy.shared_cluster import contract_outputs, read_contract
from components.resolve.workload_specs import cpu_pool_selector, node_pool_pins, workload_spec
from components.vocabulary import WorkloadBackend

TOKENS_KEY = ClusterConfig.model_fields["kubernetes_tokens_via_dns"].alias
"""The worker stack's cluster key that lets its DNS-based endpoint take the manager's token."""

WorkerReader = Callable[[str], Mapping[str, Any] | None]
"""A worker stack's name -> its exported outputs (the offline plan: its own offline plan)."""

_WORKERS_OWN = "belong to the worker stacks (the manager runs no Pathways pod); set them there"
# Keys of a stack that are not a fleet's, and why: refused naming the key, never ignored.
NOT_IN_A_FLEET = {
    "gcp": "the manager's project, region and zone are fleet.manager.project, region and zone",
    "cluster": "the manager cluster is set under fleet.manager (clusterName, securityGroup, "
    "secretsEncryption)",
    "systemPool": "the manager's one pool is fleet.manager.machineType and nodes",
    "cpuPool": f"CPU pools for Pathways heads {_WORKERS_OWN}",
    "tpuPools": f"TPU pools {_WORKERS_OWN}",
    "scratchBucket": f"scratch buckets {_WORKERS_OWN}; a pinned workload uses its worker's",
    "dataBuckets": f"bucket grants to node service accounts {_WORKERS_OWN}",
    "addons": "the manager's JobSet and Kueue (MultiKueue) installs are the fleet's own, and each "
    "worker's installs are set in that worker stack",
    "owner": "a fleet owns its manager cluster and names the clusters it dispatches to in "
    "fleet.workers; it deploys onto no owner's cluster",
    "pathwaysVersion": "a fleet has no stack-wide Pathways release; set "
    "workloads[].pathwaysVersion on each workload that needs another than the default",
    "waitForRunning": "a fleet's `pulumi up` does not wait for its JobSets: MultiKueue admits "
    "and dispatches them to a worker after the deployment; watch them on the manager",
    "pricing": "the fleet's plan prices only the manager's CPU pool, at list prices; TPU prices "
    "belong to each worker stack's pricing",
    # MultiKueue's JobSet adapter creates only the JobSet on the worker (kubernetes-sigs/kueue
    # pkg/controller/jobs/jobset/jobset_multikueue_adapter.go, SyncJob; read at 0c344425).
    "secrets": "a fleet takes no config secrets: MultiKueue creates only the JobSet on the "
    "worker it picks, not the Secret a {configSecret: NAME} would become on the manager; use "
    "{secretKeyRef: {name, key}} to a Secret that exists in the team's namespace on each worker",
    "sharedServices": "a shared service is a long-running Pathways deployment its clients "
    "reach in its own cluster, which MultiKueue would only choose at admission; declare it in "
    "a worker stack (or a team stack on one)",
}
_NO_SECRETS = NOT_IN_A_FLEET["secrets"]


# The manager's keys the fleet takes as they are (``FleetStackConfig``'s).
_FLEET_OWN = ("teams", "environment", "team")


def manager_issue(issue: ConfigIssue) -> ConfigIssue:
    """A problem of the manager's stack config, keyed and worded in the fleet's keys."""
    message = issue.message
    for stack_key, fleet_key in MANAGER_KEYS.items():
        message = re.sub(rf"(?<![\w.]){re.escape(stack_key)}\b", fleet_key, message)
    for stack_key, fleet_key in MANAGER_KEYS.items():
        if issue.key == stack_key or issue.key.startswith((f"{stack_key}.", f"{stack_key}[")):
            return ConfigIssue(fleet_key + issue.key[len(stack_key) :], message)
    if issue.key.split(".")[0].split("[")[0] in _FLEET_OWN:
        return ConfigIssue(issue.key, message)
    return ConfigIssue(f"fleet.manager ({issue.key})", message)


def workload_name_issues(config: FleetStackConfig) -> list[ConfigIssue]:
    """Each workload's team is one of the fleet's (its namespace and LocalQueue on the
    manager), and no two JobSets share a name there or in Pulumi's (<team>-<name>)."""
    teams = list(dict.fromkeys(t.name for t in config.teams))
    issues = [
        ConfigIssue(
            f"workloads[{i}].team",
            f"{w.team!r} is not a team of this fleet ({', '.join(teams)}); the JobSet is queued "
            "in its team's namespace on the manager: add the team to teams or use one of them",
        )
        for i, w in enumerate(config.workloads)
        if w.team not in teams
    ]
    counts = Counter((w.team, w.name) for w in config.workloads)
    issues += [
        ConfigIssue(f"workloads[{i}].name", f"{w.name!r} is used twice in namespace {w.team!r}")
        for i, w in enumerate(config.workloads)
        if counts[(w.team, w.name)] > 1
    ]
    jobs = [(f"workloads[{i}]", (w.team, w.name)) for i, w in enumerate(config.workloads)]
    return issues + name_collisions(jobs, "team and name")


def foreign_key_issues(values: Mapping[str, Any]) -> list[ConfigIssue]:
    """A stack's keys a fleet does not take (``NOT_IN_A_FLEET``), refused with why."""
    return [
        ConfigIssue(key, f"not a key of a fleet stack: {why}")
        for key, why in NOT_IN_A_FLEET.items()
        if key in values
    ]


def config_secret_issues(config: FleetStackConfig) -> list[ConfigIssue]:
    """``{configSecret: NAME}`` would become a Secret on the manager, where no pod runs."""
    return [
        ConfigIssue(f"{key}.{name}", f"{{configSecret: {value.config_secret}}}: {_NO_SECRETS}")
        for i, workload in enumerate(config.workloads)
        for key, env in workload.env_maps(f"workloads[{i}]")
        for name, value in env.items()
        if isinstance(value, EnvFromConfigSecret)
    ]


# What a ResourceQuota counts of pods; on the manager it would count none of the fleet's.
POD_QUOTAS = ("pods", "cpu", "memory_gib", "tpu_chips")


def team_quota_issues(config: FleetStackConfig) -> list[ConfigIssue]:
    """A pod quota on a team's namespace on the manager bounds nothing: MultiKueue creates the
    JobSet on a worker, and the JobSet controller leaves one managed by MultiKueue alone on the
    manager, so the fleet's pods all run on the workers."""
    quota_fields = TeamResourceQuotaConfig.model_fields
    return [
        ConfigIssue(
            f"teams[{i}].resourceQuota.{quota_fields[name].alias}",
            f"{value} would bound the team's pods on the manager, where none run (MultiKueue "
            "creates the JobSet and so its pods on a worker); set it in the worker stacks' "
            "teams[].resourceQuota, or bound queued chips with their addons.kueue.teamQuotas",
        )
        for i, team in enumerate(config.teams)
        for name in POD_QUOTAS
        if (value := getattr(team.resource_quota, name)) is not None
    ]


@dataclass(frozen=True)
class FleetStack:
    """A validated fleet: its config, each worker's contract, and where each workload may run
    (workload index -> the worker stacks that accept it, with their view of it)."""

    config: FleetStackConfig
    manager: StackConfig
    """The manager cluster as a stack config (system pool only is built; no TPU pools)."""
    workers: dict[str, SharedCluster]
    placements: dict[int, dict[str, StackConfig]]

    def worker_clusters(self) -> dict[str, StackConfig]:
        """Each worker's cluster as a stack config (pools with their TPU shapes)."""
        return {name: worker_cluster(name, c) for name, c in self.workers.items()}

    @property
    def regions(self) -> dict[str, str]:
        """Worker stack -> its region."""
        return {name: c.region for name, c in self.workers.items()}


def worker_issues(
    stack: str, workers: list[str], stacks_dir: Path = STACKS_DIR
) -> list[ConfigIssue]:
    """Each worker is another stack of this project that owns its cluster (not a team stack, not
    a stack on an existing cluster, not a fleet); a refusal lists the stacks that are."""
    problems = [(i, w, _worker_problem(stack, w, stacks_dir)) for i, w in enumerate(workers)]
    if not any(problem for _, _, problem in problems):
        return []
    owners = ", ".join(classify_stacks(stacks_dir).owners) or "none"
    return [
        ConfigIssue(f"fleet.workers[{i}]", f"{worker!r}: {problem}; cluster owners: {owners}")
        for i, worker, problem in problems
        if problem
    ]


def _worker_problem(stack: str, worker: str, stacks_dir: Path) -> str | None:
    if worker == stack:
        return "is this fleet stack; name the cluster-owning stacks it dispatches to"
    if not stack_path(worker, stacks_dir).is_file():
        return "no such stack in this project"
    values = read_stack_values(worker, stacks_dir)
    if is_fleet(values):
        return "is a fleet stack; a worker must be a stack that owns its TPU cluster"
    owner = values.get("owner")
    if owner is not None:
        try:
            named = f"name {grammars.parse_owner_ref(str(owner))[1]!r} instead"
        except ValueError:
            named = "name its owner instead"
        return (
            f"is a team stack (owner: {owner}): it owns no cluster, it deploys onto its owner's; "
            f"{named}"
        )
    if targets_existing_cluster(worker, stacks_dir):
        return (
            "targets an existing cluster (cluster.existing) instead of creating one; a worker "
            "must be a stack that creates its cluster"
        )
    return None


def token_issues(workers: list[str], stacks_dir: Path = STACKS_DIR) -> list[ConfigIssue]:
    """The manager reaches each worker's DNS-based endpoint with a Kubernetes service-account
    token, which GKE refuses there (401) unless the worker's cluster allows it
    (``cluster.kubernetesTokensViaDns``); read from the worker's stack file, as its ownership
    is."""
    issues = []
    for i, worker in enumerate(workers):
        cluster = read_stack_values(worker, stacks_dir).get("cluster")
        if isinstance(cluster, dict) and cluster.get(TOKENS_KEY) is True:
            continue
        issues.append(
            ConfigIssue(
                f"fleet.workers[{i}]",
                f"{worker!r}: its cluster's DNS-based endpoint takes Google credentials only, "
                "and the manager reaches it with a Kubernetes service-account token (MultiKueue "
                f"runs no exec plugin); set cluster.{TOKENS_KEY}: true in "
                f"{stack_path(worker, stacks_dir).name} and deploy {worker} before the fleet",
            )
        )
    return issues


def cluster_conflicts(stack: str, values: dict[str, Any], stacks_dir: Path) -> list[ConfigIssue]:
    """The manager is a cluster this stack owns: refused, as an owner's cluster is, when it is
    the cluster of another stack (a worker above all) or shares a project with one."""
    return classify_stacks(stacks_dir, values={stack: values}).conflicts_of(stack)


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
        if isinstance(names, list) and all(isinstance(n, str) for n in names):
            issues += worker_issues(stack, names, stacks_dir)
        raise ConfigError(issues + cluster_conflicts(stack, values, stacks_dir), source) from None
    issues = foreign + worker_issues(stack, config.fleet.workers, stacks_dir)
    issues += backend_issues(config) + config_secret_issues(config) + team_quota_issues(config)
    issues += workload_name_issues(config) + cluster_conflicts(stack, values, stacks_dir)
    try:
        manager = parse_stack_config(manager_values(config), source)
    except ConfigError as exc:
        issues += [manager_issue(i) for i in exc.issues]
    if issues:
        raise ConfigError(issues, source)
    workers = {w: read_contract(read_worker(w), w) for w in config.fleet.workers}
    accounts = {w: worker_service_accounts(w, stacks_dir) for w in config.fleet.workers}
    issues += contract_issues(workers) + token_issues(config.fleet.workers, stacks_dir)
    if issues:
        raise ConfigError(issues, source)
    placements: dict[int, dict[str, StackConfig]] = {}
    for i, workload in enumerate(config.workloads):
        found, problems = placements_of(config, workload, workers, accounts)
        placements[i] = found
        issues += [ConfigIssue(f"workloads[{i}]{key}", message) for key, message in problems]
    if issues:
        raise ConfigError(issues, source)
    return FleetStack(config, manager, workers, placements)


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
        "teams": [t.model_dump(mode="json", by_alias=True) for t in config.teams],
        "workloadBackend": WorkloadBackend.JOBSET.value,
        "addons": {"kueue": {"enabled": True}},
    }


def contract_issues(workers: dict[str, SharedCluster]) -> list[ConfigIssue]:
    """What MultiKueue needs of a worker: its own Kueue (it admits the dispatched JobSet
    through the LocalQueue of the same name in the same namespace), JobSet installed, and TPU
    pools to run the JobSets on."""
    issues = []
    for i, (name, contract) in enumerate(workers.items()):
        missing = [
            what
            for what, ok in (
                ("Kueue (addons.kueue.enabled: true)", contract.queues.enabled),
                ("JobSet (addons.jobset.install: true)", contract.versions.jobset is not None),
            )
            if not ok
        ]
        if missing:
            issues.append(
                ConfigIssue(
                    f"fleet.workers[{i}]",
                    f"{name!r} runs no {' and no '.join(missing)}; MultiKueue dispatches to a "
                    "worker's own Kueue and JobSet: enable them in that stack first",
                )
            )
        if not contract.tpu_pools:
            # Its quota would add nothing, and workers without any would leave the manager's
            # ClusterQueue a TPU flavor list the API refuses (v1beta2 flavors: MinItems=1).
            issues.append(
                ConfigIssue(
                    f"fleet.workers[{i}]",
                    f"{name!r} has no TPU pools: a fleet dispatches TPU work; name stacks with "
                    "tpuPools, or add them to this one",
                )
            )
    return issues


def backend_issues(config: FleetStackConfig) -> list[ConfigIssue]:
    """MultiKueue dispatches a JobSet (spec.managedBy); a PathwaysJob has no managedBy."""
    why = (
        "MultiKueue dispatches JobSets only (spec.managedBy: kueue.x-k8s.io/multikueue); the "
        "PathwaysJob CRD has no managedBy, so a fleet cannot dispatch it; use jobset"
    )
    issues = []
    if config.workload_backend is not WorkloadBackend.JOBSET:
        issues.append(
            ConfigIssue("workloadBackend", f"{config.workload_backend.value!r} in a fleet: {why}")
        )
    issues += [
        ConfigIssue(f"workloads[{i}].backend", f"{w.backend.value!r} in a fleet: {why}")
        for i, w in enumerate(config.workloads)
        if w.backend is not None and w.backend is not WorkloadBackend.JOBSET
    ]
    return issues


def worker_service_accounts(worker: str, stacks_dir: Path = STACKS_DIR) -> dict[str, str]:
    """Team -> the Kubernetes service account its pods run as on ``worker``, from the worker's
    stack file (its contract lists the team namespaces only), as its ownership is read."""
    teams = read_stack_values(worker, stacks_dir).get("teams")
    default = TeamConfig.model_fields["service_account"].default
    return {
        t["name"]: t.get("serviceAccount", default)
        for t in (teams if isinstance(teams, list) else [])
        if isinstance(t, dict) and isinstance(t.get("name"), str)
    }


def placements_of(
    config: FleetStackConfig,
    workload: FleetWorkloadConfig,
    workers: dict[str, SharedCluster],
    accounts: Mapping[str, Mapping[str, str]] | None = None,
) -> tuple[dict[str, StackConfig], list[tuple[str, str]]]:
    """The workers that can run ``workload`` (worker -> its view) and the problems, as
    (key suffix, message), when none can or the pin or pathwaysDir is wrong."""
    if workload.worker is not None and workload.worker not in workers:
        known = ", ".join(workers)
        return {}, [(".worker", f"{workload.worker!r} is not one of fleet.workers ({known})")]
    candidates = [workload.worker] if workload.worker else list(workers)
    found: dict[str, StackConfig] = {}
    refusals: list[str] = []
    for name in candidates:
        view, problem = worker_view(
            config, workload, name, workers[name], (accounts or {}).get(name, {})
        )
        if view is not None:
            found[name] = view
        else:
            refusals.append(f"{name}: {problem}")
    problems: list[tuple[str, str]] = []
    if len(found) > 1 and len({_rendering(v) for v in found.values()}) > 1:
        problems.append(
            (
                ".worker",
                f"the workers that can run it ({', '.join(found)}) would need different JobSets "
                "(CPU pool or node pool names differ), and MultiKueue may dispatch it to any of "
                "them; pin it to one with `worker:`",
            )
        )
    if not found:
        problems.append(("", _fits_no_worker(workload, refusals, workers, candidates)))
    if workload.worker is None and workload.pathways_dir is None:
        problems.append(
            (
                ".pathwaysDir",
                "is required for a workload without `worker:`: MultiKueue chooses the worker at "
                "admission and one JobSet has one pathwaysDir; name a gs:// path every worker's "
                "nodes can write, or pin the workload with `worker:` to use that worker's "
                "scratch bucket",
            )
        )
    return found, problems


def _rendering(view: StackConfig) -> str:
    """What of a worker shapes the workload's JobSet (pathwaysDir aside): its spec and where
    its head runs."""
    workload = view.workloads[0]
    spec = workload_spec(view, workload, node_pool_pins(view))
    spec = spec.model_copy(update={"pathways_dir": ""})
    return repr((spec.model_dump(mode="json"), cpu_pool_selector(view)))


def _fits_no_worker(
    workload: FleetWorkloadConfig,
    refusals: list[str],
    workers: dict[str, SharedCluster],
    candidates: list[str],
) -> str:
    shapes = "; ".join(f"{name}: {worker_shapes(workers[name])}" for name in candidates)
    return (
        f"{workload.name!r} (pool {workload.pool!r}, {workload.slices} slice(s)) fits no worker "
        f"({' | '.join(refusals)}); the workers have {shapes}"
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
) -> tuple[StackConfig | None, str]:
    """The workload validated as a stack on worker ``name``'s cluster (its pools, CPU pool and
    bucket from the contract), or None and why it cannot run there. ``accounts``: the worker's
    team service accounts (``worker_service_accounts``)."""
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
    # Unpinned, its pathwaysDir is a bucket outside every worker's scratch bucket (module doc).
    dropped = {"worker"} if workload.worker else {"worker", "pathways_dir"}
    values = {
        **contract.team_values(),
        "environment": config.environment.value,
        "teams": [t.model_dump(mode="json", by_alias=True) for t in teams],
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
