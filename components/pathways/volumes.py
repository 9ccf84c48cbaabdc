"""Volumes of a Pathways head pod: Cloud Storage buckets through GKE's Cloud Storage FUSE CSI
driver, and PersistentVolumeClaims (a Managed Lustre or Filestore share). Pure: a volume in, pod
spec pieces and annotations out; ``UserContainer`` puts them in the head's template.

What the driver needs, from GoogleCloudPlatform/gcs-fuse-csi-driver (read at 5fcdc04a, 2026-08)
and GKE's "Cloud Storage FUSE CSI driver" pages (read 2026-11):

- **Injection**: the driver's webhook adds its sidecar (``gke-gcsfuse-sidecar``, running gcsfuse)
  to a pod annotated ``gke-gcsfuse/volumes: "true"``, at creation only
  (pkg/webhook/mutatingwebhook.go). The PathwaysJob controller v0.1.4 gives the head pod the
  PathwaysJob's own annotations and never the template's (google/pathways-job
  internal/controller/pathwaysjob_controller.go, MakePathwaysHeadReplicatedJob), so on that
  backend the annotations go on the PathwaysJob; on the JobSet backend on the head's pod
  template. Workers get no volume on either backend (the controller fixes their pod spec).
- **Native sidecar**: on GKE 1.29.3-gke.1093000 and later the sidecar is an init container with
  ``restartPolicy: Always`` at the front of the init containers (pkg/webhook/injection.go), so it
  starts before the resource manager, the proxy and the user's container, and its requests add
  up with theirs. Its default requests (cmd/webhook/main.go): 250m CPU, 256Mi memory, 5Gi
  ephemeral storage; the ``gke-gcsfuse/*-request``/``*-limit`` annotations set them, a limit of
  ``"0"`` meaning none (pkg/webhook/config.go).
- **Identity**: a mount authenticates as the pod's Kubernetes service account through Workload
  Identity (docs/authentication.md). A pod on the host network gets that too only with the volume
  attribute ``hostNetworkPodKSA: "true"`` (GKE Standard 1.33.3-gke.1226000 and later:
  ``gke_versions.GCS_FUSE_HOST_NETWORK``); without it gcsfuse would act as the node's service
  account, yet the driver's pre-mount bucket check still uses the pod's account
  (pkg/csi_driver/node.go). So every mount here acts as the pod's Kubernetes service account,
  on either network: a team's mounts reach what its own account is granted, never the nodes'.
- **File cache**: one cache volume per pod, ``gke-gcsfuse-cache``, shared by the pod's gcsfuse
  volumes; the webhook adds it as an emptyDir on the node's boot disk (counted against the
  sidecar's ephemeral-storage limit) unless the pod declares one itself: an emptyDir with
  ``medium: Memory`` keeps the cache in RAM (pkg/webhook/sidecar_spec.go).
- **Mount options**: an inline (CSI ephemeral) volume takes them as one comma-separated string,
  ``volumeAttributes.mountOptions``; GKE refuses ``app-name``, ``temp-dir``, ``foreground``,
  ``log-file``, ``log-format``, ``key-file``, ``token-url`` and ``reuse-token-from-url``
  ("Optimize Cloud Storage FUSE CSI driver performance").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from components.pathways.head_sizing import PodResources
from components.tpu.quantities import GIB, MIB, parse_cpu, parse_memory

DRIVER = "gcsfuse.csi.storage.gke.io"
VOLUMES_ANNOTATION = "gke-gcsfuse/volumes"
ANNOTATION_PREFIX = "gke-gcsfuse/"
CACHE_VOLUME = "gke-gcsfuse-cache"
# The sidecar's default requests (cmd/webhook/main.go flags).
SIDECAR_CPU = "250m"
SIDECAR_MEMORY = "256Mi"
SIDECAR_EPHEMERAL_BYTES = 5 * GIB
# GKE refuses these options on its driver; the program writes these itself.
REFUSED_OPTIONS = (
    "app-name",
    "temp-dir",
    "foreground",
    "log-file",
    "log-format",
    "key-file",
    "token-url",
    "reuse-token-from-url",
)
OWNED_OPTIONS = ("only-dir", "file-cache:max-size-mb")


class Purpose(StrEnum):
    """What a bucket is mounted for: it picks Google's recommended mount options."""

    TRAINING_DATA = "trainingData"
    CHECKPOINTS = "checkpoints"
    GENERIC = "generic"


class CacheMedium(StrEnum):
    """Where gcsfuse keeps its file cache."""

    DISK = "disk"
    MEMORY = "memory"


# The options each purpose mounts with, as Google recommends them:
# - every purpose: implicit-dirs (directories that exist only as object prefixes are listed;
#   XPK 1.16's default, xpk/core/storage.py);
# - training data, read-only (GKE "Optimize Cloud Storage FUSE CSI driver performance" and
#   cloud.google.com/storage/docs/cloud-storage-fuse/performance, "read-heavy" workloads):
#   metadata cached without expiry and without size limits, no negative cache, the kernel's list
#   cache kept (read-only mounts only); with a file cache, range reads cached and parallel
#   downloads;
# - checkpoints (gcsfuse's aiml-checkpointing profile as Google's Cloud Storage FUSE skill
#   describes it, references/checkpoint-safety.md): the same metadata cache, no kernel list cache;
#   with a file cache, range reads cached. Not file-system:rename-dir-limit: on a bucket without
#   hierarchical namespace a directory rename is then not atomic, so a checkpointer that renames
#   its temporary directory fails visibly instead of leaving a half-renamed checkpoint after a
#   preemption (use an HNS bucket, or add the option knowingly).
_METADATA_CACHE = (
    "metadata-cache:ttl-secs:-1",
    "metadata-cache:stat-cache-max-size-mb:-1",
    "metadata-cache:negative-ttl-secs:0",
)
PRESETS: Mapping[Purpose, tuple[str, ...]] = {
    Purpose.TRAINING_DATA: (
        "implicit-dirs",
        *_METADATA_CACHE,
        "metadata-cache:type-cache-max-size-mb:-1",
        "file-system:kernel-list-cache-ttl-secs:-1",
    ),
    Purpose.CHECKPOINTS: ("implicit-dirs", *_METADATA_CACHE),
    Purpose.GENERIC: ("implicit-dirs",),
}
CACHED_PRESETS: Mapping[Purpose, tuple[str, ...]] = {
    Purpose.TRAINING_DATA: (
        "file-cache:cache-file-for-range-read:true",
        "file-cache:enable-parallel-downloads:true",
    ),
    Purpose.CHECKPOINTS: ("file-cache:cache-file-for-range-read:true",),
    Purpose.GENERIC: (),
}


@dataclass(frozen=True)
class GcsVolume:
    """A bucket (or one directory of it) mounted into the head pod's user container.

    ``name`` is the pod volume's name; ``cache_mib`` the gcsfuse file cache (0: none), kept on
    ``cache_medium``; ``options``: more gcsfuse mount options. ``host_network``: the pod runs on
    the host network (it then names its Kubernetes service account with hostNetworkPodKSA);
    ``metadata_prefetch``: list the mount's metadata when it mounts (training data; GKE
    1.32.1-gke.1357001 and later); ``metrics``: the driver exports the mount's metrics."""

    name: str
    bucket: str
    mount_path: str
    read_only: bool = True
    prefix: str = ""
    purpose: Purpose = Purpose.GENERIC
    cache_mib: int = 0
    cache_medium: CacheMedium = CacheMedium.DISK
    options: tuple[str, ...] = ()
    host_network: bool = True
    metadata_prefetch: bool = False
    metrics: bool = True

    def mount_options(self) -> list[str]:
        """The gcsfuse options: the purpose's preset, the cache, the directory, then more."""
        options = list(PRESETS[self.purpose])
        if self.purpose is Purpose.TRAINING_DATA and not self.read_only:
            options.remove("file-system:kernel-list-cache-ttl-secs:-1")  # read-only mounts only
        if self.cache_mib:
            options += [f"file-cache:max-size-mb:{self.cache_mib}", *CACHED_PRESETS[self.purpose]]
        if self.prefix:
            options.append(f"only-dir={self.prefix.strip('/')}")
        return [*options, *self.options]

    def pod_volume(self) -> dict[str, Any]:
        """The inline CSI volume (no PersistentVolume: nothing cluster-scoped to share)."""
        attributes = {
            "bucketName": self.bucket,
            "mountOptions": ",".join(self.mount_options()),
            "disableMetrics": "false" if self.metrics else "true",
        }
        if self.host_network:
            attributes["hostNetworkPodKSA"] = "true"
        if self.metadata_prefetch:
            attributes["gcsfuseMetadataPrefetchOnMount"] = "true"
        csi = {"driver": DRIVER, "readOnly": self.read_only, "volumeAttributes": attributes}
        return {"name": self.name, "csi": csi}

    def volume_mount(self) -> dict[str, Any]:
        return _mount(self.name, self.mount_path, self.read_only)


def _mount(name: str, path: str, read_only: bool) -> dict[str, Any]:
    mount: dict[str, Any] = {"name": name, "mountPath": path}
    if read_only:
        mount["readOnly"] = True
    return mount


@dataclass(frozen=True)
class ClaimMount:
    """A PersistentVolumeClaim of the pod's namespace (a Lustre or Filestore share) mounted into
    the user container."""

    name: str
    claim: str
    mount_path: str
    read_only: bool = False

    def pod_volume(self) -> dict[str, Any]:
        claim: dict[str, Any] = {"claimName": self.claim}
        if self.read_only:
            claim["readOnly"] = True
        return {"name": self.name, "persistentVolumeClaim": claim}

    def volume_mount(self) -> dict[str, Any]:
        return _mount(self.name, self.mount_path, self.read_only)


def _total_cache(volumes: Iterable[GcsVolume], medium: CacheMedium) -> int:
    return sum(v.cache_mib for v in volumes if v.cache_medium is medium) * MIB


def memory_cache_volume(volumes: Sequence[GcsVolume]) -> dict[str, Any] | None:
    """The pod's own ``gke-gcsfuse-cache`` when the cache is in memory (sized for every
    volume's cache); None keeps the webhook's emptyDir on the boot disk."""
    size = _total_cache(volumes, CacheMedium.MEMORY)
    if not size:
        return None
    return {"name": CACHE_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": f"{size // MIB}Mi"}}


def sidecar_annotations(volumes: Sequence[GcsVolume]) -> dict[str, str]:
    """What makes the webhook inject the sidecar, sized for the volumes: its default CPU and
    memory requests with no limits (a limit throttles or kills gcsfuse mid-checkpoint), memory
    for an in-memory cache on top, and ephemeral storage (request = limit) for the cache on the
    boot disk on top of the default 5Gi, so the scheduler reserves what the kubelet would
    otherwise evict the pod for. None without a volume."""
    if not volumes:
        return {}
    memory = parse_memory(SIDECAR_MEMORY) + _total_cache(volumes, CacheMedium.MEMORY)
    ephemeral = SIDECAR_EPHEMERAL_BYTES + _total_cache(volumes, CacheMedium.DISK)
    return {
        VOLUMES_ANNOTATION: "true",
        f"{ANNOTATION_PREFIX}cpu-request": SIDECAR_CPU,
        f"{ANNOTATION_PREFIX}cpu-limit": "0",
        f"{ANNOTATION_PREFIX}memory-request": f"{memory // MIB}Mi",
        f"{ANNOTATION_PREFIX}memory-limit": "0",
        f"{ANNOTATION_PREFIX}ephemeral-storage-request": f"{ephemeral // MIB}Mi",
        f"{ANNOTATION_PREFIX}ephemeral-storage-limit": f"{ephemeral // MIB}Mi",
    }


def sidecar_requests(annotations: Mapping[str, str] | None) -> PodResources:
    """The CPU and memory the injected sidecar adds to a pod with these annotations (a native
    sidecar: its requests add up with the containers'); nothing when not injected."""
    annotations = annotations or {}
    if annotations.get(VOLUMES_ANNOTATION, "").lower() != "true":
        return PodResources(0, 0)
    cpu = annotations.get(f"{ANNOTATION_PREFIX}cpu-request", SIDECAR_CPU)
    memory = annotations.get(f"{ANNOTATION_PREFIX}memory-request", SIDECAR_MEMORY)
    return PodResources(parse_cpu(cpu), parse_memory(memory))


def sidecar_ephemeral_bytes(annotations: Mapping[str, str] | None) -> int:
    """The ephemeral storage the injected sidecar requests (0 when not injected)."""
    annotations = annotations or {}
    if annotations.get(VOLUMES_ANNOTATION, "").lower() != "true":
        return 0
    request = annotations.get(f"{ANNOTATION_PREFIX}ephemeral-storage-request")
    return parse_memory(request) if request else SIDECAR_EPHEMERAL_BYTES


def option_problem(option: str) -> str | None:
    """Why a user's mount option cannot be passed (None: it can)."""
    for refused in (*REFUSED_OPTIONS, *OWNED_OPTIONS):
        if option == refused or option.startswith((f"{refused}=", f"{refused}:")):
            why = (
                "GKE's driver refuses it"
                if refused in REFUSED_OPTIONS
                else "the stack sets it (prefix, fileCache.size)"
            )
            return f"{option!r} cannot be set here: {why}"
    return None


def mount_problems(
    pod_spec: Mapping[str, Any], annotations: Mapping[str, str] | None, host_network: bool
) -> list[tuple[str, str]]:
    """Why the FUSE volumes of a head pod (a template written by hand, through the Python API)
    would not mount, as (key under the pod spec, message): no sidecar without the injection
    annotation; on the host network, no mount as the pod's account without hostNetworkPodKSA
    (the driver's bucket check then fails, or gcsfuse acts as the node)."""
    fuse = [(i, v) for i, v in enumerate(pod_spec.get("volumes") or []) if _is_fuse(v.get("csi"))]
    problems = []
    if fuse and (annotations or {}).get(VOLUMES_ANNOTATION, "").lower() != "true":
        problems.append(
            (
                f"volumes[{fuse[0][0]}]",
                f"a Cloud Storage FUSE volume without the annotation {VOLUMES_ANNOTATION}: "
                '"true" on the head pod (on a PathwaysJob: on the PathwaysJob itself, which the '
                "controller copies to the head), so no sidecar would mount it",
            )
        )
    for i, volume in fuse if host_network else []:
        attributes = volume["csi"].get("volumeAttributes") or {}
        if str(attributes.get("hostNetworkPodKSA", "")).lower() != "true":
            problems.append(
                (
                    f"volumes[{i}].csi.volumeAttributes.hostNetworkPodKSA",
                    'must be "true" on a host-network pod: without it the driver checks the '
                    "bucket as the pod's service account yet gcsfuse acts as the node's, so the "
                    "mount fails or reaches what the nodes may",
                )
            )
    return problems


def _is_fuse(csi: Any) -> bool:
    return isinstance(csi, Mapping) and csi.get("driver") == DRIVER
