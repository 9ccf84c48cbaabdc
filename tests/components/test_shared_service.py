"""Shared Pathways services: a headless PathwaysJob many clients reach through pathwaysutils'
``isc_pathways.connect(pathways_service=..., expected_tpu_instances=...)``."""

from __future__ import annotations

import re

import pulumi_kubernetes as k8s
import pytest

from components.pathways.shared_service import SharedPathwaysService, SharedPathwaysServiceArgs
from components.pathways.spec import Controller, DeploymentMode, PathwaysJobSpec, Worker, WorkerType
from components.plan.engine import run_program

PATHWAYS_JOB = "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob"
SERVICE = "tpu-pathways:workloads:SharedPathwaysService"
# what pathwaysutils' shared-service client accepts as an instance type
INSTANCE_KEY = re.compile(r"^tpu(v5e|v5|v6e|7x):\d+(x\d+){1,2}$")


@pytest.fixture(scope="module")
def serving(example_plan):
    return example_plan("serving-v6e")


def test_serving_stack_outputs(serving):
    assert serving.outputs["shared_services"] == {
        "serving/shared-v6e": {
            "expected_tpu_instances": {"tpuv6e:2x2": 1},
            # cluster-wide: pathwaysutils' client runs its proxy in its own namespace
            "pathways_service": (
                "shared-v6e-pathways-head-0-0.shared-v6e.serving.svc.cluster.local:29001"
            ),
        }
    }


def test_serving_shared_service_is_a_headless_default_mode_job(serving):
    (service,) = serving.by_type(SERVICE)
    (job,) = [r for r in serving.by_type(PATHWAYS_JOB) if r.parent == service.urn]
    assert job.inputs["metadata"] == {
        "name": "shared-v6e",
        "namespace": "serving",
        # `pulumi up` waits until the service runs, or fails with its status
        "annotations": {
            "pulumi.com/waitFor": "condition=Running",
            "pulumi.com/timeoutSeconds": "1800",
        },
    }
    assert job.inputs["spec"] == {
        "controller": {"deploymentMode": "default"},
        "maxRestarts": 10,  # a long-lived service rides out preemptions
        "pathwaysDir": "gs://tpu-pathways-serving-pathways-serving-pathways/serving/shared-v6e",
        "pathwaysVersion": "jax-0.9.0",  # the stack's pinned release, not the controller's latest
        # kept off v6e-0, the node pool the stack's colocated batch-infer holds
        "workers": [
            {
                "type": "ct6e-standard-4t",
                "topology": "2x2",
                "numSlices": 1,
                "nodeSelector": {"cloud.google.com/gke-nodepool": "v6e-1"},
            }
        ],
    }
    assert job.options["replaceOnChanges"] == ["spec"]
    assert job.options["deleteBeforeReplace"] is True


def test_instance_keys_match_the_clients_pattern(serving):
    for entry in serving.outputs["shared_services"].values():
        for key in entry["expected_tpu_instances"]:
            assert INSTANCE_KEY.match(key), key


@pytest.mark.parametrize(
    ("pool", "slices", "expected"),
    [
        ({"generation": "v6e", "topology": "2x2", "slices": 2}, 2, {"tpuv6e:2x2": 2}),
        ({"generation": "v6e", "topology": "4x4", "slices": 2}, 1, {"tpuv6e:4x4": 1}),
        ({"generation": "v5e", "topology": "4x4"}, 1, {"tpuv5e:4x4": 1}),
        ({"accelerator": "v5p-16", "slices": 3}, 3, {"tpuv5:2x2x2": 3}),  # tpuv5, not tpuv5p
    ],
)
def test_expected_tpu_instances(plan_of, stack_values, pool, slices, expected):
    plan = plan_of(
        stack_values(
            tpuPools=[{"name": "pool", **pool}],
            sharedServices=[{"name": "svc", "pool": "pool", "slices": slices}],
        )
    )
    assert plan.outputs["shared_services"] == {
        "pathways/svc": {
            "expected_tpu_instances": expected,
            "pathways_service": "svc-pathways-head-0-0.svc.pathways.svc.cluster.local:29001",
        }
    }
    (key,) = expected
    assert INSTANCE_KEY.match(key)
    (job,) = plan.by_type(PATHWAYS_JOB)
    assert job.inputs["spec"]["controller"] == {"deploymentMode": "default"}
    assert job.inputs["spec"]["workers"][0]["numSlices"] == slices


def test_shared_service_gets_the_queue_label_with_kueue(plan_of, stack_values):
    plan = plan_of(
        stack_values(
            addons={"kueue": {"enabled": True}},
            sharedServices=[{"name": "svc", "pool": "v5e"}],
        )
    )
    (job,) = plan.by_type(PATHWAYS_JOB)
    assert job.inputs["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "multislice-queue"}


def test_shared_service_restarts_images_and_version_are_configurable(plan_of, stack_values):
    service = {
        "name": "svc",
        "pool": "v5e",
        "maxRestarts": 50,
        "pathwaysVersion": "jax-0.6.0",
        "customComponents": [
            {"type": "pathways_server", "image": "example.com/server@sha256:" + "a" * 64},
            {"type": "worker", "image": "example.com/server@sha256:" + "a" * 64},
        ],
    }
    plan = plan_of(stack_values(sharedServices=[service], waitForRunning={"timeoutSeconds": 600}))
    (job,) = plan.by_type(PATHWAYS_JOB)
    spec = job.inputs["spec"]
    assert spec["maxRestarts"] == 50
    assert spec["pathwaysVersion"] == "jax-0.6.0"
    assert [c["componentType"] for c in spec["customComponents"]] == ["pathways_server", "worker"]
    assert job.inputs["metadata"]["annotations"]["pulumi.com/timeoutSeconds"] == "600"


def test_workloads_wait_only_when_the_stack_asks(plan_of, stack_values):
    notebook = {"name": "nb", "pool": "v5e", "mode": "headless"}
    (job,) = plan_of(stack_values(workloads=[notebook])).by_type(PATHWAYS_JOB)
    assert "annotations" not in job.inputs["metadata"]
    asked = stack_values(workloads=[notebook], waitForRunning={"jobs": True})
    (job,) = plan_of(asked).by_type(PATHWAYS_JOB)
    assert job.inputs["metadata"]["annotations"] == {
        "pulumi.com/waitFor": "condition=Running",
        "pulumi.com/timeoutSeconds": "1800",
    }


EIGHT_CHIP_HOST = {
    "tpuPools": [
        {"name": "v6e8", "generation": "v6e", "topology": "2x4", "machineType": "ct6e-standard-8t"}
    ],
    "sharedServices": [{"name": "svc", "pool": "v6e8"}],
}


def test_an_8_chip_host_pool_is_rejected(stack_values, config_error):
    error = config_error(stack_values(**EIGHT_CHIP_HOST))
    issues = {issue.key: issue.message for issue in error.issues}
    assert list(issues) == ["sharedServices[0].pool"]
    message = issues["sharedServices[0].pool"]
    assert "'tpuv6e1t:2x4'" in message
    assert "not an instance type" in message


def test_a_v4_pool_is_rejected_for_a_shared_service(stack_values, config_error):
    # tpuv4 is not in pathwaysutils' instance pattern, though the PathwaysJob controller takes it
    values = stack_values(
        tpuPools=[{"name": "v4", "accelerator": "v4-8"}],
        sharedServices=[{"name": "svc", "pool": "v4"}],
    )
    issues = {issue.key: issue.message for issue in config_error(values).issues}
    assert issues == {
        "sharedServices[0].pool": "'tpuv4:2x2x1' is not an instance type pathwaysutils' shared "
        "service accepts (tpuv5e, tpuv5, tpuv6e or tpu7x with a topology); use a v5e, v5p, "
        "v6e or tpu7x pool of 4-chip hosts"
    }


def test_an_8_chip_host_pool_exits_2_before_registering(stack_values, cli_plan):
    code, _, err, registered = cli_plan(stack_values(**EIGHT_CHIP_HOST))
    assert code == 2
    assert "sharedServices[0].pool" in err and "tpuv6e1t:2x4" in err
    assert registered == 0


@pytest.mark.parametrize(
    ("service", "key", "fragment"),
    [
        ({"name": "svc", "pool": "nope"}, "sharedServices[0].pool", "not a TPU pool"),
        ({"name": "svc", "pool": "v5e", "slices": 2}, "sharedServices[0].slices", "exceeds"),
        ({"name": "svc", "pool": "v5e", "team": "x"}, "sharedServices[0].team", "not a team"),
        (
            {"name": "shared-service-for-team", "pool": "v5e"},
            "sharedServices[0].name",
            "at most 22",
        ),
    ],
)
def test_shared_service_checks(stack_values, config_error, service, key, fragment):
    error = config_error(stack_values(sharedServices=[service]))
    issues = {issue.key: issue.message for issue in error.issues}
    assert key in issues, issues
    assert fragment in issues[key]


def test_a_service_built_from_its_args_alone():
    """The component from its Args, without a stack config: its PathwaysJob is its child, waits
    for Running, depends on the install and the prerequisites; its outputs are what was given."""
    spec = PathwaysJobSpec(
        workers=[Worker(type=WorkerType.CT6E_STANDARD_4T, topology="2x4", num_slices=2)],
        controller=Controller(deployment_mode=DeploymentMode.DEFAULT),
    )

    def program():
        provider = k8s.Provider("k8s", kubeconfig="{}")
        install = k8s.core.v1.Namespace("install")
        queue = k8s.core.v1.Namespace("queue")
        service = SharedPathwaysService(
            "svc",
            SharedPathwaysServiceArgs(
                job_name="svc",
                namespace="serving",
                spec=spec,
                address="svc-pathways-head-0-0.svc.serving.svc.cluster.local:29001",
                instance_type="tpuv6e:2x4",
                provider=provider,
                wait_timeout_seconds=900,
                controller_install=install,
                labels={"kueue.x-k8s.io/queue-name": "multislice-queue"},
                prerequisites=[queue],
            ),
        )
        return {
            "service": service.pathways_service,
            "instances": service.expected_tpu_instances,
        }

    resources, outputs = run_program(program, "typed-api")
    assert outputs == {
        "instances": {"tpuv6e:2x4": 2},
        "service": "svc-pathways-head-0-0.svc.serving.svc.cluster.local:29001",
    }
    (service,) = [r for r in resources if r.type == SERVICE]
    (job,) = [r for r in resources if r.type == PATHWAYS_JOB]
    namespaces = {r.name: r.urn for r in resources if r.type == "kubernetes:core/v1:Namespace"}
    assert job.parent == service.urn
    assert job.name == "svc"
    assert sorted(job.dependencies) == sorted([namespaces["install"], namespaces["queue"]])
    assert job.inputs["metadata"] == {
        "name": "svc",
        "namespace": "serving",
        "labels": {"kueue.x-k8s.io/queue-name": "multislice-queue"},
        "annotations": {
            "pulumi.com/waitFor": "condition=Running",
            "pulumi.com/timeoutSeconds": "900",
        },
    }
    assert job.inputs["spec"]["workers"] == [
        {"type": "ct6e-standard-4t", "topology": "2x4", "numSlices": 2}
    ]
