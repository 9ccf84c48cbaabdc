"""A fleet stack's config: worker stacks (cluster-owning stacks of this project) whose TPUs a
small manager cluster dispatches to with Kueue MultiKueue, and the workloads it dispatches.

Checks that need the workers' contracts (a workload fits each worker of its set, the team
namespaces exist there, the manager's MultiKueue objects dispatch) are
``components.resolve.tenancy.fleet``; this module is the schema only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, StrictInt, field_validator, model_validator

from components.config.schema.base import ClusterName, DnsLabel, Label, ProjectId
from components.config.schema.cluster import SecretsEncryptionConfig, SecurityGroup
from components.config.schema.teams import TeamConfig
from components.config.schema.workloads import WorkloadConfig
from components.errors import KeyedError
from components.model import ConfigModel
from components.vocabulary import Environment, WorkloadBackend

FLEET_KEY = "fleet"
"""The key (``tpu-pathways:fleet``) that makes a stack a fleet stack."""
MAX_WORKERS = 20
"""MultiKueueConfig ``spec.clusters`` holds at most 20 names (kubernetes-sigs/kueue v0.17.1,
apis/kueue/v1beta2/multikueue_types.go, MaxItems=20)."""
MANAGER_CLUSTER = "pathways-fleet"
"""The manager's cluster name unless ``fleet.manager.clusterName`` sets one."""


def is_fleet(values: Mapping[str, Any]) -> bool:
    """Whether decoded stack values are a fleet stack's."""
    return values.get(FLEET_KEY) is not None


class ManagerConfig(ConfigModel):
    """The manager cluster: a system pool only, no TPU or CPU pool for jobs, as MultiKueue does
    not let the manager be a worker.

    Source: kueue v0.17.1 site/content/en/docs/concepts/multikueue.md."""

    project: ProjectId
    """GCP project of the manager cluster."""
    region: str = Field(min_length=1)
    """Region of the manager's control plane."""
    zone: str = Field(min_length=1)
    """Zone of its system pool."""
    cluster_name: ClusterName = MANAGER_CLUSTER
    """GKE cluster name of the manager."""
    machine_type: str = "e2-standard-4"
    """Machine type of its system pool (Kueue, JobSet controllers)."""
    nodes: StrictInt = Field(1, ge=1, le=10)
    """Nodes of its system pool."""
    security_group: SecurityGroup | None = None
    """Google Groups for RBAC on the manager (gke-security-groups@<your domain>): needed for
    `teams[].group`, as on a cluster a stack owns."""
    secrets_encryption: SecretsEncryptionConfig | None = None
    """Cloud KMS key for Secrets in the manager's etcd (its workers' kubeconfigs), in a key ring
    of the manager's region: required in production, as on a cluster a stack owns."""


def _distinct(workers: list[str] | None) -> list[str] | None:
    seen = [w for i, w in enumerate(workers or []) if w in (workers or [])[:i]]
    if seen:
        repeated = ", ".join(repr(w) for w in sorted(set(seen)))
        raise ValueError(f"{repeated} listed more than once; name each worker once")
    return workers


class ManagerTokensConfig(ConfigModel):
    """The manager's token on each worker: minted by `pulumi up` through the worker's
    TokenRequest API (its `multikueue-manager` service account, bound to an anchor Secret),
    valid for lifetimeDays, and minted anew by the first `pulumi up` less than renewBeforeDays
    before it expires. Run `pulumi up` on the fleet more often than that: a
    token that expires leaves the manager without that worker."""

    lifetime_days: StrictInt = Field(14, ge=1, le=90)
    """Days a token is valid (TokenRequest expirationSeconds; the worker's API server may
    shorten it, and the plan outputs the expiry it returned): how long a stolen token works."""
    renew_before_days: StrictInt = Field(7, ge=1, le=89)
    """A `pulumi up` within this many days of a token's expiry mints a new one."""
    rotation: DnsLabel | None = None
    """Change it to revoke every token the manager holds at once: the anchor Secret each token
    is bound to (kueue-system/multikueue-manager-anchor[-<rotation>] on every worker) is
    replaced, which invalidates the tokens bound to the old one, and new ones are minted."""

    @model_validator(mode="after")
    def _renew_within_lifetime(self) -> ManagerTokensConfig:
        if self.renew_before_days >= self.lifetime_days:
            raise KeyedError.at(
                "renewBeforeDays",
                f"{self.renew_before_days} is not allowed: must be less than lifetimeDays "
                f"({self.lifetime_days}), or every `pulumi up` mints a new token",
            )
        return self


class FleetConfig(ConfigModel):
    """`tpu-pathways:fleet`: the worker stacks and the manager cluster."""

    workers: list[DnsLabel] = Field(min_length=1, max_length=MAX_WORKERS)
    """Cluster-owning stacks of this project (stacks/Pulumi.<name>.yaml) whose TPUs the manager
    dispatches to; their `shared_cluster` contracts are read as team stacks read their owner.
    At most 20: the clusters one MultiKueueConfig may list. A team's workloads go to the
    workers its teams[].workers names (default: all of these)."""
    manager: ManagerConfig
    """The small CPU-only cluster that runs Kueue with MultiKueue."""
    manager_tokens: ManagerTokensConfig = ManagerTokensConfig()
    """How long the manager's token on each worker lives and when `pulumi up` renews it."""

    _workers_distinct = field_validator("workers")(_distinct)


WorkerSetField = Field(None, min_length=1, max_length=MAX_WORKERS)


class FleetTeamConfig(TeamConfig):
    """A fleet team: its namespace and LocalQueue on the manager, and the workers its JobSets
    may be dispatched to."""

    workers: list[DnsLabel] | None = WorkerSetField
    """The workers (of fleet.workers) its JobSets may go to; default: all of them. Each must
    have the team's namespace: MultiKueue reads each Workload on every worker of its set and
    stops at the first refusal, so one worker without it stops the team's dispatch to all."""

    _workers_distinct = field_validator("workers")(_distinct)


class FleetWorkloadConfig(WorkloadConfig):
    """A fleet workload: a JobSet (no {configSecret} env) the manager queues and MultiKueue
    dispatches to one of its team's workers."""

    workers: list[DnsLabel] | None = WorkerSetField
    """The workers (of fleet.workers) it may go to, instead of its team's teams[].workers: each
    must accept it. With one worker, pathwaysDir defaults to that worker's scratch bucket; with
    more, MultiKueue picks one at admission and pathwaysDir must be given."""

    _workers_distinct = field_validator("workers")(_distinct)

    @model_validator(mode="before")
    @classmethod
    def _worker_renamed(cls, values: Any) -> Any:
        if isinstance(values, dict) and "worker" in values:
            pinned = values["worker"]
            shown = f"[{pinned}]" if isinstance(pinned, str) else "[...]"
            raise KeyedError.at(
                "worker", f"renamed: use workers: {shown} (a list: the workers it may go to)"
            )
        return values


class FleetStackConfig(ConfigModel):
    """A fleet stack: `fleet`, the teams whose namespaces and LocalQueues it mirrors on the
    manager, and the workloads it dispatches."""

    environment: Environment = Environment.DEV
    """dev, staging or production. Production protects the manager cluster, its pool, installs
    and Kueue objects, and needs fleet.manager.secretsEncryption."""
    team: Label = ""
    """Team label put on the manager cluster and its node pool."""
    fleet: FleetConfig
    """The worker stacks and the manager cluster."""
    teams: list[FleetTeamConfig] = Field(min_length=1)
    """Teams whose workloads the fleet dispatches, each to the workers its `workers` names; each
    must be a team namespace of those workers (MultiKueue creates the JobSet in the same
    namespace there). Their pods run there, so resourceQuota's pods, cpu, memoryGib and
    tpuChips are the workers'."""
    workload_backend: WorkloadBackend = WorkloadBackend.JOBSET
    """Must be jobset: MultiKueue dispatches JobSets (spec.managedBy), not PathwaysJobs."""
    workloads: list[FleetWorkloadConfig] = []
    """JobSets queued on the manager for MultiKueue to dispatch to the workers of their team
    (or their own `workers`); each is checked against every one of those workers' pools."""
