"""The containers of a Pathways JobSet, as XPK 1.16 renders them and the PathwaysJob controller
v0.1.4 builds them: the resource manager, the proxy, the worker and the colocated Python
sidecar, each with its image, flags, ports, env (from the downward API) and limits
(``jobset.render_jobset`` puts them in its replicated jobs)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.labels import (
    TPU_RESOURCE,
)
from components.pathways.controller_model import (
    component_image,
    vms_per_slice,
)
from components.pathways.jobset_names import (
    COORDINATOR_LABEL,
    INSECURE_GRPC_ENV,
    JOB_INDEX_LABEL,
    JOBSET_NAME_ANNOTATION,
    PROXY_CONTAINER,
    PROXY_LIMITS,
    PULL_ALWAYS,
    PYTHON_SIDECAR_CONTAINER,
    REPLICAS_LABEL,
    REPLICATED_JOB_ANNOTATION,
    RM_CONTAINER,
    RM_LIMITS,
    WORKER_CONTAINER,
    RestartPolicy,
)
from components.pathways.spec import (
    PROXY_PORT,
    PYTHON_SIDECAR_PORT,
    RM_PORT,
    RM_PORTS,
    WORKER_PORTS,
    ComponentType,
    EnvVar,
    PathwaysJobSpec,
)
from components.pathways.user_container import shared_tmp_mount
from components.tpu.catalog import generation_of_machine_type, pathways_instance_type


def _field_env(name: str, field_path: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": field_path}}}


def label_env(name: str, label: str) -> dict[str, Any]:
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
        label_env("HOST_ADDRESS", COORDINATOR_LABEL),
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
    env = [label_env("PATHWAYS_HEAD", COORDINATOR_LABEL)]
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
        label_env("MEGASCALE_NUM_SLICES", REPLICAS_LABEL),
        _annotation_env("JOBSET_NAME", JOBSET_NAME_ANNOTATION),
        _annotation_env("REPLICATED_JOB_NAME", REPLICATED_JOB_ANNOTATION),
        label_env("MEGASCALE_SLICE_ID", JOB_INDEX_LABEL),
        label_env("PATHWAYS_HEAD", COORDINATOR_LABEL),
        label_env("MEGASCALE_COORDINATOR_ADDRESS", COORDINATOR_LABEL),
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


def sidecar(container: dict[str, Any]) -> dict[str, Any]:
    """A native sidecar: an init container that keeps running beside the main containers."""
    return {**container, "restartPolicy": RestartPolicy.ALWAYS.value}
