"""``PathwaysWorkload``: a Pathways job on a cluster, as a PathwaysJob or as its JobSet.

The public Python API's path (``examples/python-api``): a ``PathwaysJobSpec`` of one worker
shape (the accelerator's) and a controller running the user's container, then a
``PathwaysJob`` (the controller expands it) or a ``PathwaysJobSet`` (the JobSet XPK 1.16
renders, no controller).
"""

from typing import NotRequired, TypedDict

import pulumi
from pydantic import ValidationError

from components.config.schema.pools import CpuPoolConfig
from components.config.schema.workloads import WorkloadMode
from components.errors import ConfigError, issues_from_validation
from components.labels import NODE_POOL_LABEL, QUEUE_LABEL
from components.pathways.spec import (
    Controller,
    DeploymentMode,
    PathwaysJobSpec,
    Worker,
    WorkerType,
    job_name_problem,
    wait_for_running,
)
from components.pathways.user_container import UserContainer
from components.tpu import catalog
from components.vocabulary import Priority, WorkloadBackend
from components.workloads.job import PathwaysJob, PathwaysJobArgs
from components.workloads.jobset import PathwaysJobSet, PathwaysJobSetArgs, wait_for_started
from tpu_pathways_provider.checks import Problems
from tpu_pathways_provider.kube import child_options, cluster_provider

# Where each mode's head runs (components.resolve.workload_specs: training heads on the CPU
# pool, inference heads colocated with the workers, headless: no user container).
_MODES = {
    WorkloadMode.TRAINING: DeploymentMode.DEFAULT,
    WorkloadMode.INFERENCE: DeploymentMode.COLOCATE_HEAD_WITH_WORKERS,
    WorkloadMode.HEADLESS: DeploymentMode.DEFAULT,
}
HEAD_POOL = CpuPoolConfig.model_fields["name"].default
"""The stack's default CPU pool (cpu-np), where a Cluster's heads run."""


class PathwaysWorkloadArgs(TypedDict):
    """A Pathways job: its TPU workers, its user container and where it runs."""

    kubeconfig: pulumi.Input[str]
    """A kubeconfig for the cluster (a Cluster's kubeconfig output)."""
    namespace: str
    """The namespace it runs in (a team's)."""
    name: str
    """The job's name (DNS-1035, at most 22 characters)."""
    accelerator: str
    """XPK accelerator name of each slice (v5litepod-16, v5p-32, v6e-8, tpu7x-4x4x4)."""
    slices: NotRequired[int]
    """Number of slices (default 1)."""
    backend: NotRequired[WorkloadBackend]
    """pathwaysjob (needs the PathwaysJob controller; default) or jobset."""
    mode: NotRequired[WorkloadMode]
    """training (head on the CPU pool; default), inference (head on the workers) or headless."""
    image: NotRequired[str]
    """The user container's image (training and inference)."""
    command: NotRequired[list[str]]
    """The user container's command."""
    env: NotRequired[dict[str, str]]
    """The user container's environment."""
    cpu: NotRequired[str]
    """CPU of the user container ('8', '500m')."""
    memory: NotRequired[str]
    """Memory of the user container ('32Gi')."""
    pathways_dir: str
    """gs:// path the Pathways servers write their scratch data to."""
    pathways_version: NotRequired[str]
    """Pathways release (server and proxy image tag)."""
    service_account: NotRequired[str]
    """Kubernetes service account of the user container (a team's workload account)."""
    head_node_pool: NotRequired[str]
    """The CPU node pool a training head (and a JobSet's head) is pinned to (default cpu-np)."""
    priority: NotRequired[Priority]
    """Kueue priority class."""
    queue: NotRequired[str]
    """Kueue LocalQueue to submit to (none: not queued)."""
    max_restarts: NotRequired[int]
    """Restarts of the whole job before it fails."""
    max_slice_restarts: NotRequired[int]
    """Restarts of one slice before the job restarts."""
    termination_grace_period_seconds: NotRequired[int]
    """Seconds a preempted pod has to checkpoint."""
    wait_for_running_seconds: NotRequired[int]
    """Make `pulumi up` wait up to this long for the job to run (0 or unset: no wait)."""


class PathwaysWorkload(pulumi.ComponentResource):
    """A Pathways workload (training, inference or headless) on TPU slices, as a PathwaysJob or a JobSet."""

    job_name: pulumi.Output[str]
    """The Kubernetes object's name."""
    namespace: pulumi.Output[str]
    """Its namespace."""

    def __init__(
        self, name: str, args: PathwaysWorkloadArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:index:PathwaysWorkload", name, None, opts)
        spec = workload_spec(args, f"PathwaysWorkload {name!r}")
        provider = cluster_provider(name, args["kubeconfig"], self)
        backend = WorkloadBackend(args.get("backend") or WorkloadBackend.PATHWAYS_JOB)
        wait = int(args.get("wait_for_running_seconds") or 0)
        queue = args.get("queue")
        if backend is WorkloadBackend.JOBSET:
            PathwaysJobSet(
                name,
                PathwaysJobSetArgs(
                    name=args["name"],
                    namespace=args["namespace"],
                    spec=spec,
                    provider=provider,
                    annotations=wait_for_started(wait) if wait else None,
                    queue_name=queue,
                    service_account=args.get("service_account"),
                    head_node_selector={NODE_POOL_LABEL: args.get("head_node_pool") or HEAD_POOL},
                ),
                child_options(self, opts),
            )
        else:
            PathwaysJob(
                name,
                PathwaysJobArgs(
                    name=args["name"],
                    namespace=args["namespace"],
                    spec=spec,
                    provider=provider,
                    labels={QUEUE_LABEL: queue} if queue else None,
                    annotations=wait_for_running(wait) if wait else None,
                ),
                child_options(self, opts),
            )
        self.job_name = pulumi.Output.from_input(args["name"])
        self.namespace = pulumi.Output.from_input(args["namespace"])
        self.register_outputs({"job_name": self.job_name, "namespace": self.namespace})


def workload_spec(args: PathwaysWorkloadArgs, source: str) -> PathwaysJobSpec:
    """The PathwaysJob spec of ``args``; every problem at once (ConfigError), keyed by input."""
    problems = Problems(source)
    if problem := job_name_problem(args["name"]):
        problems.add("name", problem)
    worker = _worker(args, problems)
    controller = _controller(args, problems)
    spec = None
    if worker is not None and controller is not None:
        try:
            spec = PathwaysJobSpec(
                workers=[worker],
                controller=controller,
                max_restarts=_int(args.get("max_restarts")),
                pathways_dir=args["pathways_dir"],
                pathways_version=args.get("pathways_version"),
            )
        except ValidationError as exc:
            problems.issues += issues_from_validation(exc, PathwaysJobSpec)
    problems.raise_any()
    assert spec is not None
    return spec


def _worker(args: PathwaysWorkloadArgs, problems: Problems) -> Worker | None:
    try:
        shape = catalog.resolve_accelerator(args["accelerator"])
        kind = WorkerType(shape.machine_type)
    except (catalog.CatalogError, ValueError) as exc:
        problems.add("accelerator", str(exc))
        return None
    priority = args.get("priority")
    try:
        return Worker(
            type=kind,
            topology=shape.topology,
            num_slices=_int(args.get("slices")) or 1,
            max_slice_restarts=_int(args.get("max_slice_restarts")),
            termination_grace_period_seconds=_int(args.get("termination_grace_period_seconds")),
            priority_class_name=Priority(priority).value if priority else None,
        )
    except ValidationError as exc:
        keys = {"numSlices": "slices"}
        for issue in issues_from_validation(exc, Worker):
            problems.add(keys.get(issue.key, issue.key), issue.message)
        return None


def _controller(args: PathwaysWorkloadArgs, problems: Problems) -> Controller | None:
    mode = WorkloadMode(args.get("mode") or WorkloadMode.TRAINING)
    if mode is WorkloadMode.HEADLESS:
        return Controller(deployment_mode=_MODES[mode])
    priority = args.get("priority")
    try:
        container = UserContainer(
            image=args.get("image") or "",
            command=list(args.get("command") or []),
            env=dict(args.get("env") or {}),
            service_account=args.get("service_account"),
            priority_class_name=Priority(priority).value if priority else None,
            termination_grace_period_seconds=_int(args.get("termination_grace_period_seconds")),
            **{k: args[k] for k in ("cpu", "memory") if args.get(k)},  # type: ignore[misc]
        )
    except ConfigError as exc:
        problems.issues += exc.issues
        return None
    head_pool = (args.get("head_node_pool") or HEAD_POOL) if mode is WorkloadMode.TRAINING else None
    return container.controller(_MODES[mode], head_pool)


def _int(value: object) -> int | None:
    """A number as the provider passes it (a float), as the spec's integer."""
    return int(value) if isinstance(value, float) and value.is_integer() else value  # type: ignore[return-value]
