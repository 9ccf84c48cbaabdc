"""Node pools: the CPU pools and the TPU pools with their capacity types."""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    Field,
    PrivateAttr,
    StrictBool,
    StrictInt,
    model_validator,
)

from components.config import grammars
from components.config.schema.base import DnsLabel, SubnetCidr, grammar
from components.config.schema.teams import TeamNamespace
from components.errors import ConfigIssue, KeyedError
from components.model import ConfigModel
from components.pathways.head_sizing import DEFAULT_USER_CONTAINER, head_fit_problem
from components.tpu import catalog
from components.tpu.machines import machine_type
from components.vocabulary import CapacityType, slice_pool_names


class AutoscalingPoolConfig(ConfigModel):
    """An autoscaling CPU node pool."""

    name: DnsLabel
    """GKE node pool name."""
    machine_type: str
    """Machine type."""
    min_nodes: StrictInt = Field(1, ge=0, le=1000)
    """Autoscaling minimum."""
    max_nodes: StrictInt = Field(20, ge=1, le=1000)
    """Autoscaling maximum."""
    disk_size_gb: StrictInt = Field(200, ge=50, le=65536)
    """Boot disk size."""

    def _size_issues(self) -> list[ConfigIssue]:
        issues = []
        if catalog.is_tpu_machine_type(self.machine_type):
            issues.append(
                ConfigIssue(
                    "machineType",
                    f"{self.machine_type!r} is a TPU machine type; use a CPU machine type "
                    "such as n2-standard-64",
                )
            )
        else:
            try:
                machine_type(self.machine_type)
            except ValueError as exc:
                issues.append(ConfigIssue("machineType", str(exc)))
        if self.max_nodes < self.min_nodes:
            issues.append(
                ConfigIssue("maxNodes", f"{self.max_nodes} is below minNodes {self.min_nodes}")
            )
        return issues

    @property
    def machine(self):
        return machine_type(self.machine_type)


class CpuPoolConfig(AutoscalingPoolConfig):
    """The CPU node pool that runs the Pathways head pods (resource manager, proxy, user code)."""

    name: DnsLabel = "cpu-np"
    """GKE node pool name."""
    machine_type: str = "n2-standard-64"
    """Machine type; it must hold the Pathways head pod (checked against GKE's allocatable)."""

    @model_validator(mode="after")
    def _sizes(self) -> CpuPoolConfig:
        issues = self._size_issues()
        # Checked here, not across the stack, so it is reported next to any other error.
        if not issues and (problem := head_fit_problem(self.machine, DEFAULT_USER_CONTAINER)):
            issues.append(ConfigIssue("machineType", problem))
        if issues:
            raise KeyedError(issues)
        return self


class TeamCpuPoolConfig(CpuPoolConfig):
    """A CPU pool dedicated to one team namespace's Pathways heads: its nodes run as the team's
    own node service account and carry the label and NoExecute taint
    tpu-pathways/dedicated-to=<team>, so only that team's pods land there."""

    team: TeamNamespace
    """The team namespace (of this stack or of a team stack on its cluster) the pool is
    dedicated to; a team with a dedicated TPU pool needs one for its heads."""
    name: DnsLabel = "cpu-np"
    """GKE node pool name (default <team>-cpu)."""
    min_nodes: StrictInt = Field(0, ge=0, le=1000)
    """Autoscaling minimum (default 0: the pool grows when the team's heads are queued)."""
    max_nodes: StrictInt = Field(4, ge=1, le=1000)
    """Autoscaling maximum."""
    pods_cidr: SubnetCidr | None = None
    """The Pod range of every pool dedicated to the team: the only Pod addresses the Pathways
    ports of those pools admit. It must hold a /24 for every node the team's CPU and TPU pools
    may scale to. On the subnetwork the stack creates, it adds the secondary range pods-<team>
    with it; default: the i-th /16 of 10.16.0.0/12 for the i-th entry of teamCpuPools (append
    new teams, or set it: changing a team's range, also by reordering teamCpuPools, replaces
    its pools). On an existing subnetwork (cluster.network.existingSubnetwork) required: the
    range of the secondary range podsRange names."""
    pods_range: (
        Annotated[str, grammar(lambda v: grammars.gce_name_problem(v, "a secondary range"))] | None
    ) = None
    """On an existing subnetwork (cluster.network.existingSubnetwork) required: the name of
    its secondary range, with podsCidr's addresses, that the team's pools give their Pods
    addresses from. The stack adds no range to a subnetwork it does not create: add it first
    (gcloud compute networks subnets update --add-secondary-ranges). Not allowed on the
    subnetwork the stack creates, where the range is pods-<team>."""

    @model_validator(mode="before")
    @classmethod
    def _default_name(cls, data: object) -> object:
        if isinstance(data, dict) and "name" not in data and isinstance(data.get("team"), str):
            return {**data, "name": f"{data['team']}-cpu"}
        return data


class SystemPoolConfig(AutoscalingPoolConfig):
    """The small autoscaling pool for kube-system and the JobSet, Kueue and PathwaysJob
    controllers, so they never compete with Pathways heads (XPK keeps its default pool for
    this). Created only in stacks that own their cluster."""

    name: DnsLabel = "system-np"
    """GKE node pool name."""
    machine_type: str = "e2-standard-16"
    """Machine type (XPK's default-pool machine). Too small to hold a Pathways head pod, so a
    headless head, which the controller pins to no pool, never lands here."""
    min_nodes: StrictInt = Field(1, ge=1, le=1000)
    """Autoscaling minimum (at least one node: the controllers must always have a home)."""
    max_nodes: StrictInt = Field(3, ge=1, le=1000)
    """Autoscaling maximum."""
    disk_size_gb: StrictInt = Field(100, ge=50, le=65536)
    """Boot disk size."""

    @model_validator(mode="after")
    def _sizes(self) -> SystemPoolConfig:
        issues = self._size_issues()
        # The controller v0.1.4 pins a headless head to no pool: only size keeps it off here.
        if not issues and head_fit_problem(self.machine, None) is None:
            issues.append(
                ConfigIssue(
                    "machineType",
                    f"{self.machine_type!r} could hold a Pathways head pod, and a headless head "
                    "is pinned to no pool, so it could land next to the controllers; use a "
                    "smaller machine type (default e2-standard-16)",
                )
            )
        if issues:
            raise KeyedError(issues)
        return self


_ReservationRef = Annotated[
    str, grammar(lambda v: grammars.project_resource_problem(v, "reservations", "a reservation"))
]
"""A reservation's name (also a node label value), or the path of a shared one."""


class CapacityConfig(ConfigModel):
    """How a TPU pool's VMs are obtained: exactly one of the keys (default: onDemand)."""

    on_demand: StrictBool = False
    """Regular on-demand VMs."""
    spot: StrictBool = False
    """Spot VMs: cheaper, preemptible at any time."""
    reservation: _ReservationRef | None = None
    """Consume a specific reservation (name, or projects/P/reservations/R when shared). The name
    (1-63 characters) also becomes the value of the nodes' tpu-pathways/reservation label."""
    flex_start: StrictBool = False
    """Dynamic Workload Scheduler flex-start: nodes come when capacity frees up (scales 0..N)."""

    @model_validator(mode="after")
    def _exactly_one(self) -> CapacityConfig:
        chosen = self._chosen()
        if len(chosen) > 1:
            raise ValueError(
                f"choose exactly one capacity type, got {', '.join(t.value for t in chosen)}; "
                "allowed: onDemand, spot, reservation, flexStart"
            )
        return self

    def _chosen(self) -> list[CapacityType]:
        flags = {
            CapacityType.ON_DEMAND: self.on_demand,
            CapacityType.SPOT: self.spot,
            CapacityType.RESERVATION: self.reservation is not None,
            CapacityType.FLEX_START: self.flex_start,
        }
        return [kind for kind, on in flags.items() if on]

    @property
    def type(self) -> CapacityType:
        chosen = self._chosen()
        return chosen[0] if chosen else CapacityType.ON_DEMAND


class TpuPoolConfig(ConfigModel):
    """A TPU slice shape and how many slices of it: one GKE node pool per slice."""

    name: DnsLabel
    """Pool name; node pools are named <name>-<slice index>. Workloads refer to it."""
    accelerator: str | None = None
    """XPK accelerator name (v5litepod-16, v5p-4x4x4, v6e-4, v4-16). Or generation+topology."""
    generation: catalog.TpuGeneration | None = None
    """TPU generation (v4, v5e, v5p, v6e, tpu7x = Ironwood, tpu7), with topology."""
    topology: str | None = None
    """Slice topology, e.g. 4x4 or 2x2x2, with generation."""
    machine_type: str | None = None
    """TPU machine type; only needed for GKE's single-host 8-chip variants (ct5lp-hightpu-8t)."""
    slices: StrictInt = Field(1, ge=1, le=256)
    """Number of slices (a multislice of N is N node pools)."""
    capacity: CapacityConfig = CapacityConfig()
    """Capacity type of every slice of the pool."""
    team: TeamNamespace | None = None
    """Dedicate the pool to one team namespace (of this stack or of a team stack): its nodes run
    as the team's own node service account, carry the label and NoExecute taint
    tpu-pathways/dedicated-to=<team>, and only that team's jobs land there (its own Kueue
    flavor). Unset: a shared pool of the cluster."""
    allow_unlisted_zone: StrictBool = False
    """Create the pool in the stack's zone even though Google's TPU regions-and-zones table (as
    kept in components/tpu/data/zones.json) does not list its generation there: for a zone
    newer than the table. The plan warns instead of refusing."""

    _shape: catalog.TpuShape = PrivateAttr()

    @model_validator(mode="after")
    def _resolve_shape(self) -> TpuPoolConfig:
        self._shape = self._lookup()
        return self

    def _lookup(self) -> catalog.TpuShape:
        by_name = self.accelerator is not None
        by_shape = self.generation is not None or self.topology is not None
        if by_name and by_shape:
            raise KeyedError.at(
                "accelerator", "give either accelerator or generation+topology, not both"
            )
        if by_name:
            if self.machine_type is not None:
                raise KeyedError.at("machineType", "only allowed with generation+topology")
            try:
                return catalog.resolve_accelerator(self.accelerator)
            except catalog.CatalogError as exc:
                raise KeyedError.at("accelerator", str(exc)) from None
        if self.generation is None or self.topology is None:
            missing = "generation" if self.generation is None else "topology"
            raise KeyedError.at(missing, "required (or give accelerator, e.g. v5litepod-16)")
        try:
            return catalog.shape_for(self.generation, self.topology, self.machine_type)
        except catalog.CatalogError as exc:
            key = "machineType" if self.machine_type and "machine type" in str(exc) else "topology"
            raise KeyedError.at(key, str(exc)) from None

    @property
    def shape(self) -> catalog.TpuShape:
        return self._shape

    def node_pool_names(self) -> list[str]:
        return slice_pool_names(self.name, self.slices)
