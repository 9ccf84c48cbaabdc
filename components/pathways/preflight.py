"""Would a PathwaysJob actually run on these node pools?

The job is expanded into the pods the PathwaysJob controller v0.1.4 would create
(``controller_model``) and scheduled against node pools (``scheduler_model``): every pod must
fit some node (labels, taints, allocatable CPU/memory/TPU chips, hosts per slice), a job's slices
need as many node pools, pools must not be oversubscribed without Kueue (which admits a job
all-or-nothing), the pods' required pod affinity must leave room for every slice, a job whose
workers are bound to its head's node pool (colocated) must have that pool to itself, and the
identity the pods act as must be able to use every ``gs://`` path the job names
(``storage_access`` with ``gcs_access``: write its ``pathwaysDir``, read the rest). Pure: no
Pulumi and no stack config (``components.resolve.preflight`` checks every job of a stack against
the pools it plans; ``PathwaysJob`` checks one job built in Python).

What it does not prove: that GCP has the capacity (quota, stock, reservations), that images
exist and start, that the user's code works, or anything about pods other than the
PathwaysJob's own (other tenants' pods can still take the nodes).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from components.errors import ConfigError, ConfigIssue
from components.labels import NODE_POOL_LABEL
from components.pathways.controller_model import (
    ExpandedJob,
    PodModel,
    Toleration,
    component_images,
    expand,
)
from components.pathways.gcs_access import (
    ROLES,
    Access,
    BucketGrant,
    gcs_uses,
)
from components.pathways.jobset_names import HEAD_JOB
from components.pathways.jobset_pods import expand_jobset
from components.pathways.scheduler_model import (
    Fit,
    NodePoolModel,
    PoolIndex,
    jobset_bound_topologies,
    schedulable_groups,
    why_not,
)
from components.pathways.spec import PathwaysJobSpec, proxy_address, wrapped_command
from components.pathways.storage_access import StorageCheck, job_identities, storage_access
from components.pathways.volumes import mount_problems

SOURCE = "preflight"


@dataclass(frozen=True)
class SpecKeys:
    """How the input a job was built from names its slices and deployment mode, for messages."""

    slices: str
    mode: str
    colocated: str  # the mode value that colocates the head with the workers
    separate_head: str  # a mode value that puts the head on CPU nodes


STACK_KEYS = SpecKeys("slices", "mode", "inference", "training")
CRD_KEYS = SpecKeys(
    "workers[0].numSlices", "controller.deploymentMode", "colocate_head_with_workers", "default"
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
    # The JobSet it runs as (JobSet backend): its pods are read from it (``expand_jobset``)
    # instead of the controller's expansion of ``spec``.
    jobset: Mapping[str, Any] | None = None
    keys: SpecKeys = STACK_KEYS
    # The PathwaysJob's own annotations (the controller gives them to the head pod: the Cloud
    # Storage FUSE sidecar's); a JobSet carries its pods' in itself.
    annotations: Mapping[str, str] | None = None
    # What Kueue adds to every pod when it admits the job on its team's dedicated flavors
    # (ResourceFlavor nodeLabels and tolerations): the pods then select and tolerate only the
    # team's nodes.
    queue_selector: Mapping[str, str] = field(default_factory=dict)
    queue_tolerations: tuple[Toleration, ...] = ()

    def expand(self) -> ExpandedJob:
        job = (
            expand_jobset(self.jobset)
            if self.jobset is not None
            else expand(self.name, self.namespace, self.spec, self.annotations)
        )
        if not self.queue_selector and not self.queue_tolerations:
            return job
        return dataclasses.replace(
            job, head=self._admitted(job.head), workers=self._admitted(job.workers)
        )

    def _admitted(self, pod: PodModel) -> PodModel:
        return dataclasses.replace(
            pod,
            node_selector={**pod.node_selector, **self.queue_selector},
            tolerations=(*pod.tolerations, *self.queue_tolerations),
        )

    @property
    def label(self) -> str:
        return f"{self.kind} '{self.namespace}/{self.name}'"

    @property
    def slices(self) -> int:
        return self.spec.workers[0].num_slices


@dataclass(frozen=True)
class Placement:
    """A checked job and the node pools its head and its workers can land on."""

    deployment: Deployment
    job: ExpandedJob
    head: Fit
    workers: Fit

    def may_land_on(self, names: Iterable[str]) -> bool:
        return not (self.head.names.isdisjoint(names) and self.workers.names.isdisjoint(names))

    def landing(self) -> tuple[NodePoolModel, ...]:
        """Every node pool the job's pods can land on, head's first, each once."""
        return tuple({p.name: p for p in self.head.pools + self.workers.pools}.values())


@dataclass
class PreflightReport:
    issues: list[ConfigIssue] = field(default_factory=list)
    jobs: dict[str, dict[str, Any]] = field(default_factory=dict)

    def raise_if_failed(self) -> None:
        if self.issues:
            raise ConfigError(self.issues, SOURCE)


def preflight_job(
    name: str,
    namespace: str,
    spec: PathwaysJobSpec,
    pools: Sequence[NodePoolModel],
    grants: Iterable[BucketGrant] | None = None,
    jobset: Mapping[str, Any] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> PreflightReport:
    """The preflight of one PathwaysJob built through the Python API, or of the JobSet it is
    rendered as (``jobset``: its pods are read from it); its ``gs://`` paths are checked when
    ``grants`` says what the pools' identities may do (None: not checked). ``annotations``: the
    PathwaysJob's own (the controller gives them to the head pod)."""
    address = proxy_address(name, namespace)
    kind = "PathwaysJob" if jobset is None else "PathwaysJobSet"
    deployment = Deployment(
        "spec",
        kind,
        name,
        namespace,
        None,
        spec,
        address,
        jobset=jobset,
        keys=CRD_KEYS,
        annotations=annotations,
    )
    report = PreflightReport()
    storage = None if grants is None else StorageCheck(tuple(grants), _grant_role)
    check_job(deployment, pools, storage, report)
    return report


def _grant_role(bucket: str, access: Access) -> str:
    return f"grant it {ROLES[access]} on gs://{bucket} (a bucket IAM member: DataBucketGrants)"


def check_job(
    deployment: Deployment,
    pools: Sequence[NodePoolModel] | PoolIndex,
    storage: StorageCheck | None,
    report: PreflightReport,
) -> Placement:
    """Check one job; pass a ``PoolIndex`` built once when checking many against one set of
    pools (each job then costs what its own pods select, not a scan of every pool)."""
    index = pools if isinstance(pools, PoolIndex) else PoolIndex(pools)
    job = deployment.expand()
    head, workers = index.fit(job.head), index.fit(job.workers)
    problems = list(job_problems(job, deployment, index, head, workers))
    problems += head_mount_problems(deployment, job.head.host_network)
    uses = gcs_uses(deployment.spec)
    access, access_problems = storage_access(uses, job_identities(job, head, workers), storage)
    problems += [("", problem) for problem in access_problems]
    report.issues += [
        ConfigIssue(f"{deployment.key}{sub}", f"{deployment.label}: {p}") for sub, p in problems
    ]
    key = f"{deployment.namespace}/{deployment.name}"
    report.jobs[key] = {
        "kind": deployment.kind,
        "image": deployment.image,
        "command": user_command(job.head),
        "deploymentMode": job.deployment_mode.value,
        "head": pod_summary(job.head, head),
        "workers": pod_summary(job.workers, workers),
        "images": {**component_images(deployment.spec), "user": deployment.image},
        "pathwaysDir": job.pathways_dir,
        **access,
        "address": deployment.address,
        "resolvesFrom": resolves_from(deployment.address, deployment.namespace),
    }
    if node_pool := job.workers.node_selector.get(NODE_POOL_LABEL):
        # The one node pool the job's workers (and a colocated head) are pinned to.
        report.jobs[key]["nodePool"] = node_pool
    return Placement(deployment, job, head, workers)


def head_mount_problems(deployment: Deployment, host_network: bool) -> list[tuple[str, str]]:
    """The head's Cloud Storage FUSE volumes that would not mount (``volumes.mount_problems``),
    keyed in the spec's template; a JobSet's head template carries its own annotations."""
    template: Mapping[str, Any] = deployment.spec.controller.template or {}
    annotations = deployment.annotations
    if deployment.jobset is not None:
        head = next(
            job for job in deployment.jobset["spec"]["replicatedJobs"] if job["name"] == HEAD_JOB
        )
        template = head["template"]["spec"]["template"]
        annotations = template.get("metadata", {}).get("annotations")
    problems = mount_problems(template.get("spec", {}), annotations, host_network)
    return [(f".controller.template.spec.{key}", message) for key, message in problems]


def job_problems(
    job: ExpandedJob, deployment: Deployment, index: PoolIndex, head: Fit, workers: Fit
):
    """What keeps the job's head or workers from being scheduled, as (key suffix, message);
    ``head`` and ``workers`` are where they fit. The "why not" texts are built only when
    nothing fits."""
    if not head.pools:
        hint = ""
        if job.head.colocated:
            hint = (
                " (a colocated head requests no TPU, so GKE adds no toleration: its pod template "
                "must tolerate google.com/tpu)"
            )
        yield "", f"the head pod fits no node: {_reasons(job.head, index.pools)}{hint}"
    pool_name = deployment.pool
    own = index.group(pool_name) if pool_name else index.pools
    where = f"pool {pool_name!r}" if pool_name else "any node pool"
    fitting = workers.in_group(pool_name) if pool_name else workers.pools
    slices = job.workers.groups
    if schedulable_groups(job.workers) < slices:
        yield f".{deployment.keys.slices}", _one_slice_only(slices, deployment.keys)
    elif not own:
        yield "", f"{where} is not among the node pools checked"
    elif not fitting:
        labels = "; ".join(dict.fromkeys(f"{{{p.describe_labels()}}}" for p in own[:1]))
        message = (
            f"the worker pods fit no node of {where}: {_reasons(job.workers, own)}; worker "
            f"nodeSelector {_pairs(job.workers.node_selector)}; the pool's nodes carry {labels}"
        )
        yield "", message
    elif len(fitting) < slices:
        names = ", ".join(p.name for p in fitting)
        message = (
            f"asks for {slices} slices but only {len(fitting)} node pool(s) can hold one "
            f"({names}); each slice needs a whole node pool"
        )
        yield "", message


def _one_slice_only(slices: int, keys: SpecKeys) -> str:
    return (
        f"{keys.slices} {slices} with {keys.mode} {keys.colocated} never schedules: the "
        "controller binds every colocated worker to the node pool of its JobSet's pods "
        "(required pod affinity per cloud.google.com/gke-nodepool) while JobSet's exclusive "
        "placement gives each slice a node pool of its own, so the first slice takes the node "
        f"pool and the other {slices - 1} stay Pending; set {keys.slices}: 1, or use "
        f"{keys.mode}: {keys.separate_head} (head on CPU nodes) for more slices"
    )


def shared_node_pools(placements: Sequence[Placement]) -> list[ConfigIssue]:
    """Jobs that could land on a node pool a colocated job needs to itself.

    A colocated job's workers are bound to the node pool its head lands on, and keep other
    JobSets out of it; its head has no exclusive placement and is kept out by nobody. If another
    job holds that pool first (or takes it while the job restarts), the head lands beside it and
    the workers never schedule. Linear in the jobs and the pools colocated jobs can land on."""
    bound = {
        index
        for index, placement in enumerate(placements)
        if NODE_POOL_LABEL in jobset_bound_topologies(placement.job.workers)
    }
    holders: dict[str, list[int]] = defaultdict(list)
    for index in sorted(bound):
        for pool in placements[index].landing():
            holders[pool.name].append(index)
    met: dict[tuple[int, int], list[str]] = defaultdict(list)
    for index, placement in enumerate(placements):
        if not placement.may_land_on(holders.keys()):
            continue
        for pool in placement.landing():
            for holder in holders.get(pool.name, ()):
                # each pair once: two colocated jobs are reported by the later one
                if holder != index and (holder < index or index not in bound):
                    met[(holder, index)].append(pool.name)
    return [_meeting(placements[a], placements[b], pools) for (a, b), pools in met.items()]


def _meeting(holder: Placement, other: Placement, pools: list[str]) -> ConfigIssue:
    where = ", ".join(repr(p) for p in pools)
    return ConfigIssue(
        other.deployment.key,
        f"{holder.deployment.label} (colocated: it needs its node pool to itself) and "
        f"{other.deployment.label} could both land on node pool {where}: the colocated head is "
        "kept out of no node pool another job holds, and its workers, bound to the head's node "
        "pool, then never schedule. Give one of them another TPU pool, or add slices to the "
        "pool: the stack pins each colocated job, and the single-slice jobs beside it, to node "
        "pools of their own while there are enough (a job of several slices cannot be pinned)",
    )


def _reasons(pod: PodModel, pools: Sequence[NodePoolModel]) -> str:
    """Why not, once per group of identical pools (a TPU pool's slices share their reasons)."""
    seen: dict[str, str] = {}
    for pool in pools:
        seen.setdefault(pool.group, f"pool {pool.group!r}: {why_not(pod, pool)}")
    return "; ".join(seen.values()) or "no node pools"


def _pairs(selector: dict[str, str]) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in sorted(selector.items())) + "}"


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


def pod_summary(pod: PodModel, landing: Fit) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "pods": pod.pods,
        "nodeSelector": dict(sorted(pod.node_selector.items())),
        "hostNetwork": pod.host_network,
        "identity": _identity(pod, landing),
        "landsOn": list(landing.groups),
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


def _identity(pod: PodModel, landing: Fit) -> str:
    if pod.host_network:
        nodes = sorted({i or "the owner stack's node service account" for i in landing.identities})
        return "node service account " + (", ".join(nodes) or "(no node fits)")
    return f"Kubernetes service account {pod.service_account or 'default'} (Workload Identity)"


def user_command(head: PodModel) -> list[str]:
    """The user's command, without the SIGTERM wrapper around it."""
    prefix = wrapped_command([])
    command = list(head.command)
    return command[len(prefix) :] if command[: len(prefix)] == prefix else command
