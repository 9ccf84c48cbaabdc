"""Known answers for the tests' ResourceQuota model (tests/quota.py) and for where its Cloud
Storage FUSE annotations come from on each backend (tests/cluster_objects.py): literal pods,
quotas and jobs, with the answers worked out by hand below each."""

from __future__ import annotations

import pytest

from tests.cluster_objects import jobset_jobs, pathwaysjob_jobset
from tests.jobset_shapes import SHAPES
from tests.quota import UnmodelledQuota, admitted_form, applies, quota_denials, usage

GIB, MIB = 2**30, 2**20
SIDECAR = "gke-gcsfuse-sidecar"
FUSE = {"gke-gcsfuse/volumes": "true"}


def pod(*containers: dict, annotations: dict | None = None, init: tuple = ()) -> dict:
    metadata = {"name": "p", **({"annotations": annotations} if annotations else {})}
    spec = {"containers": list(containers), **({"initContainers": list(init)} if init else {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def container(name: str = "c", **resources: dict) -> dict:
    return {"name": name, "image": "python:3.12", "resources": resources}


def quota(name: str, hard: dict, *scopes: str) -> dict:
    spec = {"hard": hard, **({"scopes": list(scopes)} if scopes else {})}
    return {"metadata": {"name": name, "namespace": "team"}, "spec": spec}


def sidecar_requests(made: dict) -> dict | None:
    found = [
        c for c in admitted_form(made)["spec"].get("initContainers", []) if c["name"] == SIDECAR
    ]
    return found[0]["resources"]["requests"] if found else None


# --- the pod as the quota plugin sees it --------------------------------------------------------


def test_requests_default_to_limits_per_resource():
    made = pod(container(limits={"cpu": "2", "memory": "4Gi"}, requests={"cpu": "500m"}))
    assert admitted_form(made)["spec"]["containers"][0]["resources"]["requests"] == {
        "cpu": "500m",
        "memory": "4Gi",
    }
    # 500m + nothing else; 4 GiB = 4294967296 bytes
    assert usage(admitted_form(made)) == {
        "pods": 1,
        "requests.cpu": 500,
        "requests.memory": 4294967296,
        "requests.google.com/tpu": 0,
        "cpu": 500,
        "memory": 4294967296,
    }


def test_the_fuse_sidecar_comes_first_at_gkes_defaults_or_the_pods_annotations():
    made = pod(container(requests={"cpu": "1", "memory": "1Gi"}), annotations=FUSE)
    admitted = admitted_form(made)
    assert [c["name"] for c in admitted["spec"]["initContainers"]] == [SIDECAR]
    assert admitted["spec"]["initContainers"][0]["restartPolicy"] == "Always"
    assert sidecar_requests(made) == {"cpu": "250m", "memory": "256Mi"}
    # 1000m + 250m; 1 GiB + 256 MiB = 1073741824 + 268435456
    assert usage(admitted)["requests.cpu"] == 1250
    assert usage(admitted)["requests.memory"] == 1342177280
    sized = {**FUSE, "gke-gcsfuse/cpu-request": "0", "gke-gcsfuse/memory-request": "1Gi"}
    assert sidecar_requests(pod(container(), annotations=sized)) == {"memory": "1Gi"}
    assert sidecar_requests(pod(container(), annotations={"gke-gcsfuse/volumes": "false"})) is None
    assert sidecar_requests(pod(container())) is None


# --- scopes, limits, constraints ----------------------------------------------------------------


def test_not_best_effort_applies_to_pods_requesting_cpu_or_memory_only():
    compute = quota("compute", {"requests.cpu": "1"}, "NotBestEffort")
    best = quota("best", {"pods": "1"}, "BestEffort")
    tpu_only = pod(container(limits={"google.com/tpu": 4}))  # chips are not a QoS resource
    sized = pod(container(requests={"memory": "1Gi"}))
    assert (applies(compute, tpu_only), applies(compute, sized)) == (False, True)
    assert (applies(best, tpu_only), applies(best, sized)) == (True, False)
    # the sidecar's requests make an otherwise best-effort pod count
    assert applies(compute, admitted_form(pod(container(), annotations=FUSE)))


def test_a_pod_over_a_limit_is_refused_at_the_limit_admitted():
    quotas = [
        quota("compute", {"requests.cpu": "2", "requests.memory": "3Gi"}, "NotBestEffort"),
        quota("objects", {"pods": "10", "requests.google.com/tpu": "8"}),
    ]
    made = pod(container(requests={"cpu": "1500m", "memory": "1Gi"}, limits={"google.com/tpu": 4}))
    assert quota_denials(quotas, made, used={"requests.cpu": 500}) == []  # 2000m: at the limit
    assert quota_denials(quotas, made, used={"requests.cpu": 501}) == [
        "compute: exceeded quota: requests.cpu"
    ]
    assert quota_denials(quotas, made, used={"requests.google.com/tpu": 5, "pods": 10}) == [
        "objects: exceeded quota: pods",
        "objects: exceeded quota: requests.google.com/tpu",
    ]
    # the sidecar's 256Mi on top of 3Gi: over; its 250m on top of 1800m: 2050m, over
    fused = pod(container(requests={"cpu": "1800m", "memory": "3Gi"}), annotations=FUSE)
    assert quota_denials(quotas[:1], fused) == [
        "compute: exceeded quota: requests.cpu",
        "compute: exceeded quota: requests.memory",
    ]


def test_every_container_names_each_tracked_request():
    compute = quota("compute", {"requests.cpu": "8", "memory": "8Gi"}, "NotBestEffort")
    made = pod(
        container("main", requests={"cpu": "1", "memory": "1Gi"}),
        init=(container("setup", requests={"cpu": "1"}),),
    )
    assert quota_denials([compute], made) == ["compute: must specify memory for setup"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"scopes": ["Terminating"]}, "compute: scopes ['Terminating'] are not modelled"),
        ({"scopes": ["NotBestEfort"]}, "compute: scopes ['NotBestEfort'] are not modelled"),
        ({"scopes": ["PriorityClass"]}, "compute: scopes ['PriorityClass'] are not modelled"),
        ({"scopeSelector": {"matchExpressions": []}}, "compute: scopeSelector is not modelled"),
        ({"hard": {"limits.cpu": "4"}}, "compute: pod resources ['limits.cpu'] are not counted"),
        ({"hard": {"count/pods": "4"}}, "compute: pod resources ['count/pods'] are not counted"),
    ],
)
def test_a_quota_the_model_cannot_evaluate_raises(spec, message):
    unmodelled = {"metadata": {"name": "compute"}, "spec": {"hard": {"pods": "9"}, **spec}}
    with pytest.raises(UnmodelledQuota, match=message.replace("[", r"\[")):
        quota_denials([unmodelled], pod(container(requests={"cpu": "1"})))


def test_object_counts_a_pod_does_not_touch_are_left_alone():
    objects = quota("objects", {"count/ingresses.networking.k8s.io": "0", "requests.storage": "0"})
    assert quota_denials([objects], pod(container(requests={"cpu": "1"}))) == []


# --- where the annotations reach the pod, on each backend --------------------------------------


def pathways_job(annotations: dict | None, template_annotations: dict | None = None) -> dict:
    template = {"spec": {"containers": [container("main", requests={"cpu": "1", "memory": "1Gi"})]}}
    if template_annotations:
        template["metadata"] = {"annotations": template_annotations}
    metadata = {"name": "job", "namespace": "team"}
    if annotations:
        metadata["annotations"] = annotations
    return {
        "metadata": metadata,
        "spec": {
            "controller": {"deploymentMode": "default", "template": template},
            "workers": [{"type": "ct5p-hightpu-4t", "topology": "2x2x2", "numSlices": 1}],
        },
    }


def pods_of(jobset: dict) -> dict[str, dict]:
    return {job["metadata"]["name"]: made for job, made in jobset_jobs(jobset, [])}


def test_a_pathways_jobs_own_annotations_reach_its_head_pod_not_its_templates():
    """The PathwaysJob controller v0.1.4 gives the head pod the PathwaysJob's annotations and
    the template's spec only (MakePathwaysHeadReplicatedJob, MakePathwaysHeadPodSpec)."""
    pods = pods_of(pathwaysjob_jobset(pathways_job(FUSE)))
    assert sidecar_requests(pods["job-pathways-head-0"]) == {"cpu": "250m", "memory": "256Mi"}
    assert sidecar_requests(pods["job-worker-0"]) is None
    # user 1 + resource manager 8 + proxy 16 + sidecar 0.25 CPUs; 1 GiB + 32e9 + 100e9 + 256 MiB
    assert usage(admitted_form(pods["job-pathways-head-0"]))["requests.cpu"] == 25250
    assert usage(admitted_form(pods["job-pathways-head-0"]))["requests.memory"] == 133342177280
    compute = quota("compute", {"requests.cpu": "25"}, "NotBestEffort")
    assert quota_denials([compute], pods["job-pathways-head-0"]) == [
        "compute: exceeded quota: requests.cpu"
    ]
    ignored = pods_of(pathwaysjob_jobset(pathways_job(None, template_annotations=FUSE)))
    assert sidecar_requests(ignored["job-pathways-head-0"]) is None
    assert ignored["job-pathways-head-0"]["metadata"]["annotations"] == {
        "alpha.jobset.sigs.k8s.io/exclusive-topology": "kubernetes.io/hostname"
    }


def test_a_jobset_heads_template_annotations_reach_its_head_pod():
    """The JobSet backend puts them on the head's pod template (render_jobset
    ``head_annotations``); the JobSet and Job controllers copy the template to the pod."""
    from components.pathways.jobset import render_jobset

    shape = SHAPES["v5e-2x4-8t"]
    jobset = render_jobset(shape.name, "team", shape.spec, head_annotations=FUSE)
    pods = pods_of(jobset)
    assert set(pods) == {"small-pathways-head-0", "small-worker-0"}
    assert sidecar_requests(pods["small-pathways-head-0"]) == {"cpu": "250m", "memory": "256Mi"}
    assert sidecar_requests(pods["small-worker-0"]) is None
    plain = pods_of(render_jobset(shape.name, "team", shape.spec))
    assert sidecar_requests(plain["small-pathways-head-0"]) is None
