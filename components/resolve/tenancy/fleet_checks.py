"""The checks of a fleet stack that need no worker's contract: the keys a fleet does not take
(``NOT_IN_A_FLEET``), its backend, config secrets, team quotas and workload names, its manager's
problems in the fleet's own keys, and each worker named in ``fleet.workers`` read from its stack
file (a cluster owner whose DNS endpoint takes the manager's token): each file read once
(``read_workers``), its values passed to every check that needs them."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from components.config import grammars
from components.config.schema.cluster import ClusterConfig
from components.config.schema.contract import SharedCluster
from components.config.schema.fleet import (
    FleetStackConfig,
    is_fleet,
)
from components.config.schema.teams import TeamResourceQuotaConfig
from components.config.schema.workloads import EnvFromConfigSecret
from components.errors import ConfigIssue
from components.resolve.stack_checks import name_collisions
from components.resolve.stack_files import (
    STACKS_DIR,
    read_stack_values,
    stack_path,
)
from components.resolve.tenancy.cross_stack import MANAGER_KEYS
from components.resolve.tenancy.ownership import classify_stacks, deploys_onto_existing_cluster
from components.vocabulary import WorkloadBackend

TOKENS_KEY = ClusterConfig.model_fields["kubernetes_tokens_via_dns"].alias
"""The worker stack's cluster key that lets its DNS-based endpoint take the manager's token."""


WorkerValues = Mapping[str, Mapping[str, Any]]
"""Worker stack -> its stack file's decoded values (``read_workers``)."""


_WORKERS_OWN = "belong to the worker stacks (the manager runs no Pathways pod); set them there"


# Keys of a stack that are not a fleet's, and why: refused naming the key, never ignored.
NOT_IN_A_FLEET = {
    "gcp": "the manager's project, region and zone are fleet.manager.project, region and zone",
    "cluster": "the manager cluster is set under fleet.manager (clusterName, securityGroup, "
    "secretsEncryption)",
    "systemPool": "the manager's one pool is fleet.manager.machineType and nodes",
    "cpuPool": f"CPU pools for Pathways heads {_WORKERS_OWN}",
    "tpuPools": f"TPU pools {_WORKERS_OWN}",
    "teamCpuPools": f"CPU pools dedicated to a team {_WORKERS_OWN}",
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
    "lustre": f"file systems {_WORKERS_OWN}",
    "homeDirs": f"file systems {_WORKERS_OWN}",
    "observability": "the manager runs no TPU work; each worker stack has its own dashboard "
    "and alerts",
}


def storage_issues(config: FleetStackConfig) -> list[ConfigIssue]:
    """Volumes and bucket grants belong to the workers: the claims and grants a mount needs are
    created by a worker stack, in the worker's project, for the cluster MultiKueue picks."""
    keys = [f"teams[{i}].buckets" for i, team in enumerate(config.teams) if team.buckets] + [
        f"workloads[{i}].{key}"
        for i, workload in enumerate(config.workloads)
        for key, given in (
            ("volumes", workload.volumes),
            ("lustre", workload.lustre),
            ("homeDir", workload.home_dir),
        )
        if given
    ]
    why = (
        "not in a fleet: the grants and claims a mount needs are a worker stack's (in its "
        "project, on its cluster), and MultiKueue picks the worker at admission; mount in a "
        "worker stack's workloads instead"
    )
    return [ConfigIssue(key, why) for key in keys]


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


def read_workers(
    stack: str, workers: Iterable[str], stacks_dir: Path = STACKS_DIR
) -> dict[str, dict[str, Any]]:
    """The decoded values of each worker that has a stack file and is not this fleet
    (``worker_issues`` refuses the others), each file read once for all the checks that need
    it (a read is a YAML parse, its safety checks and a decode). Raises ConfigError for a
    worker's file that cannot be read."""
    return {
        worker: read_stack_values(worker, stacks_dir)
        for worker in dict.fromkeys(workers)
        if worker != stack and stack_path(worker, stacks_dir).is_file()
    }


def worker_issues(
    stack: str, workers: list[str], found: WorkerValues, stacks_dir: Path = STACKS_DIR
) -> list[ConfigIssue]:
    """Each worker is another stack of this project that owns its cluster (not a team stack, not
    a stack on an existing cluster, not a fleet); a refusal lists the stacks that are.
    ``found``: ``read_workers`` of ``workers``."""
    problems = [(i, w, _worker_problem(stack, w, found.get(w))) for i, w in enumerate(workers)]
    if not any(problem for _, _, problem in problems):
        return []
    owners = ", ".join(classify_stacks(stacks_dir).owners) or "none"
    return [
        ConfigIssue(f"fleet.workers[{i}]", f"{worker!r}: {problem}; cluster owners: {owners}")
        for i, worker, problem in problems
        if problem
    ]


def _worker_problem(stack: str, worker: str, values: Mapping[str, Any] | None) -> str | None:
    """Why ``worker`` (``values``: its decoded stack file, None if it has none) is no worker."""
    if worker == stack:
        return "is this fleet stack; name the cluster-owning stacks it dispatches to"
    if values is None:
        return "no such stack in this project"
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
    if deploys_onto_existing_cluster(values):
        return (
            "targets an existing cluster (cluster.existing) instead of creating one; a worker "
            "must be a stack that creates its cluster"
        )
    return None


def token_issues(workers: list[str], found: WorkerValues) -> list[ConfigIssue]:
    """The manager reaches each worker's DNS-based endpoint with a Kubernetes service-account
    token, which GKE refuses there (401) unless the worker's cluster allows it
    (``cluster.kubernetesTokensViaDns``); read from the worker's stack file (``found``:
    ``read_workers`` of ``workers``, each a cluster owner), as its ownership is."""
    issues = []
    for i, worker in enumerate(workers):
        cluster = found[worker].get("cluster")
        if isinstance(cluster, dict) and cluster.get(TOKENS_KEY) is True:
            continue
        issues.append(
            ConfigIssue(
                f"fleet.workers[{i}]",
                f"{worker!r}: its cluster's DNS-based endpoint takes Google credentials only, "
                "and the manager reaches it with a Kubernetes service-account token (MultiKueue "
                f"runs no exec plugin); set cluster.{TOKENS_KEY}: true in "
                f"{stack_path(worker).name} and deploy {worker} before the fleet",
            )
        )
    return issues


def cluster_conflicts(
    stack: str, values: dict[str, Any], found: WorkerValues, stacks_dir: Path
) -> list[ConfigIssue]:
    """The manager is a cluster this stack owns: refused, as an owner's cluster is, when it is
    the cluster of another stack (a worker above all) or shares a project with one. ``found``:
    the workers' values already read (``read_workers``), not read again."""
    return classify_stacks(stacks_dir, values={**found, stack: values}).conflicts_of(stack)


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
