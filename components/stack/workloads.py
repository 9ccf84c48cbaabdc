"""A stack's workloads and shared services as components: each ``workloads`` entry a
``PathwaysJob`` (or, on the JobSet backend, a ``PathwaysJobSet``), each ``sharedServices`` entry
a ``SharedPathwaysService``, from the specs the resolve layer makes (``workload_specs``), each
after its queues, its bucket grants and the Secret of its config secrets. ``build_workloads``
returns the outputs that say how to reach each."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.addons.kueue import LOCAL_QUEUE
from components.config.schema import (
    PathwaysDeployment,
    SharedServiceConfig,
    StackConfig,
    WorkloadConfig,
)
from components.gke.cluster import ClusterTarget
from components.labels import QUEUE_LABEL, standard_labels
from components.pathways.service_client import INSECURE_PROXY_OPTION
from components.pathways.spec import wait_for_running
from components.resolve.links import job_logs_url
from components.resolve.storage import gcsfuse_annotations
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
from components.stack.installs import Installs
from components.vocabulary import WorkloadBackend
from components.workloads.job import PathwaysJob, PathwaysJobArgs
from components.workloads.jobset import PathwaysJobSet, PathwaysJobSetArgs, wait_for_started
from components.workloads.shared_service import SharedPathwaysService, SharedPathwaysServiceArgs


def build_workloads(
    config: StackConfig,
    cluster: ClusterTarget,
    installs: Installs,
    bucket_grants: list[pulumi.Resource],
) -> dict[str, Any]:
    """PathwaysJobs and shared services; outputs say how to reach each."""
    builder = _Workloads(config, cluster, installs, bucket_grants)
    for _, deployment in config.deployments():
        logical = f"{config.cluster.name}-{deployment.team}-{deployment.name}"
        if isinstance(deployment, WorkloadConfig):
            builder.register_job(logical, deployment)
        else:
            builder.register_service(logical, deployment)
    outputs: dict[str, Any] = {}
    if builder.jobs:
        outputs["workloads"] = builder.jobs
    if builder.services:
        outputs["shared_services"] = builder.services
    return outputs


class _Workloads:
    """Registers a stack's jobs and services, and gathers their outputs."""

    def __init__(
        self,
        config: StackConfig,
        cluster: ClusterTarget,
        installs: Installs,
        bucket_grants: list[pulumi.Resource],
    ) -> None:
        self.config, self.cluster, self.installs = config, cluster, installs
        self.bucket_grants = bucket_grants
        self.wait = config.wait_for_running
        self.pins = node_pool_pins(config)
        self.jobs: dict[str, Any] = {}
        self.services: dict[str, Any] = {}

    def prerequisites(self, logical: str, entry: PathwaysDeployment) -> list[pulumi.Resource]:
        """Queues, the bucket's grants (a job started before its pathwaysDir is writable fails
        at once) and the Secret its config secrets are read from, if any."""
        namespace = self.job_namespace(entry)
        secret = config_secrets_object(
            f"{logical}-config-secrets", self.config, entry, namespace, self.cluster.provider
        )
        return [*self.installs.queueing, *self.bucket_grants, *([secret] if secret else [])]

    def job_namespace(self, entry: PathwaysDeployment) -> pulumi.Input[str]:
        """A team's namespace as an output (the job waits for it); `default` always exists."""
        namespace = deployment_namespace(entry)
        return self.installs.namespaces.get(namespace, namespace)

    def register_job(self, logical: str, workload: WorkloadConfig) -> None:
        if self.config.backend_of(workload) is WorkloadBackend.JOBSET:
            PathwaysJobSet(logical, self.jobset_args(logical, workload))
        else:
            PathwaysJob(logical, self.job_args(logical, workload))
        endpoints = workload_endpoints(workload)
        # Names are unique per namespace only, so outputs are keyed by both.
        job = self.jobs[f"{workload.team}/{workload.name}"] = {"proxy": endpoints.proxy}
        if endpoints.port_forward:
            job["port_forward"] = endpoints.port_forward
        job["logs"] = job_logs_url(self.config, workload.name, workload.team)

    def job_args(self, logical: str, workload: WorkloadConfig) -> PathwaysJobArgs:
        config, wait = self.config, self.wait
        return PathwaysJobArgs(
            name=workload.name,
            namespace=self.installs.namespaces[workload.team],
            spec=workload_spec(config, workload, self.pins),
            provider=self.cluster.provider,
            controller_install=self.installs.pathways_controller,
            labels=job_labels(config),
            # The controller v0.1.4 gives the head pod the PathwaysJob's own annotations.
            annotations={
                **(wait_for_running(wait.timeout_seconds) if wait.jobs else {}),
                **gcsfuse_annotations(config, workload),
            }
            or None,
            prerequisites=self.prerequisites(logical, workload),
        )

    def jobset_args(self, logical: str, workload: WorkloadConfig) -> PathwaysJobSetArgs:
        """The JobSet backend: the same spec, rendered as XPK 1.16 renders it."""
        config, wait = self.config, self.wait
        return PathwaysJobSetArgs(
            name=workload.name,
            namespace=self.installs.namespaces[workload.team],
            spec=workload_spec(config, workload, self.pins),
            provider=self.cluster.provider,
            jobset_install=self.installs.jobset,
            queue_name=workload_queue_name(config),
            annotations=wait_for_started(wait.timeout_seconds) if wait.jobs else None,
            host_network=workload.host_network,
            service_account=(
                None if workload.host_network else team_service_account(config, workload)
            ),
            head_node_selector=cpu_pool_selector(config, workload.team),
            head_annotations=gcsfuse_annotations(config, workload),
            prerequisites=self.prerequisites(logical, workload),
        )

    def register_service(self, logical: str, entry: SharedServiceConfig) -> None:
        service = SharedPathwaysService(logical, self.service_args(logical, entry))
        self.services[f"{deployment_namespace(entry)}/{entry.name}"] = {
            "team": entry.team,
            "pathways_service": service.pathways_service,
            "expected_tpu_instances": service.expected_tpu_instances,
            "connect": service.connect,
            "logs": job_logs_url(self.config, entry.name, deployment_namespace(entry)),
        }

    def service_args(self, logical: str, entry: SharedServiceConfig) -> SharedPathwaysServiceArgs:
        config = self.config
        pool = config.pool(entry.pool)
        assert pool is not None  # guaranteed by the stack's workload checks
        return SharedPathwaysServiceArgs(
            job_name=entry.name,
            namespace=self.job_namespace(entry),
            spec=shared_service_spec(config, entry, self.pins),
            address=shared_service_address(entry),
            instance_type=pool.shape.pathways_instance_type,
            cluster_name=config.cluster.name,
            project=config.gcp.project,
            location=config.cluster_location,
            provider=self.cluster.provider,
            wait_timeout_seconds=self.wait.timeout_seconds,
            proxy_options=[INSECURE_PROXY_OPTION] if insecure_proxy(entry) else [],
            controller_install=self.installs.pathways_controller,
            labels=service_labels(config, entry),
            prerequisites=self.prerequisites(logical, entry),
            backend=config.backend_of(entry),
            jobset_install=self.installs.jobset,
            head_node_selector=cpu_pool_selector(config, entry.team),
        )


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
