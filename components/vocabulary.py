"""The shared vocabulary of the config layer and the components: the enums a component takes
and the stack file names, and the naming facts both the preflight and the resources derive.

One home each, so the schema (``config/``) and the Pulumi components (``gke/``, ``addons/``)
import it from below instead of one importing the other. Pure: no Pulumi, no pydantic.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from enum import IntEnum, StrEnum


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


class Priority(StrEnum):
    VERY_LOW = "very-low"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"
    VERY_HIGH = "very-high"


class Isolation(StrEnum):
    """How a team namespace's host-network pods are kept from other teams'."""

    DEDICATED = "dedicated"
    """Only on node pools dedicated to it, with their own node service account."""
    SHARED = "shared"
    """On the cluster's shared pools, with every other team there: they trust each other."""


class HostNetworkPlacement(StrEnum):
    """Where a team namespace's host-network pods may run: the value of its namespace's
    ``HOST_NETWORK_LABEL``, which the admission policy reads."""

    DEDICATED = "dedicated"
    """Only on the nodes dedicated to the namespace (a nodeSelector naming it)."""
    SHARED = "shared"
    """On the cluster's shared pools, with the other teams that declared isolation: shared
    (the taints of dedicated pools keep them out of those)."""
    ALONE = "alone"
    """On the cluster's shared pools as the one team there (it declared nothing)."""
    NONE = "none"
    """Nowhere: the namespace enforces Pod Security baseline."""


class DnsProvider(StrEnum):
    """The cluster's DNS provider, which the team namespaces' DNS egress rule follows."""

    CLOUD_DNS = "cloudDns"
    KUBE_DNS = "kubeDns"


class GoogleApiEgress(StrEnum):
    """Where a team's pods may send HTTPS."""

    PRIVATE_ACCESS = "privateGoogleAccess"
    """private.googleapis.com only: the cluster's VPC resolves Google APIs there."""
    ANY_HTTPS = "anyHttps"
    """Any public address (a VPC this project did not create: its DNS is not known)."""


class WorkloadBackend(StrEnum):
    """What a Pathways workload is created as: a PathwaysJob the controller expands into a
    JobSet, or that JobSet itself (rendered the way XPK 1.16 does; no controller needed)."""

    PATHWAYS_JOB = "pathwaysjob"
    JOBSET = "jobset"


class LustreThroughput(IntEnum):
    """Managed Lustre performance tiers: MB/s per TiB of capacity."""

    T125 = 125
    T250 = 250
    T500 = 500
    T1000 = 1000


class FilestoreTier(StrEnum):
    """Filestore service tiers the CSI driver mounts (docs.cloud.google.com/filestore/docs/
    service-tiers)."""

    BASIC_HDD = "BASIC_HDD"
    BASIC_SSD = "BASIC_SSD"
    ZONAL = "ZONAL"
    REGIONAL = "REGIONAL"
    ENTERPRISE = "ENTERPRISE"


class ExclusionScope(StrEnum):
    """What an exclusion holds back (GKE ``MaintenanceExclusionOptions.Scope``)."""

    NO_UPGRADES = "NO_UPGRADES"
    """No upgrade at all, control plane or nodes (at most 30 days)."""
    NO_MINOR_UPGRADES = "NO_MINOR_UPGRADES"
    """Patches only, on the control plane and the nodes."""
    NO_MINOR_OR_NODE_UPGRADES = "NO_MINOR_OR_NODE_UPGRADES"
    """Control-plane patches only: no node is upgraded, so no TPU slice is recreated."""


class UpgradeStrategy(StrEnum):
    """GKE node pool upgrade strategies (pulumi-gcp ``NodePoolUpgradeSettingsArgs.strategy``)."""

    SURGE = "SURGE"
    BLUE_GREEN = "BLUE_GREEN"


# The default maintenance window: Saturday and Sunday, 00:00-08:00 UTC (64 hours in any 32 days).
# The date is a Saturday; only its time of day matters once the window recurs.
DEFAULT_WINDOW_START = "2025-01-04T00:00:00Z"
DEFAULT_WINDOW_END = "2025-01-04T08:00:00Z"
DEFAULT_RECURRENCE = "FREQ=WEEKLY;BYDAY=SA,SU"

# The apiVersion of Kueue's queue objects; the schema's KueueAddon pairs it with the Kueue
# releases that serve it. kubernetes-sigs/kueue config/components/crd/bases: v1beta2 is served
# from v0.15.0 and the storage version from v0.16.0; v0.17.1 marks v1beta1 deprecated ("Use
# v1beta2 instead"), v0.20 removes it.
KUEUE_API_VERSION = "kueue.x-k8s.io/v1beta2"
KUEUE_API_FIRST_SERVING = (0, 15, 0)
# The names of this project's Kueue queues: an owner stack creates them, its team stacks' jobs
# and LocalQueues name them.
CLUSTER_QUEUE = "cluster-queue"
LOCAL_QUEUE = "multislice-queue"

# XPK's priority classes, lowest to highest (the names workloads may ask for).
PRIORITY_CLASSES: Mapping[Priority, int] = {
    Priority.VERY_LOW: 100,
    Priority.LOW: 250,
    Priority.MEDIUM: 500,
    Priority.HIGH: 750,
    Priority.VERY_HIGH: 1000,
}


# What a team namespace may name unless its config says otherwise: every class but the one that
# preempts every other team's jobs.
TEAM_PRIORITY_CLASSES = (Priority.VERY_LOW, Priority.LOW, Priority.MEDIUM, Priority.HIGH)


def team_cluster_queue_name(team: str) -> str:
    return f"{team}-{CLUSTER_QUEUE}"


def team_cluster_queues(teams: Iterable[str]) -> dict[str, str]:
    """The ClusterQueue of each team with a quota of its own."""
    return {team: team_cluster_queue_name(team) for team in teams}


DEDICATED_SCRATCH_ROOT = "_/"
"""The top-level segment of the scratch bucket under which the teams with dedicated pools keep
their prefixes. Team namespaces are DNS labels (no ``_``), so no shared team's prefix starts
with it, and the shared pools' grant leaves out this one segment whatever the number of
dedicated teams (``pathways.bucket_conditions.shared_nodes_expression``)."""


def team_prefix(team: str, dedicated: bool) -> str:
    """The object-name prefix a team owns in the scratch bucket: ``<team>/``, or
    ``_/<team>/`` for a team with dedicated pools (``DEDICATED_SCRATCH_ROOT``). The trailing
    slash keeps team ``a`` out of team ``a-b``'s objects. Whether a team is dedicated is the
    config's to say (``StackConfig.scratch_prefix``)."""
    return f"{DEDICATED_SCRATCH_ROOT if dedicated else ''}{team}/"


def slice_pool_names(pool: str, slices: int) -> list[str]:
    """The GKE node pools of a TPU pool: slice ``i`` is ``<pool>-<i>``."""
    return [f"{pool}-{i}" for i in range(slices)]


def node_account_id(cluster_name: str) -> str:
    """The node service account's ID: IDs are 6-30 characters, so a cluster name over 24 keeps
    its prefix and gains a hash of the whole name (two long names that share a prefix would
    otherwise meet in one account)."""
    return f"{truncated(cluster_name, 24)}-nodes"


def team_node_account_id(cluster_name: str, team: str) -> str:
    """The ID of the node service account of the pools dedicated to team namespace ``team``:
    ``<cluster>-<team>`` (its prefix and a hash when long) and ``-nodes``."""
    return f"{truncated(f'{cluster_name}-{team}', 24)}-nodes"


def team_node_service_account_email(project: str, cluster_name: str, team: str) -> str:
    return f"{team_node_account_id(cluster_name, team)}@{project}.iam.gserviceaccount.com"


def default_bucket_name(project: str, cluster_name: str) -> str:
    """The scratch bucket's default name: bucket names are at most 63 characters, so a longer
    one keeps its prefix and gains a hash of the whole name."""
    return truncated(f"{project}-{cluster_name}-pathways", 63)


def truncated(name: str, limit: int) -> str:
    """``name`` if it fits ``limit``, else its prefix, '-' and 6 hex digits of its SHA-256:
    names of one prefix stay distinct. Names that fit are unchanged."""
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:6]
    return f"{name[: limit - 7].rstrip('-_.')}-{digest}"


def node_service_account_email(project: str, cluster_name: str) -> str:
    """The email of the node service account a stack that owns its cluster creates."""
    return f"{node_account_id(cluster_name)}@{project}.iam.gserviceaccount.com"


# XPK raises the JobSet controller's memory limit to 1.2 MiB per node, at least 4 GiB
# (xpk src/xpk/core/jobset.py: MEMORY_SIZE_PER_VM, MIN_MEMORY_LIMIT_SIZE): the release
# manifest's default is too small for clusters with many TPU hosts. The installs patch it in;
# the config checks that the system pool's machine can hold it.
_JOBSET_MIB_PER_NODE = 1.2
_JOBSET_MIN_MIB = 4096


def jobset_memory_mib(nodes: int) -> int:
    """The JobSet controller's memory for a cluster of up to ``nodes`` nodes."""
    return max(math.ceil(nodes * _JOBSET_MIB_PER_NODE), _JOBSET_MIN_MIB)


# The claims a team's namespace gets for the stack's file systems (the program creates them,
# workloads mount them), and the instances behind them. Managed Lustre instance IDs and Filestore
# instance names are 1-63 lowercase letters, digits and hyphens (pulumi-gcp 10.2 lustre.Instance,
# filestore.Instance).
HOME_CLAIM = "home"


def lustre_claim(name: str) -> str:
    """The claim of Lustre file system ``name`` in each namespace it is given to."""
    return f"lustre-{name}"


def lustre_instance_id(cluster_name: str, name: str) -> str:
    return truncated(f"{cluster_name}-{name}", 63)


def home_instance_name(cluster_name: str, team: str) -> str:
    """The Filestore instance holding team ``team``'s home share."""
    return truncated(f"{cluster_name}-home-{team}", 63)


def network_project(network: str, project: str) -> str:
    """The project a VPC named as GKE's ``network`` takes it is in: the one its path
    projects/<project>/global/networks/<name> names, else ``project`` (a bare name)."""
    parts = network.split("/")
    if len(parts) == 5 and parts[0] == "projects" and parts[2:4] == ["global", "networks"]:
        return parts[1]
    return project


# A subnetwork's secondary range name: at most 63 characters (GCE resource names).
SUBNET_RANGE_NAME_MAX = 63


def team_pods_range(team: str) -> str:
    """The name of the secondary range the Pods of a team's dedicated pools get addresses
    from, in a subnetwork the stack creates."""
    return truncated(f"pods-{team}", SUBNET_RANGE_NAME_MAX)
