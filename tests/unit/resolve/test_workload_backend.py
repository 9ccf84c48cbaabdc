"""The JobSet backend through the stack: ``workloadBackend`` and ``backend`` choose it, what only
one backend can run is refused naming the key, and the preflight reads a jobset-backend job's
pods from the JobSet the program registers: the same pods as the PathwaysJob controller's for the
same stack config, except for the differences ``jobset_pods.DIFFERENCES`` documents. Expected
values are written out."""

from __future__ import annotations

import dataclasses

import pytest

from components.pathways.controller_model import PodModel, expand
from components.pathways.gcs_access import Access, BucketGrant, access_of
from components.pathways.jobset_pods import DIFFERENCES
from components.resolve.preflight import bucket_grants, planned_pools, preflight, stack_deployments
from components.vocabulary import WorkloadBackend

TRAIN = {
    "name": "train",
    "team": "research",
    "pool": "v5e",
    "image": "us-docker.pkg.dev/p/r/train:1",
    "command": ["python3", "train.py"],
    "resources": {"cpu": "8", "memory": "32Gi"},
    "priority": "high",
    "maxRestarts": 2,
    "maxSliceRestarts": 3,
    "elasticSlices": 1,
    "terminationGracePeriodSeconds": 300,
}
NOTEBOOK = {"name": "notebook", "team": "research", "pool": "v5e", "mode": "headless"}
SERVICE = {"name": "svc", "team": "research", "pool": "v5e"}
SCRATCH = "tpu-pathways-dev-pathways-dev-pathways"


@pytest.fixture(scope="module")
def values(stack_values):
    def make(backend: str, **overrides):
        base = {
            "workloadBackend": backend,
            "cpuPool": {"maxNodes": 6},
            "tpuPools": [{"name": "v5e", "generation": "v5e", "topology": "2x4", "slices": 3}],
            "teams": [{"name": "research", "serviceAccount": "trainer"}],
            "workloads": [TRAIN, NOTEBOOK],
            "sharedServices": [SERVICE],
        }
        return stack_values(**{**base, **overrides})

    return make


def test_the_default_backend_is_the_pathwaysjob_crd(config_of, stack_values):
    config = config_of(stack_values(workloads=[{**TRAIN, "team": "pathways"}]))
    assert config.workload_backend is WorkloadBackend.PATHWAYS_JOB
    assert config.backend_of(config.workloads[0]) is WorkloadBackend.PATHWAYS_JOB
    assert config.needs_pathways_controller


def test_a_job_overrides_the_stack_backend(config_of, values):
    config = config_of(values("jobset", workloads=[TRAIN, {**NOTEBOOK, "backend": "pathwaysjob"}]))
    assert [config.backend_of(w).value for w in config.workloads] == ["jobset", "pathwaysjob"]
    assert config.backend_of(config.shared_services[0]) is WorkloadBackend.JOBSET
    assert config.needs_pathways_controller  # the notebook needs it
    assert not config_of(values("jobset")).needs_pathways_controller


def test_colocated_mode_is_refused_on_the_jobset_backend(config_error, values):
    inference = {**TRAIN, "name": "serve", "mode": "inference", "priority": None}
    error = config_error(
        values("jobset", workloads=[inference], addons={"kueue": {"enabled": False}})
    )
    (issue,) = error.issues
    assert issue.key == "workloads[0].mode"
    assert issue.message == (
        "workload 'serve' runs as a JobSet (the stack's workloadBackend), and mode inference "
        "(the head colocated with the workers) cannot be rendered as a JobSet: XPK 1.16 dropped "
        "colocated mode (xpk/core/pathways.py), its head always runs on the CPU pool; use mode "
        "training or headless (head on the CPU pool), or set workloads[0].backend: pathwaysjob"
    )


def test_host_network_false_needs_the_jobset_backend(config_error, values):
    error = config_error(values("pathwaysjob", workloads=[{**TRAIN, "hostNetwork": False}]))
    (issue,) = error.issues
    assert issue.key == "workloads[0].hostNetwork"
    assert "needs backend jobset" in issue.message
    assert "always sets hostNetwork: true" in issue.message


def test_an_unknown_backend_is_refused_naming_the_choices(config_error, values):
    error = config_error(values("kubeflow"))
    (issue,) = error.issues
    assert issue.key == "workloadBackend"
    assert issue.message == (
        "'kubeflow' is not allowed: workloadBackend is one of pathwaysjob or jobset"
    )


_MIRROR = {
    "manifestUrl": "https://github.com/acme/pathways-job/releases/download/v0.1.4/install.yaml",
    "sha256": "ab" * 32,
}


def test_pathwaysjob_addon_settings_on_a_jobset_only_stack_are_refused(config_error, values):
    # research-jobset's shape: every job a JobSet, so no PathwaysJob controller is installed.
    error = config_error(values("jobset", addons={"pathwaysJob": {**_MIRROR, "install": True}}))
    because = (
        "is not used: every workload and shared service of this stack runs on the JobSet "
        "backend (workloadBackend: jobset), so no PathwaysJob controller is installed; remove "
        "addons.pathwaysJob, or set backend: pathwaysjob on a job that needs the controller"
    )
    assert [(i.key, i.message) for i in error.issues] == [
        ("addons.pathwaysJob.manifestUrl", f"{_MIRROR['manifestUrl']!r} {because}"),
        ("addons.pathwaysJob.sha256", f"'{'ab' * 32}' {because}"),
        ("addons.pathwaysJob.install", f"true {because}"),
    ]


def test_pathwaysjob_addon_settings_are_used_where_a_job_needs_the_controller(config_of, values):
    overridden = [TRAIN, {**NOTEBOOK, "backend": "pathwaysjob"}]
    mirror = {"pathwaysJob": _MIRROR}
    config = config_of(values("jobset", workloads=overridden, addons=mirror))
    assert config.addons.pathways_job.url == _MIRROR["manifestUrl"]
    # install: false asks for what a JobSet-only stack does anyway
    off = config_of(values("jobset", addons={"pathwaysJob": {"install": False}}))
    assert not off.needs_pathways_controller


# --- one model of the pods, two renderers, through the stack ---------------------------------


def pods(config) -> dict[str, dict[str, PodModel]]:
    return {
        d.key: {"head": job.head, "worker": job.workers}
        for d in stack_deployments(config)
        for job in [d.expand()]
    }


def test_the_stack_preflight_reads_the_jobsets_pods(config_of, values):
    config = config_of(values("jobset"))
    deployments = stack_deployments(config)
    assert [d.jobset["kind"] for d in deployments] == ["JobSet", "JobSet", "JobSet"]
    crd = config_of(values("pathwaysjob"))
    assert [d.jobset for d in stack_deployments(crd)] == [None, None, None]
    # the CRD path still expands the controller's way
    (train, *_) = stack_deployments(crd)
    assert train.expand() == expand("train", "research", train.spec)


def test_both_backends_give_the_same_pods_but_the_documented_differences(config_of, values):
    jobset, crd = pods(config_of(values("jobset"))), pods(config_of(values("pathwaysjob")))
    found: dict[str, set[tuple[str, str]]] = {}
    for key in crd:
        found[key] = {
            (role, f.name)
            for role in ("head", "worker")
            for f in dataclasses.fields(PodModel)
            if getattr(jobset[key][role], f.name) != getattr(crd[key][role], f.name)
        }
    tolerations = ("worker", "tolerations")
    assert found == {
        "workloads[0]": {tolerations},
        # the headless head is placed on the CPU pool
        "workloads[1]": {tolerations, ("head", "node_selector")},
        # ... and a service's head runs the resource manager only
        "sharedServices[0]": {
            tolerations,
            ("head", "node_selector"),
            ("head", "images"),
            ("head", "resources"),
        },
    }
    assert set().union(*found.values()) <= set(DIFFERENCES)
    service_head = jobset["sharedServices[0]"]["head"]
    assert service_head.images == (
        "us-docker.pkg.dev/cloud-tpu-v2-images/pathways/server:jax-0.9.0",
    )
    assert dict(service_head.node_selector) == {"cloud.google.com/gke-nodepool": "cpu-np"}


def test_off_the_host_network_the_pods_are_the_teams_service_account(config_of, values):
    config = config_of(values("jobset", workloads=[{**TRAIN, "hostNetwork": False}, NOTEBOOK]))
    train = pods(config)["workloads[0]"]
    for role in ("head", "worker"):
        assert (train[role].host_network, train[role].service_account) == (False, "trainer")
    report = preflight(config, planned_pools(config), bucket_grants(config))
    assert report.issues == []
    job = report.jobs["research/train"]
    assert job["head"]["identity"] == "Kubernetes service account trainer (Workload Identity)"
    assert job["pathwaysDirAccess"] == (
        "granted to Kubernetes service account ns/research/sa/trainer (Workload Identity)"
    )
    assert job["buckets"] == {f"{SCRATCH}/research/": "readWrite"}


def test_the_teams_account_holds_its_prefix_only(config_of, values):
    config = config_of(values("jobset"))
    grants = bucket_grants(config)
    team = BucketGrant("ns/research/sa/trainer", SCRATCH, Access.READ_WRITE, "research/")
    assert grants[0] == team
    assert access_of(grants, "ns/research/sa/trainer", SCRATCH, "research/train") is (
        Access.READ_WRITE
    )
    assert access_of(grants, "ns/research/sa/trainer", SCRATCH, "other/train") is None


def test_data_buckets_are_not_granted_to_the_teams_account(schema_of, values):
    """Least privilege: dataBuckets go to the node service account only, so a job off the host
    network that reads one is refused, naming the bucket and both ways out."""
    reader = {**TRAIN, "hostNetwork": False, "command": ["python3", "t.py", "gs://acme-data/x"]}
    config = schema_of(values("jobset", workloads=[reader], dataBuckets=[{"name": "acme-data"}]))
    (issue,) = preflight(config, planned_pools(config), bucket_grants(config)).issues
    assert issue.key == "workloads[0]"
    assert (
        "gs://acme-data/x (command) needs read access, but its pods run off the host network as "
        "Kubernetes service account ns/research/sa/trainer (Workload Identity), which has no "
        "object access to gs://acme-data; keep the job on the host network (remove "
        "hostNetwork: false) to use the node service account's dataBuckets grants, or grant "
        "that account's principal roles/storage.objectViewer on gs://acme-data where the bucket "
        "is managed"
    ) in issue.message


def test_client_capacity_counts_only_heads_holding_the_proxy_host_port(config_of, values):
    """At most 6 nodes of cpu-np (a client's proxy fits no smaller pool), less one per head whose
    proxy holds host port 29000 there."""

    def clients(config) -> int:
        report = preflight(config, planned_pools(config), bucket_grants(config))
        return report.jobs["default/svc"]["clients"]["atOnce"]

    assert clients(config_of(values("pathwaysjob"))) == 3  # train, notebook, the service
    assert clients(config_of(values("jobset"))) == 4  # the service's head runs no proxy
    off = values("jobset", workloads=[{**TRAIN, "hostNetwork": False}, NOTEBOOK])
    assert clients(config_of(off)) == 5  # nor does a head off the host network hold the port
