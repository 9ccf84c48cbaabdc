"""What would not mount, refused before anything is created, each naming its key:

- a bucket volume on a host-network pod where GKE's Cloud Storage FUSE driver cannot serve one
  (older than 1.33.3-gke.1226000, or a version the stack does not know);
- a bucket (or the prefix a volume mounts) the team's service account holds no grant on, or
  only read access to where the volume writes: a FUSE mount acts as that account, and the
  driver checks the bucket before it mounts;
- a file cache larger than the head node's boot disk leaves allocatable (on disk), or than its
  memory beside the head's containers (in memory);
- a Lustre file system or home share the stack does not have, or does not give the team;
- file systems of a stack that cannot create them, and monitoring settings of a stack that does
  not own its cluster.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from components.config.schema import StackConfig, WorkloadConfig, WorkloadMode
from components.errors import ConfigIssue
from components.gke_versions import GCS_FUSE_HOST_NETWORK
from components.pathways.gcs_access import ROLES, access_of, kubernetes_identity
from components.pathways.head_sizing import head_fit_problem
from components.pathways.volumes import (
    CacheMedium,
    sidecar_annotations,
    sidecar_ephemeral_bytes,
    sidecar_requests,
)
from components.resolve.network_ranges import earlier_overlap, taken_ranges
from components.resolve.preflight import bucket_grants
from components.resolve.storage import gcs_volumes, on_host_network, teams_of_home_dirs
from components.tpu.machines import DEFAULT_BOOT_DISK_GIB, ephemeral_allocatable_bytes, tpu_host
from components.tpu.quantities import GIB

Problems = Iterator[tuple[str, str]]


def workload_storage_issues(config: StackConfig) -> list[ConfigIssue]:
    """Each workload's volumes against the stack (keyed ``workloads[i]...``)."""
    issues = []
    for i, workload in enumerate(config.workloads):
        problems = [
            *_host_network(config, workload),
            *_grants(config, workload),
            *_cache(config, workload),
            *_file_systems(config, workload),
        ]
        issues += [ConfigIssue(f"workloads[{i}].{key}", message) for key, message in problems]
    return issues


def _host_network(config: StackConfig, workload: WorkloadConfig) -> Problems:
    if not workload.volumes or not on_host_network(config, workload):
        return
    floor = config.gke_version_floor
    if GCS_FUSE_HOST_NETWORK.supported_by(floor):
        return
    known = f"runs {floor} or later" if floor else "runs a GKE version this stack does not know"
    yield (
        "volumes",
        f"the head runs on the host network, where the Cloud Storage FUSE driver mounts a bucket "
        f"as the pod's service account (hostNetworkPodKSA) only from GKE "
        f"{GCS_FUSE_HOST_NETWORK.since} ({GCS_FUSE_HOST_NETWORK.source}), but the cluster "
        f"{known}; set cluster.existing.gkeVersion to the version it runs (at least "
        f"{GCS_FUSE_HOST_NETWORK.since}), or run the job off the host network (backend: jobset, "
        "hostNetwork: false)",
    )


def _grants(config: StackConfig, workload: WorkloadConfig) -> Problems:
    found = [(i, t) for i, t in enumerate(config.teams) if t.name == workload.team]
    if not found:
        return  # an unknown team is reported by the workload checks
    team_index, team = found[0]
    identity = kubernetes_identity(team.name, team.service_account)
    grants = bucket_grants(config)
    for j, volume in enumerate(workload.volumes):
        prefix = f"{volume.prefix.strip('/')}/" if volume.prefix else ""
        have = access_of(grants, identity, volume.bucket, prefix)
        if have is not None and have.covers(volume.access):
            continue
        where = f"gs://{volume.bucket}/{prefix}"
        if volume.bucket == config.bucket_name:
            yield (f"volumes[{j}].prefix", _outside_own_prefix(config, team.name, where))
            continue
        held = f"only {have.value} access to" if have else "no grant on"
        entry = f"{{name: {volume.bucket}, access: {volume.access.value}"
        entry += f", prefix: {prefix}}}" if prefix else "}"
        yield (
            f"volumes[{j}].bucket",
            f"the mount acts as the service account of team {team.name!r}, {identity} (Workload "
            f"Identity), which has {held} {where}, and needs {volume.access.value} "
            f"({ROLES[volume.access]}); add {entry} to teams[{team_index}].buckets (grants to "
            "the node service account, dataBuckets, do not reach a mount)",
        )


def _outside_own_prefix(config: StackConfig, team: str, where: str) -> str:
    own = config.team_scratch_url(team)
    return (
        f"{where} is the scratch bucket outside the prefix of team {team!r}, {own}, the only part "
        "of it the team's service account reaches (every other prefix belongs to another team); "
        f"mount a prefix under {own}"
    )


def _head_node(config: StackConfig, workload: WorkloadConfig):
    """The machine and boot disk (GiB) of the node the head runs on (None: no size known)."""
    if workload.mode is WorkloadMode.INFERENCE:
        pool = config.pool(workload.pool)
        host = tpu_host(pool.shape.machine_type) if pool else None
        return (host, DEFAULT_BOOT_DISK_GIB, "the TPU hosts' 100 GB boot disk")
    disk = config.cpu_pool.disk_size_gb
    return (config.cpu_pool.machine, disk, f"cpuPool.diskSizeGb {disk}")


def _cache(config: StackConfig, workload: WorkloadConfig) -> Problems:
    volumes = gcs_volumes(config, workload)
    cached = [j for j, v in enumerate(volumes) if v.cache_mib]
    if not cached:
        return
    annotations = sidecar_annotations(volumes)
    machine, disk, disk_key = _head_node(config, workload)
    where = f"volumes[{cached[0]}].fileCache.size"
    if volumes[cached[0]].cache_medium is CacheMedium.DISK:
        needs, free = sidecar_ephemeral_bytes(annotations), ephemeral_allocatable_bytes(disk)
        if needs > free:
            yield (
                where,
                f"the head's Cloud Storage FUSE sidecar needs {needs / GIB:.1f}Gi of the node's "
                f"boot disk (5Gi of its own and the file caches) but {disk_key} leaves "
                f"{free / GIB:.1f}Gi allocatable (GKE keeps 10% and up to 100Gi for the system); "
                "make the caches smaller, use medium: memory, or a larger boot disk",
            )
        return
    user = workload.resources.pod_resources
    if machine is None or head_fit_problem(machine, user) is not None:
        return  # no size known, or the head does not fit anyway (reported by resources)
    if problem := head_fit_problem(machine, user + sidecar_requests(annotations)):
        yield where, f"an in-memory file cache no longer fits the head's node: {problem}"


def _file_systems(config: StackConfig, workload: WorkloadConfig) -> Problems:
    systems = {s.name: s for s in config.lustre}
    paths = {v.mount_path for v in workload.volumes}
    for j, name in enumerate(workload.lustre):
        system = systems.get(name)
        if system is None:
            names = ", ".join(systems) or "none"
            yield f"lustre[{j}]", f"{name!r} is not a Lustre file system of the stack ({names})"
        elif workload.team not in system.teams:
            yield (
                f"lustre[{j}]",
                f"{name!r} is not given to team {workload.team!r} (its teams: "
                f"{', '.join(system.teams)}); add the team to lustre[].teams",
            )
        elif system.path in paths:
            yield f"lustre[{j}]", f"mounts at {system.path}, where a volume is mounted"
        paths.add(system.path if system else "")
    if workload.home_dir and workload.team not in teams_of_home_dirs(config):
        why = "the stack has no homeDirs" if config.home_dirs is None else "homeDirs.teams"
        yield "homeDir", f"team {workload.team!r} has no home share ({why})"
    elif workload.home_dir and config.home_dirs and config.home_dirs.mount_path in paths:
        yield "homeDir", f"mounts at {config.home_dirs.mount_path}, where a volume is mounted"


def stack_storage_issues(config: StackConfig) -> list[ConfigIssue]:
    """The stack's file systems and monitoring against the cluster it has."""
    teams = {t.name for t in config.teams}
    issues = []
    for i, system in enumerate(config.lustre):
        issues += [
            ConfigIssue(f"lustre[{i}].teams[{j}]", f"{team!r} is not a team of this stack")
            for j, team in enumerate(system.teams)
            if team not in teams
        ]
        issues += [ConfigIssue(f"lustre[{i}]", p) for p in _creates_network(config, "Lustre")]
        if system.peering_range and (problem := _peering_problem(config, i, system.peering_range)):
            issues.append(ConfigIssue(f"lustre[{i}].peeringRange", problem))
    if config.home_dirs is not None:
        issues += [
            ConfigIssue(f"homeDirs.teams[{j}]", f"{team!r} is not a team of this stack")
            for j, team in enumerate(config.home_dirs.teams or [])
            if team not in teams
        ]
        issues += [ConfigIssue("homeDirs", p) for p in _creates_network(config, "Filestore")]
    return issues + _observability_issues(config)


def _creates_network(config: StackConfig, what: str) -> list[str]:
    if not config.creates_cluster:
        return [
            f"{what} needs the cluster's CSI driver, a setting of the cluster: declare it in the "
            "stack that creates the cluster"
        ]
    if what == "Lustre" and not config.cluster.network.create:
        return [
            "Managed Lustre reaches the cluster through the VPC's Private Services Access, which "
            "this stack creates only in a VPC it creates; on an existing network, connect it "
            "and create the instance outside the stack"
        ]
    return []


def _peering_problem(config: StackConfig, index: int, cidr: str) -> str | None:
    """A Lustre instance's Private Services Access range against every range the stack takes
    before it (``network_ranges``: the cluster's, the teams' Pod ranges, earlier instances')."""
    if clash := earlier_overlap(taken_ranges(config), f"lustre[{index}].peeringRange"):
        return f"{cidr!r} overlaps {clash.described}"
    if ipaddress.ip_network(cidr).prefixlen > 20:
        return f"{cidr!r} is smaller than the /20 Managed Lustre needs"
    return None


def _observability_issues(config: StackConfig) -> list[ConfigIssue]:
    watched = config.observability
    if watched.model_fields_set and not config.creates_cluster:
        return [
            ConfigIssue(
                "observability",
                "belongs to the stack that creates the cluster (its metrics, dashboard and "
                "alerts cover every team's jobs); remove it here",
            )
        ]
    issues = []
    if watched.scrape_controllers and not watched.managed_prometheus:
        issues.append(
            ConfigIssue(
                "observability.scrapeControllers",
                "needs managedPrometheus: true (PodMonitorings are Managed Service for "
                "Prometheus objects); set scrapeControllers: false, or keep managedPrometheus",
            )
        )
    pending = watched.alerts.pending_too_long
    if "enabled" in pending.model_fields_set and pending.enabled and not config.queues_jobs:
        issues.append(
            ConfigIssue(
                "observability.alerts.pendingTooLong.enabled",
                "jobs wait in Kueue only with addons.kueue.enabled: true; without Kueue there "
                "is nothing to alert on",
            )
        )
    return issues
