"""One model of the pods, two renderers: the JobSet backend's pods, read back from the rendered
JobSet, are the PathwaysJob controller's pods (``controller_model.expand``) for the same spec,
except for the differences ``jobset_pods.DIFFERENCES`` documents, and the scheduler model places
them the same way."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from components.pathways.controller_model import ExpandedJob, PodModel, Toleration, expand
from components.pathways.head_sizing import PodResources
from components.pathways.jobset import render_jobset
from components.pathways.jobset_pods import (
    DIFFERENCES,
    NotAPathwaysJobSet,
    expand_jobset,
    pod_requests,
    pod_tpu_chips,
)
from components.pathways.scheduler_model import TPU_TAINT, NodePoolModel, pools_that_fit
from components.pathways.spec import DeploymentMode
from components.tpu.machines import machine_type
from tests.jobset_shapes import NAMESPACE, SHAPES

TOLERATIONS = ("worker", "tolerations")
EXPECTED_DIFFERENCES = {
    "v5p-16x2": {TOLERATIONS},
    "headless": {TOLERATIONS, ("head", "node_selector")},
    "v6e-4x3": {TOLERATIONS},
    "v5e-2x4-8t": {TOLERATIONS},
    "v5e-2x4-4t": {TOLERATIONS},
    "custom": {TOLERATIONS, ("worker", "images")},
    "pod-network": {
        TOLERATIONS,
        ("head", "host_network"),
        ("worker", "host_network"),
        ("head", "service_account"),
        ("worker", "service_account"),
    },
}


def both(shape_name: str) -> tuple[ExpandedJob, ExpandedJob]:
    shape = SHAPES[shape_name]
    rendered = render_jobset(shape.name, NAMESPACE, shape.spec, **shape.render)
    return expand_jobset(rendered), expand(shape.name, NAMESPACE, shape.spec)


def pod_differences(jobset: ExpandedJob, controller: ExpandedJob) -> dict[tuple[str, str], Any]:
    found = {}
    for role, attribute in (("head", "head"), ("worker", "workers")):
        ours, theirs = getattr(jobset, attribute), getattr(controller, attribute)
        for f in dataclasses.fields(PodModel):
            if getattr(ours, f.name) != getattr(theirs, f.name):
                found[(role, f.name)] = (getattr(ours, f.name), getattr(theirs, f.name))
    return found


def test_every_shape_is_covered():
    assert sorted(EXPECTED_DIFFERENCES) == sorted(SHAPES)


@pytest.mark.parametrize("shape_name", sorted(EXPECTED_DIFFERENCES))
def test_same_pods_as_the_controller_except_the_documented_differences(shape_name):
    jobset, controller = both(shape_name)
    assert (jobset.name, jobset.namespace) == (controller.name, controller.namespace)
    assert jobset.deployment_mode is controller.deployment_mode is DeploymentMode.DEFAULT
    assert jobset.pathways_dir == controller.pathways_dir == "gs://scratch/team-a/job"
    differences = pod_differences(jobset, controller)
    assert set(differences) == EXPECTED_DIFFERENCES[shape_name]
    assert set(differences) <= set(DIFFERENCES)


def test_the_worker_toleration_difference_is_the_one_gke_adds_anyway():
    jobset, controller = both("v5p-16x2")
    assert jobset.workers.tolerations == (Toleration("google.com/tpu", operator="Exists"),)
    assert controller.workers.tolerations == ()


def test_the_head_is_the_same_pod_literally():
    jobset, _ = both("v5p-16x2")
    head = jobset.head
    assert (head.groups, head.per_group, head.tpu_chips) == (1, 1, 0)
    # resource manager 8 CPU / 32 GB + proxy 16 CPU / 100 GB + the user's 8 CPU / 32 GiB
    assert head.resources == PodResources(32_000, 132 * 10**9 + 32 * 2**30)
    assert head.images == (
        "us-docker.pkg.dev/cloud-tpu-v2-images/pathways/server:latest",
        "us-docker.pkg.dev/cloud-tpu-v2-images/pathways/proxy_server:latest",
        "us-docker.pkg.dev/p/r/train:1",
    )
    assert head.exclusive_topology == "kubernetes.io/hostname"
    assert head.service_account == "team-a"
    assert head.command[-2:] == ("python", "train.py")


def test_workers_read_back_literally():
    jobset, _ = both("v5e-2x4-8t")
    workers = jobset.workers
    assert (workers.groups, workers.per_group, workers.tpu_chips) == (1, 1, 8)
    assert workers.resources == PodResources(0, 0)
    assert workers.exclusive_topology == "cloud.google.com/gke-nodepool"
    assert dict(workers.node_selector) == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
        "cloud.google.com/gke-tpu-topology": "2x4",
    }


def test_pod_network_pods_carry_the_service_account():
    jobset, controller = both("pod-network")
    assert (jobset.head.host_network, jobset.head.service_account) == (False, "team-a-runner")
    assert (jobset.workers.host_network, jobset.workers.service_account) == (False, "team-a-runner")
    assert (controller.workers.host_network, controller.workers.service_account) == (True, None)


def test_custom_worker_images_add_the_colocated_python_sidecar():
    jobset, controller = both("custom")
    assert jobset.workers.images == (
        "us-docker.pkg.dev/p/r/colocated-python:1",
        "us-docker.pkg.dev/cloud-tpu-v2-images/pathways/server:2025-10-01",
    )
    assert controller.workers.images == (
        "us-docker.pkg.dev/cloud-tpu-v2-images/pathways/server:2025-10-01",
    )


# --- the scheduler model places both the same way ----------------------------------------------


def _tpu_pool(name: str, accelerator: str, topology: str, hosts: int, chips: int):
    labels = {
        "cloud.google.com/gke-nodepool": name,
        "cloud.google.com/gke-tpu-accelerator": accelerator,
        "cloud.google.com/gke-tpu-topology": topology,
    }
    return NodePoolModel(
        name, name.rsplit("-", 1)[0], None, labels, (TPU_TAINT,), hosts, chips, None
    )


POOLS = [
    NodePoolModel(
        "cpu-np",
        "cpu-np",
        machine_type("n2-standard-64"),
        {"cloud.google.com/gke-nodepool": "cpu-np"},
        (),
        4,
        0,
        None,
    ),
    NodePoolModel("small-cpu", "small-cpu", machine_type("e2-standard-4"), {}, (), 3, 0, None),
    _tpu_pool("v5p-0", "tpu-v5p-slice", "2x2x2", 2, 4),
    _tpu_pool("v5p-1", "tpu-v5p-slice", "2x2x2", 2, 4),
    _tpu_pool("v6e-0", "tpu-v6e-slice", "2x2", 1, 4),
    _tpu_pool("v5e8-0", "tpu-v5-lite-podslice", "2x4", 1, 8),
    _tpu_pool("v5e4-0", "tpu-v5-lite-podslice", "2x4", 2, 4),
]


@pytest.mark.parametrize("shape_name", sorted(EXPECTED_DIFFERENCES))
def test_scheduler_model_places_both_renderings_alike(shape_name):
    jobset, controller = both(shape_name)
    for ours, theirs in ((jobset.head, controller.head), (jobset.workers, controller.workers)):
        assert [p.name for p in pools_that_fit(ours, POOLS)] == [
            p.name for p in pools_that_fit(theirs, POOLS)
        ]


def test_v5p_training_lands_on_the_cpu_pool_and_both_v5p_slices():
    jobset, _ = both("v5p-16x2")
    assert [p.name for p in pools_that_fit(jobset.head, POOLS)] == ["cpu-np"]
    assert [p.name for p in pools_that_fit(jobset.workers, POOLS)] == ["v5p-0", "v5p-1"]


# --- reading any JobSet ------------------------------------------------------------------------


def container(name: str, cpu: str = "0", memory: str = "0", **more: Any) -> dict[str, Any]:
    return {"name": name, "resources": {"requests": {"cpu": cpu, "memory": memory}}, **more}


def test_an_ordinary_init_container_counts_alone_with_the_sidecars_before_it():
    inits = [
        container("sidecar", "1", "1G", restartPolicy="Always"),
        container("setup", "10", "1G"),
        container("late-sidecar", "1", "1G", restartPolicy="Always"),
    ]
    # setup runs beside the first sidecar only: 11 CPU / 2G; then 1 + 1 + 2 CPU, 1 + 1 + 4G.
    assert pod_requests(inits, [container("main", "2", "4G")]) == PodResources(11_000, 6 * 10**9)


def test_tpu_chips_of_a_pod_follow_the_same_rule():
    tpu = {"limits": {"google.com/tpu": "4"}}
    assert pod_tpu_chips([{"name": "s", "restartPolicy": "Always", "resources": tpu}], []) == 4
    assert pod_tpu_chips([{"name": "i", "resources": tpu}], [{"name": "m"}]) == 4
    assert pod_tpu_chips([], [{"name": "a", "resources": tpu}, {"name": "b"}]) == 4


def minimal_jobset(head_pod: dict[str, Any], annotations: dict | None = None) -> dict[str, Any]:
    worker_pod = {
        "nodeSelector": {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice"},
        "containers": [{"name": "pathways-worker", "resources": {"limits": {"google.com/tpu": 4}}}],
    }
    metadata = {"name": "j", **({"annotations": annotations} if annotations else {})}

    def job(name, pod_spec):
        return {"name": name, "template": {"spec": {"template": {"spec": pod_spec}}}}

    return {
        "kind": "JobSet",
        "metadata": metadata,
        "spec": {"replicatedJobs": [job("pathways-head", head_pod), job("worker", worker_pod)]},
    }


def test_a_head_pinned_to_tpu_nodes_without_chips_reads_as_colocated():
    head = {
        "nodeSelector": {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice"},
        "containers": [{"name": "pathways-rm", "args": ["--gcs_scratch_location="]}],
    }
    job = expand_jobset(minimal_jobset(head))
    assert job.deployment_mode is DeploymentMode.COLOCATE_HEAD_WITH_WORKERS
    assert job.head.colocated and not job.workers.colocated
    assert job.pathways_dir is None  # an empty location is the controller's "unset"
    assert job.namespace == "default"
    assert (job.workers.groups, job.workers.per_group, job.workers.tpu_chips) == (1, 1, 4)
    assert job.head.command == ()


def test_exclusive_placement_set_on_the_jobset_applies_to_every_pod():
    annotations = {"alpha.jobset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool"}
    job = expand_jobset(minimal_jobset({"containers": []}, annotations))
    assert job.head.exclusive_topology == job.workers.exclusive_topology
    assert job.workers.exclusive_topology == "cloud.google.com/gke-nodepool"


def test_what_is_not_a_pathways_jobset_is_refused():
    with pytest.raises(NotAPathwaysJobSet, match="expected a JobSet, got 'PathwaysJob'"):
        expand_jobset({"kind": "PathwaysJob"})
    manifest = minimal_jobset({"containers": []})
    manifest["spec"]["replicatedJobs"].pop()
    with pytest.raises(NotAPathwaysJobSet, match="JobSet 'j' has no replicated job worker"):
        expand_jobset(manifest)
