"""The Pulumi program: validated stack config in, components registered, outputs returned.

`__main__.py` (for `pulumi up`) and the offline plan both call `build_stack`, so what the plan
shows is what the engine would be asked to create.

Before anything is registered, the preflight expands every PathwaysJob into the pods the
controller would create (or reads a jobset-backend job's pods from its JobSet) and schedules
them against the node pools (the stack's own or, for a team stack, its owner's;
``preflight``).

Ordering: the system pool waits for the cluster; in-cluster installs wait for the system pool
(their controllers run there), not for TPU pools, which are created in parallel. The PathwaysJob
controller and Kueue wait for JobSet (its webhooks fail closed until it is ready); the
controller is installed only when a job uses the PathwaysJob backend (or the stack's default
does); workloads wait for the controller (JobSets: for JobSet), Kueue's queues, the scratch
bucket with its grants and the data bucket grants.

A team stack (``owner:``) reads its owner's ``shared_cluster`` output through a StackReference
before anything else registers (``read_owner_contract``; see ``resolve/tenancy/shared_cluster.py``)
and then creates only namespaced objects in its own namespaces: namespaces, service accounts,
LocalQueues pointing at the owner's ClusterQueue, bucket grants and its workloads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.addons.data_buckets import DataBucketGrants
from components.addons.installs import (
    JOBSET_CONTROLLER,
    KUEUE_CONTROLLER,
    PATHWAYS_JOB_CONTROLLER,
    ControllerDeployment,
    ControllerPatch,
    ReleaseManifest,
)
from components.addons.kueue import (
    LOCAL_QUEUE,
    KueueQueues,
    LocalQueues,
    PriorityClasses,
    PriorityClassesArgs,
)
from components.addons.scratch_bucket import ScratchBucket
from components.addons.teams import TeamNamespace
from components.config.schema import (
    PathwaysDeployment,
    SharedServiceConfig,
    StackConfig,
    WorkloadConfig,
)
from components.errors import ConfigError, ConfigIssue
from components.gke.cluster import ClusterTarget, ExistingCluster, GkeCluster
from components.gke.cpu_pool import CpuNodePool
from components.gke.tpu_pool import TpuNodePool
from components.labels import QUEUE_LABEL, standard_labels
from components.pathways.preflight import PreflightReport
from components.pathways.service_client import INSECURE_PROXY_OPTION
from components.pathways.spec import wait_for_running
from components.resolve.preflight import run_preflight
from components.resolve.tenancy.shared_cluster import OUTPUT, export_contract
from components.resolve.workload_specs import (
    config_secrets_name,
    cpu_pool_selector,
    deployment_namespace,
    insecure_proxy,
    node_pool_pins,
    service_queue_name,
    shared_service_address,
    shared_service_spec,
    team_service_account,
    used_config_secrets,
    workload_endpoints,
    workload_queue_name,
    workload_spec,
)
from components.stack import args
from components.stack.owner import read_owner_contract
from components.vocabulary import WorkloadBackend, jobset_memory_mib
from components.workloads.job import PathwaysJob, PathwaysJobArgs
from components.workloads.jobset import PathwaysJobSet, PathwaysJobSetArgs, wait_for_started
from components.workloads.shared_service import SharedPathwaysService, SharedPathwaysServiceArgs


@dataclass
class Installs:
    """What workloads need from the in-cluster installs."""

    pathways_controller: pulumi.Resource | None
    # The JobSet install a jobset-backend job waits for (None: another stack's).
    jobset: pulumi.Resource | None
    namespaces: dict[str, pulumi.Output[str]]
    # Kueue's queues and priority classes: a queued job must not be created before them.
    queueing: list[pulumi.Resource]


PreflightListener = Callable[[PreflightReport], None]
_preflight_listeners: list[PreflightListener] = []


@contextmanager
def preflight_reports(listener: PreflightListener) -> Iterator[None]:
    """While open, ``listener`` gets the preflight report of every stack built (the offline
    plan summarizes it instead of running the preflight a second time)."""
    _preflight_listeners.append(listener)
    try:
        yield
    finally:
        _preflight_listeners.remove(listener)


def build_stack(config: StackConfig, owner_read: bool = False) -> dict[str, Any]:
    """Register every resource of the stack; returns the stack outputs to export.

    For a team stack, ``owner_read`` says the caller already read the owner's contract through
    the StackReference (``pulumi up``: it had to, to validate the config); otherwise it is read
    here first and must be the contract the config was validated with (the offline plan).

    Raises ConfigError (before registering anything but that read) when the preflight finds a
    job that would not run."""
    read_here = config.owner is not None and not owner_read
    if read_here and read_owner_contract(config.owner) != config.shared_cluster:
        raise ConfigError(
            [ConfigIssue("owner", f"stack {config.owner!r} changed while being read")],
            "owner stack",
        )
    report = run_preflight(config)
    for listener in _preflight_listeners:
        listener(report)
    name = config.cluster.name
    node_account = None
    if config.creates_cluster:
        cluster: ClusterTarget = GkeCluster(name, args.gke_cluster_args(config))
        system_pool, pools = _node_pools(config, cluster)
        install_after = [*cluster.control_plane, system_pool]
        node_account = cluster.node_service_account
    else:
        cluster = ExistingCluster(name, args.existing_cluster_args(config))
        pools, install_after = {}, []
    installs = _installs(config, cluster, install_after)
    bucket = ScratchBucket(
        f"{name}-scratch",
        args.scratch_bucket_args(config, cluster.control_plane, node_account),
    )
    grants = list(bucket.grants)
    if config.data_buckets and node_account is not None:
        grants += DataBucketGrants(
            f"{name}-data-buckets", args.data_bucket_grants_args(config, node_account)
        ).grants
    workloads = _workloads(config, cluster, installs, grants)

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


def _node_pools(
    config: StackConfig, cluster: GkeCluster
) -> tuple[pulumi.Resource, dict[str, TpuNodePool]]:
    """The system pool (returned first: installs wait for it), the CPU pool and TPU pools."""
    target = cluster.pool_target()
    name = config.cluster.name
    system, cpu = config.system_pool, config.cpu_pool
    system_pool = CpuNodePool(f"{name}-{system.name}", args.cpu_pool_args(system, target))
    CpuNodePool(f"{name}-{cpu.name}", args.cpu_pool_args(cpu, target))
    return system_pool, {
        pool.name: TpuNodePool(f"{name}-{pool.name}", args.tpu_pool_args(pool, target))
        for pool in config.tpu_pools
    }


def _installs(
    config: StackConfig, cluster: ClusterTarget, ready: list[pulumi.Resource]
) -> Installs:
    """``ready``: what the installs wait for (the control plane and the system pool)."""
    name, addons, provider = config.cluster.name, config.addons, cluster.provider
    # Production protects the installs and the Kueue objects: deleting a CRD deletes every
    # object of it (every PathwaysJob, JobSet or queued workload) with it.
    protected = pulumi.ResourceOptions(protect=config.protects_state)
    after_jobset: list[pulumi.Resource] = []
    if addons.jobset.install:
        jobset = ReleaseManifest(
            f"{name}-jobset", args.release_args(addons.jobset, provider, ready), opts=protected
        )
        after_jobset = [jobset.manifest]
        memory = jobset_memory_mib(config.max_node_count)
        ControllerPatch(
            f"{name}-jobset-controller",
            args.controller_patch_args(config, JOBSET_CONTROLLER, provider, jobset, memory),
            # It was the JobSetControllerMemory component: same resources, kept in place.
            opts=pulumi.ResourceOptions.merge(
                protected,
                pulumi.ResourceOptions(
                    aliases=[
                        pulumi.Alias(
                            name=f"{name}-jobset-memory",
                            type_="tpu-pathways:installs:JobSetControllerMemory",
                        )
                    ]
                ),
            ),
        )
    controller = None
    # A stack whose jobs all run as JobSets (workloadBackend: jobset) needs no controller.
    if addons.pathways_job.install and config.needs_pathways_controller:
        # The controller watches JobSets, and JobSet's webhooks fail closed until it is ready.
        pathways_job = ReleaseManifest(
            f"{name}-pathways-job",
            args.release_args(addons.pathways_job, provider, [*ready, *after_jobset]),
            opts=protected,
        )
        controller = pathways_job.manifest
        _place_on_system_pool(
            f"{name}-pathways-job-controller",
            config,
            PATHWAYS_JOB_CONTROLLER,
            pathways_job,
            provider,
        )
    queueing: list[pulumi.Resource] = []
    namespaces = {
        team.name: TeamNamespace(
            f"{name}-{team.name}", args.team_namespace_args(team, provider)
        ).namespace
        for team in config.teams
    }
    if config.kueue_enabled:
        # Kueue manages JobSets: its JobSet integration needs JobSet's API first.
        kueue = ReleaseManifest(
            f"{name}-kueue",
            args.release_args(addons.kueue, provider, [*ready, *after_jobset]),
            opts=protected,
        )
        _place_on_system_pool(f"{name}-kueue-controller", config, KUEUE_CONTROLLER, kueue, provider)
        queueing = [
            KueueQueues(
                f"{name}-queues",
                args.kueue_queues_args(config, namespaces, provider, kueue.manifest),
                opts=protected,
            ),
            PriorityClasses(f"{name}-priorities", PriorityClassesArgs(provider), opts=protected),
        ]
    elif config.shared_cluster is not None and config.queues_jobs:
        # The owner's Kueue queues this team's jobs too: a LocalQueue in each of its namespaces.
        queueing = [
            LocalQueues(f"{name}-queues", args.local_queues_args(config, namespaces, provider))
        ]
    return Installs(controller, after_jobset[0] if after_jobset else None, namespaces, queueing)


def _place_on_system_pool(
    name: str,
    config: StackConfig,
    deployment: ControllerDeployment,
    install: ReleaseManifest,
    provider: k8s.Provider,
) -> None:
    """Pin an install's controller to the system pool, in stacks that have one. Protected in
    production like the install it patches."""
    if config.creates_cluster:
        ControllerPatch(
            name,
            args.controller_patch_args(config, deployment, provider, install),
            opts=pulumi.ResourceOptions(protect=config.protects_state),
        )


def _workloads(
    config: StackConfig,
    cluster: ClusterTarget,
    installs: Installs,
    bucket_grants: list[pulumi.Resource],
) -> dict[str, Any]:
    """PathwaysJobs and shared services; outputs say how to reach each."""
    prefix, labels = config.cluster.name, job_labels(config)
    wait = config.wait_for_running

    def prerequisites(logical: str, entry: PathwaysDeployment) -> list[pulumi.Resource]:
        """Queues, the bucket's grants (a job started before its pathwaysDir is writable fails
        at once) and the Secret its config secrets are read from, if any."""
        namespace = job_namespace(entry)
        secret = config_secrets_object(
            f"{logical}-config-secrets", config, entry, namespace, cluster.provider
        )
        return [*installs.queueing, *bucket_grants, *([secret] if secret else [])]

    def job_namespace(entry: PathwaysDeployment) -> pulumi.Input[str]:
        """A team's namespace as an output (the job waits for it); `default` always exists."""
        namespace = deployment_namespace(entry)
        return installs.namespaces.get(namespace, namespace)

    jobs: dict[str, Any] = {}
    services: dict[str, Any] = {}
    pins = node_pool_pins(config)

    def register_job(logical: str, workload: WorkloadConfig) -> None:
        if config.backend_of(workload) is WorkloadBackend.JOBSET:
            PathwaysJobSet(logical, jobset_args(logical, workload))
        else:
            PathwaysJob(
                logical,
                PathwaysJobArgs(
                    name=workload.name,
                    namespace=installs.namespaces[workload.team],
                    spec=workload_spec(config, workload, pins),
                    provider=cluster.provider,
                    controller_install=installs.pathways_controller,
                    labels=labels,
                    annotations=wait_for_running(wait.timeout_seconds) if wait.jobs else None,
                    prerequisites=prerequisites(logical, workload),
                ),
            )
        endpoints = workload_endpoints(workload)
        # Names are unique per namespace only, so outputs are keyed by both.
        job = jobs[f"{workload.team}/{workload.name}"] = {"proxy": endpoints.proxy}
        if endpoints.port_forward:
            job["port_forward"] = endpoints.port_forward

    def jobset_args(logical: str, workload: WorkloadConfig) -> PathwaysJobSetArgs:
        """The JobSet backend: the same spec, rendered as XPK 1.16 renders it."""
        return PathwaysJobSetArgs(
            name=workload.name,
            namespace=installs.namespaces[workload.team],
            spec=workload_spec(config, workload, pins),
            provider=cluster.provider,
            jobset_install=installs.jobset,
            queue_name=workload_queue_name(config),
            annotations=wait_for_started(wait.timeout_seconds) if wait.jobs else None,
            host_network=workload.host_network,
            service_account=(
                None if workload.host_network else team_service_account(config, workload)
            ),
            head_node_selector=cpu_pool_selector(config),
            prerequisites=prerequisites(logical, workload),
        )

    def register_service(logical: str, entry: SharedServiceConfig) -> None:
        pool = config.pool(entry.pool)
        service_args = SharedPathwaysServiceArgs(
            job_name=entry.name,
            namespace=job_namespace(entry),
            spec=shared_service_spec(config, entry, pins),
            address=shared_service_address(entry),
            instance_type=pool.shape.pathways_instance_type,
            cluster_name=config.cluster.name,
            project=config.gcp.project,
            location=config.cluster_location,
            provider=cluster.provider,
            wait_timeout_seconds=wait.timeout_seconds,
            proxy_options=[INSECURE_PROXY_OPTION] if insecure_proxy(entry) else [],
            controller_install=installs.pathways_controller,
            labels=service_labels(config, entry),
            prerequisites=prerequisites(logical, entry),
            backend=config.backend_of(entry),
            jobset_install=installs.jobset,
            head_node_selector=cpu_pool_selector(config),
        )
        service = SharedPathwaysService(logical, service_args)
        services[f"{deployment_namespace(entry)}/{entry.name}"] = {
            "team": entry.team,
            "pathways_service": service.pathways_service,
            "expected_tpu_instances": service.expected_tpu_instances,
            "connect": service.connect,
        }

    for _, deployment in config.deployments():
        logical = f"{prefix}-{deployment.team}-{deployment.name}"
        if isinstance(deployment, WorkloadConfig):
            register_job(logical, deployment)
        else:
            register_service(logical, deployment)
    outputs: dict[str, Any] = {}
    if jobs:
        outputs["workloads"] = jobs
    if services:
        outputs["shared_services"] = services
    return outputs


def job_labels(config: StackConfig) -> dict[str, str] | None:
    """The PathwaysJob's labels; the controller copies them to the JobSet Kueue admits."""
    return {QUEUE_LABEL: LOCAL_QUEUE} if config.queues_jobs else None


def service_labels(config: StackConfig, service: SharedServiceConfig) -> dict[str, str]:
    """A shared service's labels: the team that owns it (it runs in `default`, not the team's
    namespace) and, with Kueue, its own LocalQueue there."""
    labels = standard_labels(service.team)
    if config.queues_jobs:
        labels[QUEUE_LABEL] = service_queue_name(service)
    return labels


def config_secrets_object(
    name: str,
    config: StackConfig,
    workload: PathwaysDeployment,
    namespace: pulumi.Input[str],
    provider: k8s.Provider,
) -> k8s.core.v1.Secret | None:
    """The Secret holding the workload's config secrets, each a Pulumi secret (encrypted in
    state, ``[secret]`` in plans and previews); None when it names none."""
    names = used_config_secrets(workload)
    if not names:
        return None
    return k8s.core.v1.Secret(
        name,
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=config_secrets_name(workload), namespace=namespace
        ),
        type="Opaque",
        string_data={
            key: pulumi.Output.secret(config.secrets[key].get_secret_value()) for key in names
        },
        opts=pulumi.ResourceOptions(provider=provider),
    )


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
