"""Storage a stack declares: buckets its workloads mount through Cloud Storage FUSE, the buckets
each team's service account may use, a Managed Lustre file system for checkpoints and Filestore
shares for home directories. The rules of one key live here; the rules against the rest of the
stack (grants, versions, node sizes) in ``resolve/storage_checks.py``.

Why Managed Lustre and not Parallelstore: Parallelstore is "available by invitation only" and a
scratch file system (local SSD, 2+1 erasure coding; docs.cloud.google.com/parallelstore, read
2026-11), while Managed Lustre is generally available (July 2025) with a GKE CSI driver, durable,
and sized from 9,000 GiB (docs.cloud.google.com/managed-lustre/docs/performance-tiers).
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from typing import Annotated

from pydantic import AfterValidator, Field, StrictInt, model_validator

from components.config import grammars
from components.config.schema.base import Cidr, DnsLabel, grammar, pattern
from components.errors import ConfigIssue, KeyedError
from components.model import ConfigModel
from components.pathways.gcs_access import Access
from components.pathways.volumes import CacheMedium, Purpose, option_problem
from components.tpu.quantities import MIB, parse_memory
from components.vocabulary import FilestoreTier, LustreThroughput

# Cloud Storage's naming rules, the one rule every bucket name and gs:// path is checked by.
BucketName = Annotated[str, grammar(grammars.bucket_problem)]

# Paths a container may not mount over (the root is no mount path at all): the shared /tmp
# (Pathways' own hostPath) and the kernel's and the image's system directories.
_RESERVED_PATHS = ("/tmp", "/proc", "/sys", "/dev", "/etc", "/usr", "/bin", "/sbin", "/lib")
_PATH = re.compile(r"(/[A-Za-z0-9._-]+)+")


def _mount_path(value: str) -> str:
    if not _PATH.fullmatch(value) or posixpath.normpath(value) != value or len(value) > 255:
        raise ValueError(
            f"{value[:80]!r} is not a mount path: an absolute path of letters, digits, '.', '_' "
            "and '-' (no '..', no trailing '/'), at most 255 characters"
        )
    reserved = next((r for r in _RESERVED_PATHS if value == r or value.startswith(r + "/")), None)
    if reserved is not None:
        raise ValueError(
            f"{value!r} is or is under {reserved}, which the pod needs for itself (Pathways shares "
            "the node's /tmp); mount somewhere else, e.g. /data or /checkpoints"
        )
    return value


MountPath = Annotated[str, AfterValidator(_mount_path)]
_PREFIX = re.compile(r"[A-Za-z0-9._=-]+(/[A-Za-z0-9._=-]+)*/?")


def _prefix(value: str) -> str:
    parts = value.rstrip("/").split("/")
    if value and (not _PREFIX.fullmatch(value) or ".." in parts or len(value) > 512):
        raise ValueError(
            f"{value[:80]!r} is not a directory of the bucket: a relative path of letters, "
            "digits, '.', '_', '=' and '-' (no leading '/', no '..'), at most 512 characters"
        )
    return value


_OPTION = re.compile(r"[a-z][a-z0-9-]*([:=][^,\s]+)*")


def _mount_option(value: str) -> str:
    if not _OPTION.fullmatch(value) or len(value) > 256:
        raise ValueError(
            f"{value[:80]!r} is not a gcsfuse mount option such as "
            "'file-system:rename-dir-limit:200000' (lowercase name, then ':' or '=' values; no "
            "commas or spaces)"
        )
    if problem := option_problem(value):
        raise ValueError(problem)
    return value


def _cache_size(value: str) -> str:
    size = parse_memory(value)
    if size < MIB or size > 64 * 2**40:
        raise ValueError(f"{value!r} is not a cache size from 1Mi to 64Ti")
    return value


class FileCacheConfig(ConfigModel):
    """gcsfuse's file cache for a mounted bucket (one cache per pod, shared by its volumes)."""

    size: Annotated[str, AfterValidator(_cache_size)]
    """How much the cache may hold ('100Gi'); on disk it must fit the head node's boot disk
    beside the sidecar's 5Gi, in memory the head's node beside its containers."""
    medium: CacheMedium = CacheMedium.DISK
    """disk (the head node's boot disk) or memory (RAM, counted in the pod's memory)."""

    @property
    def mib(self) -> int:
        return -(-parse_memory(self.size) // MIB)


class GcsVolumeConfig(ConfigModel):
    """A Cloud Storage bucket mounted into the user container through GKE's Cloud Storage FUSE
    CSI driver. The mount acts as the team's Kubernetes service account (Workload Identity),
    on either network; the team needs a grant on the bucket (``teams[].buckets``)."""

    name: DnsLabel
    """Name of the volume in the pod (unique in the workload)."""
    bucket: BucketName
    """The bucket (an existing one; the stack does not create it)."""
    prefix: Annotated[str, AfterValidator(_prefix)] = ""
    """Mount only this directory of the bucket ('datasets/imagenet'); default: the whole bucket."""
    access: Access = Access.READ
    """read (mounted read-only) or readWrite."""
    mount_path: MountPath
    """Where the user container sees it ('/data'); not /tmp or a system directory."""
    purpose: Purpose = Purpose.GENERIC
    """trainingData (read-only, metadata cached for good, parallel downloads), checkpoints
    (Google's checkpointing options) or generic (implicit-dirs only): Google's recommended mount
    options for each (docs/storage.md)."""
    file_cache: FileCacheConfig | None = None
    """gcsfuse's file cache (default: none)."""
    mount_options: list[Annotated[str, AfterValidator(_mount_option)]] = Field([], max_length=32)
    """More gcsfuse options, appended to the purpose's ('file-system:rename-dir-limit:200000');
    not the ones GKE refuses or the stack sets (only-dir, file-cache:max-size-mb)."""

    @model_validator(mode="after")
    def _read_only_data(self) -> GcsVolumeConfig:
        if self.purpose is Purpose.TRAINING_DATA and self.access is Access.READ_WRITE:
            raise KeyedError.at(
                "access",
                "trainingData mounts are read-only (their metadata is cached for good, so "
                "writes would not be seen); use purpose generic or checkpoints to write",
            )
        return self


def volume_issues(
    volumes: list[GcsVolumeConfig], headless: bool, file_systems: bool = False
) -> list[ConfigIssue]:
    """A workload's volumes together: none on a headless job (nor ``file_systems``: Lustre or a
    home share), unique names and paths, one cache medium (the pod has one cache volume)."""
    if headless and (volumes or file_systems):
        key = "volumes" if volumes else "lustre"
        return [ConfigIssue(key, "headless workloads have no user container to mount into")]
    issues = []
    for what, values in (
        ("name", [v.name for v in volumes]),
        ("mountPath", [v.mount_path for v in volumes]),
    ):
        counts = Counter(values)
        issues += [
            ConfigIssue(f"volumes[{i}].{what}", f"{value!r} is used by more than one volume")
            for i, value in enumerate(values)
            if counts[value] > 1
        ]
    media = {v.file_cache.medium for v in volumes if v.file_cache is not None}
    if len(media) > 1:
        issues.append(
            ConfigIssue(
                "volumes",
                "file caches on disk and in memory in one workload: the pod has one cache volume "
                "for all its buckets, so give every fileCache the same medium",
            )
        )
    return issues


class TeamBucketConfig(ConfigModel):
    """A bucket (or a prefix of it) the team's Kubernetes service account may use, through
    Workload Identity: what the team's Cloud Storage FUSE volumes (and its pods off the host
    network) act as. Only this team's account is granted; other teams' are not."""

    name: BucketName
    """The bucket (an existing one; the stack only grants access to it)."""
    access: Access = Access.READ
    """read (roles/storage.objectViewer) or readWrite (roles/storage.objectUser)."""
    prefix: Annotated[str, AfterValidator(_prefix)] = ""
    """Only objects under this prefix ('teams/nlp/'): an IAM condition, as on the scratch
    bucket; default: the whole bucket."""


# (minimum GiB, step GiB) per tier, below 1,530,000 GiB (docs.cloud.google.com/managed-lustre/docs/
# performance-tiers and increase-capacity, read 2026-11).
LUSTRE_CAPACITY: dict[LustreThroughput, tuple[int, int]] = {
    LustreThroughput.T1000: (9_000, 9_000),
    LustreThroughput.T500: (18_000, 18_000),
    LustreThroughput.T250: (36_000, 36_000),
    LustreThroughput.T125: (72_000, 72_000),
}
LUSTRE_MAX_GIB = 1_530_000


class LustreConfig(ConfigModel):
    """A Managed Lustre file system in the stack's VPC, mounted by the workloads that name it
    (``workloads[].lustre``). Every team it lists gets a PersistentVolume and a claim
    ``lustre-<name>`` in its namespace; those teams share the whole file system (Lustre has no
    per-team isolation here), other teams get nothing."""

    name: DnsLabel
    """Name (the instance is <cluster>-<name>)."""
    teams: list[DnsLabel] = Field(min_length=1, max_length=64)
    """Teams whose namespaces get it."""
    throughput: LustreThroughput = LustreThroughput.T1000
    """Performance tier in MB/s per TiB: 125, 250, 500 or 1000 (fixed once created)."""
    capacity_gib: StrictInt | None = Field(None, ge=9_000, le=LUSTRE_MAX_GIB)
    """Capacity in GiB, a multiple of the tier's step (1000: 9000, 500: 18000, 250: 36000, 125:
    72000); default: the tier's minimum. It can only grow."""
    filesystem: Annotated[str, pattern(r"[A-Za-z0-9]{1,8}", "1-8 letters or digits")] | None = None
    """File system name clients mount (default: the name's letters and digits, at most 8)."""
    peering_range: Cidr | None = None
    """The range of the VPC's Private Services Access that Managed Lustre takes (a /20 or larger,
    outside the cluster's ranges); default: Google allocates a /20."""
    mount_path: MountPath | None = None
    """Where workloads see it (default /lustre/<name>)."""

    @model_validator(mode="after")
    def _capacity(self) -> LustreConfig:
        minimum, step = LUSTRE_CAPACITY[self.throughput]
        capacity = self.capacity_gib
        if capacity is not None and (capacity < minimum or capacity % step):
            raise KeyedError.at(
                "capacityGib",
                f"{capacity} does not fit throughput {self.throughput.value}: at least {minimum} "
                f"GiB, in steps of {step}",
            )
        return self

    @property
    def capacity(self) -> int:
        return self.capacity_gib or LUSTRE_CAPACITY[self.throughput][0]

    @property
    def filesystem_name(self) -> str:
        return self.filesystem or re.sub(r"[^a-z0-9]", "", self.name)[:8]

    @property
    def path(self) -> str:
        return self.mount_path or f"/lustre/{self.name}"


# (minimum GiB, maximum GiB, step GiB at or above 10240) per tier: pulumi-gcp 10.2
# filestore.InstanceFileSharesArgs.capacity_gb (from the Filestore API reference).
FILESTORE_CAPACITY: dict[FilestoreTier, tuple[int, int, int]] = {
    FilestoreTier.BASIC_HDD: (1024, 65433, 1),
    FilestoreTier.BASIC_SSD: (2560, 65433, 1),
    FilestoreTier.ZONAL: (1024, 102400, 2560),
    FilestoreTier.REGIONAL: (1024, 102400, 2560),
    FilestoreTier.ENTERPRISE: (1024, 10240, 256),
}


class HomeDirsConfig(ConfigModel):
    """Shared home directories: one Filestore instance per team (a team's share is reachable
    from its claim ``home`` only), mounted by the workloads that set ``homeDir: true``."""

    tier: FilestoreTier = FilestoreTier.BASIC_HDD
    """BASIC_HDD, BASIC_SSD, ZONAL, REGIONAL or ENTERPRISE."""
    capacity_gib: StrictInt = Field(1024, ge=1024, le=102400)
    """Capacity of each team's share in GiB, within the tier's range (BASIC_HDD 1024-65433,
    BASIC_SSD 2560-65433, ZONAL and REGIONAL 1024-102400, ENTERPRISE 1024-10240)."""
    mount_path: MountPath = "/home/shared"
    """Where workloads see it."""
    teams: list[DnsLabel] | None = None
    """Teams that get a share (default: every team of the stack)."""

    @model_validator(mode="after")
    def _capacity(self) -> HomeDirsConfig:
        low, high, step = FILESTORE_CAPACITY[self.tier]
        size = self.capacity_gib
        big_step = size >= 10240 or self.tier is FilestoreTier.ENTERPRISE
        if not low <= size <= high or (big_step and size % step):
            steps = f", in steps of {step} GiB from 10240" if step > 1 else ""
            raise KeyedError.at(
                "capacityGib",
                f"{size} is outside what tier {self.tier.value} takes: {low}-{high} GiB{steps}",
            )
        return self
