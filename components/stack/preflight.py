"""The plan-time preflight: would every PathwaysJob of the stack actually run?

Each workload and shared service is expanded into the pods the PathwaysJob controller v0.1.4
would create (``controller_model``) and scheduled against node pools (``scheduler_model``):
every pod must fit some node (labels, taints, allocatable CPU/memory/TPU chips, hosts per
slice), a job's slices need as many node pools, pools must not be oversubscribed without Kueue
(which admits a job all-or-nothing), and the identity the pods act as must be able to use the
job's ``pathwaysDir``. Everything found is reported at once, before any resource is registered.

The node pools are an explicit input: ``planned_pools`` builds the ones this stack creates; a
team stack can pass the owner stack's instead.

What it does not prove: that GCP has the capacity (quota, stock, reservations), that images
exist and start, that the user's code works, or anything about pods other than the
PathwaysJob's own (other tenants' pods can still take the nodes).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from components.errors import ConfigError, ConfigIssue
from components.gke.node_config import pool_labels, tpu_pool_labels
from components.gke.node_identity import node_service_account_email
from components.labels import INSTANCE_TYPE_LABEL, SPOT_LABEL
from components.pathways.controller_model import (
    ACCELERATOR_LABEL,
    NODE_POOL_LABEL,
    TOPOLOGY_LABEL,
    ExpandedJob,
    PodModel,
    expand,
)
from components.pathways.job import PathwaysJobSpec
from components.pathways.scheduler_model import TPU_TAINT, NodePoolModel, pools_that_fit, why_not
from components.stack.schema import CapacityType, StackConfig
from components.tpu.machines import tpu_host

SOURCE = "preflight"


def planned_pools(config: StackConfig) -> list[NodePoolModel]:
    """The node pools of the stack's config: the system pool, the CPU pool, one per TPU slice.

    On a cluster this stack does not own, the pools described in its config are the owner's
    and the identity their nodes act as is not known here (None)."""
    identity = (
        node_service_account_email(config.gcp.project, config.cluster.name)
        if config.creates_cluster
        else None
    )
    pools = []
    cpu_pools = [config.cpu_pool]
    if config.creates_cluster:
        cpu_pools.insert(0, config.system_pool)
    for cpu in cpu_pools:
        labels = {**pool_labels(config.team, cpu.name), NODE_POOL_LABEL: cpu.name}
        labels[INSTANCE_TYPE_LABEL] = cpu.machine_type
        pools.append(
            NodePoolModel(cpu.name, cpu.name, cpu.machine, labels, (), cpu.max_nodes, 0, identity)
        )
    for tpu in config.tpu_pools:
        shape = tpu.shape
        for node_pool in tpu.node_pool_names():
            labels = {
                **tpu_pool_labels(config.team, tpu.name, tpu.shape, tpu.capacity.reservation),
                NODE_POOL_LABEL: node_pool,
            }
            labels[INSTANCE_TYPE_LABEL] = shape.machine_type
            labels[ACCELERATOR_LABEL] = shape.accelerator_label
            labels[TOPOLOGY_LABEL] = shape.topology
            if tpu.capacity.type is CapacityType.SPOT:
                labels[SPOT_LABEL] = "true"
            pools.append(
                NodePoolModel(
                    node_pool,
                    tpu.name,
                    tpu_host(shape.machine_type),
                    labels,
                    (TPU_TAINT,),
                    shape.hosts,
                    shape.chips_per_host,
                    identity,
                )
            )
    return pools


def bucket_writers(config: StackConfig) -> frozenset[str]:
    """Identities this stack grants object access on its scratch bucket (besides Workload
    Identity principals, which host-network pods never use)."""
    return frozenset(
        {node_service_account_email(config.gcp.project, config.cluster.name)}
        if config.creates_cluster
        else set()
    )


@dataclass(frozen=True)
class Deployment:
    """One PathwaysJob to check, located for error messages."""

    key: str  # "workloads[0]"
    kind: str  # "workload", "sharedService" or "PathwaysJob"
    name: str
    namespace: str
    pool: str | None  # the stack's TPU pool it names; None: any pool
    spec: PathwaysJobSpec
    address: str
    image: str | None = None

    @property
    def label(self) -> str:
        return f"{self.kind} '{self.namespace}/{self.name}'"

    @property
    def slices(self) -> int:
        return self.spec.workers[0].num_slices


@dataclass
class PreflightReport:
    issues: list[ConfigIssue] = field(default_factory=list)
    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)

    def raise_if_failed(self) -> None:
        if self.issues:
            raise ConfigError(self.issues, SOURCE)


def stack_deployments(config: StackConfig) -> list[Deployment]:
    from components.pathways.workloads import (
        shared_service_address,
        shared_service_spec,
        workload_endpoints,
        workload_spec,
    )

    found = []
    for i, workload in enumerate(config.workloads):
        found.append(
            Deployment(
                f"workloads[{i}]",
                "workload",
                workload.name,
                workload.team,
                workload.pool,
                workload_spec(config, workload),
                workload_endpoints(workload).proxy,
                workload.image,
            )
        )
    for i, service in enumerate(config.shared_services):
        found.append(
            Deployment(
                f"sharedServices[{i}]",
                "sharedService",
                service.name,
                service.team,
                service.pool,
                shared_service_spec(config, service),
                shared_service_address(service),
            )
        )
    return found


def preflight_job(
    name: str,
    namespace: str,
    spec: PathwaysJobSpec,
    pools: Sequence[NodePoolModel],
    writers: Iterable[str] = (),
    bucket: str | None = None,
) -> PreflightReport:
    """The preflight of one PathwaysJob built through the Python API."""
    from components.pathways.job import proxy_address

    deployment = Deployment(
        "spec", "PathwaysJob", name, namespace, None, spec, proxy_address(name, namespace)
    )
    report = PreflightReport()
    check_job(deployment, pools, frozenset(writers), bucket, report)
    return report


def preflight(
    config: StackConfig,
    pools: Sequence[NodePoolModel],
    writers: Iterable[str] = (),
) -> PreflightReport:
    """Check every PathwaysJob of the stack against ``pools``; never raises (see the report)."""
    report = PreflightReport()
    deployments = stack_deployments(config)
    for deployment in deployments:
        check_job(deployment, pools, frozenset(writers), config.bucket_name, report)
    if not config.queues_jobs:
        report.issues += oversubscription(deployments, pools)
    return report


def check_job(
    deployment: Deployment,
    pools: Sequence[NodePoolModel],
    writers: frozenset[str],
    bucket: str | None,
    report: PreflightReport,
) -> ExpandedJob:
    job = expand(deployment.name, deployment.namespace, deployment.spec)
    problems = list(job_problems(job, deployment.pool, pools))
    head_pools = pools_that_fit(job.head, pools)
    worker_pools = pools_that_fit(job.workers, pools)
    access, access_problem = pathways_dir_access(job, head_pools + worker_pools, writers, bucket)
    if access_problem:
        problems.append(access_problem)
    report.issues += [ConfigIssue(deployment.key, f"{deployment.label}: {p}") for p in problems]
    key = f"{deployment.namespace}/{deployment.name}"
    report.jobs[key] = {
        "kind": deployment.kind,
        "image": deployment.image,
        "command": user_command(job.head),
        "deploymentMode": job.deployment_mode.value,
        "head": pod_summary(job.head, head_pools),
        "workers": pod_summary(job.workers, worker_pools),
        "pathwaysDir": job.pathways_dir,
        "pathwaysDirAccess": access,
        "address": deployment.address,
        "resolvesFrom": resolves_from(deployment.address, deployment.namespace),
    }
    return job


def job_problems(job: ExpandedJob, pool_name: str | None, pools: Sequence[NodePoolModel]):
    """What keeps the job's head or workers from being scheduled (one message each)."""
    if not pools_that_fit(job.head, pools):
        hint = ""
        if job.head.colocated:
            hint = (
                " (a colocated head requests no TPU, so GKE adds no toleration: its pod template "
                "must tolerate google.com/tpu)"
            )
        yield f"the head pod fits no node: {_reasons(job.head, pools)}{hint}"
    own = [p for p in pools if p.group == pool_name] if pool_name else list(pools)
    where = f"pool {pool_name!r}" if pool_name else "any node pool"
    fitting = pools_that_fit(job.workers, own)
    slices = job.workers.groups
    if not own:
        yield f"{where} is not among the node pools checked"
    elif not fitting:
        labels = "; ".join(dict.fromkeys(f"{{{p.describe_labels()}}}" for p in own[:1]))
        yield (
            f"the worker pods fit no node of {where}: {_reasons(job.workers, own)}; worker "
            f"nodeSelector {_pairs(job.workers.node_selector)}; the pool's nodes carry {labels}"
        )
    elif len(fitting) < slices:
        names = ", ".join(p.name for p in fitting)
        yield (
            f"asks for {slices} slices but only {len(fitting)} node pool(s) can hold one "
            f"({names}); each slice needs a whole node pool"
        )


def _reasons(pod: PodModel, pools: Sequence[NodePoolModel]) -> str:
    """Why not, once per group of identical pools (a TPU pool's slices share their reasons)."""
    seen: dict[str, str] = {}
    for pool in pools:
        seen.setdefault(pool.group, f"pool {pool.group!r}: {why_not(pod, pool)}")
    return "; ".join(seen.values()) or "no node pools"


def _pairs(selector: dict[str, str]) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in sorted(selector.items())) + "}"


def pathways_dir_access(
    job: ExpandedJob,
    landing: Sequence[NodePoolModel],
    writers: frozenset[str],
    bucket: str | None,
) -> tuple[str, str | None]:
    """Which identity reaches pathwaysDir and whether it may: host-network pods act as the
    node's service account (Workload Identity does not apply to them)."""
    if bucket is None or not (job.pathways_dir or "").startswith(f"gs://{bucket}/"):
        return "not checked (not the stack's scratch bucket)", None
    identities = {p.identity for p in landing}
    if None in identities or not identities:
        return (
            "unverified: the nodes belong to another stack, whose node identity is not known",
            None,
        )
    denied = sorted(i for i in identities if i not in writers)
    if denied:
        return f"denied to {', '.join(denied)}", (
            f"its pods run on the host network, so they act as the node service account "
            f"{', '.join(denied)} for GCS, which has no object access to gs://{bucket} "
            f"(pathwaysDir {job.pathways_dir})"
        )
    return f"granted to node service account {', '.join(sorted(identities))}", None


def resolves_from(address: str, namespace: str) -> str:
    host = address.removeprefix("grpc://").rsplit(":", 1)[0]
    if host.endswith(".svc.cluster.local"):
        return "any namespace"
    return f"namespace {namespace} only"


def oversubscription(
    deployments: Sequence[Deployment], pools: Sequence[NodePoolModel]
) -> list[ConfigIssue]:
    """Without Kueue, jobs whose slices add up to more than a pool has can deadlock: each holds
    some slices and waits for the rest (pods are admitted one by one)."""
    slices_of: dict[str, int] = defaultdict(int)
    for pool in pools:
        slices_of[pool.group] += 1
    users: dict[str, list[Deployment]] = defaultdict(list)
    for deployment in deployments:
        users[deployment.pool or ""].append(deployment)
    issues = []
    for pool_name, entries in users.items():
        asked = sum(d.slices for d in entries)
        if len(entries) < 2 or asked <= slices_of[pool_name]:
            continue
        who = ", ".join(f"{d.label} asks for {d.slices}" for d in entries)
        issues.append(
            ConfigIssue(
                "addons.kueue.enabled",
                f"pool {pool_name!r} has {slices_of[pool_name]} slice(s) but its jobs ask for "
                f"{asked} in all ({who}); without Kueue they can each hold part of the pool and "
                "wait for the rest forever: enable Kueue (it admits a job all-or-nothing), add "
                "slices, or give the jobs separate pools",
            )
        )
    return issues


def pod_summary(pod: PodModel, landing: Sequence[NodePoolModel]) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "pods": pod.pods,
        "nodeSelector": dict(sorted(pod.node_selector.items())),
        "hostNetwork": pod.host_network,
        "identity": _identity(pod, landing),
        "landsOn": sorted({p.group for p in landing}),
    }
    if pod.role == "worker":
        summary["podsPerSlice"] = pod.per_group
        summary["tpuChipsPerPod"] = pod.tpu_chips
    else:
        summary["resources"] = str(pod.resources)
        summary["images"] = list(pod.images)
    if pod.tolerations:
        summary["tolerations"] = [f"{t.key}:{t.operator}:{t.effect}" for t in pod.tolerations]
    return summary


def _identity(pod: PodModel, landing: Sequence[NodePoolModel]) -> str:
    if pod.host_network:
        nodes = sorted({p.identity or "the owner stack's node service account" for p in landing})
        return "node service account " + (", ".join(nodes) or "(no node fits)")
    return f"Kubernetes service account {pod.service_account or 'default'} (Workload Identity)"


def user_command(head: PodModel) -> list[str]:
    """The user's command, without the SIGTERM wrapper around it."""
    from components.pathways.workloads import wrapped_command

    prefix = wrapped_command([])
    command = list(head.command)
    return command[len(prefix) :] if command[: len(prefix)] == prefix else command


def run_preflight(config: StackConfig) -> PreflightReport:
    """The preflight against the pools this stack plans; raises ConfigError on any problem."""
    report = preflight(config, planned_pools(config), bucket_writers(config))
    report.raise_if_failed()
    return report
