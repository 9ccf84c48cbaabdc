"""The package's input types: TypedDicts of plain values, one per section of the stack file.

Each mirrors a config model of ``components.config.schema`` (its keys, camelCased by the
analyzer, are the stack file's keys; ``tests/provider/test_types.py`` keeps them in step) and
is validated by that model, so a value is refused here with the stack file's message.

No ``from __future__ import annotations`` in this package: Pulumi's analyzer reads the
annotations as objects (``inspect.get_annotations`` without ``eval_str``). A type's name must
not end in ``Args`` nor be a component's name (the generated SDKs name a component's inputs
``<Component>Args`` and a type ``T``'s input ``TArgs``).
"""

from typing import NotRequired, TypedDict

from components.tpu.generations import TpuGeneration
from components.vocabulary import ReleaseChannel


class Gcp(TypedDict):
    """Where the resources live (the stack file's `gcp`)."""

    project: str
    """GCP project ID."""
    region: str
    """Region of the cluster's control plane (regional clusters), subnetwork and bucket."""
    zone: str
    """Zone of every node pool; TPU capacity is zonal."""


class Capacity(TypedDict):
    """How a TPU pool's VMs are obtained: at most one key (default: on demand)."""

    on_demand: NotRequired[bool]
    """Regular on-demand VMs."""
    spot: NotRequired[bool]
    """Spot VMs: cheaper, preemptible at any time."""
    reservation: NotRequired[str]
    """Consume this reservation (a name, or projects/P/reservations/R when shared)."""
    flex_start: NotRequired[bool]
    """Dynamic Workload Scheduler flex-start: nodes come when capacity frees up."""


class TpuPool(TypedDict):
    """A TPU slice shape and how many slices of it: one GKE node pool per slice."""

    name: str
    """Pool name; node pools are named <name>-<slice index>."""
    accelerator: NotRequired[str]
    """XPK accelerator name (v5litepod-16, v5p-4x4x4, v6e-4, v4-16). Or generation+topology."""
    generation: NotRequired[TpuGeneration]
    """TPU generation, with topology."""
    topology: NotRequired[str]
    """Slice topology, e.g. 4x4 or 2x2x2, with generation."""
    machine_type: NotRequired[str]
    """TPU machine type; only for GKE's single-host 8-chip variants (ct5lp-hightpu-8t)."""
    slices: NotRequired[int]
    """Number of slices (default 1)."""
    capacity: NotRequired[Capacity]
    """Capacity type of every slice of the pool."""


class AuthorizedCidr(TypedDict):
    """A network allowed to reach the control plane's IP endpoint."""

    cidr: str
    """The CIDR (never 0.0.0.0/0)."""
    display_name: NotRequired[str]
    """A label shown in the console."""


class Network(TypedDict):
    """The VPC: a dedicated one (default) or an existing one."""

    existing_network: NotRequired[str]
    """An existing VPC of the project to use (with existingSubnetwork); not a Shared VPC
    host's."""
    existing_subnetwork: NotRequired[str]
    """An existing subnetwork of the project in the region (with existingNetwork)."""
    mtu: NotRequired[int]
    """MTU of the created VPC (default 8896)."""
    nodes_cidr: NotRequired[str]
    """Primary range of the created subnetwork (node IPs)."""
    pods_cidr: NotRequired[str]
    """Secondary range for pod IPs."""
    services_cidr: NotRequired[str]
    """Secondary range for service IPs."""


class ClusterSettings(TypedDict):
    """The GKE cluster (the stack file's `cluster`)."""

    name: str
    """GKE cluster name; the names of the cluster's resources start with it."""
    regional: NotRequired[bool]
    """A regional control plane (default true)."""
    release_channel: NotRequired[ReleaseChannel]
    """GKE release channel (default: GKE's)."""
    deletion_protection: NotRequired[bool]
    """GKE's deletion protection of the cluster (default true)."""
    private_nodes: NotRequired[bool]
    """Nodes without external IPs (default: on outside dev)."""
    authorized_networks: NotRequired[list[AuthorizedCidr]]
    """Networks allowed to reach the control plane's IP endpoint (none: DNS endpoint only)."""
    kubernetes_tokens_via_dns: NotRequired[bool]
    """Let the DNS endpoint take Kubernetes service-account tokens."""
    network: NotRequired[Network]
    """The VPC."""
    image_repositories: NotRequired[list[str]]
    """Artifact Registry repositories the nodes may pull from."""
    binary_authorization: NotRequired[bool]
    """Enforce the project's Binary Authorization policy."""


class CpuPool(TypedDict):
    """An autoscaling CPU node pool."""

    name: NotRequired[str]
    """GKE node pool name."""
    machine_type: NotRequired[str]
    """Machine type."""
    min_nodes: NotRequired[int]
    """Autoscaling minimum."""
    max_nodes: NotRequired[int]
    """Autoscaling maximum."""
    disk_size_gb: NotRequired[int]
    """Boot disk size."""


class Addon(TypedDict):
    """An upstream release installed from its manifest."""

    install: NotRequired[bool]
    """Install it (default true)."""
    version: NotRequired[str]
    """Release tag."""
    manifest_url: NotRequired[str]
    """Mirror of the release manifest (with sha256)."""
    sha256: NotRequired[str]
    """sha256 of the manifest: `pulumi up` fails on any other content."""


class Kueue(TypedDict):
    """Kueue, which queues and admits Pathways jobs."""

    enabled: NotRequired[bool]
    """Install Kueue and queue jobs through it."""
    version: NotRequired[str]
    """Release tag."""
    manifest_url: NotRequired[str]
    """Mirror of the release manifest (with sha256)."""
    sha256: NotRequired[str]
    """sha256 of the manifest."""
    tpu_quota: NotRequired[int]
    """TPU chips the cluster queue admits (default: every chip of the pools)."""


class Addons(TypedDict):
    """The in-cluster installs."""

    jobset: NotRequired[Addon]
    """JobSet."""
    pathways_job: NotRequired[Addon]
    """The PathwaysJob controller."""
    kueue: NotRequired[Kueue]
    """Kueue."""


class ResourceQuota(TypedDict):
    """A ResourceQuota on a team's namespace (unset keys: unbounded, or 0 Services)."""

    pods: NotRequired[int]
    """Most pods at a time."""
    cpu: NotRequired[int]
    """Most CPU cores requested in all."""
    memory_gib: NotRequired[int]
    """Most memory (GiB) requested in all."""
    tpu_chips: NotRequired[int]
    """Most TPU chips held."""
    load_balancers: NotRequired[int]
    """LoadBalancer Services (default 0)."""
    node_ports: NotRequired[int]
    """NodePort Services (default 0)."""


class Team(TypedDict):
    """A team namespace and the Kubernetes service account its Pathways pods run as."""

    name: str
    """Namespace name."""
    service_account: NotRequired[str]
    """Kubernetes service account of the team's workloads (default pathways)."""
    group: NotRequired[str]
    """Google group given `edit` in the namespace."""
    resource_quota: NotRequired[ResourceQuota]
    """The namespace's ResourceQuota."""
