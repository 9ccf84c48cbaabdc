"""The example stacks' storage, end to end: dev reads its training data and research-v5p writes
its checkpoints through Cloud Storage FUSE, on both backends, past the preflight; a mount that
would not work is refused by the CLI with its key; every stack that creates a cluster gets its
dashboard and alerts, and its Logs Explorer links."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from components.cli.main import main
from components.plan.engine import plan_file
from components.plan.render import manifest
from tests.helpers import STACKS_DIR

JOBSET = "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"
PATHWAYS_JOB = "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob"
FUSE = "gcsfuse.csi.storage.gke.io"
# (stack, workload, mount path, read-only)
MOUNTS = [
    ("dev", "hello-train", "/data", True),
    ("research-v5p", "llm-pretrain", "/checkpoints", False),
]


@pytest.fixture(scope="module")
def switched(tmp_path_factory) -> Path:
    """stacks/ with dev and research-v5p on the JobSet backend."""
    directory = tmp_path_factory.mktemp("stacks")
    for path in STACKS_DIR.glob("Pulumi.*.yaml"):
        document = yaml.safe_load(path.read_text())
        if path.name in ("Pulumi.dev.yaml", "Pulumi.research-v5p.yaml"):
            document["config"]["tpu-pathways:workloadBackend"] = "jobset"
        (directory / path.name).write_text(yaml.safe_dump(document))
    return directory


def fuse_volume(pod_spec: dict, path: str) -> dict:
    (mount,) = [m for m in pod_spec["containers"][0]["volumeMounts"] if m["mountPath"] == path]
    (volume,) = [v for v in pod_spec["volumes"] if v["name"] == mount["name"]]
    assert volume["csi"]["driver"] == FUSE
    return volume


@pytest.mark.parametrize(("stack", "job", "path", "read_only"), MOUNTS)
def test_the_pathwaysjob_carries_the_sidecar_annotations_and_the_head_the_volume(
    example_plan, stack, job, path, read_only
):
    (resource,) = [
        r for r in example_plan(stack).by_type(PATHWAYS_JOB) if r.inputs["metadata"]["name"] == job
    ]
    document = manifest(resource)
    assert document["metadata"]["annotations"]["gke-gcsfuse/volumes"] == "true"
    volume = fuse_volume(document["spec"]["controller"]["template"]["spec"], path)
    assert volume["csi"]["readOnly"] is read_only
    assert volume["csi"]["volumeAttributes"]["hostNetworkPodKSA"] == "true"


@pytest.mark.parametrize(("stack", "job", "path", "read_only"), MOUNTS)
def test_on_the_jobset_backend_the_head_template_carries_both(
    switched, stack, job, path, read_only
):
    plan = plan_file(stack, switched)  # the preflight passed
    (resource,) = [r for r in plan.by_type(JOBSET) if r.inputs["metadata"]["name"] == job]
    head, worker = manifest(resource)["spec"]["replicatedJobs"]
    template = head["template"]["spec"]["template"]
    assert template["metadata"]["annotations"]["gke-gcsfuse/volumes"] == "true"
    assert fuse_volume(template["spec"], path)["csi"]["readOnly"] is read_only
    worker_volumes = worker["template"]["spec"]["template"]["spec"]["volumes"]
    assert [v["name"] for v in worker_volumes] == ["shared-tmp"]  # workers mount nothing


def test_a_mount_the_team_may_not_use_is_refused_by_the_cli_naming_its_key(tmp_path, capsys):
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    document = yaml.safe_load((STACKS_DIR / "Pulumi.dev.yaml").read_text())
    document["config"]["tpu-pathways:teams"][0]["buckets"] = []
    (stacks / "Pulumi.dev.yaml").write_text(yaml.safe_dump(document))
    code = main(["plan", "--stack", "dev", "--stacks-dir", str(stacks)])
    err = capsys.readouterr().err
    assert code == 2
    assert (
        "workloads[0].volumes[0].bucket: the mount acts as the service account of team 'pathways'"
        in err
    )
    assert (
        "add {name: tpu-pathways-dev-datasets, access: read, prefix: c4/} to teams[0].buckets"
        in err
    )


def test_the_plan_summary_gives_each_job_its_logs_and_mounts(example_plan):
    job = example_plan("dev").summary["workloads"]["pathways/hello-train"]
    assert job["volumes"] == [
        "/data gs://tpu-pathways-dev-datasets/c4 (read, trainingData, as the team's service "
        "account)"
    ]
    assert job["logs"].startswith("https://console.cloud.google.com/logs/query;query=")
    assert job["logs"].endswith(";storageScope=project;duration=P1D?project=tpu-pathways-dev")


@pytest.mark.parametrize("stack", ["dev", "research-v5p"])
def test_the_program_creates_the_jobset_the_preflight_checked(switched, stack):
    """One rendering of a JobSet-backend job: what the program registers is what the preflight
    read the pods from (``workload_specs.deployment_jobset``)."""
    from components.resolve.loader import load_stack
    from components.resolve.workload_specs import deployment_jobset, node_pool_pins

    config = load_stack(stack, switched)
    pins = node_pool_pins(config)
    planned = {r.inputs["metadata"]["name"]: r for r in plan_file(stack, switched).by_type(JOBSET)}
    for _, entry in config.deployments():
        checked = deployment_jobset(config, entry, pins)
        assert manifest(planned[entry.name])["spec"] == checked["spec"], entry.name
