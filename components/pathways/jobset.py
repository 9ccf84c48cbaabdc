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
from dataclasses import dataclass, field
from typing import Any

from components.errors import ConfigError, ConfigIssue
from components.labels import (
    HOSTNAME_LABEL,
    NODE_POOL_LABEL,
    QUEUE_LABEL,
)
from components.pathways.controller_model import (
    tpu_node_selector,
    vms_per_slice,
)
from components.pathways.jobset_containers import (
    label_env,
    proxy,
    python_sidecar,
    resource_manager,
    sidecar,
    worker,
)
from components.pathways.jobset_names import (
    API_VERSION,
    COORDINATOR_LABEL,
    DEFAULT_MAIN_CONTAINER,
    DEFAULT_MAX_SLICE_RESTARTS,
    DEFAULT_RESTARTS_PER_HOST,
    EXCLUSIVE_TOPOLOGY,
    HEAD_JOB,
    INSECURE_GRPC_ENV,
    KIND,
    TPU_TOLERATION,
    WORKER_JOB,
    RestartPolicy,
)
from components.pathways.spec import (
    PROXY_PORT,
    DeploymentMode,
    PathwaysJobSpec,
)
from components.pathways.user_container import SHARED_TMP

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
    head_annotations: Mapping[str, str] | None = None,
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
    ``head_annotations`` go on the head's pod template (the Cloud Storage FUSE sidecar's:
    ``volumes.sidecar_annotations``). Raises ``ColocatedModeUnsupported`` for the colocated mode.
    """
    if spec.controller.deployment_mode is DeploymentMode.COLOCATE_HEAD_WITH_WORKERS:
        raise ColocatedModeUnsupported(name)
    pods = _PodOptions(
        host_network,
        service_account,
        dict(head_node_selector or {}),
        head_proxy,
        dict(head_annotations or {}),
    )
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
    head_annotations: dict[str, str] = field(default_factory=dict)

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


def pod_tmp_volume() -> dict[str, Any]:
    """``/tmp`` of a JobSet's Pathways pods: an emptyDir, cleaned with the pod, instead of the
    host's /tmp the controller mounts (where libtpu leaves its lock file and logs for the next
    pod on the node, another team's too: jax-ml/jax#10192). Across pods only the colocated mode
    shares /tmp (head and worker on one host), which this backend refuses; pathwaysutils 0.1.13
    (experimental/gke/jobset.py) shares an emptyDir between a worker and its colocated Python
    sidecar the same way. Passes Pod Security baseline, which forbids hostPath."""
    return {"name": SHARED_TMP, "emptyDir": {}}


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
        pod_spec["initContainers"] = [*pod_spec.get("initContainers", []), sidecar(rm)]
        pod_spec["initContainers"].append(sidecar(prx))
        main = spec.controller.main_container_name or DEFAULT_MAIN_CONTAINER
        for container in pod_spec.get("containers", []):
            if container.get("name") == main:
                container["env"] = [*container.get("env", []), *_jax_env(options.host_network)]
    pod_spec = pod_template["spec"]
    pod_spec["volumes"] = [
        pod_tmp_volume() if v.get("name") == SHARED_TMP else v for v in pod_spec.get("volumes", [])
    ]
    if not pod_spec["volumes"]:
        del pod_spec["volumes"]
    pod_spec.setdefault("restartPolicy", RestartPolicy.NEVER.value)
    if not pod_spec.get("nodeSelector") and options.head_selector:
        pod_spec["nodeSelector"] = dict(options.head_selector)
    options.apply(pod_spec)
    if options.head_annotations:
        metadata = dict(pod_template.pop("metadata", {}))
        metadata["annotations"] = {**metadata.get("annotations", {}), **options.head_annotations}
        pod_template = {"metadata": metadata, **pod_template}
    return _replicated_job(HEAD_JOB, 1, 1, 0, HOSTNAME_LABEL, pod_template)


def _jax_env(host_network: bool) -> list[dict[str, Any]]:
    """What points the user's JAX at the proxy (controller: injectJAXBackendTargetIntoMainContainer;
    XPK: user_workload_env_vars)."""
    env = [
        label_env("PATHWAYS_HEAD", COORDINATOR_LABEL),
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
    pod_spec["volumes"] = [pod_tmp_volume()]
    options.apply(pod_spec)
    backoff = worker_backoff_limit(spec)
    return _replicated_job(
        WORKER_JOB, worker_spec.num_slices, hosts, backoff, NODE_POOL_LABEL, {"spec": pod_spec}
    )
