"""Workload shapes the JobSet backend tests render (unit, pods and contract tests share them).

Each shape is a ``PathwaysJobSpec`` written out the way the stack layer builds one
(components/resolve/workload_specs.py: the user container under the SIGTERM wrapper, explicit
resources, the shared /tmp, the head pinned to the CPU pool), plus the ``render_jobset`` keyword
arguments it is rendered with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from components.pathways.spec import (
    ComponentType,
    Controller,
    CustomComponent,
    DeploymentMode,
    EnvVar,
    PathwaysJobSpec,
    Worker,
    WorkerType,
    wrapped_command,
)

NAMESPACE = "team-a"
CPU_POOL = "cpu-np"


def user_template(**extra_spec: Any) -> dict[str, Any]:
    resources = {"cpu": "8", "memory": "32Gi"}
    container = {
        "name": "main",
        "image": "us-docker.pkg.dev/p/r/train:1",
        "imagePullPolicy": "IfNotPresent",
        "command": wrapped_command(["python", "train.py"]),
        "resources": {"requests": resources, "limits": resources},
        "volumeMounts": [{"name": "shared-tmp", "mountPath": "/tmp"}],
    }
    return {
        "spec": {
            "serviceAccountName": "team-a",
            "containers": [container],
            "volumes": [
                {"name": "shared-tmp", "hostPath": {"path": "/tmp", "type": "DirectoryOrCreate"}}
            ],
            "nodeSelector": {"cloud.google.com/gke-nodepool": CPU_POOL},
            **extra_spec,
        }
    }


def spec(
    worker_type: WorkerType,
    topology: str,
    slices: int,
    *,
    headless: bool = False,
    worker: dict[str, Any] | None = None,
    controller: dict[str, Any] | None = None,
    template_spec: dict[str, Any] | None = None,
    **top: Any,
) -> PathwaysJobSpec:
    return PathwaysJobSpec(
        workers=[Worker(type=worker_type, topology=topology, num_slices=slices, **(worker or {}))],
        controller=Controller(
            deployment_mode=DeploymentMode.DEFAULT,
            main_container_name=None if headless else "main",
            template=None if headless else user_template(**(template_spec or {})),
            **(controller or {}),
        ),
        pathways_dir=top.pop("pathways_dir", "gs://scratch/team-a/job"),
        **top,
    )


@dataclass(frozen=True)
class Shape:
    name: str
    spec: PathwaysJobSpec
    render: dict[str, Any] = field(default_factory=dict)


CUSTOM_COMPONENTS = [
    CustomComponent(
        component_type=ComponentType.PATHWAYS_SERVER,
        image="us-docker.pkg.dev/p/r/server:pinned",
        custom_flags=["--temporary_flag=1"],
    ),
    CustomComponent(
        component_type=ComponentType.PROXY_SERVER,
        custom_flags=["--xla_tpu_flag=true", "--sidecar_name=external"],
        custom_env=[EnvVar(name="PROXY_ENV", value="p")],
    ),
    CustomComponent(
        component_type=ComponentType.WORKER,
        custom_env=[EnvVar(name="WORKER_ENV", value="w")],
    ),
    CustomComponent(
        component_type=ComponentType.COLOCATED_PYTHON_SIDECAR,
        image="us-docker.pkg.dev/p/r/colocated-python:1",
    ),
]

SHAPES = {
    # XPK's v5p-16: 2x2x2 = 8 chips on two 4-chip hosts; two slices.
    "v5p-16x2": Shape("train", spec(WorkerType.CT5P_HIGHTPU_4T, "2x2x2", 2), {"queue_name": "lq"}),
    "headless": Shape(
        "notebook",
        spec(WorkerType.CT5LP_HIGHTPU_4T, "4x4", 1, headless=True),
        {"head_node_selector": {"cloud.google.com/gke-nodepool": CPU_POOL}},
    ),
    # XPK's v6e-4: one 4-chip host per slice.
    "v6e-4x3": Shape("serve", spec(WorkerType.CT6E_STANDARD_4T, "2x2", 3)),
    # v5e 2x4 on 8-chip hosts: one host per slice (the controller's ct5lp-hightpu-8t).
    "v5e-2x4-8t": Shape("small", spec(WorkerType.CT5LP_HIGHTPU_8T, "2x4", 1)),
    # XPK's own v5litepod-8: the same 2x4 on two 4-chip hosts.
    "v5e-2x4-4t": Shape("small4", spec(WorkerType.CT5LP_HIGHTPU_4T, "2x4", 1)),
    "custom": Shape(
        "elastic",
        spec(
            WorkerType.CT5P_HIGHTPU_4T,
            "2x2x2",
            4,
            worker={
                "max_slice_restarts": 3,
                "termination_grace_period_seconds": 300,
                "priority_class_name": "high",
                "node_selector": {"cloud.google.com/reservation-name": "res-1"},
            },
            controller={"elastic_slices": 1, "enable_metrics_collection": True},
            template_spec={"priorityClassName": "high", "terminationGracePeriodSeconds": 300},
            custom_components=CUSTOM_COMPONENTS,
            max_restarts=5,
            pathways_version="2025-10-01",
        ),
        {"queue_name": "team-a-queue", "labels": {"tpu-pathways/team": "team-a"}},
    ),
    "pod-network": Shape(
        "private",
        spec(WorkerType.CT6E_STANDARD_4T, "4x4", 2),
        {"host_network": False, "service_account": "team-a-runner"},
    ),
}
