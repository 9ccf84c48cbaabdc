"""Our own model of what the PathwaysJob controller v0.1.4 makes of a PathwaysJob: the pods.

No Pulumi here: a ``PathwaysJobSpec`` in, head and worker pod descriptions out, so the preflight
can schedule them against node pools before anything is registered.

Facts modelled, all from google/pathways-job v0.1.4, internal/controller/pathwaysjob_controller.go
(read 2026-11; line numbers of that tag):
- Workers (MakeWorkerJob, ~689-790): one Job per slice (replicas = numSlices), parallelism = VMs
  per slice; each pod limits ``google.com/tpu`` to the chips of one VM (4, or 8 for the
  ct5lp-hightpu-8t and ct6e-standard-8t types; calculateVMsFromMachineTypeAndTopology ~459);
  nodeSelector = the worker's own nodeSelector plus ``cloud.google.com/gke-tpu-accelerator`` and
  ``cloud.google.com/gke-tpu-topology`` (makeTPUNodeSelector ~506); ``hostNetwork: true`` and
  ``dnsPolicy: ClusterFirstWithHostNet`` (~775); annotation
  ``alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool``: one slice per
  node pool. Worker pods carry no CPU/memory requests and no service account name.
- Colocated mode adds to every worker (MakePodAffinityRules ~792, applied ~783) a required pod
  affinity to pods labelled ``jobset.sigs.k8s.io/jobset-name`` = its own JobSet and a required
  anti-affinity to pods of any other JobSet that carry ``job-name``, both per
  ``cloud.google.com/gke-nodepool``: every slice is bound to the node pool its JobSet's pods
  (the head first) are on, and keeps other JobSets' pods out of it.
- Head (MakePathwaysHeadPodSpec ~850): with a user template, the template's pod spec plus the
  resource manager (8 CPU / 32 GB) and proxy (16 CPU / 100 GB) as sidecar init containers
  (restartPolicy Always, so their requests add up with the main containers'); headless, just
  those two containers. Either way ``hostNetwork: true``. Default mode adds no nodeSelector
  (only exclusive placement per ``kubernetes.io/hostname``, ~919); colocated mode replaces the
  nodeSelector with the TPU one (~948: the workers' nodeSelector plus accelerator and topology,
  so a node pool the workers select by name pins the head too) and requests no TPU, so it gets
  no automatic toleration of the TPU taint (since v0.1.3 the controller adds none: commit
  12d8085). It has no pod (anti-)affinity and no exclusive placement.
- Priority: the head keeps its template's ``priorityClassName``; the workers get
  ``workers[0].priorityClassName`` (MakeWorkerJob ~744).
- Images (MakeComponentImage ~528): a custom component's image, else
  ``us-docker.pkg.dev/cloud-tpu-v2-images/pathways/{server,proxy_server}:<pathwaysVersion or
  latest>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from components.labels import (
    ACCELERATOR_LABEL,
    HOSTNAME_LABEL,
    NODE_POOL_LABEL,
    TOPOLOGY_LABEL,
)
from components.pathways.head_sizing import PROXY, RESOURCE_MANAGER, PodResources
from components.pathways.spec import ComponentType, DeploymentMode, PathwaysJobSpec, WorkerType
from components.pathways.volumes import sidecar_requests
from components.tpu.quantities import parse_cpu, parse_memory

SERVER_IMAGE = "us-docker.pkg.dev/cloud-tpu-v2-images/pathways/server"
PROXY_IMAGE = "us-docker.pkg.dev/cloud-tpu-v2-images/pathways/proxy_server"
LATEST = "latest"
# The Pathways release a stack pins unless it names another (``pathwaysVersion``). Releases are
# tagged ``jax-<JAX version>`` for both images (Pathways on Cloud docs, "Pathways components on
# GKE"); jax-0.9.0 is the release pathwaysutils 0.1.13 deploys its own shared service with
# (experimental/shared_pathways_service/deploy_pathways_service.py, --jax_version default 0.9.0)
# and whose proxy_server its clients start (gke_utils.get_compatible_proxy_server_image).
PATHWAYS_RELEASE = "jax-0.9.0"

# The controller's worker type -> GKE accelerator label (MachineTypeToGKEAcceleratorTypeMap).
GKE_ACCELERATOR: Mapping[WorkerType, str] = {
    WorkerType.TPU7X_STANDARD_4T: "tpu7x",
    WorkerType.CT6E_STANDARD_4T: "tpu-v6e-slice",
    WorkerType.CT6E_STANDARD_8T: "tpu-v6e-slice",
    WorkerType.CT5P_HIGHTPU_4T: "tpu-v5p-slice",
    WorkerType.CT5LP_HIGHTPU_4T: "tpu-v5-lite-podslice",
    WorkerType.CT5LP_HIGHTPU_8T: "tpu-v5-lite-podslice",
    WorkerType.CT4P_HIGHTPU_4T: "tpu-v4-podslice",
}
_EIGHT_CHIP_VMS = {WorkerType.CT5LP_HIGHTPU_8T, WorkerType.CT6E_STANDARD_8T}


@dataclass(frozen=True)
class Toleration:
    """A pod's toleration as a manifest spells it. ``effect`` stays Kubernetes' plain string, as
    read from a release manifest or a user's pod ("" tolerates every effect): a ``TaintEffect``
    equals (and hashes as) the string it names, so the two compare and deduplicate as one."""

    key: str
    operator: str = "Equal"
    value: str = ""
    effect: str = ""

    @classmethod
    def from_manifest(cls, data: Mapping[str, Any]) -> Toleration:
        return cls(
            key=data.get("key", ""),
            operator=data.get("operator", "Equal"),
            value=data.get("value", ""),
            effect=data.get("effect", ""),
        )


class PodSet(StrEnum):
    """The pods a required pod (anti-)affinity term selects, relative to the pod carrying it."""

    # jobset.sigs.k8s.io/jobset-name In [own] (the controller's colocated workers)
    OWN_JOBSET = "pods of its own JobSet"
    # jobset-name NotIn [own], job-name Exists (the controller's colocated workers)
    OTHER_JOBSETS = "pods of other JobSets"
    # jobset.sigs.k8s.io/job-key Exists and NotIn [own], same jobset.sigs.k8s.io/priority:
    # what JobSet's exclusive placement injects (``scheduler_model.required_terms``)
    OTHER_JOBS = "pods of other exclusively placed Jobs of its priority"


@dataclass(frozen=True)
class AffinityTerm:
    """A required pod (anti-)affinity term: ``selects`` pods, per domain of ``topology_key``."""

    selects: PodSet
    topology_key: str


@dataclass(frozen=True)
class PodModel:
    """One kind of pod the controller creates: ``groups`` x ``per_group`` identical pods."""

    role: str  # "head" or "worker"
    groups: int  # slices for workers, 1 for the head
    per_group: int  # pods per slice (VMs per slice); 1 for the head
    node_selector: Mapping[str, str]
    tolerations: tuple[Toleration, ...]
    resources: PodResources
    tpu_chips: int
    host_network: bool
    service_account: str | None  # None: the namespace's `default`
    exclusive_topology: str | None  # the label key whose value a pod group holds exclusively
    images: tuple[str, ...]
    command: tuple[str, ...] = ()
    colocated: bool = False
    # Required pod affinity / anti-affinity terms the controller writes into the pod spec.
    affinity: tuple[AffinityTerm, ...] = ()
    anti_affinity: tuple[AffinityTerm, ...] = ()
    priority_class: str | None = None  # the pods' PriorityClass (None: the cluster's default)

    @property
    def pods(self) -> int:
        return self.groups * self.per_group


@dataclass(frozen=True)
class ExpandedJob:
    """The pods of one PathwaysJob, as the controller would create them."""

    name: str
    namespace: str
    deployment_mode: DeploymentMode
    head: PodModel
    workers: PodModel
    pathways_dir: str | None
    extra: Mapping[str, Any] = field(default_factory=dict)


def vms_per_slice(worker_type: WorkerType, topology: str) -> tuple[int, int]:
    """(VMs per slice, chips per VM) exactly as the v0.1.4 controller computes them."""
    chips = 1
    for part in topology.split("x"):
        chips *= int(part)
    per_vm = 8 if worker_type in _EIGHT_CHIP_VMS else 4
    return (chips // per_vm if chips >= per_vm else 1), per_vm


def component_image(spec: PathwaysJobSpec, component: ComponentType) -> str:
    for custom in spec.custom_components or []:
        if custom.component_type is component and custom.image:
            return custom.image
    tag = spec.pathways_version or LATEST
    base = PROXY_IMAGE if component is ComponentType.PROXY_SERVER else SERVER_IMAGE
    return f"{base}:{tag}"


def component_images(spec: PathwaysJobSpec) -> dict[str, str]:
    """The image each Pathways component of the job runs."""
    kinds = (ComponentType.PATHWAYS_SERVER, ComponentType.PROXY_SERVER, ComponentType.WORKER)
    return {kind.value: component_image(spec, kind) for kind in kinds}


def tpu_node_selector(spec: PathwaysJobSpec) -> dict[str, str]:
    worker = spec.workers[0]
    selector = dict(worker.node_selector or {})
    selector[ACCELERATOR_LABEL] = GKE_ACCELERATOR[worker.type]
    selector[TOPOLOGY_LABEL] = worker.topology
    return selector


def expand(
    name: str, namespace: str, spec: PathwaysJobSpec, annotations: Mapping[str, str] | None = None
) -> ExpandedJob:
    """The head and worker pods the v0.1.4 controller makes of ``spec``; ``annotations``: the
    PathwaysJob's own, which the controller gives the head pod (MakePathwaysHeadReplicatedJob),
    so a Cloud Storage FUSE sidecar they ask for runs beside the head's containers."""
    return ExpandedJob(
        name=name,
        namespace=namespace,
        deployment_mode=spec.controller.deployment_mode,
        head=_head(spec, annotations),
        workers=_workers(spec),
        pathways_dir=spec.pathways_dir,
    )


def _workers(spec: PathwaysJobSpec) -> PodModel:
    worker = spec.workers[0]
    vms, chips = vms_per_slice(worker.type, worker.topology)
    colocated = spec.controller.deployment_mode is DeploymentMode.COLOCATE_HEAD_WITH_WORKERS
    return PodModel(
        role="worker",
        groups=worker.num_slices,
        per_group=vms,
        node_selector=tpu_node_selector(spec),
        tolerations=(),
        resources=PodResources(0, 0),
        tpu_chips=chips,
        host_network=True,
        service_account=None,
        exclusive_topology=NODE_POOL_LABEL,
        images=(component_image(spec, ComponentType.WORKER),),
        affinity=(AffinityTerm(PodSet.OWN_JOBSET, NODE_POOL_LABEL),) if colocated else (),
        anti_affinity=(AffinityTerm(PodSet.OTHER_JOBSETS, NODE_POOL_LABEL),) if colocated else (),
        priority_class=worker.priority_class_name,
    )


def _head(spec: PathwaysJobSpec, annotations: Mapping[str, str] | None) -> PodModel:
    controller = spec.controller
    colocated = controller.deployment_mode is DeploymentMode.COLOCATE_HEAD_WITH_WORKERS
    pod_spec: Mapping[str, Any] = (controller.template or {}).get("spec", {})
    containers = list(pod_spec.get("containers", []))
    resources = RESOURCE_MANAGER + PROXY + sidecar_requests(annotations)
    for container in containers:
        resources = resources + container_requests(container)
    main = next(
        (c for c in containers if c.get("name") == controller.main_container_name),
        containers[0] if containers else None,
    )
    images = [component_image(spec, ComponentType.PATHWAYS_SERVER)]
    images.append(component_image(spec, ComponentType.PROXY_SERVER))
    images += [c["image"] for c in containers if c.get("image")]
    selector = tpu_node_selector(spec) if colocated else dict(pod_spec.get("nodeSelector", {}))
    return PodModel(
        role="head",
        groups=1,
        per_group=1,
        node_selector=selector,
        tolerations=tuple(Toleration.from_manifest(t) for t in pod_spec.get("tolerations", [])),
        resources=resources,
        tpu_chips=0,
        host_network=True,
        service_account=pod_spec.get("serviceAccountName"),
        exclusive_topology=None if colocated else HOSTNAME_LABEL,
        images=tuple(images),
        command=tuple(main.get("command", [])) if main else (),
        colocated=colocated,
        priority_class=pod_spec.get("priorityClassName"),
    )


def container_requests(container: Mapping[str, Any]) -> PodResources:
    """A container's effective requests: its requests, else its limits (Kubernetes defaulting)."""
    resources = container.get("resources", {})
    requests = {**resources.get("limits", {}), **resources.get("requests", {})}
    cpu = parse_cpu(requests["cpu"]) if "cpu" in requests else 0
    memory = parse_memory(requests["memory"]) if "memory" in requests else 0
    return PodResources(cpu, memory)
