"""The owner's ``shared_cluster`` document (the team-stack contract) as pydantic models: what a
team stack builds on. Its export and validation are ``components.resolve.tenancy.shared_cluster``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from components.config.schema.pools import CapacityConfig

# 2: tpu_pools[].held (the node pools the owner's jobs hold). A team stack of version 1 would
# refuse the new key, and one of version 2 could not tell an old owner's empty list from "none
# held": the version check makes both deploy from one revision.
# 3: dedicated pools (tpu_pools[].team, team_cpu_pools), shared_pool_teams, dns, google_apis,
# queues.team_quota_chips; the owner creates the team namespaces' admission policies.
CONTRACT_VERSION = 3


class _Contract(BaseModel):
    """Base of the exported documents: snake_case JSON, unknown keys refused, immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class HeldNodePool(_Contract):
    """A node pool of a TPU pool that jobs of the owner are pinned to or may land on."""

    node_pool: str
    """GKE node pool name."""
    jobs: list[str]
    """The owner's jobs there, as namespace/name."""
    colocated: bool = False
    """One of them is colocated (mode inference): it needs the node pool to itself."""


class SharedTpuPool(_Contract):
    """One TPU pool of the owner: a shape and how many slices (one GKE node pool per slice)."""

    name: str
    """Pool name, as workloads name it."""
    generation: str
    """TPU generation (v5e, v5p, v6e, ...)."""
    topology: str
    """Slice topology, e.g. 2x2x2."""
    machine_type: str
    """TPU machine type of every host."""
    slices: int = Field(ge=1)
    """Number of slices (node pools)."""
    chips: int = Field(ge=1)
    """Chips of all slices together."""
    node_labels: dict[str, str]
    """Node labels every host of the pool carries (what a nodeSelector or flavor matches)."""
    node_pools: list[str]
    """GKE node pool names, one per slice."""
    capacity: CapacityConfig = CapacityConfig()
    """How the slices' VMs are obtained (on demand, spot, reservation, flex-start)."""
    held: list[HeldNodePool] = []
    """Node pools the owner's jobs are pinned to or may land on (a job neither pinned nor
    selecting one may land on any): a team stack pins its jobs to the others."""
    team: str | None = None
    """The team namespace the pool is dedicated to (None: a shared pool)."""

    def held_node_pools(self) -> dict[str, HeldNodePool]:
        return {h.node_pool: h for h in self.held}


class SharedCpuPool(_Contract):
    """The owner's CPU pool, where Pathways heads run."""

    name: str
    """GKE node pool name."""
    machine_type: str
    """Machine type a head pod must fit on."""
    min_nodes: int = Field(ge=0)
    """Autoscaling minimum."""
    max_nodes: int = Field(ge=1)
    """Autoscaling maximum."""


class SharedTeamCpuPool(SharedCpuPool):
    """A CPU pool the owner dedicates to one team namespace's heads."""

    team: str
    """The team namespace."""


class SharedQueues(_Contract):
    """The owner's Kueue: which ClusterQueue each team's LocalQueue points at."""

    enabled: bool
    """Kueue is installed and admits every Pathways job (team jobs must carry the label)."""
    queue_label: str
    """The label a job carries to be queued."""
    local_queue: str
    """Name of the LocalQueue in every team namespace."""
    default_cluster_queue: str
    """ClusterQueue of a team without a quota of its own."""
    team_cluster_queues: dict[str, str] = {}
    """ClusterQueue of each team with a quota (addons.kueue.teamQuotas)."""
    priority_classes: dict[str, int] = {}
    """PriorityClasses the owner installed (name: value); workloads may name them."""
    team_quota_chips: dict[str, int] = {}
    """Chips a team with a quota may hold at most (its quota and what it may borrow)."""

    def cluster_queue(self, team: str) -> str:
        return self.team_cluster_queues.get(team, self.default_cluster_queue)


class SharedVersions(_Contract):
    """What the owner installed (absent: not installed by the owner; Pulumi drops null values
    from outputs, so absent and null mean the same)."""

    jobset: str | None = None
    """JobSet release tag."""
    pathways_job: str | None = None
    """PathwaysJob CRD and controller release tag."""
    kueue: str | None = None
    """Kueue release tag."""


class SharedCluster(_Contract):
    """The `shared_cluster` output of an owner stack: everything a team stack builds on."""

    contract_version: int = CONTRACT_VERSION
    """Version of this document; a team stack refuses one it does not know."""
    owner_stack: str
    """The stack that owns the cluster (and everything cluster-wide on it)."""
    project: str
    """GCP project of the cluster and bucket."""
    region: str
    """Region of the cluster's control plane and bucket."""
    zone: str
    """Zone of every node pool."""
    cluster_name: str
    """GKE cluster name."""
    cluster_location: str
    """GKE cluster location (region, or zone for a zonal cluster)."""
    cpu_pool: SharedCpuPool
    """The CPU pool for Pathways heads."""
    tpu_pools: list[SharedTpuPool]
    """The TPU pools, as workloads name them."""
    team_cpu_pools: list[SharedTeamCpuPool] = []
    """CPU pools dedicated to one team namespace's heads."""
    shared_pool_teams: dict[str, bool] = {}
    """The owner's team namespaces whose host-network pods run on the shared pools, and whether
    each declared isolation: shared (a team stack may join them on the shared pools only if
    every one did)."""
    dns: str = "cloudDns"
    """The cluster's DNS provider (cluster.dns)."""
    google_apis: str = "privateGoogleAccess"
    """Where team pods reach Google APIs: privateGoogleAccess or anyHttps."""
    scratch_bucket: str
    """Name of the Pathways scratch bucket."""
    team_namespaces: list[str]
    """Namespaces the owner stack itself owns; a team stack may not claim them."""
    shared_services: list[str] = []
    """Names of the owner's shared Pathways services in namespace default (where every stack's
    shared services run); a team stack may not take them."""
    queues: SharedQueues
    """The owner's Kueue queues and priority classes."""
    versions: SharedVersions
    """Installed JobSet, PathwaysJob controller and Kueue versions."""

    def team_values(self) -> dict[str, Any]:
        """The owner's part of a team stack's config, in the stack file's own keys."""
        return {
            "gcp": {"project": self.project, "region": self.region, "zone": self.zone},
            "cluster": {
                "name": self.cluster_name,
                "existing": {"name": self.cluster_name, "location": self.cluster_location},
                "dns": self.dns,
            },
            "cpuPool": _cpu_pool_values(self.cpu_pool),
            "teamCpuPools": [{**_cpu_pool_values(p), "team": p.team} for p in self.team_cpu_pools],
            "tpuPools": [
                {
                    "name": p.name,
                    "generation": p.generation,
                    "topology": p.topology,
                    "machineType": p.machine_type,
                    "slices": p.slices,
                    "capacity": p.capacity.model_dump(exclude_defaults=True),
                    **({"team": p.team} if p.team else {}),
                }
                for p in self.tpu_pools
            ],
            "scratchBucket": {"create": False, "name": self.scratch_bucket},
            "addons": {"jobset": {"install": False}, "pathwaysJob": {"install": False}},
        }


def _cpu_pool_values(pool: SharedCpuPool) -> dict[str, Any]:
    return {
        "name": pool.name,
        "machineType": pool.machine_type,
        "minNodes": pool.min_nodes,
        "maxNodes": pool.max_nodes,
    }
