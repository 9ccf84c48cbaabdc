"""The PathwaysJob spec as pure data: ``pathways-job.pathways.domain/v1`` as of controller v0.1.4.

``PathwaysJobSpec`` mirrors every field of the v0.1.4 CRD with its enums and limits; the helpers
name a job's in-cluster addresses and the annotations that make `pulumi up` wait for it. No
Pulumi here: the schema, the preflight and the policy pack read these without a provider SDK
(``components.workloads.job`` is the resource that emits a spec).
"""

from __future__ import annotations

import re
from collections import Counter
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from components.errors import ConfigError, KeyedError, issues_from_validation
from components.tpu import catalog

API_VERSION = "pathways-job.pathways.domain/v1"
KIND = "PathwaysJob"
INT32_MAX = 2**31 - 1
# JobSet (>= v0.11) puts "<name>-pathways-head-0-0.<name>" in a label value (max 63 chars).
MAX_NAME_LENGTH = 22
_NAME = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")


class WorkerType(StrEnum):
    """TPU machine types the v0.1.4 CRD accepts for workers."""

    TPU7X_STANDARD_4T = "tpu7x-standard-4t"
    CT6E_STANDARD_4T = "ct6e-standard-4t"
    CT6E_STANDARD_8T = "ct6e-standard-8t"
    CT5P_HIGHTPU_4T = "ct5p-hightpu-4t"
    CT5LP_HIGHTPU_4T = "ct5lp-hightpu-4t"
    CT5LP_HIGHTPU_8T = "ct5lp-hightpu-8t"
    CT4P_HIGHTPU_4T = "ct4p-hightpu-4t"

    @classmethod
    def _missing_(cls, value: object) -> WorkerType:
        """``WorkerType('v5p-16')``: refused with the allowed values, and the machine type of an
        accelerator name (the enum's own error names neither)."""
        allowed = ", ".join(t.value for t in cls)
        try:
            machine = catalog.resolve_accelerator(str(value)).machine_type
            hint = f"; {value!r} is an accelerator of machine type '{machine}'"
        except catalog.CatalogError:
            hint = ""
        raise ValueError(f"{value!r} is not a worker machine type; allowed: {allowed}{hint}")


class DeploymentMode(StrEnum):
    DEFAULT = "default"
    COLOCATE_HEAD_WITH_WORKERS = "colocate_head_with_workers"


class ComponentType(StrEnum):
    PATHWAYS_SERVER = "pathways_server"
    WORKER = "worker"
    PROXY_SERVER = "proxy_server"
    COLOCATED_PYTHON_SIDECAR = "colocated_python_sidecar"


class SpecModel(BaseModel):
    """A part of the spec; built in Python with a mistake, it raises ConfigError with every
    problem in this project's words (the stack file's), not pydantic's."""

    model_config = ConfigDict(
        extra="forbid", alias_generator=to_camel, validate_by_name=True, frozen=True
    )

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            issues = issues_from_validation(exc, type(self))
            raise ConfigError(issues, type(self).__name__) from None

    # pydantic's mark of its own __init__ (pydantic 2.x main.py; _model_construction.py reads it
    # to decide whether nested validation calls a custom __init__): a part validated inside
    # another (a dict in ``workers``) is then built without this one, so its errors keep their
    # place in the whole.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]


Int32 = Field(None, ge=0, le=INT32_MAX)


class EnvVar(SpecModel):
    name: str = Field(min_length=1)
    value: str | None = None
    value_from: dict[str, Any] | None = None


class Worker(SpecModel):
    type: WorkerType
    topology: str = Field(pattern=r"^\d+x\d+(x\d+)?$")
    num_slices: int = Field(ge=1, le=INT32_MAX)
    max_slice_restarts: int | None = Int32
    termination_grace_period_seconds: int | None = Field(None, ge=0)
    priority_class_name: str | None = None
    node_selector: dict[str, str] | None = None

    @model_validator(mode="after")
    def _catalog_shape(self) -> Worker:
        # The stack file's pools are looked up the same way (TpuPoolConfig, checks._pool_problems).
        try:
            catalog.worker_shape(self.type.value, self.topology)
        except catalog.CatalogError as exc:
            raise KeyedError.at("topology", str(exc)) from None
        return self


class Controller(SpecModel):
    deployment_mode: DeploymentMode
    main_container_name: str | None = None
    enable_metrics_collection: bool | None = None
    template: dict[str, Any] | None = None
    """A Kubernetes PodTemplateSpec for the user workload; absent means headless."""
    elastic_slices: int | None = Int32


class CustomComponent(SpecModel):
    component_type: ComponentType
    image: str | None = None
    custom_flags: list[str] | None = None
    custom_env: list[EnvVar] | None = None


class PathwaysJobSpec(SpecModel):
    workers: list[Worker] = Field(min_length=1, max_length=1)
    controller: Controller
    custom_components: list[CustomComponent] | None = Field(None, max_length=4)
    max_restarts: int | None = Int32
    pathways_dir: str | None = None
    pathways_version: str | None = None

    @model_validator(mode="after")
    def _unique_components(self) -> PathwaysJobSpec:
        counts = Counter(c.component_type for c in self.custom_components or [])
        repeated = sorted(t.value for t, n in counts.items() if n > 1)
        if repeated:
            raise KeyedError.at(
                "customComponents", f"component types must be unique; repeated: {repeated}"
            )
        return self

    @classmethod
    def parse(cls, data: dict[str, Any], source: str = "PathwaysJob spec") -> PathwaysJobSpec:
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(issues_from_validation(exc, cls), source) from None

    def manifest(self) -> dict[str, Any]:
        """The spec as the CRD expects it (camelCase, unset fields omitted)."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


def job_name_problem(name: str) -> str | None:
    if not _NAME.fullmatch(name):
        return (
            f"{name!r} is not a valid PathwaysJob name: lowercase letters, digits and '-', "
            "starting with a letter and ending with a letter or digit (DNS-1035)"
        )
    if len(name) > MAX_NAME_LENGTH:
        return (
            f"{name!r} has {len(name)} characters; at most {MAX_NAME_LENGTH} are allowed, "
            f"because JobSet puts '<name>-pathways-head-0-0.<name>' in a label value (max 63)"
        )
    return None


def head_host(name: str, namespace: str) -> str:
    """The head pod's cluster-wide DNS name: JobSet's headless service ``<name>`` gives the pod
    ``<name>-pathways-head-0-0.<name>``, which resolves only inside ``namespace``; clients
    elsewhere (pathwaysutils runs its proxy in the client's own namespace, usually ``default``:
    pathways-utils experimental/shared_pathways_service) need the fully qualified name."""
    return f"{name}-pathways-head-0-0.{name}.{namespace}.svc.cluster.local"


# Ports the PathwaysJob controller v0.1.4 binds on the node's own address (every Pathways pod
# uses the host network), from google/pathways-job internal/controller/pathwaysjob_controller.go:
# head pod: proxy 29000 (PathwaysProxyPort), resource manager 29001 (PathwaysRMPort) and 29002;
# worker pods: 29005 (PathwaysWorkerPort), 29006, 8471 and 8080; the colocated Python sidecar on
# workers: 50051.
PROXY_PORT = 29000
RM_PORT = 29001
RM_PORTS = (RM_PORT, 29002)
WORKER_PORTS = (29005, 29006, 8471, 8080)
PYTHON_SIDECAR_PORT = 50051
# Every port a Pathways pod binds on the host network (its host ports there).
PATHWAYS_PORTS = (PROXY_PORT, *RM_PORTS, *WORKER_PORTS, PYTHON_SIDECAR_PORT)


def proxy_address(name: str, namespace: str) -> str:
    """The in-cluster address of the job's Pathways proxy, resolvable from any namespace."""
    return f"grpc://{head_host(name, namespace)}:{PROXY_PORT}"


def resource_manager_address(name: str, namespace: str) -> str:
    """The resource manager's address (what shared-service clients use), from any namespace."""
    return f"{head_host(name, namespace)}:{RM_PORT}"


# pulumi-kubernetes >= 4.18 waits on a custom resource until this condition holds, and fails
# the update with the object's status when it does not within the timeout.
WAIT_FOR_ANNOTATION = "pulumi.com/waitFor"
TIMEOUT_ANNOTATION = "pulumi.com/timeoutSeconds"


def wait_for_running(timeout_seconds: int) -> dict[str, str]:
    """Annotations that make `pulumi up` wait for the PathwaysJob's Running condition (one of
    Pending, Running, Completed, Failed, Suspended: api/v1/pathwaysjob_types.go, v0.1.4)."""
    return {WAIT_FOR_ANNOTATION: "condition=Running", TIMEOUT_ANNOTATION: str(timeout_seconds)}


# Runs the user command as a child, forwards SIGTERM to it and keeps waiting until it exits,
# so a preempted job spends its whole grace period checkpointing instead of being cut off.
# - A SIGTERM that arrives before the child's process id is known (between the fork and
#   `child=$!`, which a loaded node can make long) is kept and forwarded once the id is known.
# - A `wait` interrupted by the trap returns 143, so after a SIGTERM the wrapper waits again for
#   the child's own status. That second wait answers 127 when the first one already had the
#   status (the SIGTERM came before it began); then the first answer stands.
SIGTERM_WRAPPER = """\
child=
pending=0
term=0
trap 'term=1; if [ -n "$child" ]; then kill -TERM "$child" 2>/dev/null; else pending=1; fi' TERM
"$@" &
child=$!
if [ "$pending" = 1 ]; then kill -TERM "$child" 2>/dev/null; fi
wait "$child"
status=$?
while [ "$term" = 1 ]; do
  term=0
  wait "$child"
  again=$?
  if [ "$again" = 127 ] && ! kill -0 "$child" 2>/dev/null; then break; fi
  status=$again
done
exit "$status"
"""


def wrapped_command(command: list[str]) -> list[str]:
    """A user container's command, run under ``SIGTERM_WRAPPER``."""
    return ["/bin/sh", "-c", SIGTERM_WRAPPER, "pathways-main", *command]
