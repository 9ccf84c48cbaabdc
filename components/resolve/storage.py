"""A workload's storage as the pure model takes it: its ``volumes`` as Cloud Storage FUSE volumes
(``pathways.volumes.GcsVolume``), its Lustre file systems and home share as claims of its
namespace, and the annotations that inject the FUSE sidecar; the grants each team's service
account holds on its own buckets. The program and the preflight both read these (pure)."""

from __future__ import annotations

from components.config.schema import StackConfig, WorkloadConfig
from components.config.schema.storage import GcsVolumeConfig
from components.gke_versions import GCS_FUSE_METADATA_PREFETCH
from components.pathways.gcs_access import Access, BucketGrant, kubernetes_identity
from components.pathways.volumes import (
    CacheMedium,
    ClaimMount,
    GcsVolume,
    Purpose,
    sidecar_annotations,
)
from components.vocabulary import HOME_CLAIM, WorkloadBackend, lustre_claim

GCS_VOLUME_PREFIX = "gcs-"


def on_host_network(config: StackConfig, workload: WorkloadConfig) -> bool:
    """Whether the workload's head runs on the host network: always under the PathwaysJob
    controller v0.1.4, as asked on the JobSet backend."""
    return config.backend_of(workload) is WorkloadBackend.PATHWAYS_JOB or workload.host_network


def gcs_volume(config: StackConfig, workload: WorkloadConfig, volume: GcsVolumeConfig) -> GcsVolume:
    cache = volume.file_cache
    training = volume.purpose is Purpose.TRAINING_DATA
    return GcsVolume(
        name=f"{GCS_VOLUME_PREFIX}{volume.name}",
        bucket=volume.bucket,
        mount_path=volume.mount_path,
        read_only=volume.access is Access.READ,
        prefix=volume.prefix,
        purpose=volume.purpose,
        cache_mib=cache.mib if cache else 0,
        cache_medium=cache.medium if cache else CacheMedium.DISK,
        options=tuple(volume.mount_options),
        host_network=on_host_network(config, workload),
        metadata_prefetch=training
        and GCS_FUSE_METADATA_PREFETCH.supported_by(config.gke_version_floor),
        metrics=config.observability.gcs_fuse_metrics,
    )


def gcs_volumes(config: StackConfig, workload: WorkloadConfig) -> list[GcsVolume]:
    return [gcs_volume(config, workload, v) for v in workload.volumes]


def claim_mounts(config: StackConfig, workload: WorkloadConfig) -> list[ClaimMount]:
    """The workload's Lustre file systems and home share, as claims of its namespace (the stack
    creates them: ``lustre-<name>`` and ``home``)."""
    systems = {s.name: s for s in config.lustre}
    mounts = [
        ClaimMount(lustre_claim(name), lustre_claim(name), systems[name].path)
        for name in workload.lustre
        if name in systems
    ]
    if workload.home_dir and config.home_dirs is not None:
        mounts.append(ClaimMount(HOME_CLAIM, HOME_CLAIM, config.home_dirs.mount_path))
    return mounts


def gcsfuse_annotations(config: StackConfig, workload: WorkloadConfig) -> dict[str, str]:
    """What injects the FUSE sidecar into the workload's head (none without a bucket volume):
    on the PathwaysJob (the controller copies its annotations to the head pod), or on the
    JobSet's head pod template."""
    return sidecar_annotations(gcs_volumes(config, workload))


def team_bucket_grants(config: StackConfig) -> list[BucketGrant]:
    """Each team's ``buckets``, granted to its own Kubernetes service account (Workload
    Identity): what its FUSE volumes and its pods off the host network act as."""
    return [
        BucketGrant(
            kubernetes_identity(team.name, team.service_account),
            bucket.name,
            bucket.access,
            bucket.prefix,
        )
        for team in config.teams
        for bucket in team.buckets
    ]


def teams_of_home_dirs(config: StackConfig) -> list[str]:
    """The teams that get a Filestore home share (its ``teams``, else every team)."""
    if config.home_dirs is None:
        return []
    listed = config.home_dirs.teams
    return list(listed) if listed is not None else [t.name for t in config.teams]


def mounts_summary(config: StackConfig, workload: WorkloadConfig) -> list[str]:
    """What the workload's user container mounts, as the plan's summary lists it."""
    lines = [
        f"{v.mount_path} gs://{v.bucket}/{v.prefix.strip('/')} ({v.access.value}, "
        f"{v.purpose.value}, as the team's service account)"
        for v in workload.volumes
    ]
    lines += [f"{c.mount_path} claim {c.claim}" for c in claim_mounts(config, workload)]
    return lines
