"""A Pathways workload as one plain JobSet (``jobset.x-k8s.io/v1alpha2``), the way XPK 1.16
renders it, for clusters that run no PathwaysJob controller. Pure: a ``PathwaysJobSpec`` in, a
manifest dict out; no Pulumi (``jobset_pods`` reads such a manifest back into the pods the
preflight schedules).

Sources, read 2026-11:
- XPK 1.16.0 (PyPI wheel): ``xpk/templates/pathways_workload_create.yaml.j2`` and how
  ``xpk/commands/workload.py`` (``_generate_pathways_workload_yaml``) fills it;
  ``xpk/core/scheduling.py`` (exclusive placement per node pool); ``xpk/core/pathways.py`` (the
  PathwaysJob controller is "legacy", colocated mode is dropped).
- google/pathways-job v0.1.4, ``internal/controller/pathwaysjob_controller.go`` ("controller"
  below): what the same ``PathwaysJobSpec`` becomes under the CRD.
- pathwaysutils 0.1.13 (PyPI wheel), ``experimental/gke/jobset.py``: Pathways JobSets off the
  host network.

The layout is XPK's: coordinator, DNS hostnames, ``pathways-head`` (exclusive per host) whose
resource manager and proxy are native sidecars beside the user container, ``worker`` (one
replicated job per slice, one pod per host, exclusive per node pool). Where the two sources
differ, what the spec promises follows the controller:
- ``failurePolicy.maxRestarts`` = ``maxRestarts`` (XPK's Pathways template sets none);
- worker ``backoffLimit``: hosts x ``maxSliceRestarts`` (CRD default 1) with elastic slices,
  else hosts x 4 (XPK uses its own --max-slice-restarts the same way);
- ``customComponents`` env and ``enableMetricsCollection`` (XPK has neither); custom flags are
  appended to each component's flags (XPK: ``--custom-pathways-*-args``);
- the head keeps the template's nodeSelector, priority and grace period (XPK pins ``cpu-np`` and
  gives the head neither); the JAX env is appended to the main container's (XPK prepends it, so
  a user's JAX_PLATFORMS would win there);
- sidecar order: resource manager, then proxy (XPK lists the proxy first; native sidecars start
  one after the other, and the proxy dials the resource manager);
- headless: the resource manager and proxy are ordinary containers, without the sidecar
  ``restartPolicy`` XPK leaves on them;
- a colocated Python sidecar ignores customFlags/customEnv, as the controller does; its
  ``GRPC_SERVER_ADDRESS`` is XPK's ``0.0.0.0:50051`` (the controller's value carries literal
  quotes).
From XPK only: ``network``, ``completionMode: Indexed``, the head's ``restartPolicy: Never``
(the template's own wins), the workers' ``OnFailure`` and explicit TPU toleration, the
``protocol: TCP`` of every port. XPK's ``xpk.google.com/workload`` labels are left out.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from components.errors import ConfigError, ConfigIssue
from components.labels import (
    HOSTNAME_LABEL,
    NODE_POOL_LABEL,
    QUEUE_LABEL,
    TPU_RESOURCE,
)
from components.pathways.controller_model import (
    component_image,
    tpu_node_selector,
    vms_per_slice,
)
from components.pathways.spec import (
    PROXY_PORT,
    PYTHON_SIDECAR_PORT,
    RM_PORT,
    RM_PORTS,
    WORKER_PORTS,
    ComponentType,
    DeploymentMode,
    EnvVar,
    PathwaysJobSpec,
)
from components.pathways.user_container import shared_tmp_mount, shared_tmp_volume
from components.tpu.catalog import generation_of_machine_type, pathways_instance_type

API_VERSION = "jobset.x-k8s.io/v1alpha2"
KIND = "JobSet"
HEAD_JOB = "pathways-head"
WORKER_JOB = "worker"
RM_CONTAINER = "pathways-rm"
PROXY_CONTAINER = "pathways-proxy"
WORKER_CONTAINER = "pathways-worker"
PYTHON_SIDECAR_CONTAINER = "colocated-python-sidecar"
PATHWAYS_CONTAINERS = frozenset({RM_CONTAINER, PROXY_CONTAINER, WORKER_CONTAINER})
DEFAULT_MAIN_CONTAINER = "main"  # the CRD's default for controller.mainContainerName


# JobSet puts these on every pod it creates; the Pathways components read them (downward API).
EXCLUSIVE_TOPOLOGY = "alpha.jobset.sigs.k8s.io/exclusive-topology"
COORDINATOR_LABEL = "jobset.sigs.k8s.io/coordinator"
REPLICAS_LABEL = "jobset.sigs.k8s.io/replicatedjob-replicas"
JOB_INDEX_LABEL = "jobset.sigs.k8s.io/job-index"
JOBSET_NAME_ANNOTATION = "jobset.sigs.k8s.io/jobset-name"
REPLICATED_JOB_ANNOTATION = "jobset.sigs.k8s.io/replicatedjob-name"

# Limits of the head's components (the same in XPK 1.16 and the controller v0.1.4).
RM_LIMITS = {"cpu": "8", "memory": "32G"}
PROXY_LIMITS = {"cpu": "16", "memory": "100G"}
# Worker restarts per host without elastic slices (XPK and the controller: "suspend/resume").
DEFAULT_RESTARTS_PER_HOST = 4
# The CRD's default for workers[].maxSliceRestarts.
DEFAULT_MAX_SLICE_RESTARTS = 1
# pathwaysutils 0.1.13 sets this on the proxy and the user container of the JobSets it runs
# off the host network.
INSECURE_GRPC_ENV = {"name": "IFRT_PROXY_USE_INSECURE_GRPC_CREDENTIALS", "value": "true"}
TPU_TOLERATION = {"key": TPU_RESOURCE, "operator": "Exists"}


class RestartPolicy(StrEnum):
    """Kubernetes restart policies: of a pod, or of an init container (``ALWAYS`` makes it a
    native sidecar). Manifests carry ``.value``: YAML dumpers refuse str subclasses."""

    ALWAYS = "Always"
    NEVER = "Never"
    ON_FAILURE = "OnFailure"


# What `pulumi up` waits for: JobSet v0.10.1 sets StartupPolicyCompleted once every replicated
# job is ready in startupPolicyOrder InOrder (kubernetes-sigs/jobset v0.10.1,
# api/jobset/v1alpha2/jobset_types.go, JobSetStartupPolicyCompleted): the head, then the workers.
STARTED_CONDITION = "StartupPolicyCompleted"

# Components pull on every start: with an unpinned pathwaysVersion "latest" moves (both sources).
PULL_ALWAYS = "Always"


# Why the JobSet backend has no colocated mode (the stack config's message names it too).
COLOCATED_UNSUPPORTED = (
    "(the head colocated with the workers) cannot be rendered as a JobSet: XPK 1.16 dropped "
    "colocated mode (xpk/core/pathways.py), its head always runs on the CPU pool"
)


class ColocatedModeUnsupported(ConfigError):
    """The JobSet backend cannot run ``colocate_head_with_workers``: XPK 1.16 dropped it (its
    head always runs on the CPU pool: xpk/core/pathways.py)."""

    KEY = "controller.deploymentMode"

    def __init__(self, name: str) -> None:
        message = (
            f"PathwaysJob {name!r}: deployment mode "
            f"{DeploymentMode.COLOCATE_HEAD_WITH_WORKERS.value!r} cannot be rendered as a "
            "JobSet (XPK 1.16 dropped it); use the default mode with the head on the CPU pool, "
            "or the PathwaysJob controller"
        )
        super().__init__([ConfigIssue(self.KEY, message)], "JobSet backend")
        self.job_name = name


def render_jobset(
    name: str,
    namespace: str,
    spec: PathwaysJobSpec,
    *,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    queue_name: str | None = None,
    host_network: bool = True,
    service_account: str | None = None,
    head_node_selector: Mapping[str, str] | None = None,
    head_proxy: bool = True,
    managed_by: str | None = None,
) -> dict[str, Any]:
    """The JobSet that runs ``spec``.

    ``labels``/``annotations`` go on the JobSet; ``queue_name`` adds Kueue's queue label (Kueue
    admits the JobSet as a whole). ``host_network=False`` takes every pod off the host network
    so it runs as ``service_account`` (Workload Identity then applies; None keeps the
    template's account on the head and the namespace's ``default`` on the workers).
    ``head_node_selector`` places a head whose template names no nodes (a headless head).
    ``head_proxy=False`` leaves the proxy out of a headless head: a shared service's head runs
    the resource manager only, as pathwaysutils 0.1.13's deployer runs it (each client brings
    its own proxy). ``managed_by`` sets ``spec.managedBy`` (JobSet v0.10.1): a fleet's JobSets
    name ``kueue.x-k8s.io/multikueue``, so MultiKueue runs them on a worker, not the manager.
    Raises ``ColocatedModeUnsupported`` for the colocated mode.
    """
    if spec.controller.deployment_mode is DeploymentMode.COLOCATE_HEAD_WITH_WORKERS:
        raise ColocatedModeUnsupported(name)
    pods = _PodOptions(host_network, service_account, dict(head_node_selector or {}), head_proxy)
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    all_labels = {**(labels or {}), **({QUEUE_LABEL: queue_name} if queue_name else {})}
    if all_labels:
        metadata["labels"] = all_labels
    if annotations:
        metadata["annotations"] = dict(annotations)
    jobset_spec: dict[str, Any] = {
        "coordinator": {"replicatedJob": HEAD_JOB, "jobIndex": 0, "podIndex": 0},
        "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
        "failurePolicy": {"restartStrategy": "Recreate", "maxRestarts": spec.max_restarts or 0},
        "startupPolicy": {"startupPolicyOrder": "InOrder"},  # the head first
        "replicatedJobs": [_head_job(spec, pods), _worker_job(spec, pods)],
    }
    if spec.controller.template is not None:
        # The job is done when the user's program is; headless jobs run until deleted.
        jobset_spec["successPolicy"] = {"operator": "All", "targetReplicatedJobs": [HEAD_JOB]}
    if managed_by is not None:
        jobset_spec["managedBy"] = managed_by
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": metadata, "spec": jobset_spec}


@dataclass(frozen=True)
class _PodOptions:
    host_network: bool
    service_account: str | None
    head_selector: dict[str, str]
    head_proxy: bool = True

    def apply(self, pod_spec: dict[str, Any]) -> None:
        """Host network (DNS through the cluster still) or the pod network with an identity."""
        if self.host_network:
            pod_spec["hostNetwork"] = True
            pod_spec["dnsPolicy"] = "ClusterFirstWithHostNet"
            return
        pod_spec.pop("hostNetwork", None)
        pod_spec["dnsPolicy"] = "ClusterFirst"
        if self.service_account:
            pod_spec["serviceAccountName"] = self.service_account


# --- containers ----------------------------------------------------------------------------


def _field_env(name: str, field_path: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": field_path}}}


def _label_env(name: str, label: str) -> dict[str, Any]:
    return _field_env(name, f"metadata.labels['{label}']")


def _annotation_env(name: str, annotation: str) -> dict[str, Any]:
    return _field_env(name, f"metadata.annotations['{annotation}']")


def _ports(*numbers: int) -> list[dict[str, Any]]:
    return [{"containerPort": n, "protocol": "TCP"} for n in numbers]


def _custom(spec: PathwaysJobSpec, component: ComponentType) -> tuple[list[str], list[dict]]:
    """A component's customFlags and customEnv (each component type appears at most once)."""
    for custom in spec.custom_components or []:
        if custom.component_type is component:
            env = [_env_manifest(e) for e in custom.custom_env or []]
            return list(custom.custom_flags or []), env
    return [], []


def _env_manifest(env: EnvVar) -> dict[str, Any]:
    return env.model_dump(by_alias=True, exclude_none=True, mode="json")


def _scratch_flag(spec: PathwaysJobSpec) -> str:
    # The controller passes an unset pathwaysDir through as an empty location.
    return f"--gcs_scratch_location={spec.pathways_dir or ''}"


def _metrics_flags(spec: PathwaysJobSpec) -> list[str]:
    return ["--enable_metrics_collection=true"] if spec.controller.enable_metrics_collection else []


def _component(
    spec: PathwaysJobSpec,
    component: ComponentType,
    name: str,
    args: list[str],
    env: list[dict[str, Any]],
    ports: list[dict[str, Any]],
    limits: Mapping[str, str],
) -> dict[str, Any]:
    flags, custom_env = _custom(spec, component)
    return {
        "name": name,
        "image": component_image(spec, component),
        "imagePullPolicy": PULL_ALWAYS,
        "args": [*args, *flags],
        "env": [*env, *custom_env],
        "ports": ports,
        "resources": {"limits": dict(limits)},
    }


def instance_type(spec: PathwaysJobSpec) -> str:
    """The resource manager's ``--instance_type`` (controller: MachineTypeToTPUVersionMap)."""
    worker = spec.workers[0]
    generation = generation_of_machine_type(worker.type.value)
    assert generation is not None, worker.type  # every CRD worker type is in the catalog
    return pathways_instance_type(generation, worker.type.value, worker.topology)


def resource_manager(spec: PathwaysJobSpec) -> dict[str, Any]:
    args = [
        f"--server_port={RM_PORT}",
        _scratch_flag(spec),
        "--node_type=resource_manager",
        f"--instance_count={spec.workers[0].num_slices}",
        f"--instance_type={instance_type(spec)}",
        *_metrics_flags(spec),
    ]
    env = [
        _annotation_env("REPLICATED_JOB_NAME", REPLICATED_JOB_ANNOTATION),
        _annotation_env("JOBSET_NAME", JOBSET_NAME_ANNOTATION),
        _label_env("HOST_ADDRESS", COORDINATOR_LABEL),
        {"name": "TPU_SKIP_MDS_QUERY", "value": "true"},
    ]
    return _component(
        spec, ComponentType.PATHWAYS_SERVER, RM_CONTAINER, args, env, _ports(*RM_PORTS), RM_LIMITS
    )


def proxy(spec: PathwaysJobSpec, host_network: bool) -> dict[str, Any]:
    args = [
        f"--server_port={PROXY_PORT}",
        f"--resource_manager_address=$(PATHWAYS_HEAD):{RM_PORT}",
        _scratch_flag(spec),
        *_metrics_flags(spec),
    ]
    if spec.controller.elastic_slices:
        args.append(f"--num_elastic_slices={spec.controller.elastic_slices}")
    env = [_label_env("PATHWAYS_HEAD", COORDINATOR_LABEL)]
    if not host_network:
        env.append(dict(INSECURE_GRPC_ENV))
    return _component(
        spec,
        ComponentType.PROXY_SERVER,
        PROXY_CONTAINER,
        args,
        env,
        _ports(PROXY_PORT),
        PROXY_LIMITS,
    )


def worker(spec: PathwaysJobSpec) -> dict[str, Any]:
    args = [
        f"--server_port={WORKER_PORTS[0]}",
        f"--resource_manager_address=$(PATHWAYS_HEAD):{RM_PORT}",
        _scratch_flag(spec),
        *_metrics_flags(spec),
    ]
    env = [
        {"name": "TPU_MIN_LOG_LEVEL", "value": "0"},
        {"name": "TF_CPP_MIN_LOG_LEVEL", "value": "0"},
        {"name": "XCLOUD_ENVIRONMENT", "value": "GCP"},
        {"name": "MEGASCALE_GRPC_ENABLE_XOR_TRACER", "value": "false"},
        _label_env("MEGASCALE_NUM_SLICES", REPLICAS_LABEL),
        _annotation_env("JOBSET_NAME", JOBSET_NAME_ANNOTATION),
        _annotation_env("REPLICATED_JOB_NAME", REPLICATED_JOB_ANNOTATION),
        _label_env("MEGASCALE_SLICE_ID", JOB_INDEX_LABEL),
        _label_env("PATHWAYS_HEAD", COORDINATOR_LABEL),
        _label_env("MEGASCALE_COORDINATOR_ADDRESS", COORDINATOR_LABEL),
    ]
    _, chips = vms_per_slice(spec.workers[0].type, spec.workers[0].topology)
    container = _component(
        spec,
        ComponentType.WORKER,
        WORKER_CONTAINER,
        args,
        env,
        _ports(*WORKER_PORTS),
        {TPU_RESOURCE: str(chips)},
    )
    container["volumeMounts"] = [shared_tmp_mount()]
    return container


def python_sidecar(spec: PathwaysJobSpec) -> dict[str, Any] | None:
    """The colocated Python sidecar beside each worker, when its image is given."""
    image = next(
        (
            c.image
            for c in spec.custom_components or []
            if c.component_type is ComponentType.COLOCATED_PYTHON_SIDECAR and c.image
        ),
        None,
    )
    if image is None:
        return None
    return {
        "name": PYTHON_SIDECAR_CONTAINER,
        "image": image,
        "imagePullPolicy": PULL_ALWAYS,
        "env": [
            {"name": "GRPC_SERVER_ADDRESS", "value": f"0.0.0.0:{PYTHON_SIDECAR_PORT}"},
            {"name": "PYTHONUNBUFFERED", "value": "1"},
        ],
        "ports": _ports(PYTHON_SIDECAR_PORT),
        "resources": {},
        "restartPolicy": RestartPolicy.ALWAYS.value,
        "volumeMounts": [shared_tmp_mount()],
    }


def _sidecar(container: dict[str, Any]) -> dict[str, Any]:
    """A native sidecar: an init container that keeps running beside the main containers."""
    return {**container, "restartPolicy": RestartPolicy.ALWAYS.value}


# --- replicated jobs -------------------------------------------------------------------------


def _replicated_job(
    name: str, replicas: int, pods: int, backoff_limit: int, exclusive: str, pod_template: dict
) -> dict[str, Any]:
    return {
        "name": name,
        "replicas": replicas,
        "template": {
            "metadata": {"annotations": {EXCLUSIVE_TOPOLOGY: exclusive}},
            "spec": {
                "backoffLimit": backoff_limit,
                "completionMode": "Indexed",
                "completions": pods,
                "parallelism": pods,
                "template": pod_template,
            },
        },
    }


def _head_job(spec: PathwaysJobSpec, options: _PodOptions) -> dict[str, Any]:
    template = spec.controller.template
    rm, prx = resource_manager(spec), proxy(spec, options.host_network)
    if template is None:
        containers = [rm, prx] if options.head_proxy else [rm]
        pod_template: dict[str, Any] = {"spec": {"containers": containers}}
    else:
        pod_template = copy.deepcopy(template)
        pod_spec = pod_template.setdefault("spec", {})
        pod_spec["initContainers"] = [*pod_spec.get("initContainers", []), _sidecar(rm)]
        pod_spec["initContainers"].append(_sidecar(prx))
        main = spec.controller.main_container_name or DEFAULT_MAIN_CONTAINER
        for container in pod_spec.get("containers", []):
            if container.get("name") == main:
                container["env"] = [*container.get("env", []), *_jax_env(options.host_network)]
    pod_spec = pod_template["spec"]
    pod_spec.setdefault("restartPolicy", RestartPolicy.NEVER.value)
    if not pod_spec.get("nodeSelector") and options.head_selector:
        pod_spec["nodeSelector"] = dict(options.head_selector)
    options.apply(pod_spec)
    return _replicated_job(HEAD_JOB, 1, 1, 0, HOSTNAME_LABEL, pod_template)


def _jax_env(host_network: bool) -> list[dict[str, Any]]:
    """What points the user's JAX at the proxy (controller: injectJAXBackendTargetIntoMainContainer;
    XPK: user_workload_env_vars)."""
    env = [
        _label_env("PATHWAYS_HEAD", COORDINATOR_LABEL),
        {"name": "JAX_PLATFORMS", "value": "proxy"},
        {"name": "XCLOUD_ENVIRONMENT", "value": "GCP"},
        {"name": "JAX_BACKEND_TARGET", "value": f"grpc://$(PATHWAYS_HEAD):{PROXY_PORT}"},
    ]
    return env if host_network else [*env, dict(INSECURE_GRPC_ENV)]


def worker_backoff_limit(spec: PathwaysJobSpec) -> int:
    """Pod failures a slice's Job absorbs before the JobSet restarts (controller semantics:
    an explicit maxSliceRestarts of 0 keeps the default)."""
    worker_spec = spec.workers[0]
    hosts, _ = vms_per_slice(worker_spec.type, worker_spec.topology)
    restarts = worker_spec.max_slice_restarts
    if restarts is None:
        restarts = DEFAULT_MAX_SLICE_RESTARTS
    if spec.controller.elastic_slices and restarts > 0:
        return hosts * restarts
    return hosts * DEFAULT_RESTARTS_PER_HOST


def _worker_job(spec: PathwaysJobSpec, options: _PodOptions) -> dict[str, Any]:
    worker_spec = spec.workers[0]
    hosts, _ = vms_per_slice(worker_spec.type, worker_spec.topology)
    pod_spec: dict[str, Any] = {}
    if worker_spec.termination_grace_period_seconds is not None:
        pod_spec["terminationGracePeriodSeconds"] = worker_spec.termination_grace_period_seconds
    if worker_spec.priority_class_name:
        pod_spec["priorityClassName"] = worker_spec.priority_class_name
    pod_spec["nodeSelector"] = tpu_node_selector(spec)
    sidecar = python_sidecar(spec)
    if sidecar is not None:
        pod_spec["initContainers"] = [sidecar]
    pod_spec["containers"] = [worker(spec)]
    pod_spec["restartPolicy"] = RestartPolicy.ON_FAILURE.value
    pod_spec["tolerations"] = [dict(TPU_TOLERATION)]
    pod_spec["volumes"] = [shared_tmp_volume()]
    options.apply(pod_spec)
    backoff = worker_backoff_limit(spec)
    return _replicated_job(
        WORKER_JOB, worker_spec.num_slices, hosts, backoff, NODE_POOL_LABEL, {"spec": pod_spec}
    )
