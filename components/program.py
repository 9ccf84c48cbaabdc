"""The Pulumi program: validated stack config in, components registered, outputs returned.

`__main__.py` (for `pulumi up`) and the offline plan both call `build_stack`, so what the plan
shows is what the engine would be asked to create.

Ordering: node pools and in-cluster installs both wait only for the cluster, so they proceed in
parallel; the PathwaysJob controller waits for JobSet; workloads wait for the controller.

A team stack (``owner:``) reads its owner's ``shared_cluster`` output through a StackReference
before anything else registers (``read_owner_contract``; see ``components/shared_cluster.py``)
and then creates only namespaced objects in its own namespaces: namespaces, service accounts,
LocalQueues pointing at the owner's ClusterQueue, bucket grants and its workloads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from components.cluster import ClusterTarget, ExistingCluster, GkeCluster
from components.config import StackConfig
from components.cpu_pool import CpuNodePool
from components.errors import ConfigError, ConfigIssue
from components.installs import ReleaseManifest
from components.kueue import KueueQueues, LocalQueues, PriorityClasses
from components.node_config import PoolTarget
from components.pathways_job import PathwaysJob
from components.scratch_bucket import ScratchBucket
from components.shared_cluster import (
    OUTPUT,
    SharedCluster,
    export_contract,
    owner_reference,
    read_owner,
)
from components.teams import TeamNamespace
from components.tpu_pool import TpuNodePool
from components.workloads import (
    SharedPathwaysService,
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


def read_owner_contract(owner: str) -> SharedCluster:
    """A team stack's first registration: the StackReference to its owner, read and validated."""
    return read_owner(owner_reference(owner, owner), owner)


def build_stack(config: StackConfig, owner_read: bool = False) -> dict[str, Any]:
    """Register every resource of the stack; returns the stack outputs to export.

    For a team stack, ``owner_read`` says the caller already read the owner's contract through
    the StackReference (``pulumi up``: it had to, to validate the config); otherwise it is read
    here first and must be the contract the config was validated with (the offline plan)."""
    read_here = config.owner is not None and not owner_read
    if read_here and read_owner_contract(config.owner) != config.shared_cluster:
        raise ConfigError(
            [ConfigIssue("owner", f"stack {config.owner!r} changed while being read")],
            "owner stack",
        )
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
    if config.creates_cluster:  # what team stacks read through their StackReference
        outputs[OUTPUT] = export_contract(config, pulumi.get_stack())
    if config.owner is not None:
        outputs["owner_stack"] = config.owner
    return outputs


def _node_pools(config: StackConfig, cluster: GkeCluster) -> dict[str, TpuNodePool]:
    target = PoolTarget(
        project=config.gcp.project,
        region=config.gcp.region,
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
    # Production protects the installs and the Kueue objects: deleting a CRD deletes every
    # object of it (every PathwaysJob, JobSet or queued workload) with it.
    protected = pulumi.ResourceOptions(protect=config.protects_state)
    after_jobset: list[pulumi.Resource] = []
    if addons.jobset.install:
        jobset = ReleaseManifest(
            f"{name}-jobset",
            addons.jobset,
            provider,
            depends_on=cluster.control_plane,
            opts=protected,
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
            opts=protected,
        ).manifest
    queueing: list[pulumi.Resource] = []
    namespaces = {
        team.name: TeamNamespace(f"{name}-{team.name}", team, provider).namespace
        for team in config.teams
    }
    if addons.kueue.enabled:
        kueue = ReleaseManifest(
            f"{name}-kueue",
            addons.kueue,
            provider,
            depends_on=cluster.control_plane,
            opts=protected,
        )
        queueing = [
            KueueQueues(
                f"{name}-queues", config, namespaces, provider, kueue.manifest, opts=protected
            ),
            PriorityClasses(f"{name}-priorities", provider, opts=protected),
        ]
    elif config.shared_cluster is not None and config.queues_jobs:
        # The owner's Kueue queues this team's jobs too: a LocalQueue in each of its namespaces.
        queueing = [LocalQueues(f"{name}-queues", config, namespaces, provider)]
    return Installs(controller, namespaces, queueing)


def _workloads(config: StackConfig, cluster: ClusterTarget, installs: Installs) -> dict[str, Any]:
    """PathwaysJobs and shared services; outputs say how to reach each."""
    prefix, labels = config.cluster.name, job_labels(config)
    common = {
        "provider": cluster.provider,
        "controller_install": installs.pathways_controller,
        "labels": labels,
        "prerequisites": installs.queueing,
    }
    jobs = {}
    for workload in config.workloads:
        PathwaysJob(
            f"{prefix}-{workload.team}-{workload.name}",
            name=workload.name,
            namespace=installs.namespaces[workload.team],
            spec=workload_spec(config, workload),
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
