"""The JobSet backend renders a PathwaysJobSpec as XPK 1.16 renders the same workload.

Expected values are literals read off XPK 1.16.0's ``templates/pathways_workload_create.yaml.j2``
filled as ``commands/workload.py`` fills it (head sidecars and their args, worker replicas,
completions and parallelism, ``google.com/tpu`` per pod, node selectors, exclusive topology, the
queue label), and, where the spec promises something XPK does not render, off the PathwaysJob
controller v0.1.4 (internal/controller/pathwaysjob_controller.go): maxRestarts, custom env,
metrics flags, the elastic backoff limit, 8-chip hosts.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.errors import ConfigError
from components.pathways.jobset import ColocatedModeUnsupported, render_jobset
from components.pathways.spec import (
    Controller,
    DeploymentMode,
    PathwaysJobSpec,
    Worker,
    WorkerType,
)
from tests.helpers import SIGTERM_WRAPPER
from tests.jobset_shapes import NAMESPACE, SHAPES

SERVER = "us-docker.pkg.dev/cloud-tpu-v2-images/pathways/server"
PROXY = "us-docker.pkg.dev/cloud-tpu-v2-images/pathways/proxy_server"
SCRATCH = "--gcs_scratch_location=gs://scratch/team-a/job"
COORDINATOR = "metadata.labels['jobset.sigs.k8s.io/coordinator']"


def render(shape_name: str) -> dict[str, Any]:
    shape = SHAPES[shape_name]
    return render_jobset(shape.name, NAMESPACE, shape.spec, **shape.render)


def replicated(manifest: dict, name: str) -> dict:
    (job,) = [j for j in manifest["spec"]["replicatedJobs"] if j["name"] == name]
    return job


def pod(manifest: dict, name: str) -> dict:
    return replicated(manifest, name)["template"]["spec"]["template"]["spec"]


def by_name(containers: list[dict]) -> dict[str, dict]:
    return {c["name"]: c for c in containers}


def field_env(name: str, path: str) -> dict:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}}


XPK_RM_ENV = [
    field_env(
        "REPLICATED_JOB_NAME", "metadata.annotations['jobset.sigs.k8s.io/replicatedjob-name']"
    ),
    field_env("JOBSET_NAME", "metadata.annotations['jobset.sigs.k8s.io/jobset-name']"),
    field_env("HOST_ADDRESS", COORDINATOR),
    {"name": "TPU_SKIP_MDS_QUERY", "value": "true"},
]
XPK_WORKER_ENV = [
    {"name": "TPU_MIN_LOG_LEVEL", "value": "0"},
    {"name": "TF_CPP_MIN_LOG_LEVEL", "value": "0"},
    {"name": "XCLOUD_ENVIRONMENT", "value": "GCP"},
    {"name": "MEGASCALE_GRPC_ENABLE_XOR_TRACER", "value": "false"},
    field_env(
        "MEGASCALE_NUM_SLICES", "metadata.labels['jobset.sigs.k8s.io/replicatedjob-replicas']"
    ),
    field_env("JOBSET_NAME", "metadata.annotations['jobset.sigs.k8s.io/jobset-name']"),
    field_env(
        "REPLICATED_JOB_NAME", "metadata.annotations['jobset.sigs.k8s.io/replicatedjob-name']"
    ),
    field_env("MEGASCALE_SLICE_ID", "metadata.labels['jobset.sigs.k8s.io/job-index']"),
    field_env("PATHWAYS_HEAD", COORDINATOR),
    field_env("MEGASCALE_COORDINATOR_ADDRESS", COORDINATOR),
]
XPK_JAX_ENV = [
    field_env("PATHWAYS_HEAD", COORDINATOR),
    {"name": "JAX_PLATFORMS", "value": "proxy"},
    {"name": "XCLOUD_ENVIRONMENT", "value": "GCP"},
    {"name": "JAX_BACKEND_TARGET", "value": "grpc://$(PATHWAYS_HEAD):29000"},
]
XPK_WORKER_PORTS = [
    {"containerPort": 29005, "protocol": "TCP"},
    {"containerPort": 29006, "protocol": "TCP"},
    {"containerPort": 8471, "protocol": "TCP"},
    {"containerPort": 8080, "protocol": "TCP"},
]
# /tmp of a JobSet's pods is their own (an emptyDir), not the node's: no leftovers between
# teams, and Pod Security baseline holds.
SHARED_TMP_VOLUME = {"name": "shared-tmp", "emptyDir": {}}


def worker_shape(manifest: dict) -> tuple:
    job = replicated(manifest, "worker")
    spec = job["template"]["spec"]
    (container,) = spec["template"]["spec"]["containers"]
    return (
        job["replicas"],
        spec["completions"],
        spec["parallelism"],
        container["resources"]["limits"]["google.com/tpu"],
    )


def rm_args(manifest: dict) -> list[str]:
    containers = pod(manifest, "pathways-head")
    return by_name(containers.get("initContainers", containers["containers"]))["pathways-rm"][
        "args"
    ]


# --- training, multi-host, multi-slice: XPK's v5p-16 x 2 ---------------------------------------


def test_jobset_level_fields_are_xpks_with_the_queue_label():
    manifest = render("v5p-16x2")
    assert manifest["apiVersion"] == "jobset.x-k8s.io/v1alpha2"
    assert manifest["kind"] == "JobSet"
    assert manifest["metadata"] == {
        "name": "train",
        "namespace": "team-a",
        "labels": {"kueue.x-k8s.io/queue-name": "lq"},
    }
    spec = manifest["spec"]
    assert spec["coordinator"]["replicatedJob"] == "pathways-head"
    assert spec["network"] == {"enableDNSHostnames": True, "publishNotReadyAddresses": True}
    assert spec["startupPolicy"] == {"startupPolicyOrder": "InOrder"}
    assert spec["successPolicy"] == {"operator": "All", "targetReplicatedJobs": ["pathways-head"]}
    # XPK sets only the strategy; maxRestarts is the controller's (unset in the spec: 0).
    assert spec["failurePolicy"] == {"restartStrategy": "Recreate", "maxRestarts": 0}
    assert [j["name"] for j in spec["replicatedJobs"]] == ["pathways-head", "worker"]


def test_head_is_one_pod_exclusive_per_host_with_rm_and_proxy_as_native_sidecars():
    manifest = render("v5p-16x2")
    head = replicated(manifest, "pathways-head")
    assert head["replicas"] == 1
    assert head["template"]["metadata"]["annotations"] == {
        "alpha.jobset.sigs.k8s.io/exclusive-topology": "kubernetes.io/hostname"
    }
    job_spec = head["template"]["spec"]
    assert (job_spec["backoffLimit"], job_spec["completions"], job_spec["parallelism"]) == (0, 1, 1)
    assert job_spec["completionMode"] == "Indexed"
    pod_spec = pod(manifest, "pathways-head")
    assert pod_spec["hostNetwork"] is True
    assert pod_spec["dnsPolicy"] == "ClusterFirstWithHostNet"
    assert pod_spec["nodeSelector"] == {"cloud.google.com/gke-nodepool": "cpu-np"}
    assert pod_spec["restartPolicy"] == "Never"
    sidecars = by_name(pod_spec["initContainers"])
    assert sorted(sidecars) == ["pathways-proxy", "pathways-rm"]
    assert {c["restartPolicy"] for c in sidecars.values()} == {"Always"}
    assert {c["imagePullPolicy"] for c in sidecars.values()} == {"Always"}
    proxy = sidecars["pathways-proxy"]
    assert proxy["image"] == f"{PROXY}:latest"
    assert proxy["args"] == [
        "--server_port=29000",
        "--resource_manager_address=$(PATHWAYS_HEAD):29001",
        SCRATCH,
    ]
    assert proxy["env"] == [field_env("PATHWAYS_HEAD", COORDINATOR)]
    assert proxy["ports"] == [{"containerPort": 29000, "protocol": "TCP"}]
    assert proxy["resources"] == {"limits": {"cpu": "16", "memory": "100G"}}
    rm = sidecars["pathways-rm"]
    assert rm["image"] == f"{SERVER}:latest"
    assert rm["args"] == [
        "--server_port=29001",
        SCRATCH,
        "--node_type=resource_manager",
        "--instance_count=2",
        "--instance_type=tpuv5:2x2x2",
    ]
    assert rm["env"] == XPK_RM_ENV
    assert rm["ports"] == [
        {"containerPort": 29001, "protocol": "TCP"},
        {"containerPort": 29002, "protocol": "TCP"},
    ]
    assert rm["resources"] == {"limits": {"cpu": "8", "memory": "32G"}}


def test_user_container_keeps_its_sigterm_wrapper_and_gets_the_jax_env():
    (main,) = pod(render("v5p-16x2"), "pathways-head")["containers"]
    assert main["name"] == "main"
    assert main["command"] == [*SIGTERM_WRAPPER, "python", "train.py"]
    assert main["env"] == XPK_JAX_ENV
    assert main["volumeMounts"] == [{"name": "shared-tmp", "mountPath": "/tmp"}]


def test_workers_are_one_replica_per_slice_one_pod_per_host_exclusive_per_node_pool():
    manifest = render("v5p-16x2")
    worker = replicated(manifest, "worker")
    assert worker["template"]["metadata"]["annotations"] == {
        "alpha.jobset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool"
    }
    assert worker_shape(manifest) == (2, 2, 2, "4")
    assert worker["template"]["spec"]["backoffLimit"] == 8  # hosts x 4
    assert worker["template"]["spec"]["completionMode"] == "Indexed"
    pod_spec = pod(manifest, "worker")
    assert pod_spec["nodeSelector"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
        "cloud.google.com/gke-tpu-topology": "2x2x2",
    }
    assert pod_spec["hostNetwork"] is True
    assert pod_spec["dnsPolicy"] == "ClusterFirstWithHostNet"
    assert pod_spec["restartPolicy"] == "OnFailure"
    assert pod_spec["tolerations"] == [{"key": "google.com/tpu", "operator": "Exists"}]
    assert pod_spec["volumes"] == [SHARED_TMP_VOLUME]
    assert "initContainers" not in pod_spec
    (container,) = pod_spec["containers"]
    assert container["name"] == "pathways-worker"
    assert container["image"] == f"{SERVER}:latest"
    assert container["imagePullPolicy"] == "Always"
    assert container["args"] == [
        "--server_port=29005",
        "--resource_manager_address=$(PATHWAYS_HEAD):29001",
        SCRATCH,
    ]
    assert container["env"] == XPK_WORKER_ENV
    assert container["ports"] == XPK_WORKER_PORTS
    assert container["resources"] == {"limits": {"google.com/tpu": "4"}}
    assert container["volumeMounts"] == [{"name": "shared-tmp", "mountPath": "/tmp"}]


def test_rendering_leaves_the_spec_template_untouched():
    shape = SHAPES["v5p-16x2"]
    before = copy.deepcopy(shape.spec.controller.template)
    render("v5p-16x2")
    assert shape.spec.controller.template == before


# --- headless -----------------------------------------------------------------------------------


def test_headless_head_runs_rm_and_proxy_as_its_containers():
    manifest = render("headless")
    pod_spec = pod(manifest, "pathways-head")
    assert "initContainers" not in pod_spec
    assert [c["name"] for c in pod_spec["containers"]] == ["pathways-rm", "pathways-proxy"]
    # XPK leaves restartPolicy: Always on them; ordinary containers may not carry it.
    assert all("restartPolicy" not in c for c in pod_spec["containers"])
    assert pod_spec["nodeSelector"] == {"cloud.google.com/gke-nodepool": "cpu-np"}
    assert pod_spec["hostNetwork"] is True
    assert "successPolicy" not in manifest["spec"]
    assert rm_args(manifest)[-2:] == ["--instance_count=1", "--instance_type=tpuv5e:4x4"]
    # v5e 4x4: 16 chips on four 4-chip hosts.
    assert worker_shape(manifest) == (1, 4, 4, "4")


def test_a_shared_service_head_runs_the_resource_manager_only():
    """pathwaysutils 0.1.13 experimental/gke/jobset.py, shared_pathways_service=True: the head
    has the pathways-rm container and no proxy (each client brings its own)."""
    shape = SHAPES["headless"]
    manifest = render_jobset(
        "svc", "default", shape.spec, **{**shape.render, "queue_name": "svc"}, head_proxy=False
    )
    pod_spec = pod(manifest, "pathways-head")
    assert "initContainers" not in pod_spec
    (rm,) = pod_spec["containers"]
    assert rm["name"] == "pathways-rm"
    assert rm["args"][:3] == [
        "--server_port=29001",
        "--gcs_scratch_location=gs://scratch/team-a/job",
        "--node_type=resource_manager",
    ]
    assert rm["ports"] == [
        {"containerPort": 29001, "protocol": "TCP"},
        {"containerPort": 29002, "protocol": "TCP"},
    ]
    assert pod_spec["nodeSelector"] == {"cloud.google.com/gke-nodepool": "cpu-np"}
    assert manifest["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "svc"}
    # the workers are the headless job's: v5e 4x4, four 4-chip hosts
    assert worker_shape(manifest) == (1, 4, 4, "4")


# --- single-host slices and 8-chip hosts --------------------------------------------------------


def test_v6e_single_host_slices_are_one_pod_each():
    manifest = render("v6e-4x3")
    assert worker_shape(manifest) == (3, 1, 1, "4")
    assert replicated(manifest, "worker")["template"]["spec"]["backoffLimit"] == 4
    assert pod(manifest, "worker")["nodeSelector"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
        "cloud.google.com/gke-tpu-topology": "2x2",
    }
    assert rm_args(manifest)[-2:] == ["--instance_count=3", "--instance_type=tpuv6e:2x2"]
    assert "labels" not in manifest["metadata"]  # no queue given


def test_v5e_2x4_on_eight_chip_hosts_is_one_pod_with_eight_chips():
    # XPK has no 8-chip v5e host; the controller's figures (calculateVMsFromMachineTypeAndTopology,
    # MachineTypeToTPUVersionMap) apply.
    manifest = render("v5e-2x4-8t")
    assert worker_shape(manifest) == (1, 1, 1, "8")
    assert rm_args(manifest)[-1] == "--instance_type=tpuv5e1t:2x4"


def test_v5e_2x4_on_four_chip_hosts_is_xpks_v5litepod_8():
    manifest = render("v5e-2x4-4t")
    assert worker_shape(manifest) == (1, 2, 2, "4")
    assert rm_args(manifest)[-1] == "--instance_type=tpuv5e:2x4"
    assert pod(manifest, "worker")["nodeSelector"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
        "cloud.google.com/gke-tpu-topology": "2x4",
    }


# --- custom components, priority, elastic slices, grace, restarts -------------------------------


def test_custom_components_pin_images_and_append_flags_and_env():
    manifest = render("custom")
    sidecars = by_name(pod(manifest, "pathways-head")["initContainers"])
    rm, proxy = sidecars["pathways-rm"], sidecars["pathways-proxy"]
    assert rm["image"] == "us-docker.pkg.dev/p/r/server:pinned"
    assert rm["args"] == [
        "--server_port=29001",
        SCRATCH,
        "--node_type=resource_manager",
        "--instance_count=4",
        "--instance_type=tpuv5:2x2x2",
        "--enable_metrics_collection=true",
        "--temporary_flag=1",
    ]
    assert proxy["image"] == f"{PROXY}:2025-10-01"
    assert proxy["args"] == [
        "--server_port=29000",
        "--resource_manager_address=$(PATHWAYS_HEAD):29001",
        SCRATCH,
        "--enable_metrics_collection=true",
        "--num_elastic_slices=1",
        "--xla_tpu_flag=true",
        "--sidecar_name=external",
    ]
    assert proxy["env"] == [
        field_env("PATHWAYS_HEAD", COORDINATOR),
        {"name": "PROXY_ENV", "value": "p"},
    ]
    (worker,) = pod(manifest, "worker")["containers"]
    assert worker["image"] == f"{SERVER}:2025-10-01"  # the server override is the RM's only
    assert worker["env"] == [*XPK_WORKER_ENV, {"name": "WORKER_ENV", "value": "w"}]
    assert worker["args"][-1] == "--enable_metrics_collection=true"


def test_colocated_python_sidecar_runs_beside_each_worker():
    (sidecar,) = pod(render("custom"), "worker")["initContainers"]
    assert sidecar == {
        "name": "colocated-python-sidecar",
        "image": "us-docker.pkg.dev/p/r/colocated-python:1",
        "imagePullPolicy": "Always",
        "env": [
            {"name": "GRPC_SERVER_ADDRESS", "value": "0.0.0.0:50051"},
            {"name": "PYTHONUNBUFFERED", "value": "1"},
        ],
        "ports": [{"containerPort": 50051, "protocol": "TCP"}],
        "resources": {},
        "restartPolicy": "Always",
        "volumeMounts": [{"name": "shared-tmp", "mountPath": "/tmp"}],
    }


def test_priority_grace_restarts_and_elastic_backoff():
    manifest = render("custom")
    assert manifest["metadata"]["labels"] == {
        "tpu-pathways/team": "team-a",
        "kueue.x-k8s.io/queue-name": "team-a-queue",
    }
    assert manifest["spec"]["failurePolicy"] == {"restartStrategy": "Recreate", "maxRestarts": 5}
    worker_job = replicated(manifest, "worker")
    # elastic: hosts (2) x maxSliceRestarts (3), as both XPK and the controller compute it
    assert worker_job["template"]["spec"]["backoffLimit"] == 6
    assert worker_shape(manifest) == (4, 2, 2, "4")
    worker_pod = pod(manifest, "worker")
    assert worker_pod["priorityClassName"] == "high"
    assert worker_pod["terminationGracePeriodSeconds"] == 300
    assert worker_pod["nodeSelector"] == {
        "cloud.google.com/reservation-name": "res-1",
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
        "cloud.google.com/gke-tpu-topology": "2x2x2",
    }
    head_pod = pod(manifest, "pathways-head")
    assert head_pod["priorityClassName"] == "high"
    assert head_pod["terminationGracePeriodSeconds"] == 300


def test_elastic_slices_without_max_slice_restarts_use_the_crd_default_of_one():
    spec = PathwaysJobSpec(
        workers=[Worker(type=WorkerType.CT5P_HIGHTPU_4T, topology="2x2x4", num_slices=2)],
        controller=Controller(deployment_mode=DeploymentMode.DEFAULT, elastic_slices=1),
    )
    manifest = render_jobset("e", "ns", spec)
    assert replicated(manifest, "worker")["template"]["spec"]["backoffLimit"] == 4  # 4 hosts x 1


def test_elastic_slices_with_zero_slice_restarts_keep_the_default_backoff():
    spec = PathwaysJobSpec(
        workers=[
            Worker(
                type=WorkerType.CT5P_HIGHTPU_4T,
                topology="2x2x4",
                num_slices=2,
                max_slice_restarts=0,
            )
        ],
        controller=Controller(deployment_mode=DeploymentMode.DEFAULT, elastic_slices=1),
    )
    manifest = render_jobset("e", "ns", spec)
    assert replicated(manifest, "worker")["template"]["spec"]["backoffLimit"] == 16  # 4 hosts x 4


# --- off the host network -----------------------------------------------------------------------


def test_pod_network_runs_every_pod_as_the_service_account():
    manifest = render("pod-network")
    for name in ("pathways-head", "worker"):
        pod_spec = pod(manifest, name)
        assert "hostNetwork" not in pod_spec
        assert pod_spec["dnsPolicy"] == "ClusterFirst"
        assert pod_spec["serviceAccountName"] == "team-a-runner"
    head = pod(manifest, "pathways-head")
    insecure = {"name": "IFRT_PROXY_USE_INSECURE_GRPC_CREDENTIALS", "value": "true"}
    assert by_name(head["initContainers"])["pathways-proxy"]["env"][-1] == insecure
    assert head["containers"][0]["env"] == [*XPK_JAX_ENV, insecure]


# --- refused ------------------------------------------------------------------------------------


def test_colocated_mode_is_refused_with_the_alternatives():
    spec = PathwaysJobSpec(
        workers=[Worker(type=WorkerType.CT6E_STANDARD_4T, topology="2x2", num_slices=1)],
        controller=Controller(deployment_mode=DeploymentMode.COLOCATE_HEAD_WITH_WORKERS),
    )
    with pytest.raises(ColocatedModeUnsupported) as caught:
        render_jobset("infer", "ns", spec)
    error = caught.value
    assert isinstance(error, ConfigError)
    assert error.job_name == "infer"
    (issue,) = error.issues
    assert issue.key == "controller.deploymentMode"
    assert issue.message == (
        "PathwaysJob 'infer': deployment mode 'colocate_head_with_workers' cannot be rendered as "
        "a JobSet (XPK 1.16 dropped it); use the default mode with the head on the CPU pool, or "
        "the PathwaysJob controller"
    )
