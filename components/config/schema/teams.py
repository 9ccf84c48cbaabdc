"""Team namespaces and the scratch bucket they share."""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    AfterValidator,
    Field,
    StrictBool,
    StrictInt,
    model_validator,
)

from components.config.schema.base import MAX_CHIPS, DnsLabel, GroupEmail
from components.config.schema.storage import BucketName, TeamBucketConfig
from components.errors import KeyedError
from components.model import ConfigModel
from components.pathways.gcs_access import Access
from components.vocabulary import TEAM_PRIORITY_CLASSES, Isolation, Priority


class ScratchBucketConfig(ConfigModel):
    """The GCS bucket Pathways keeps its scratch state in (every PathwaysJob's pathwaysDir)."""

    name: BucketName | None = None
    """Bucket name; default <project>-<cluster>-pathways (over 63 characters: its first 56 and
    a hash of the whole)."""
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


class DataBucketConfig(ConfigModel):
    """A bucket the stack's Pathways pods use for data or checkpoints. They run on the host
    network as the node service account, which gets a role on this bucket only."""

    name: BucketName
    """Bucket name (an existing bucket; this stack only grants access to it)."""
    access: Access = Access.READ
    """read (roles/storage.objectViewer: datasets, prompts) or readWrite
    (roles/storage.objectUser: checkpoints, outputs)."""
    team: Annotated[DnsLabel, AfterValidator(lambda v: _team_namespace(v))] | None = None
    """The team namespace whose dedicated pools get the grant (their node service account);
    unset: the shared pools'. In a team stack, one of its team namespaces with dedicated
    pools."""


# Namespaces Kubernetes, GKE and the installs own: a team stack would own (and on destroy
# delete) them and grant their service accounts bucket access. GKE manages gmp-public and
# gmp-system (Managed Service for Prometheus) and the gke-* namespaces (gke-gmp-system,
# gke-managed-*): cloud.google.com/kubernetes-engine/docs/concepts/namespaces-overview
# ("GKE-managed namespaces").
SYSTEM_NAMESPACES = (
    "default",
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "gmp-public",
    "gmp-system",
    "jobset-system",
    "pathways-job-system",
    "kueue-system",
)
SYSTEM_NAMESPACE_PREFIXES = ("gke-", "kube-", "gmp-")


def _team_namespace(value: str) -> str:
    if value in SYSTEM_NAMESPACES or value.startswith(SYSTEM_NAMESPACE_PREFIXES):
        raise ValueError(
            f"{value!r} is a system namespace (Kubernetes, GKE or an install owns "
            f"{', '.join(SYSTEM_NAMESPACES)} and gke-*/kube-*/gmp-*); choose a team name"
        )
    return value


TeamNamespace = Annotated[DnsLabel, AfterValidator(_team_namespace)]
"""A team's namespace: a DNS label that is no system namespace."""


def _service_account(value: str) -> str:
    if value == "default":
        raise ValueError(
            "'default' is the service account every pod of the namespace runs as when it names "
            "none, so each such pod would get the team's bucket prefix; choose another name "
            "(default pathways)"
        )
    return value


class TeamResourceQuotaConfig(ConfigModel):
    """What a team's namespace may hold (its ResourceQuotas). Pathways pods run on the host
    network, so a quota bounds how many of them and what they request, not what they reach.
    Every limit has a default, the team's share: what the pools its pods may land on hold (its
    dedicated pools; else the cluster's shared ones). CPU and memory bound the pods that request
    or limit CPU or memory (each of their containers then has to request both); a pod that
    names neither (the PathwaysJob controller's TPU workers) reserves none on a node and counts
    only towards pods. Kueue's teamQuotas already bound the chips of queued jobs; tpuChips also
    bounds pods that bypass Kueue."""

    pods: StrictInt | None = Field(None, ge=1, le=100_000)
    """Most pods (not finished) at a time; unset: 110 per node of the team's pools at their
    largest (GKE's default maximum pods per node)."""
    cpu: StrictInt | None = Field(None, ge=1, le=10_000_000)
    """Most CPU cores the team's pods may request in all (requests.cpu of the pods that request
    or limit CPU or memory); unset: the allocatable CPU of the team's pools at their largest."""
    memory_gib: StrictInt | None = Field(None, ge=1, le=100_000_000)
    """Most memory (GiB) the team's pods may request in all (requests.memory, of the same
    pods); unset: the allocatable memory of the team's pools at their largest."""
    tpu_chips: StrictInt | None = Field(None, ge=0, le=MAX_CHIPS)
    """Most TPU chips (requests.google.com/tpu) the team's pods may hold; unset: the team's
    share (its dedicated pools' chips; else its Kueue teamQuota and what it may borrow; else
    the shared pools' chips), so a pod that went around Kueue still cannot take more."""
    load_balancers: StrictInt = Field(0, ge=0, le=1000)
    """LoadBalancer Services (default 0: nothing of the team is exposed outside the VPC)."""
    node_ports: StrictInt = Field(0, ge=0, le=1000)
    """NodePort Services (default 0: Pathways pods already listen on the nodes' ports)."""
    ingresses: StrictInt = Field(0, ge=0, le=1000)
    """Ingresses (default 0: on GKE each one is an external HTTP(S) load balancer, which would
    expose the team's pods outside the VPC as a LoadBalancer Service would)."""


class TeamConfig(ConfigModel):
    """A team namespace and the Kubernetes service account its Pathways pods run as."""

    name: TeamNamespace
    """Namespace name (not a system namespace such as default, kube-system, gmp-* or gke-*)."""
    service_account: Annotated[DnsLabel, AfterValidator(_service_account)] = "pathways"
    """Kubernetes service account of the team's workloads (gets read/write on the team's prefix
    gs://<scratch bucket>/<team>/ of the bucket, gs://<scratch bucket>/_/<team>/ for a team with
    dedicated pools); not 'default', which every pod of the namespace without one runs as."""
    group: GroupEmail | None = None
    """Google group whose members may manage the team's namespace (a RoleBinding of the `edit`
    ClusterRole). GKE honours groups only with Google Groups for RBAC: the owner stack's
    `cluster.securityGroup` (gke-security-groups@<your domain>) must contain this group."""
    resource_quota: TeamResourceQuotaConfig = TeamResourceQuotaConfig()
    """The ResourceQuotas of the team's namespace (default: no LoadBalancer or NodePort
    Services; TPU chips at most the team's share: its dedicated pools' chips, its Kueue quota
    and what it may borrow, or the shared pools' chips; pods, CPU and memory at most what the
    pools its pods may land on hold)."""
    isolation: Isolation | None = None
    """Where the team's host-network Pathways pods (every pod of a PathwaysJob, which acts as
    its node's service account) may run. dedicated: only on pools the owner stack dedicates to
    it (tpuPools[].team, teamCpuPools), none if it has none. shared: on the cluster's shared
    pools, with every other team there (the plan prints them: these teams trust each other with
    their data and pods). Unset: dedicated when pools are dedicated to it; else shared when it
    is the only team of a stack that owns its cluster, and no host network at all otherwise
    (its namespace then enforces Pod Security baseline)."""
    priority_classes: list[Priority] = list(TEAM_PRIORITY_CLASSES)
    """The PriorityClasses the team's pods and jobs may name (default: all but very-high, which
    preempts every other team's jobs); the admission policy refuses others."""
    buckets: list[TeamBucketConfig] = Field([], max_length=32)
    """Existing buckets (or prefixes of them) the team's service account may read or write,
    through Workload Identity: what its Cloud Storage FUSE volumes act as. No other team's
    account gets them. Never the scratch bucket: the team has its own prefix there already."""
