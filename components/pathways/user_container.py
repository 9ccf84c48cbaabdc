"""The user container of a Pathways head pod, with what Pathways needs in production.

One implementation for both ways in: the stack file's workloads
(``components.resolve.workload_specs``) and the Python API (``UserContainer(...).controller(...)``
for ``PathwaysJobSpec.controller``). What it adds to an image and a command:

- the command runs under ``SIGTERM_WRAPPER``, so a preempted job checkpoints for its whole grace
  period instead of being cut off;
- the host's /tmp at /tmp, as the controller v0.1.4 mounts it in every worker and its colocated
  Python sidecar (google/pathways-job v0.1.4 internal/controller/pathwaysjob_controller.go,
  volume "shared-tmp"), so the user code and a worker on one host share it;
- requests equal to limits, so the head pod's size is known (and checked against its node);
- ``mainContainerName``, the workload's service account and priority class;
- the head's place: in the default mode on the CPU pool (a node selector), colocated with the
  workers on TPU nodes with a toleration of the TPU taint (the controller pins a colocated head
  to TPU nodes but it requests no TPU, so GKE adds no toleration and, since v0.1.3, neither
  does the controller);
- its volumes (``components.pathways.volumes``): buckets through Cloud Storage FUSE and
  PersistentVolumeClaims, mounted into the user container only. The FUSE sidecar is injected on
  the annotations ``gcsfuse_annotations()`` gives: the PathwaysJob's own on that backend (the
  controller copies them to the head pod), the head's pod template on the JobSet backend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from components.errors import ConfigError, ConfigIssue
from components.labels import NODE_POOL_LABEL
from components.pathways.scheduler_model import TPU_TAINT
from components.pathways.spec import Controller, DeploymentMode, wrapped_command
from components.pathways.volumes import (
    ClaimMount,
    GcsVolume,
    memory_cache_volume,
    sidecar_annotations,
)
from components.tpu.quantities import normalize_quantity, parse_cpu, parse_memory

MAIN_CONTAINER = "main"
SHARED_TMP = "shared-tmp"
TPU_TOLERATION = TPU_TAINT.toleration()
# The user container's size when none is given (XPK uses the same figures:
# head_sizing.DEFAULT_USER_CONTAINER is the same size as a PodResources).
DEFAULT_CPU = "24"
DEFAULT_MEMORY = "100Gi"

EnvSource = str | Mapping[str, Any]
"""An env value: text, or a Kubernetes ``valueFrom`` (``{"secretKeyRef": {"name", "key"}}``)."""


@dataclass(frozen=True)
class UserContainer:
    """The user's container in the head pod of a training or inference PathwaysJob.

    ``controller()`` gives the ``Controller`` of the job's spec with the pod template built from
    it; a mistake (no image, a CPU quantity Kubernetes would refuse) raises ConfigError with
    every problem found."""

    image: str
    command: Sequence[str]
    cpu: str = DEFAULT_CPU
    """CPU cores or millicores ('24', '500m'); requested and the limit."""
    memory: str = DEFAULT_MEMORY
    """Memory ('100Gi'); requested and the limit."""
    env: Mapping[str, EnvSource] = field(default_factory=dict)
    service_account: str | None = None
    """The pod's Kubernetes service account (a team's workload account)."""
    priority_class_name: str | None = None
    termination_grace_period_seconds: int | None = None
    volumes: Sequence[GcsVolume] = ()
    """Buckets mounted through Cloud Storage FUSE (``volumes.GcsVolume``)."""
    claims: Sequence[ClaimMount] = ()
    """PersistentVolumeClaims of the job's namespace mounted (``volumes.ClaimMount``)."""

    def __post_init__(self) -> None:
        if issues := self._problems():
            raise ConfigError(issues, "UserContainer")

    def _problems(self) -> list[ConfigIssue]:
        issues = []
        if not isinstance(self.image, str) or not self.image.strip():
            issues.append(ConfigIssue("image", "required: the image the user code runs in"))
        command = self.command
        if isinstance(command, str) or not command or not all(isinstance(a, str) for a in command):
            issues.append(
                ConfigIssue(
                    "command", f"{command!r} is not allowed: a list of text, e.g. ['python3']"
                )
            )
        for key, parse in (("cpu", parse_cpu), ("memory", parse_memory)):
            try:
                parse(getattr(self, key))
            except ValueError as exc:
                issues.append(ConfigIssue(key, str(exc)))
        issues += [
            ConfigIssue(f"env.{name}", "is not allowed: text, or a mapping (a valueFrom)")
            for name, value in self.env.items()
            if not isinstance(value, str | Mapping)
        ]
        return issues + self._volume_problems()

    def _volume_problems(self) -> list[ConfigIssue]:
        mounted = [(f"volumes[{i}]", v) for i, v in enumerate(self.volumes)]
        mounted += [(f"claims[{i}]", v) for i, v in enumerate(self.claims)]
        names = [v.name for _, v in mounted] + [SHARED_TMP]
        paths = [v.mount_path for _, v in mounted] + ["/tmp"]
        return [
            ConfigIssue(f"{key}.{what}", f"{value!r} is used twice in the pod")
            for key, volume in mounted
            for what, value, seen in (
                ("name", volume.name, names),
                ("mountPath", volume.mount_path, paths),
            )
            if seen.count(value) > 1
        ]

    def gcsfuse_annotations(self) -> dict[str, str]:
        """What injects the Cloud Storage FUSE sidecar for ``volumes`` (none without): on the
        PathwaysJob (``PathwaysJobArgs.annotations``), which the controller copies to the head."""
        return sidecar_annotations(self.volumes)

    def pod_template(self, deployment_mode: DeploymentMode, cpu_pool: str | None = None) -> dict:
        """The head pod's user part (the controller adds the resource manager and proxy to
        it). ``cpu_pool``: the node pool a default-mode head is pinned to."""
        resources = {"cpu": normalize_quantity(self.cpu), "memory": normalize_quantity(self.memory)}
        container: dict[str, Any] = {
            "name": MAIN_CONTAINER,
            "image": self.image,
            "imagePullPolicy": "IfNotPresent",  # large images: do not pull on every restart
            "command": wrapped_command(list(self.command)),
            "env": [_env_entry(name, value) for name, value in self.env.items()],
            "resources": {"requests": resources, "limits": dict(resources)},
            "volumeMounts": [shared_tmp_mount(), *(v.volume_mount() for v in self._mounted)],
        }
        if not container["env"]:
            del container["env"]
        volumes = [shared_tmp_volume(), *(v.pod_volume() for v in self._mounted)]
        if (cache := memory_cache_volume(self.volumes)) is not None:
            volumes.append(cache)
        spec: dict[str, Any] = {"containers": [container], "volumes": volumes}
        if self.service_account is not None:
            spec = {"serviceAccountName": self.service_account, **spec}
        if deployment_mode is DeploymentMode.COLOCATE_HEAD_WITH_WORKERS:
            spec["tolerations"] = [TPU_TOLERATION]
        elif cpu_pool is not None:
            spec["nodeSelector"] = {NODE_POOL_LABEL: cpu_pool}
        if self.priority_class_name is not None:
            spec["priorityClassName"] = self.priority_class_name
        if self.termination_grace_period_seconds is not None:
            spec["terminationGracePeriodSeconds"] = self.termination_grace_period_seconds
        return {"spec": spec}

    @property
    def _mounted(self) -> list[GcsVolume | ClaimMount]:
        return [*self.volumes, *self.claims]

    def controller(
        self,
        deployment_mode: DeploymentMode = DeploymentMode.DEFAULT,
        cpu_pool: str | None = None,
        **options: Any,
    ) -> Controller:
        """The spec's ``controller`` running this container; ``options``: Controller's other
        fields (``elastic_slices``, ``enable_metrics_collection``)."""
        if cpu_pool is not None and deployment_mode is DeploymentMode.COLOCATE_HEAD_WITH_WORKERS:
            raise ConfigError(
                [
                    ConfigIssue(
                        "cpu_pool",
                        "a colocated head runs on the workers' TPU nodes; remove cpu_pool",
                    )
                ],
                "UserContainer.controller",
            )
        return Controller(
            deployment_mode=deployment_mode,
            main_container_name=MAIN_CONTAINER,
            template=self.pod_template(deployment_mode, cpu_pool),
            **options,
        )


def _env_entry(name: str, value: EnvSource) -> dict[str, Any]:
    if isinstance(value, str):
        return {"name": name, "value": value}
    return {"name": name, "valueFrom": dict(value)}


def shared_tmp_mount() -> dict[str, str]:
    return {"name": SHARED_TMP, "mountPath": "/tmp"}


def shared_tmp_volume() -> dict[str, Any]:
    """The node's /tmp as a pod volume; a Pathways pod's containers mount it at /tmp (the user
    container here, the JobSet rendering's containers in ``components.pathways.jobset``)."""
    return {"name": SHARED_TMP, "hostPath": {"path": "/tmp", "type": "DirectoryOrCreate"}}
