"""A fleet stack's config: worker stacks (cluster-owning stacks of this project) whose TPUs a
small manager cluster dispatches to with Kueue MultiKueue, and the workloads it dispatches.

Checks that need the workers' contracts (a workload fits some worker, the team namespaces exist
there) are ``components.resolve.tenancy.fleet``; this module is the schema only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, StrictInt, field_validator

from components.config.schema.base import ClusterName, DnsLabel, Label, ProjectId
from components.config.schema.cluster import SecretsEncryptionConfig, SecurityGroup
from components.config.schema.teams import TeamConfig
from components.config.schema.workloads import WorkloadConfig
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


class FleetConfig(ConfigModel):
    """`tpu-pathways:fleet`: the worker stacks and the manager cluster."""

    workers: list[DnsLabel] = Field(min_length=1, max_length=MAX_WORKERS)
    """Cluster-owning stacks of this project (stacks/Pulumi.<name>.yaml) whose TPUs the manager
    dispatches to; their `shared_cluster` contracts are read as team stacks read their owner.
    At most 20: the clusters one MultiKueueConfig may list."""
    manager: ManagerConfig
    """The small CPU-only cluster that runs Kueue with MultiKueue."""

    @field_validator("workers")
    @classmethod
    def _distinct(cls, workers: list[str]) -> list[str]:
        seen = [w for i, w in enumerate(workers) if w in workers[:i]]
        if seen:
            repeated = ", ".join(repr(w) for w in sorted(set(seen)))
            raise ValueError(f"{repeated} listed more than once; name each worker once")
        return workers


class FleetWorkloadConfig(WorkloadConfig):
    """A fleet workload: a JobSet (no {configSecret} env) the manager queues and MultiKueue
    dispatches to a worker."""

    worker: DnsLabel | None = None
    """Pin to this worker (one of fleet.workers): its pools and its scratch bucket (the default
    pathwaysDir). Unpinned, the worker is chosen at admission, so pathwaysDir must be given."""


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
    teams: list[TeamConfig] = Field(min_length=1)
    """Teams whose workloads the fleet dispatches; each must be a team namespace of the workers
    its workloads may run on (MultiKueue creates the JobSet in the same namespace there). Their
    pods run there, so resourceQuota's pods, cpu, memoryGib and tpuChips are the workers'."""
    workload_backend: WorkloadBackend = WorkloadBackend.JOBSET
    """Must be jobset: MultiKueue dispatches JobSets (spec.managedBy), not PathwaysJobs."""
    workloads: list[FleetWorkloadConfig] = []
    """JobSets queued on the manager for MultiKueue to dispatch; each is checked against every
    worker's pools and refused if none can run it."""
