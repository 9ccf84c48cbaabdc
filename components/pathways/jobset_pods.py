"""The pods a Pathways JobSet creates, read back from its manifest: one model of the pods
(``controller_model.PodModel``), two renderers. ``controller_model.expand`` says what the
PathwaysJob controller would create; ``expand_jobset`` reads what a JobSet (``render_jobset``'s,
or any with ``pathways-head`` and ``worker`` replicated jobs) will create, so the scheduler model
and the preflight check either backend the same way. Pure: no Pulumi.

Kubernetes facts used (kubernetes.io docs, "Sidecar containers" and "Resource management for
pods", 1.29+): an init container with ``restartPolicy: Always`` is a native sidecar that runs for
the pod's lifetime, so its requests add up with the main containers'; an ordinary init container
runs alone before them, beside only the sidecars declared before it; the pod asks for the larger
of the two. A container's requests default to its limits. JobSet (kubernetes-sigs/jobset
v0.10.1) reads ``alpha.jobset.sigs.k8s.io/exclusive-topology`` on the JobSet or on a replicated
job's template.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from components.labels import ACCELERATOR_LABEL, TPU_RESOURCE
from components.pathways.controller_model import (
    ExpandedJob,
    PodModel,
    Toleration,
    container_requests,
)
from components.pathways.head_sizing import PodResources
from components.pathways.jobset_names import (
    EXCLUSIVE_TOPOLOGY,
    HEAD_JOB,
    KIND,
    PATHWAYS_CONTAINERS,
    RM_CONTAINER,
    WORKER_JOB,
    RestartPolicy,
)
from components.pathways.spec import DeploymentMode
from components.pathways.volumes import sidecar_requests

_SCRATCH_FLAG = "--gcs_scratch_location="

# Where ``expand_jobset(render_jobset(name, ns, spec, ...))`` and
# ``controller_model.expand(name, ns, spec)`` may disagree, as (role, PodModel field) -> why.
# Any other difference is a bug in one of the two renderers
# (tests/unit/pathways/test_jobset_pods.py).
DIFFERENCES: Mapping[tuple[str, str], str] = {
    ("worker", "tolerations"): (
        "the JobSet names the google.com/tpu toleration, as XPK does; under the controller GKE "
        "adds the same one when the pod requests TPU chips (the scheduler model treats both alike)"
    ),
    ("worker", "images"): (
        "with a colocated Python sidecar image: both backends run it beside each worker, but "
        "controller_model lists only the worker image"
    ),
    ("head", "node_selector"): (
        "render_jobset(head_node_selector=...) places a head whose template names no nodes; "
        "the controller leaves it unplaced"
    ),
    ("head", "images"): (
        "render_jobset(head_proxy=False): a shared service's head runs the resource manager "
        "only, as pathwaysutils 0.1.13's deployer runs it; the controller always adds the proxy"
    ),
    ("head", "resources"): "render_jobset(head_proxy=False): no proxy, so no proxy's limits",
    ("head", "host_network"): "render_jobset(host_network=False); the controller cannot",
    ("worker", "host_network"): "render_jobset(host_network=False); the controller cannot",
    ("head", "service_account"): "host_network=False: the pods run as the given account",
    ("worker", "service_account"): "host_network=False: the pods run as the given account",
}


class NotAPathwaysJobSet(ValueError):
    """The manifest is not a JobSet with the replicated jobs of a Pathways workload."""


def expand_jobset(manifest: Mapping[str, Any]) -> ExpandedJob:
    """The head and worker pods of a Pathways JobSet manifest."""
    if manifest.get("kind") != KIND:
        raise NotAPathwaysJobSet(f"expected a {KIND}, got {manifest.get('kind')!r}")
    metadata = manifest.get("metadata", {})
    jobs = {job.get("name"): job for job in manifest.get("spec", {}).get("replicatedJobs", [])}
    missing = [name for name in (HEAD_JOB, WORKER_JOB) if name not in jobs]
    if missing:
        raise NotAPathwaysJobSet(
            f"JobSet {metadata.get('name')!r} has no replicated job {', '.join(missing)}"
        )
    jobset_annotations = metadata.get("annotations", {})
    head = _pod_model("head", jobs[HEAD_JOB], jobset_annotations)
    return ExpandedJob(
        name=metadata.get("name", ""),
        namespace=metadata.get("namespace", "default"),
        deployment_mode=(
            DeploymentMode.COLOCATE_HEAD_WITH_WORKERS if head.colocated else DeploymentMode.DEFAULT
        ),
        head=head,
        workers=_pod_model("worker", jobs[WORKER_JOB], jobset_annotations),
        pathways_dir=_pathways_dir(_pod_spec(jobs[HEAD_JOB])),
    )


def _pod_spec(replicated_job: Mapping[str, Any]) -> Mapping[str, Any]:
    return replicated_job.get("template", {}).get("spec", {}).get("template", {}).get("spec", {})


def _pod_model(
    role: str, replicated_job: Mapping[str, Any], jobset_annotations: Mapping[str, str]
) -> PodModel:
    job_template = replicated_job.get("template", {})
    job_spec = job_template.get("spec", {})
    pod_template = job_spec.get("template", {})
    pod_spec = pod_template.get("spec", {})
    inits = list(pod_spec.get("initContainers", []))
    containers = list(pod_spec.get("containers", []))
    selector = dict(pod_spec.get("nodeSelector", {}))
    chips = pod_tpu_chips(inits, containers)
    exclusive = next(
        (
            annotations[EXCLUSIVE_TOPOLOGY]
            for annotations in (
                pod_template.get("metadata", {}).get("annotations", {}),
                job_template.get("metadata", {}).get("annotations", {}),
                jobset_annotations,
            )
            if EXCLUSIVE_TOPOLOGY in annotations
        ),
        None,
    )
    main = next((c for c in containers if c.get("name") not in PATHWAYS_CONTAINERS), None)
    return PodModel(
        role=role,
        groups=replicated_job.get("replicas", 1),
        per_group=job_spec.get("parallelism", 1),
        node_selector=selector,
        tolerations=tuple(Toleration.from_manifest(t) for t in pod_spec.get("tolerations", [])),
        # The Cloud Storage FUSE sidecar the pod's annotations have injected (a native sidecar).
        resources=pod_requests(inits, containers)
        + sidecar_requests(pod_template.get("metadata", {}).get("annotations")),
        tpu_chips=chips,
        host_network=bool(pod_spec.get("hostNetwork", False)),
        service_account=pod_spec.get("serviceAccountName"),
        exclusive_topology=exclusive,
        images=tuple(c["image"] for c in [*inits, *containers] if c.get("image")),
        command=tuple(main.get("command", [])) if main else (),
        # A head pinned to TPU nodes without asking for chips shares the workers' hosts.
        colocated=role == "head" and ACCELERATOR_LABEL in selector and not chips,
        priority_class=pod_spec.get("priorityClassName"),
    )


def _is_sidecar(container: Mapping[str, Any]) -> bool:
    return container.get("restartPolicy") == RestartPolicy.ALWAYS


def pod_requests(
    inits: Sequence[Mapping[str, Any]], containers: Iterable[Mapping[str, Any]]
) -> PodResources:
    """What the scheduler reserves for the pod: main containers plus sidecars, or the largest
    ordinary init container (with the sidecars started before it), whichever is larger."""
    sidecars = PodResources(0, 0)
    init_peak = PodResources(0, 0)
    for container in inits:
        if _is_sidecar(container):
            sidecars = sidecars + container_requests(container)
        else:
            init_peak = _larger(init_peak, sidecars + container_requests(container))
    running = sidecars
    for container in containers:
        running = running + container_requests(container)
    return _larger(init_peak, running)


def _larger(a: PodResources, b: PodResources) -> PodResources:
    """Per resource, as the scheduler compares them."""
    return PodResources(
        max(a.cpu_millicores, b.cpu_millicores), max(a.memory_bytes, b.memory_bytes)
    )


def _chips(container: Mapping[str, Any]) -> int:
    resources = container.get("resources", {})
    # Extended resources: requests must equal limits; either may be given alone.
    amount = {**resources.get("limits", {}), **resources.get("requests", {})}.get(TPU_RESOURCE, 0)
    return int(amount)


def pod_tpu_chips(
    inits: Sequence[Mapping[str, Any]], containers: Iterable[Mapping[str, Any]]
) -> int:
    """The TPU chips a pod holds, by the same rule as CPU and memory."""
    sidecars = init_peak = 0
    for container in inits:
        if _is_sidecar(container):
            sidecars += _chips(container)
        else:
            init_peak = max(init_peak, sidecars + _chips(container))
    return max(init_peak, sidecars + sum(_chips(c) for c in containers))


def _pathways_dir(head_spec: Mapping[str, Any]) -> str | None:
    """The resource manager's scratch location (None: unset, as the controller renders it)."""
    for container in [*head_spec.get("initContainers", []), *head_spec.get("containers", [])]:
        if container.get("name") != RM_CONTAINER:
            continue
        for arg in container.get("args", []):
            if arg.startswith(_SCRATCH_FLAG):
                return arg.removeprefix(_SCRATCH_FLAG) or None
    return None
