"""The Pulumi program: validated stack config in, components registered, outputs returned.

`__main__.py` (for `pulumi up`) and the offline plan both call `build_stack`, so what the plan
shows is what the engine would be asked to create.

Ordering: node pools and in-cluster installs both wait only for the cluster, so they proceed in
parallel; the PathwaysJob controller waits for JobSet; workloads wait for the controller.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from components.cluster import ClusterTarget, ExistingCluster, GkeCluster
from components.config import StackConfig
from components.cpu_pool import CpuNodePool
from components.installs import ReleaseManifest
from components.kueue import KueueQueues, PriorityClasses
from components.node_config import PoolTarget
from components.pathways_job import PathwaysJob
from components.scratch_bucket import ScratchBucket
from components.teams import TeamNamespace
from components.tpu_pool import TpuNodePool
from components.workloads import (
    SharedPathwaysService,
    config_secrets_object,
    job_labels,
    shared_service_spec,
    workload_endpoints,
    workload_spec,
)


@dataclass
class Installs:
    """What workloads need from the in-cluster installs."""

    pathways_controller: pulumi.Resource | None
    namespaces: dict[str, pulumi.Output[str]]
    # Kueue's queues and priority classes: a queued job must not be created before them.
    queueing: list[pulumi.Resource]


def build_stack(config: StackConfig) -> dict[str, Any]:
    """Register every resource of the stack; returns the stack outputs to export."""
    name = config.cluster.name
    if config.creates_cluster:
        cluster: ClusterTarget = GkeCluster(name, config)
        pools = _node_pools(config, cluster)
    else:
        cluster = ExistingCluster(name, config)
        pools = {}
    installs = _installs(config, cluster)
    bucket = ScratchBucket(f"{name}-scratch", config, config.teams, cluster.control_plane)
    workloads = _workloads(config, cluster, installs)

    outputs: dict[str, Any] = {
        "cluster_name": cluster.cluster_name,
        "cluster_location": cluster.location,
        "cluster_endpoint": cluster.endpoint,
        "kubeconfig": cluster.kubeconfig,
        "tpu_node_pools": {pool: p.node_pool_names for pool, p in pools.items()},
        "tpu_summary": tpu_summary(config),
        "scratch_bucket": bucket.url,
        "team_namespaces": installs.namespaces,
        **workloads,
    }
    if isinstance(cluster, GkeCluster):
        outputs["node_service_account"] = cluster.node_service_account
    return outputs


def _node_pools(config: StackConfig, cluster: GkeCluster) -> dict[str, TpuNodePool]:
    target = PoolTarget(
        project=config.gcp.project,
        zone=config.gcp.zone,
        cluster_name=cluster.cluster_name,
        location=cluster.location,
        service_account=cluster.node_service_account,
        team=config.team,
        protect=config.protects_state,
    )
    name = config.cluster.name
    CpuNodePool(f"{name}-{config.cpu_pool.name}", config.cpu_pool, target)
    return {
        pool.name: TpuNodePool(f"{name}-{pool.name}", pool, target) for pool in config.tpu_pools
    }


def _installs(config: StackConfig, cluster: ClusterTarget) -> Installs:
    name, addons, provider = config.cluster.name, config.addons, cluster.provider
    after_jobset: list[pulumi.Resource] = []
    if addons.jobset.install:
        jobset = ReleaseManifest(
            f"{name}-jobset", addons.jobset, provider, depends_on=cluster.control_plane
        )
        after_jobset = [jobset.manifest]
    controller = None
    if addons.pathways_job.install:
        # The controller watches JobSets, and JobSet's webhooks fail closed until it is ready.
        controller = ReleaseManifest(
            f"{name}-pathways-job",
            addons.pathways_job,
            provider,
            depends_on=[*cluster.control_plane, *after_jobset],
        ).manifest
    queueing: list[pulumi.Resource] = []
    namespaces = {
        team.name: TeamNamespace(f"{name}-{team.name}", team, provider).namespace
        for team in config.teams
    }
    if addons.kueue.enabled:
        kueue = ReleaseManifest(
            f"{name}-kueue", addons.kueue, provider, depends_on=cluster.control_plane
        )
        queueing = [
            KueueQueues(f"{name}-queues", config, namespaces, provider, kueue.manifest),
            PriorityClasses(f"{name}-priorities", provider),
        ]
    return Installs(controller, namespaces, queueing)


def _workloads(config: StackConfig, cluster: ClusterTarget, installs: Installs) -> dict[str, Any]:
    """PathwaysJobs and shared services; outputs say how to reach each."""
    prefix, labels = config.cluster.name, job_labels(config)
    common = {
        "provider": cluster.provider,
        "controller_install": installs.pathways_controller,
        "labels": labels,
    }
    jobs = {}
    for workload in config.workloads:
        logical = f"{prefix}-{workload.team}-{workload.name}"
        namespace = installs.namespaces[workload.team]
        secret = config_secrets_object(
            f"{logical}-config-secrets", config, workload, namespace, cluster.provider
        )
        PathwaysJob(
            logical,
            name=workload.name,
            namespace=namespace,
            spec=workload_spec(config, workload),
            prerequisites=[*installs.queueing, *([secret] if secret else [])],
            **common,
        )
        endpoints = workload_endpoints(workload)
        # Names are unique per namespace only, so outputs are keyed by both.
        job = jobs[f"{workload.team}/{workload.name}"] = {"proxy": endpoints.proxy}
        if endpoints.port_forward:
            job["port_forward"] = endpoints.port_forward
    services = {}
    for entry in config.shared_services:
        pool = config.pool(entry.pool)
        service = SharedPathwaysService(
            f"{prefix}-{entry.team}-{entry.name}",
            job_name=entry.name,
            namespace=installs.namespaces[entry.team],
            spec=shared_service_spec(config, entry),
            instance_type=pool.shape.pathways_instance_type,
            prerequisites=installs.queueing,
            **common,
        )
        services[f"{entry.team}/{entry.name}"] = {
            "pathways_service": service.pathways_service,
            "expected_tpu_instances": service.expected_tpu_instances,
        }
    outputs: dict[str, Any] = {}
    if jobs:
        outputs["workloads"] = jobs
    if services:
        outputs["shared_services"] = services
    return outputs


def tpu_summary(config: StackConfig) -> dict[str, dict[str, int]]:
    """Slices, hosts and chips per TPU generation: what the stack provisions. A stack on an
    existing cluster provisions none (its pools belong to the owning stack)."""
    summary: dict[str, dict[str, int]] = {}
    for pool in config.tpu_pools if config.creates_cluster else []:
        shape = pool.shape
        empty = {"pools": 0, "slices": 0, "hosts": 0, "chips": 0}
        row = summary.setdefault(shape.generation.value, empty)
        row["pools"] += 1
        row["slices"] += pool.slices
        row["hosts"] += pool.slices * shape.hosts
        row["chips"] += pool.slices * shape.chips
    return dict(sorted(summary.items()))
