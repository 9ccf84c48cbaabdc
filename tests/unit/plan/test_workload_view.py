"""``WorkloadView``: one reading of a planned Pathways workload, whichever backend records it (a
PathwaysJob the controller expands, or the JobSet itself), checked against literals."""

from __future__ import annotations

from typing import Any

import pytest

from components.pathways.jobset import render_jobset
from components.pathways.spec import API_VERSION, KIND
from components.plan.views import MISSING, NODE_IDENTITY, WorkloadView, is_workload
from components.tokens import JOBSET, PATHWAYS_JOB, WORKLOAD_TYPES
from components.vocabulary import WorkloadBackend
from tests.jobset_shapes import spec

U = "[unknown]"
QUEUE = {"kueue.x-k8s.io/queue-name": "lq"}
SPEC = spec(
    "ct5p-hightpu-4t",
    "2x2x2",
    2,
    worker={"priorityClassName": "high", "nodeSelector": {"cloud.google.com/gke-nodepool": "p-0"}},
)
TPU_SELECTOR = {
    "cloud.google.com/gke-nodepool": "p-0",
    "cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
    "cloud.google.com/gke-tpu-topology": "2x2x2",
}
SHARED_TMP = {"name": "shared-tmp", "hostPath": {"path": "/tmp", "type": "DirectoryOrCreate"}}
# The JobSet backend's /tmp: a volume of the pod's own, no leftovers for the next team's pod.
OWN_TMP = {"name": "shared-tmp", "emptyDir": {}}


def pathways_job(**metadata: Any) -> dict[str, Any]:
    meta = {"name": "train", "namespace": "team-a", "labels": QUEUE, **metadata}
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": meta, "spec": SPEC.manifest()}


def jobset(**options: Any) -> dict[str, Any]:
    return render_jobset("train", "team-a", SPEC, queue_name="lq", **options)


def view(type_token: str, inputs: dict[str, Any]) -> WorkloadView:
    found = WorkloadView.of(type_token, inputs)
    assert found is not None
    return found


BOTH = [
    pytest.param(
        PATHWAYS_JOB, pathways_job(), WorkloadBackend.PATHWAYS_JOB, SHARED_TMP, id="pathwaysjob"
    ),
    pytest.param(JOBSET, jobset(), WorkloadBackend.JOBSET, OWN_TMP, id="jobset"),
]


@pytest.mark.parametrize(("type_token", "inputs", "backend", "tmp"), BOTH)
def test_either_backend_reads_the_same(type_token, inputs, backend, tmp):
    workload = view(type_token, inputs)
    assert workload.backend is backend
    assert (workload.name, workload.namespace, workload.key) == ("train", "team-a", "team-a/train")
    assert workload.queue == "lq"
    assert workload.priority == "high"
    assert workload.slices == 2
    assert workload.tpu_selector == TPU_SELECTOR
    assert workload.node_pool == "p-0"
    assert workload.identity == NODE_IDENTITY  # host network: the node's service account
    assert workload.head_template["spec"]["serviceAccountName"] == "team-a"
    assert tmp in workload.volumes


def test_only_a_jobset_records_its_workers_pod_templates():
    assert view(PATHWAYS_JOB, pathways_job()).worker_templates == ()
    (worker,) = view(JOBSET, jobset()).worker_templates
    assert worker["spec"]["containers"][0]["name"] == "pathways-worker"
    assert worker["spec"]["priorityClassName"] == "high"


def test_a_pod_network_jobset_acts_as_its_service_account():
    assert view(JOBSET, jobset(host_network=False, service_account="ml")).identity == "ml"


def test_a_headless_pathways_job_records_no_head_template():
    headless = pathways_job()
    del headless["spec"]["controller"]["template"]
    workload = view(PATHWAYS_JOB, headless)
    assert (workload.head_template, workload.volumes) == ({}, ())
    assert workload.slices == 2  # its pods are still known


@pytest.mark.parametrize(
    ("labels", "queue"),
    [({}, MISSING), ({"team": "a"}, MISSING), (U, U), ({"kueue.x-k8s.io/queue-name": U}, U)],
)
def test_the_queue_is_missing_or_not_visible(labels, queue):
    assert view(PATHWAYS_JOB, pathways_job(labels=labels)).queue == queue


def test_no_labels_at_all_is_no_queue():
    inputs = pathways_job()
    del inputs["metadata"]["labels"]
    assert view(PATHWAYS_JOB, inputs).queue is MISSING


@pytest.mark.parametrize(("type_token", "inputs", "backend", "tmp"), BOTH)
def test_pods_not_visible_are_unknown_not_guessed(type_token, inputs, backend, tmp):
    inputs["spec"]["unseen"] = U
    workload = view(type_token, inputs)
    assert workload.pods is None
    assert (workload.identity, workload.priority, workload.slices) == (None, None, None)
    assert (workload.tpu_selector, workload.node_pool) == (None, None)
    assert workload.queue == "lq"  # what is visible is still read


@pytest.mark.parametrize(
    ("type_token", "inputs"),
    [
        (PATHWAYS_JOB, {"metadata": {"name": "x"}, "spec": {"workers": "two"}}),
        (JOBSET, {"kind": "JobSet", "spec": {"replicatedJobs": [{"name": "other"}]}}),
        (JOBSET, {"spec": {"replicatedJobs": "none"}}),
    ],
)
def test_a_workload_the_models_cannot_read_has_no_pods(type_token, inputs):
    workload = view(type_token, inputs)
    assert workload.pods is None
    assert (workload.key, workload.worker_templates, workload.volumes) == (None, (), ())


def test_every_workload_type_has_a_backend_and_nothing_else_is_a_workload():
    assert {view(t, {}).backend for t in WORKLOAD_TYPES} == set(WorkloadBackend)
    assert WorkloadView.of("kubernetes:batch/v1:Job", {}) is None
    assert not is_workload("kubernetes:batch/v1:Job")


def test_the_plain_plan_shows_each_backend_by_its_own_inputs():
    assert view(PATHWAYS_JOB, {}).key_inputs == ("spec.workers", "spec.controller.deploymentMode")
    assert view(JOBSET, {}).key_inputs == ("metadata.labels", "spec.replicatedJobs")
