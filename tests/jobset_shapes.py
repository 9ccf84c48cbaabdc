"""Workload shapes the JobSet backend tests render (unit, pods and contract tests share them).

Each shape is a ``PathwaysJobSpec`` written out the way the stack layer builds one
(components/resolve/workload_specs.py: the user container under the SIGTERM wrapper, explicit
resources, the shared /tmp, the head pinned to the CPU pool), plus the ``render_jobset`` keyword
arguments it is rendered with. Specs are written in the CRD's own form (camelCase keys, enum
values as the CRD spells them) and read by ``PathwaysJobSpec.parse``, as a manifest is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from components.pathways.spec import PathwaysJobSpec, wrapped_command

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
    worker_type: str,
    topology: str,
    slices: int,
    *,
    headless: bool = False,
    worker: dict[str, Any] | None = None,
    controller: dict[str, Any] | None = None,
    template_spec: dict[str, Any] | None = None,
    **top: Any,
) -> PathwaysJobSpec:
    """A spec of one worker type and topology (``worker``, ``controller`` and ``top``: more of
    its fields, in the CRD's form)."""
    user = {} if headless else {"mainContainerName": "main"}
    if not headless:
        user["template"] = user_template(**(template_spec or {}))
    return PathwaysJobSpec.parse(
        {
            "workers": [
                {"type": worker_type, "topology": topology, "numSlices": slices, **(worker or {})}
            ],
            "controller": {"deploymentMode": "default", **user, **(controller or {})},
            "pathwaysDir": top.pop("pathwaysDir", "gs://scratch/team-a/job"),
            **top,
        }
    )


@dataclass(frozen=True)
class Shape:
    name: str
    spec: PathwaysJobSpec
    render: dict[str, Any] = field(default_factory=dict)


CUSTOM_COMPONENTS = [
    {
        "componentType": "pathways_server",
        "image": "us-docker.pkg.dev/p/r/server:pinned",
        "customFlags": ["--temporary_flag=1"],
    },
    {
        "componentType": "proxy_server",
        "customFlags": ["--xla_tpu_flag=true", "--sidecar_name=external"],
        "customEnv": [{"name": "PROXY_ENV", "value": "p"}],
    },
    {"componentType": "worker", "customEnv": [{"name": "WORKER_ENV", "value": "w"}]},
    {
        "componentType": "colocated_python_sidecar",
        "image": "us-docker.pkg.dev/p/r/colocated-python:1",
    },
]

SHAPES = {
    # XPK's v5p-16: 2x2x2 = 8 chips on two 4-chip hosts; two slices.
    "v5p-16x2": Shape("train", spec("ct5p-hightpu-4t", "2x2x2", 2), {"queue_name": "lq"}),
    "headless": Shape(
        "notebook",
        spec("ct5lp-hightpu-4t", "4x4", 1, headless=True),
        {"head_node_selector": {"cloud.google.com/gke-nodepool": CPU_POOL}},
    ),
    # XPK's v6e-4: one 4-chip host per slice.
    "v6e-4x3": Shape("serve", spec("ct6e-standard-4t", "2x2", 3)),
    # v5e 2x4 on 8-chip hosts: one host per slice (the controller's ct5lp-hightpu-8t).
    "v5e-2x4-8t": Shape("small", spec("ct5lp-hightpu-8t", "2x4", 1)),
    # XPK's own v5litepod-8: the same 2x4 on two 4-chip hosts.
    "v5e-2x4-4t": Shape("small4", spec("ct5lp-hightpu-4t", "2x4", 1)),
    "custom": Shape(
        "elastic",
        spec(
            "ct5p-hightpu-4t",
            "2x2x2",
            4,
            worker={
                "maxSliceRestarts": 3,
                "terminationGracePeriodSeconds": 300,
                "priorityClassName": "high",
                "nodeSelector": {"cloud.google.com/reservation-name": "res-1"},
            },
            controller={"elasticSlices": 1, "enableMetricsCollection": True},
            template_spec={"priorityClassName": "high", "terminationGracePeriodSeconds": 300},
            customComponents=CUSTOM_COMPONENTS,
            maxRestarts=5,
            pathwaysVersion="2025-10-01",
        ),
        {"queue_name": "team-a-queue", "labels": {"tpu-pathways/team": "team-a"}},
    ),
    "pod-network": Shape(
        "private",
        spec("ct6e-standard-4t", "4x4", 2),
        {"host_network": False, "service_account": "team-a-runner"},
    ),
}
