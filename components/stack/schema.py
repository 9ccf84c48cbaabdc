"""The stack configuration schema: everything a `stacks/Pulumi.<stack>.yaml` holds under the
``tpu-pathways:`` namespace, as pydantic models.

These models are the single, documented schema of the config: their field docstrings become
the README's config reference (``python -m components config-reference``). Validation runs
before any resource is registered and reports every problem at once (see ``errors.py``).
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import (
    AfterValidator,
    Field,
    PrivateAttr,
    SecretStr,
    StrictBool,
    StrictInt,
    ValidationInfo,
    field_validator,
    model_validator,
)

from components.errors import ConfigIssue, KeyedError
from components.model import ConfigModel
from components.pathways.head_sizing import DEFAULT_USER_CONTAINER, PodResources, head_fit_problem
from components.pathways.spec import INT32_MAX, ComponentType, job_name_problem
from components.stack import grammars
from components.tpu import catalog
from components.tpu.machines import machine_type
from components.tpu.pricing import PricingOverrides
from components.tpu.quantities import normalize_quantity, parse_cpu, parse_memory

if TYPE_CHECKING:
    from components.stack.shared_cluster import SharedCluster

NAMESPACE = "tpu-pathways"


def _pattern(regex: str, what: str):
    compiled = re.compile(regex)

    def check(value: str) -> str:
        if not compiled.fullmatch(value):
            raise ValueError(f"{value!r} is not {what}")
        return value

    return AfterValidator(check)


def _grammar(problem_of):
    """A field validator from one of ``grammars``' checks."""

    def check(value: str) -> str:
        if problem := problem_of(value):
            raise ValueError(problem)
        return value

    return AfterValidator(check)


ImageReference = Annotated[str, _grammar(grammars.image_problem)]
LabelKey = Annotated[str, _grammar(grammars.label_key_problem)]
LabelValue = Annotated[str, _grammar(grammars.label_value_problem)]
GcsPath = Annotated[str, _grammar(grammars.gcs_path_problem)]
Flag = Annotated[str, _grammar(grammars.flag_problem)]
PlainEnvValue = Annotated[str, _grammar(grammars.env_value_problem)]
ImageTag = Annotated[
    str, _pattern(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}", "an image tag such as 'v0.1.4'")
]


def _cidr(value: str) -> str:
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError:
        raise ValueError(f"{value!r} is not an IPv4 CIDR range such as '10.0.0.0/20'") from None
    return value


ProjectId = Annotated[
    str,
    _pattern(
        r"[a-z][a-z0-9-]{4,28}[a-z0-9]",
        "a GCP project ID (6-30 lowercase letters, digits or hyphens, starting with a letter)",
    ),
]
DnsLabel = Annotated[
    str,
    _pattern(
        r"[a-z]([-a-z0-9]{0,28}[a-z0-9])?",
        "a name of 1-30 lowercase letters, digits or hyphens that starts with a letter "
        "and does not end with a hyphen",
    ),
]
ClusterName = Annotated[
    str,
    _pattern(
        r"[a-z]([-a-z0-9]{0,38}[a-z0-9])?",
        "a GKE cluster name (1-40 lowercase letters, digits or hyphens, starting with a letter)",
    ),
]
Cidr = Annotated[str, AfterValidator(_cidr)]
Label = Annotated[
    str,
    _pattern(r"[a-z0-9]([-_a-z0-9]{0,61}[a-z0-9])?|", "a GCP label value (lowercase, at most 63)"),
]


class Environment(StrEnum):
    """What a stack is for; ``production`` turns on deletion protection of stateful resources."""

    DEV = "dev"
    STAGING = "staging"
    PRODUCTION = "production"


class ReleaseChannel(StrEnum):
    RAPID = "RAPID"
    REGULAR = "REGULAR"
    STABLE = "STABLE"


class CapacityType(StrEnum):
    ON_DEMAND = "onDemand"
    SPOT = "spot"
    RESERVATION = "reservation"
    FLEX_START = "flexStart"


class GcpConfig(ConfigModel):
    """Where the stack's resources live."""

    project: ProjectId
    """GCP project ID that owns the cluster, network, node pools and bucket."""
    region: Annotated[str, _pattern(r"[a-z]+-[a-z]+\d+", "a GCP region such as 'us-east5'")]
    """Region of the cluster's control plane (regional clusters), subnet and bucket."""
    zone: Annotated[str, _pattern(r"[a-z]+-[a-z]+\d+-[a-z]", "a GCP zone such as 'us-east5-b'")]
    """Zone of every node pool; TPU capacity is zonal, so all slices live here."""

    @model_validator(mode="after")
    def _zone_in_region(self) -> GcpConfig:
        if not self.zone.startswith(self.region + "-"):
            raise KeyedError.at(
                "zone", f"{self.zone!r} is not in region {self.region!r} (expected {self.region}-X)"
            )
        return self


class NetworkConfig(ConfigModel):
    """The VPC the cluster uses: a dedicated one (default) or an existing one."""

    existing_network: str | None = None
    """Name of an existing VPC to use instead of creating one. Requires existingSubnetwork."""
    existing_subnetwork: str | None = None
    """Name of an existing subnetwork in the region (with existingNetwork)."""
    mtu: StrictInt = Field(8896, ge=1300, le=8896)
    """MTU of the created VPC. 8896 is what large TPU deployments use for DCN traffic."""
    nodes_cidr: Cidr = "10.0.0.0/20"
    """Primary range of the created subnetwork (node IPs)."""
    pods_cidr: Cidr = "10.4.0.0/14"
    """Secondary range for pod IPs (VPC-native cluster)."""
    services_cidr: Cidr = "10.8.0.0/20"
    """Secondary range for service IPs."""

    @model_validator(mode="after")
    def _existing_pair(self) -> NetworkConfig:
        if (self.existing_network is None) != (self.existing_subnetwork is None):
            missing = (
                "existingSubnetwork" if self.existing_subnetwork is None else "existingNetwork"
            )
            raise KeyedError.at(missing, "required when the other existing* key is set")
        ranges = {"nodesCidr": self.nodes_cidr, "podsCidr": self.pods_cidr}
        ranges["servicesCidr"] = self.services_cidr
        nets = {k: ipaddress.ip_network(v) for k, v in ranges.items()}
        keys = list(nets)
        for i, a in enumerate(keys):
            for b in keys[i + 1 :]:
                if nets[a].overlaps(nets[b]):
                    raise KeyedError.at(b, f"{ranges[b]!r} overlaps {a} {ranges[a]!r}")
        return self

    @property
    def create(self) -> bool:
        return self.existing_network is None


class AuthorizedNetwork(ConfigModel):
    cidr: Cidr
    """CIDR allowed to reach the control plane's IP endpoint (never 0.0.0.0/0)."""
    display_name: str = ""
    """A label shown in the console."""

    @field_validator("cidr")
    @classmethod
    def _not_everywhere(cls, value: str) -> str:
        if ipaddress.ip_network(value).prefixlen == 0:
            raise ValueError(
                f"{value!r} would open the control plane's IP endpoint to the whole internet; "
                "list your networks' CIDRs, or list none and use the IAM-gated DNS endpoint"
            )
        return value


class ExistingClusterConfig(ConfigModel):
    """Target a cluster another stack (or XPK) made, instead of creating one."""

    name: ClusterName | None = None
    """Name of the existing GKE cluster (with location). Its endpoint is looked up at deploy."""
    location: (
        Annotated[str, _pattern(r"[a-z]+-[a-z]+\d+(-[a-z])?", "a GCP region or zone")] | None
    ) = None
    """Region or zone of the existing cluster."""
    kubeconfig_context: (
        Annotated[str, _pattern(r"\S(.*\S)?", "a kubeconfig context name (not blank)")] | None
    ) = None
    """Alternatively, a context of the user's kubeconfig file to deploy through."""

    @model_validator(mode="after")
    def _one_way(self) -> ExistingClusterConfig:
        by_name = self.name is not None or self.location is not None
        if by_name and self.kubeconfig_context is not None:
            raise KeyedError.at("kubeconfigContext", "give either name+location or a context")
        if by_name and (self.name is None or self.location is None):
            raise KeyedError.at("name" if self.name is None else "location", "required together")
        if not by_name and self.kubeconfig_context is None:
            raise KeyedError.at("name", "give name+location, or kubeconfigContext")
        return self


class ClusterConfig(ConfigModel):
    """The GKE Standard cluster."""

    name: ClusterName
    """Cluster name; also the prefix of the network, service account and bucket names."""
    regional: StrictBool = True
    """Regional control plane (nodes still in the one zone), as XPK creates; false = zonal."""
    release_channel: ReleaseChannel = ReleaseChannel.RAPID
    """GKE release channel. RAPID gets new TPU features first (XPK's default)."""
    deletion_protection: StrictBool = True
    """Refuse `pulumi destroy` of the cluster. Turn off only for throwaway stacks."""
    private_nodes: StrictBool | None = None
    """Nodes without external IPs; a Cloud Router + NAT is created for egress. Default: true in
    production stacks, false otherwise."""
    authorized_networks: list[AuthorizedNetwork] = []
    """CIDRs allowed to reach the IP control-plane endpoint; none by default (use the IAM-gated
    DNS endpoint)."""
    network: NetworkConfig = NetworkConfig()
    """The VPC (created by default)."""
    existing: ExistingClusterConfig | None = None
    """Deploy onto an existing cluster: nothing cluster-level is created, so privateNodes,
    authorizedNetworks, deletionProtection, regional, releaseChannel and network are refused
    with it (the owning stack sets them)."""

    @model_validator(mode="after")
    def _existing_takes_no_cluster_settings(self) -> ClusterConfig:
        if self.existing is None:
            return self
        # Settings of a cluster this stack creates; the owning stack decides them.
        creating_only = (
            "private_nodes",
            "authorized_networks",
            "deletion_protection",
            "network",
            "regional",
            "release_channel",
        )
        issues = [
            ConfigIssue(
                type(self).model_fields[field].alias or field,
                "cannot apply to an existing cluster (this stack does not create it); set it "
                "in the stack that owns the cluster, and remove it here",
            )
            for field in creating_only
            if field in self.model_fields_set
        ]
        if issues:
            raise KeyedError(issues)
        return self


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


class CapacityConfig(ConfigModel):
    """How a TPU pool's VMs are obtained: exactly one of the keys (default: onDemand)."""

    on_demand: StrictBool = False
    """Regular on-demand VMs."""
    spot: StrictBool = False
    """Spot VMs: cheaper, preemptible at any time."""
    reservation: (
        Annotated[
            str,
            _pattern(
                r"[a-z]([-a-z0-9]*[a-z0-9])?|projects/[a-z][-a-z0-9]*/reservations/[a-z]([-a-z0-9]*[a-z0-9])?",
                "a reservation name or projects/<project>/reservations/<name>",
            ),
        ]
        | None
    ) = None
    """Consume a specific reservation (name, or projects/P/reservations/R when shared)."""
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
        return [f"{self.name}-{i}" for i in range(self.slices)]


Version = Annotated[str, _pattern(r"v\d+\.\d+\.\d+", "a release tag such as 'v0.10.1'")]
ManifestUrl = Annotated[str, _pattern(r"https://\S+\.ya?ml", "an https:// URL of a YAML manifest")]


def _version_tuple(tag: str) -> tuple[int, ...]:
    return tuple(int(part) for part in tag.removeprefix("v").split("."))


class ReleaseAddon(ConfigModel):
    """An upstream project installed from its pinned release manifest."""

    # The release manifest's URL for a version tag; a subclass names its project's.
    RELEASE_URL: ClassVar[str]
    version: Version
    manifest_url: ManifestUrl | None = None
    """Mirror of the release manifest (clusters without internet egress)."""

    @property
    def url(self) -> str:
        return self.manifest_url or self.RELEASE_URL.format(version=self.version)


class JobSetAddon(ReleaseAddon):
    """JobSet, which the PathwaysJob controller turns every PathwaysJob into."""

    RELEASE_URL = (
        "https://github.com/kubernetes-sigs/jobset/releases/download/{version}/manifests.yaml"
    )

    install: StrictBool = True
    """Install it (turn off when another stack already installed it on the cluster)."""
    version: Version = "v0.10.1"
    """Release tag. v0.10.1 is what XPK pins; the PathwaysJob controller v0.1.4 is built against
    JobSet v0.8 and does not map the restart condition v0.12 adds."""

    @model_validator(mode="after")
    def _supported(self) -> JobSetAddon:
        if _version_tuple(self.version) < (0, 8, 0):
            raise KeyedError.at(
                "version",
                f"{self.version!r} is older than v0.8.0, the JobSet API the PathwaysJob "
                "controller needs; use v0.8.0 or newer (default v0.10.1)",
            )
        return self


class PathwaysJobAddon(ReleaseAddon):
    """The PathwaysJob CRD and controller (google/pathways-job)."""

    RELEASE_URL = "https://github.com/google/pathways-job/releases/download/{version}/install.yaml"

    install: StrictBool = True
    """Install it (turn off when another stack already installed it on the cluster)."""
    version: Version = "v0.1.4"
    """Release tag of google/pathways-job; the typed PathwaysJob spec follows v0.1.4."""


class TeamQuota(ConfigModel):
    """A team's guaranteed share of the cluster's TPUs: its own ClusterQueue in a cohort."""

    team: DnsLabel
    """Team namespace (of this stack or of a team stack on this cluster)."""
    chips: dict[str, Annotated[StrictInt, Field(ge=0)]]
    """Chips per TPU shape, keyed by accelerator name (v5p-16, v5litepod-16, v6e-2x2)."""
    borrowing_limit: StrictInt | None = Field(None, ge=0)
    """Chips per shape the team may borrow beyond its quota while others leave them idle
    (default: all idle chips; 0: never more than its quota)."""


class KueueAddon(ReleaseAddon):
    """Kueue quota management: one flavor per TPU shape, quota = the chips the stack provisions."""

    RELEASE_URL = (
        "https://github.com/kubernetes-sigs/kueue/releases/download/{version}/manifests.yaml"
    )
    # The one place the Kueue release and the API of the queue objects meet. kubernetes-sigs/kueue
    # config/components/crd/bases: v1beta2 is served from v0.15.0 and the storage version from
    # v0.16.0; v0.17.1 marks v1beta1 deprecated ("Use v1beta2 instead"), v0.20 removes it.
    API_VERSION: ClassVar[str] = "kueue.x-k8s.io/v1beta2"
    FIRST_SERVING: ClassVar[tuple[int, int, int]] = (0, 15, 0)

    enabled: StrictBool | None = None
    """Install Kueue and create flavors, a ClusterQueue, LocalQueues and priority classes.
    Default: on in a stack that owns its cluster (as XPK does; Kueue admits a job
    all-or-nothing, so jobs sharing a pool cannot deadlock), off on an existing cluster."""
    version: Version = "v0.17.1"
    """Release tag of kubernetes-sigs/kueue (XPK's pin)."""
    tpu_quota: StrictInt | None = Field(None, ge=0)
    """Optional cross-check: the TPU chip quota you expect. It must equal the provisioned chips."""
    team_quotas: list[TeamQuota] = []
    """Per-team TPU quotas (fairness between teams); none: one ClusterQueue for everyone."""

    @model_validator(mode="after")
    def _served_api(self) -> KueueAddon:
        if _version_tuple(self.version) < self.FIRST_SERVING:
            first = "v" + ".".join(map(str, self.FIRST_SERVING))
            raise KeyedError.at(
                "version",
                f"{self.version!r} is not supported; use {first} or newer (the queue objects "
                f"use {self.API_VERSION}, which Kueue serves from {first})",
            )
        return self


class AddonsConfig(ConfigModel):
    """In-cluster installs, in dependency order: JobSet, then the PathwaysJob controller."""

    jobset: JobSetAddon = JobSetAddon()
    """JobSet install."""
    pathways_job: PathwaysJobAddon = PathwaysJobAddon()
    """PathwaysJob CRD and controller install."""
    kueue: KueueAddon = KueueAddon()
    """Optional Kueue install and queues."""


BucketName = Annotated[
    str,
    _pattern(
        r"[a-z0-9][-_a-z0-9]{1,61}[a-z0-9]",
        "a bucket name (3-63 lowercase letters, digits, hyphens or underscores)",
    ),
]


class ScratchBucketConfig(ConfigModel):
    """The GCS bucket Pathways keeps its scratch state in (every PathwaysJob's pathwaysDir)."""

    name: BucketName | None = None
    """Bucket name; default <project>-<cluster>-pathways (truncated to 63)."""
    create: StrictBool = True
    """Create the bucket (false: use an existing bucket of that name; name is then required)."""
    retention_days: StrictInt = Field(30, ge=1, le=3650)
    """Scratch objects are deleted after this many days."""
    delete_on_destroy: StrictBool = False
    """Delete the bucket and its objects on `pulumi destroy` (default: keep it)."""

    @model_validator(mode="after")
    def _existing_needs_name(self) -> ScratchBucketConfig:
        if not self.create and self.name is None:
            raise KeyedError.at("name", "required when create is false")
        return self


# Namespaces Kubernetes, GKE and the installs own: a team stack would own (and on destroy
# delete) them and grant their service accounts bucket access.
SYSTEM_NAMESPACES = (
    "default",
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "jobset-system",
    "pathways-job-system",
    "kueue-system",
)
SYSTEM_NAMESPACE_PREFIXES = ("gke-", "kube-")


def _team_namespace(value: str) -> str:
    if value in SYSTEM_NAMESPACES or value.startswith(SYSTEM_NAMESPACE_PREFIXES):
        raise ValueError(
            f"{value!r} is a system namespace (Kubernetes, GKE or an install owns "
            f"{', '.join(SYSTEM_NAMESPACES)} and gke-*/kube-*); choose a team name"
        )
    return value


class TeamConfig(ConfigModel):
    """A team namespace and the Kubernetes service account its Pathways pods run as."""

    name: Annotated[DnsLabel, AfterValidator(_team_namespace)]
    """Namespace name (not a system namespace such as default, kube-system or gke-*)."""
    service_account: DnsLabel = "pathways"
    """Kubernetes service account of the team's workloads (gets read/write on the team's prefix
    gs://<scratch bucket>/<team>/ of the bucket)."""


class WorkloadMode(StrEnum):
    """How a workload runs (maps to the PathwaysJob deployment mode)."""

    TRAINING = "training"
    INFERENCE = "inference"
    HEADLESS = "headless"


class Priority(StrEnum):
    VERY_LOW = "very-low"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    VERY_HIGH = "very-high"


def _cpu(value: str) -> str:
    parse_cpu(value)
    return normalize_quantity(value)


def _memory(value: str) -> str:
    parse_memory(value)
    return normalize_quantity(value)


class ContainerResources(ConfigModel):
    """CPU and memory of the user container (requests = limits, so the head pod's size is known)."""

    cpu: Annotated[str, AfterValidator(_cpu)] = "24"
    """CPU cores or millicores ('24', '500m')."""
    memory: Annotated[str, AfterValidator(_memory)] = "100Gi"
    """Memory ('100Gi')."""

    @property
    def pod_resources(self) -> PodResources:
        return PodResources(parse_cpu(self.cpu), parse_memory(self.memory))


# Set by the PathwaysJob controller on the main container; a second copy would shadow it.
CONTROLLER_ENV = ("JAX_PLATFORMS", "JAX_BACKEND_TARGET", "XCLOUD_ENVIRONMENT", "PATHWAYS_HEAD")
EnvName = Annotated[str, _pattern(r"[A-Za-z_][A-Za-z0-9_]*", "an environment variable name")]


SecretName = Annotated[
    str,
    _pattern(
        r"[A-Za-z][A-Za-z0-9_-]{0,62}",
        "a secret name (a letter, then up to 62 letters, digits, '_' or '-')",
    ),
]
KubernetesSecretName = Annotated[
    str,
    _pattern(
        r"(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
        "a Kubernetes Secret name (a DNS subdomain: lowercase letters, digits, '-' and '.')",
    ),
]
SecretDataKey = Annotated[
    str, _pattern(r"[-._a-zA-Z0-9]{1,253}", "a Secret data key (letters, digits, '-', '_', '.')")
]


class SecretKeySelector(ConfigModel):
    """A key of a Kubernetes Secret in the workload's namespace."""

    name: KubernetesSecretName
    """Name of the Secret (created outside this stack, e.g. by an external-secrets operator)."""
    key: SecretDataKey
    """Key of the Secret's data."""


class EnvFromSecret(ConfigModel):
    """An environment value the kubelet reads from a Kubernetes Secret when the pod starts."""

    secret_key_ref: SecretKeySelector
    """The Secret and key, e.g. {name: hf-token, key: token}."""


class EnvFromConfigSecret(ConfigModel):
    """An environment value from one of this stack's Pulumi config secrets (``secrets``).

    The value is stored encrypted in the stack file and the Pulumi state, and reaches the pod
    through a Kubernetes Secret the stack creates (never in the PathwaysJob object itself)."""

    config_secret: SecretName
    """Name of the entry of ``secrets``."""


EnvValue = PlainEnvValue | EnvFromSecret | EnvFromConfigSecret
# Names that hold credentials by convention; their values must come from a secret form.
_CREDENTIAL_NAME = re.compile(r"(^|.*_)(TOKEN|KEY)$|PASSWORD|PASSWD|SECRET|CREDENTIAL", re.I)


def env_issues(env: dict[str, EnvValue], key: str = "env") -> list[ConfigIssue]:
    """Credentials in plain text, and the size of all plain values together."""
    issues = [
        ConfigIssue(
            f"{key}.{name}",
            "looks like a credential, so it may not be plain text (it would be readable in the "
            "stack file, the plan and the PathwaysJob); use {configSecret: NAME} (a Pulumi "
            "config secret under `secrets`) or {secretKeyRef: {name: SECRET, key: KEY}} (a "
            "Kubernetes Secret)",
        )
        for name, value in env.items()
        if isinstance(value, str) and _CREDENTIAL_NAME.search(name)
    ]
    plain = [v for v in env.values() if isinstance(v, str)]
    if problem := grammars.env_total_problem(plain):
        issues.append(ConfigIssue(key, problem))
    return issues


class CustomComponentConfig(ConfigModel):
    """Replace the image of, or pass flags/env to, one Pathways component."""

    type: ComponentType
    """pathways_server, worker, proxy_server or colocated_python_sidecar."""
    image: ImageReference | None = None
    """Image to use instead of the one pathwaysVersion selects."""
    flags: list[Flag] = []
    """Extra command-line flags (one line each)."""
    env: dict[EnvName, EnvValue] = {}
    """Extra environment variables: text, {secretKeyRef: ...} or {configSecret: NAME}."""

    @model_validator(mode="after")
    def _env(self) -> CustomComponentConfig:
        if issues := env_issues(self.env):
            raise KeyedError(issues)
        return self


JobName = Annotated[str, AfterValidator(lambda v: _job_name(v))]


def _job_name(value: str) -> str:
    problem = job_name_problem(value)
    if problem:
        raise ValueError(problem)
    return value


class PathwaysDeployment(ConfigModel):
    """What every PathwaysJob of the stack names: itself, its namespace and its TPU pool."""

    name: JobName
    """PathwaysJob name: at most 22 lowercase letters, digits or '-', starting with a letter."""
    team: DnsLabel = "pathways"
    """Team (namespace) it runs in; one of `teams`."""
    pool: DnsLabel
    """TPU pool of this stack the workers run on (type and topology come from it)."""
    slices: StrictInt = Field(1, ge=1, le=256)
    """Number of slices (at most the pool's slices)."""
    pathways_version: ImageTag | None = None
    """Pathways image tag (default: latest)."""
    max_restarts: StrictInt | None = Field(None, ge=0, le=INT32_MAX)
    """Restarts of the whole job before it fails."""
    custom_components: list[CustomComponentConfig] = Field([], max_length=4)
    """Up to 4 component overrides, one per type (e.g. pinned images)."""

    @field_validator("custom_components")
    @classmethod
    def _one_per_type(cls, components: list[CustomComponentConfig]) -> list[CustomComponentConfig]:
        types = Counter(c.type for c in components)
        repeated = [f"type {t.value!r} appears {n} times" for t, n in types.items() if n > 1]
        if repeated:
            raise ValueError("; ".join(repeated) + "; at most once each")
        return components


class WorkloadConfig(PathwaysDeployment):
    """A Pathways workload on one TPU pool of the stack; becomes one PathwaysJob."""

    mode: WorkloadMode = WorkloadMode.TRAINING
    """training (head on the CPU pool), inference (head colocated with workers) or headless."""
    image: ImageReference | None = None
    """User container image (training and inference)."""
    command: list[str] = []
    """User command; wrapped so SIGTERM reaches it and the pod waits for it to exit."""
    env: dict[EnvName, EnvValue] = {}
    """Environment of the user container: text (at most 32 KiB each, 256 KiB together), a
    Kubernetes Secret {secretKeyRef: {name, key}} or a config secret {configSecret: NAME}.
    Credential-like names (*_TOKEN, *_KEY, *PASSWORD*, *SECRET*) must use a secret form."""
    resources: ContainerResources = ContainerResources()
    """User container CPU and memory; must fit next to the Pathways head on one node."""
    priority: Priority | None = None
    """Priority class (needs addons.kueue.enabled, which installs the classes)."""
    max_slice_restarts: StrictInt | None = Field(None, ge=0, le=INT32_MAX)
    """Restarts of one slice (elastic training)."""
    elastic_slices: StrictInt | None = Field(None, ge=0, le=INT32_MAX)
    """Slices the job may lose and keep running (elastic training)."""
    termination_grace_period_seconds: StrictInt | None = Field(None, ge=0, le=86400)
    """Time a preempted pod gets to checkpoint before it is killed."""
    pathways_dir: GcsPath | None = None
    """Scratch path; default gs://<scratch bucket>/<team>/<name>. Must be under the team's
    prefix gs://<scratch bucket>/<team>/ (the only part of the bucket its grants reach)."""
    node_selector: dict[LabelKey, LabelValue] = {}
    """Extra node labels the workers must match (e.g. a reservation name)."""
    enable_metrics_collection: StrictBool = False
    """Let the controller collect Pathways metrics."""

    @model_validator(mode="after")
    def _mode_fields(self) -> WorkloadConfig:
        issues = []
        headless = self.mode is WorkloadMode.HEADLESS
        if headless and (self.image or self.command):
            key = "image" if self.image else "command"
            issues.append(ConfigIssue(key, "headless workloads have no user container; remove it"))
        if not headless and not self.image:
            issues.append(ConfigIssue("image", f"required for mode {self.mode.value}"))
        if not headless and not self.command:
            issues.append(ConfigIssue("command", f"required for mode {self.mode.value}"))
        issues += [
            ConfigIssue(f"env.{k}", "is set by the PathwaysJob controller; remove it")
            for k in self.env
            if k in CONTROLLER_ENV
        ]
        issues += env_issues(self.env)
        if self.elastic_slices is not None and self.elastic_slices > self.slices:
            issues.append(
                ConfigIssue("elasticSlices", f"{self.elastic_slices} exceeds slices {self.slices}")
            )
        if issues:
            raise KeyedError(issues)
        return self


class SharedServiceConfig(PathwaysDeployment):
    """A long-running headless Pathways deployment that many clients share (pathwaysutils)."""

    max_restarts: StrictInt | None = Field(10, ge=0, le=INT32_MAX)
    """Restarts of the whole service before it fails; the controller's default is none, so a
    long-lived service would end at its first preemption or host failure."""


class WaitForRunningConfig(ConfigModel):
    """Make `pulumi up` wait until PathwaysJobs really run (their Running condition), and fail
    with the job's status when they do not in time."""

    jobs: StrictBool = False
    """Also wait for workloads (shared services always wait)."""
    timeout_seconds: StrictInt = Field(1800, ge=60, le=86400)
    """How long to wait before `pulumi up` fails (slices on flex-start or behind a queue may
    need longer)."""


class StackConfig(ConfigModel):
    """Everything under the ``tpu-pathways:`` namespace of one stack file."""

    environment: Environment = Environment.DEV
    """dev, staging or production. Production protects the cluster, pools and bucket."""
    team: Label = ""
    """Team label put on every node pool and bucket."""
    gcp: GcpConfig
    """Project, region and zone."""
    cluster: ClusterConfig
    """The GKE cluster (or the existing one to target)."""
    cpu_pool: CpuPoolConfig = CpuPoolConfig()
    """The CPU pool for Pathways head pods."""
    system_pool: SystemPoolConfig = SystemPoolConfig()
    """The pool for kube-system and the controllers (stacks that own their cluster)."""
    tpu_pools: list[TpuPoolConfig] = []
    """TPU pools; each is one or more identical slices."""
    addons: AddonsConfig = AddonsConfig()
    """JobSet, PathwaysJob controller and Kueue installs."""
    scratch_bucket: ScratchBucketConfig = ScratchBucketConfig()
    """The Pathways scratch bucket."""
    teams: list[TeamConfig] = [TeamConfig(name="pathways")]
    """Team namespaces (each with its workload service account and Kueue LocalQueue)."""
    workloads: list[WorkloadConfig] = []
    """Pathways workloads (PathwaysJobs)."""
    shared_services: list[SharedServiceConfig] = []
    """Shared Pathways services."""
    wait_for_running: WaitForRunningConfig = WaitForRunningConfig()
    """Whether and how long `pulumi up` waits for PathwaysJobs to be Running."""
    pricing: PricingOverrides = PricingOverrides()
    """Price overrides for the plan's cost estimate (e.g. your reservation's chip-hour rate)."""
    owner: Annotated[str, AfterValidator(lambda v: _owner_ref(v))] | None = None
    """Team stack: the stack that owns the cluster (a stack name of this project, or
    <org>/<project>/<stack>). Its pools, bucket and queues are read from it (StackReference);
    this stack then owns only its team namespaces and what is in them."""

    _owner: SharedCluster | None = PrivateAttr(None)

    secrets: dict[SecretName, SecretStr] = {}
    """Pulumi config secrets that env values name with {configSecret: NAME}; set each with
    `pulumi config set --secret --path 'tpu-pathways:secrets.NAME' VALUE` (stored encrypted;
    the offline plan, which has no key, shows them as [secret])."""

    @field_validator("secrets", mode="before")
    @classmethod
    def _secret_texts(cls, value: object) -> object:
        """Type errors here must not echo the value, as pydantic's messages would."""
        if not isinstance(value, dict):
            raise ValueError("must be a mapping of names to secret values")
        for name, secret in value.items():
            if not isinstance(secret, str):
                raise KeyedError.at(
                    str(name), f"must be text, not {type(secret).__name__} (value not shown)"
                )
        return value

    @model_validator(mode="after")
    def _cross_checks(self, info: ValidationInfo) -> StackConfig:
        self._owner = (info.context or {}).get("owner") if self.owner is not None else None
        issues = [*self._pool_named_like_cpu_pool(), *self._kueue_quota(), *self._shared_bucket()]
        issues += self._team_quota_issues() + self._ownership_issues()
        issues += self._config_secret_refs() + self._joined_name_collisions()
        issues += self._bucket_name_rules()
        # The workload checks (``checks.workload_issues``) read the pools and the CPU pool, so
        # they run after this model validates (``checks.parse_stack_config``).
        if issues:
            raise KeyedError(issues)
        return self

    @field_validator("tpu_pools")
    @classmethod
    def _unique_pools(cls, pools: list[TpuPoolConfig]) -> list[TpuPoolConfig]:
        _raise_duplicates([p.name for p in pools], "pool")
        return pools

    @field_validator("teams")
    @classmethod
    def _unique_teams(cls, teams: list[TeamConfig]) -> list[TeamConfig]:
        _raise_duplicates([t.name for t in teams], "team")
        return teams

    def _bucket_name_rules(self) -> list[ConfigIssue]:
        """The bucket name, given or derived from project and cluster, against GCS's rules
        (e.g. a cluster named 'google-...' makes a default name GCS refuses)."""
        problem = grammars.bucket_problem(self.bucket_name)
        if problem is None:
            return []
        key = "scratchBucket.name" if self.scratch_bucket.name else "scratchBucket"
        return [ConfigIssue(key, problem)]

    def _joined_name_collisions(self) -> list[ConfigIssue]:
        """Resource names join config names with '-', so distinct entries can meet in one name
        (team 'a' + workload 'b-c' and team 'a-b' + workload 'c'); Pulumi would then see one
        resource, and GKE one node pool."""
        jobs = [(f"workloads[{i}]", (w.team, w.name)) for i, w in enumerate(self.workloads)]
        jobs += [
            (f"sharedServices[{i}]", (s.team, s.name)) for i, s in enumerate(self.shared_services)
        ]
        accounts = [(f"teams[{i}]", (t.name, t.service_account)) for i, t in enumerate(self.teams)]
        slices = {n: i for i, p in enumerate(self.tpu_pools) for n in p.node_pool_names()}
        cpu = self.cpu_pool.name
        issues = _collisions(jobs, "team and name")
        issues += _collisions(accounts, "name and serviceAccount")
        if cpu in slices:
            issues.append(
                ConfigIssue(
                    "cpuPool.name",
                    f"{cpu!r} is also the GKE node pool name of a slice of tpuPools[{slices[cpu]}]"
                    " (slices are named <pool>-<index>); rename one of them",
                )
            )
        return issues

    def _config_secret_refs(self) -> list[ConfigIssue]:
        known = ", ".join(self.secrets) or "none"
        return [
            ConfigIssue(
                f"{key}.{name}",
                f"configSecret {value.config_secret!r} is not an entry of `secrets` (known: "
                f"{known}); set it with pulumi config set --secret --path "
                f"'tpu-pathways:secrets.{value.config_secret}' VALUE",
            )
            for key, env in self.env_maps()
            for name, value in env.items()
            if isinstance(value, EnvFromConfigSecret) and value.config_secret not in self.secrets
        ]

    def env_maps(self) -> list[tuple[str, dict[str, EnvValue]]]:
        """Every env map of the stack with its config key."""
        maps = []
        for i, workload in enumerate(self.workloads):
            maps.append((f"workloads[{i}].env", workload.env))
            maps += [
                (f"workloads[{i}].customComponents[{j}].env", component.env)
                for j, component in enumerate(workload.custom_components)
            ]
        return maps

    def _pool_named_like_cpu_pool(self) -> list[ConfigIssue]:
        taken = {self.cpu_pool.name: "the CPU pool's name"}
        taken.setdefault(self.system_pool.name, "the system pool's name")
        issues = [
            ConfigIssue(f"tpuPools[{i}].name", f"{pool.name!r} is {taken[pool.name]}")
            for i, pool in enumerate(self.tpu_pools)
            if pool.name in taken
        ]
        if self.creates_cluster and self.system_pool.name == self.cpu_pool.name:
            issues.append(
                ConfigIssue("systemPool.name", f"{self.cpu_pool.name!r} is the CPU pool's name")
            )
        return issues

    @property
    def kueue_enabled(self) -> bool:
        """Kueue's setting, or its default: on when the stack owns its cluster."""
        enabled = self.addons.kueue.enabled
        return self.creates_cluster if enabled is None else enabled

    def _shared_bucket(self) -> list[ConfigIssue]:
        """On a cluster another stack owns, the default bucket name is that stack's bucket."""
        bucket = self.scratch_bucket
        if self.creates_cluster or not bucket.create or bucket.name is not None:
            return []
        return [
            ConfigIssue(
                "scratchBucket",
                f"this stack targets an existing cluster, so creating the default bucket "
                f"{self.bucket_name!r} would collide with the owning stack's; set create: false "
                "and name the owner's bucket, or give this stack's own bucket a name",
            )
        ]

    def _kueue_quota(self) -> list[ConfigIssue]:
        expected = self.addons.kueue.tpu_quota
        chips = self.provisioned_chips
        if expected is None or expected == chips:
            return []
        return [
            ConfigIssue(
                "addons.kueue.tpuQuota",
                f"{expected} does not match the {chips} TPU chips the tpuPools provision; the "
                "ClusterQueue quota is computed from the pools, so remove tpuQuota or fix it",
            )
        ]

    def _team_quota_issues(self) -> list[ConfigIssue]:
        """Quotas name shapes the stack provisions and add up to at most what it provisions."""
        kueue, issues = self.addons.kueue, []
        if kueue.team_quotas and not self.kueue_enabled:
            issues.append(ConfigIssue("addons.kueue.teamQuotas", "needs addons.kueue.enabled"))
        _duplicate_quota_teams(
            issues, [q.team for q in kueue.team_quotas], "addons.kueue.teamQuotas"
        )
        provisioned: dict[catalog.TpuShape, int] = {}
        for pool in self.tpu_pools:
            provisioned[pool.shape] = (
                provisioned.get(pool.shape, 0) + pool.slices * pool.shape.chips
            )
        assigned: dict[catalog.TpuShape, int] = {}
        for i, quota in enumerate(kueue.team_quotas):
            for name, chips in quota.chips.items():
                key = f"addons.kueue.teamQuotas[{i}].chips.{name}"
                try:
                    shape = catalog.resolve_accelerator(name)
                except catalog.CatalogError as exc:
                    issues.append(ConfigIssue(key, str(exc)))
                    continue
                if shape not in provisioned:
                    have = ", ".join(sorted(s.accelerator_name for s in provisioned)) or "none"
                    issues.append(ConfigIssue(key, f"no TPU pool of this stack is {name}; {have}"))
                    continue
                assigned[shape] = assigned.get(shape, 0) + chips
        for shape, chips in assigned.items():
            if chips > provisioned[shape]:
                issues.append(
                    ConfigIssue(
                        "addons.kueue.teamQuotas",
                        f"quotas give {chips} {shape.accelerator_name} chips to teams but the "
                        f"pools provision {provisioned[shape]}",
                    )
                )
        return issues

    def _ownership_issues(self) -> list[ConfigIssue]:
        """A team stack owns its namespaces and what is in them, nothing cluster-wide."""
        owner = self._owner
        if self.owner is None:
            return []
        if owner is None:  # parse_stack_config resolves it first; never a user's mistake
            return [ConfigIssue("owner", "the owner stack's outputs were not read")]
        taken = set(owner.team_namespaces)
        return [
            ConfigIssue(
                f"teams[{i}].name",
                f"namespace {team.name!r} belongs to owner stack {owner.owner_stack!r}; "
                "choose another name for this team stack's namespace",
            )
            for i, team in enumerate(self.teams)
            if team.name in taken
        ]

    @property
    def shared_cluster(self) -> SharedCluster | None:
        """The owner's exported contract, for a team stack (``owner:``)."""
        return self._owner

    @property
    def queues_jobs(self) -> bool:
        """Whether Kueue (this stack's, or the owner's) admits the stack's jobs."""
        if self._owner is not None:
            return self._owner.queues.enabled
        return self.kueue_enabled

    @property
    def cluster_location(self) -> str:
        return self.gcp.region if self.cluster.regional else self.gcp.zone

    @property
    def provisioned_chips(self) -> int:
        return sum(pool.slices * pool.shape.chips for pool in self.tpu_pools)

    @property
    def bucket_name(self) -> str:
        default = f"{self.gcp.project}-{self.cluster.name}-pathways"
        return self.scratch_bucket.name or default[:63].rstrip("-_")

    def team_scratch_url(self, team: str) -> str:
        """gs:// URL of the team's own prefix of the scratch bucket (its pathwaysDir default)."""
        return f"gs://{self.bucket_name}/{team_prefix(team)}"

    @property
    def protects_state(self) -> bool:
        """Production stacks protect the cluster, node pools and bucket from deletion."""
        return self.environment is Environment.PRODUCTION

    @property
    def private_nodes(self) -> bool:
        """Private nodes unless the stack says otherwise; production stacks default to them."""
        explicit = self.cluster.private_nodes
        return self.environment is Environment.PRODUCTION if explicit is None else explicit

    @property
    def creates_cluster(self) -> bool:
        return self.cluster.existing is None

    def pool(self, name: str) -> TpuPoolConfig | None:
        return next((p for p in self.tpu_pools if p.name == name), None)


def team_prefix(team: str) -> str:
    """The object-name prefix a team owns in the scratch bucket. The trailing slash keeps team
    ``a`` out of team ``a-b``'s objects."""
    return f"{team}/"


def _owner_ref(value: str) -> str:
    grammars.parse_owner_ref(value)
    return value


def _duplicate_quota_teams(issues: list[ConfigIssue], teams: list[str], key: str) -> None:
    counts = Counter(teams)
    issues += [
        ConfigIssue(f"{key}[{i}].team", f"{team!r} has more than one quota")
        for i, team in enumerate(teams)
        if counts[team] > 1
    ]


def _collisions(entries: list[tuple[str, tuple[str, ...]]], what: str) -> list[ConfigIssue]:
    """Entries whose names, joined with '-', are equal though the names differ (exact
    duplicates are reported by their own checks)."""
    first: dict[str, tuple[str, tuple[str, ...]]] = {}
    issues = []
    for key, parts in entries:
        joined = "-".join(parts)
        if joined in first and first[joined][1] != parts:
            issues.append(
                ConfigIssue(
                    key,
                    f"its {what} join to {joined!r}, as those of {first[joined][0]} do; the "
                    "resources would share one name, so rename one of them",
                )
            )
        first.setdefault(joined, (key, parts))
    return issues


def _raise_duplicates(names: list[str], what: str) -> None:
    counts = Counter(names)
    issues = [
        ConfigIssue(f"[{i}].name", f"{name!r} is used by more than one {what}")
        for i, name in enumerate(names)
        if counts[name] > 1
    ]
    if issues:
        raise KeyedError(issues)


def namespace_values(config: dict[str, Any]) -> dict[str, Any]:
    """Pick this project's keys out of a Pulumi config map ({'tpu-pathways:gcp': ...})."""
    prefix = NAMESPACE + ":"
    return {k[len(prefix) :]: v for k, v in config.items() if k.startswith(prefix)}
