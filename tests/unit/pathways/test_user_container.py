"""The Python API's user container (``UserContainer``) and worker shapes: what a stack file's
workload gets, from Python, and the same refusals."""

from __future__ import annotations

import pytest

import components
from components.errors import ConfigError
from components.pathways.spec import DeploymentMode, Worker, WorkerType
from components.pathways.user_container import UserContainer
from components.resolve.workload_specs import user_container, user_pod_template
from tests.helpers import SIGTERM_WRAPPER

HOST_TMP = {"name": "shared-tmp", "hostPath": {"path": "/tmp", "type": "DirectoryOrCreate"}}


def test_a_default_mode_head_gets_what_a_stack_workload_gets():
    controller = UserContainer(
        image="us-docker.pkg.dev/acme/train:1",
        command=["python3", "train.py"],
        cpu="8",
        memory="32Gi",
        env={"STEPS": "100", "HF_TOKEN": {"secretKeyRef": {"name": "hf", "key": "token"}}},
        service_account="pathways",
    ).controller(DeploymentMode.DEFAULT, cpu_pool="cpu-np")
    assert controller.model_dump(by_alias=True, exclude_none=True, mode="json") == {
        "deploymentMode": "default",
        "mainContainerName": "main",
        "template": {
            "spec": {
                "serviceAccountName": "pathways",
                "containers": [
                    {
                        "name": "main",
                        "image": "us-docker.pkg.dev/acme/train:1",
                        "imagePullPolicy": "IfNotPresent",
                        "command": [*SIGTERM_WRAPPER, "python3", "train.py"],
                        "env": [
                            {"name": "STEPS", "value": "100"},
                            {
                                "name": "HF_TOKEN",
                                "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}},
                            },
                        ],
                        "resources": {
                            "requests": {"cpu": "8", "memory": "32Gi"},
                            "limits": {"cpu": "8", "memory": "32Gi"},
                        },
                        "volumeMounts": [{"name": "shared-tmp", "mountPath": "/tmp"}],
                    }
                ],
                "volumes": [HOST_TMP],
                "nodeSelector": {"cloud.google.com/gke-nodepool": "cpu-np"},
            }
        },
    }


def test_a_colocated_head_tolerates_the_tpu_taint_and_is_pinned_to_no_cpu_pool():
    container = UserContainer(image="serve:1", command=["python3", "serve.py"])
    template = container.pod_template(DeploymentMode.COLOCATE_HEAD_WITH_WORKERS)
    spec = template["spec"]
    assert spec["tolerations"] == [
        {"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
    assert "nodeSelector" not in spec and "serviceAccountName" not in spec
    assert spec["containers"][0]["resources"]["limits"] == {"cpu": "24", "memory": "100Gi"}
    with pytest.raises(ConfigError) as caught:
        container.controller(DeploymentMode.COLOCATE_HEAD_WITH_WORKERS, cpu_pool="cpu-np")
    assert str(caught.value) == (
        "UserContainer.controller: 1 problem\n  - cpu_pool: a colocated head runs on the "
        "workers' TPU nodes; remove cpu_pool"
    )


def test_every_mistake_in_a_user_container_is_reported_at_once():
    with pytest.raises(ConfigError) as caught:
        UserContainer(image="", command="python3 train.py", cpu="lots", env={"N": 5})
    assert [str(i) for i in caught.value.issues] == [
        "image: required: the image the user code runs in",
        "command: 'python3 train.py' is not allowed: a list of text, e.g. ['python3']",
        "cpu: 'lots' is not a CPU quantity; use cores ('24', '0.5') or millicores ('500m')",
        "env.N: is not allowed: text, or a mapping (a valueFrom)",
    ]


def test_the_stack_file_builds_its_workloads_with_the_same_container(config_of, stack_values):
    workload = {
        "name": "train",
        "pool": "v5e",
        "image": "us-docker.pkg.dev/acme/train:1",
        "command": ["python3", "train.py"],
        "priority": "high",
    }
    config = config_of(stack_values(workloads=[workload]))
    container = user_container(config, config.workloads[0])
    assert container == UserContainer(
        image="us-docker.pkg.dev/acme/train:1",
        command=["python3", "train.py"],
        service_account="pathways",
        priority_class_name="high",
    )
    template = user_pod_template(config, config.workloads[0])
    assert template == container.pod_template(DeploymentMode.DEFAULT, "cpu-np")
    assert template["spec"]["priorityClassName"] == "high"


def test_the_user_container_is_public():
    assert components.UserContainer is UserContainer
    assert "UserContainer" in components.__all__


# --- worker shapes, checked against the TPU catalog as a stack file's pools are -----------------


@pytest.mark.parametrize(
    ("worker_type", "topology", "message"),
    [
        (
            "ct5p-hightpu-4t",
            "3x3x3",
            "'3x3x3' is not a topology of ct5p-hightpu-4t; nearest valid: 2x2x2, 2x2x4, 2x4x4, "
            "4x4x4 (96 in all: python -m components shapes v5p)",
        ),
        (
            "ct4p-hightpu-4t",
            "4x8x4",
            "'4x8x4' is a topology the PathwaysJob controller v0.1.4 rejects for "
            "ct4p-hightpu-4t; nearest valid: 4x4x4, 4x4x8, 4x4x16, 4x8x8 (13 in all: python -m "
            "components shapes v4)",
        ),
    ],
)
def test_a_worker_shape_the_catalog_or_controller_refuses_is_refused(
    worker_type, topology, message
):
    with pytest.raises(ConfigError) as caught:
        Worker(type=worker_type, topology=topology, num_slices=1)
    assert str(caught.value) == f"Worker: 1 problem\n  - topology: {message}"


def test_worker_mistakes_are_in_our_words_without_a_url():
    with pytest.raises(ConfigError) as caught:
        Worker(type="v5p-16", topology="2x2x2", num_slices=0)
    assert str(caught.value) == (
        "Worker: 2 problems\n"
        "  - type: 'v5p-16' is not allowed: type is one of tpu7x-standard-4t, ct6e-standard-4t, "
        "ct6e-standard-8t, ct5p-hightpu-4t, ct5lp-hightpu-4t, ct5lp-hightpu-8t or ct4p-hightpu-4t\n"
        "  - num_slices: 0 is not allowed: num_slices must be from 1 to 2147483647"
    )


def test_an_accelerator_name_as_a_worker_type_names_its_machine_type():
    with pytest.raises(ValueError) as caught:
        WorkerType("v5p-16")
    assert str(caught.value) == (
        "'v5p-16' is not a worker machine type; allowed: tpu7x-standard-4t, ct6e-standard-4t, "
        "ct6e-standard-8t, ct5p-hightpu-4t, ct5lp-hightpu-4t, ct5lp-hightpu-8t, ct4p-hightpu-4t; "
        "'v5p-16' is an accelerator of machine type 'ct5p-hightpu-4t'"
    )
