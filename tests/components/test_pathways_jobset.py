"""PathwaysJobSet (the JobSet backend's resource) and a shared service on that backend, under the
mock engine: what registers, with which options and dependencies. Expected values are literals."""

from __future__ import annotations

import pulumi
import pytest

from components.errors import ConfigError
from components.pathways.scheduler_model import NodePoolModel
from components.pathways.spec import Controller, DeploymentMode
from components.tpu.machines import machine_type
from components.vocabulary import WorkloadBackend
from components.workloads.jobset import PathwaysJobSet, PathwaysJobSetArgs
from components.workloads.shared_service import SharedPathwaysService, SharedPathwaysServiceArgs
from tests.components.harness import k8s_provider, register
from tests.jobset_shapes import SHAPES

JOBSET = "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"
TRAIN = SHAPES["v5p-16x2"]
HEADLESS = SHAPES["headless"]


def test_registers_one_jobset_replaced_on_any_spec_change():
    def build():
        provider = k8s_provider()
        install = pulumi.CustomResource("test:index:Install", "jobset-install")
        PathwaysJobSet(
            "train",
            PathwaysJobSetArgs(
                name="train",
                namespace="team-a",
                spec=TRAIN.spec,
                provider=provider,
                jobset_install=install,
                queue_name="multislice-queue",
            ),
        )

    registered = register(build)
    (jobset,) = registered.of_type(JOBSET)
    assert jobset.inputs["metadata"] == {
        "name": "train",
        "namespace": "team-a",
        "labels": {"kueue.x-k8s.io/queue-name": "multislice-queue"},
    }
    names = [job["name"] for job in jobset.inputs["spec"]["replicatedJobs"]]
    assert names == ["pathways-head", "worker"]
    assert jobset.options["replaceOnChanges"] == ["spec"]
    assert jobset.options["deleteBeforeReplace"] is True
    (install,) = registered.of_type("test:index:Install")
    assert install.urn in jobset.dependencies


def test_colocated_mode_is_refused_before_anything_registers():
    colocated = TRAIN.spec.model_copy(
        update={"controller": Controller(deployment_mode=DeploymentMode.COLOCATE_HEAD_WITH_WORKERS)}
    )

    def build():
        PathwaysJobSet(
            "serve",
            PathwaysJobSetArgs(
                name="serve", namespace="a", spec=colocated, provider=k8s_provider()
            ),
        )

    with pytest.raises(ConfigError) as caught:
        register(build)
    assert [i.key for i in caught.value.issues] == ["controller.deploymentMode"]


def test_node_pools_run_the_preflight_on_the_jobsets_pods():
    """The headless head is placed by head_node_selector: with none it lands on any node, with
    a pool that does not exist it fits none and the job is refused."""
    cpu = machine_type("n2-standard-64")
    pools = [NodePoolModel("cpu-np", "cpu-np", cpu, {}, (), 3, 0, None)]

    def build():
        PathwaysJobSet(
            "notebook",
            PathwaysJobSetArgs(
                name="notebook",
                namespace="team-a",
                spec=HEADLESS.spec,
                provider=k8s_provider(),
                head_node_selector={"cloud.google.com/gke-nodepool": "nowhere"},
                node_pools=pools,
            ),
        )

    with pytest.raises(ConfigError) as caught:
        register(build)
    assert "PathwaysJobSet 'team-a/notebook': the head pod fits no node" in str(caught.value)


def test_a_shared_service_on_the_jobset_backend_runs_the_resource_manager_alone():
    def build():
        service = SharedPathwaysService(
            "svc",
            SharedPathwaysServiceArgs(
                job_name="svc",
                namespace="default",
                spec=HEADLESS.spec,
                address="svc-pathways-head-0-0.svc.default.svc.cluster.local:29001",
                instance_type="tpuv5:2x2x2",
                cluster_name="c",
                project="p",
                location="us-east5",
                provider=k8s_provider(),
                wait_timeout_seconds=600,
                backend=WorkloadBackend.JOBSET,
                head_node_selector={"cloud.google.com/gke-nodepool": "cpu-np"},
            ),
        )
        return {"connect": service.connect}

    registered = register(build)
    (jobset,) = registered.of_type(JOBSET)
    assert registered.of_type("kubernetes:pathways-job.pathways.domain/v1:PathwaysJob") == []
    assert jobset.inputs["metadata"]["annotations"] == {
        "pulumi.com/waitFor": "condition=StartupPolicyCompleted",
        "pulumi.com/timeoutSeconds": "600",
    }
    head = jobset.inputs["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    assert [c["name"] for c in head["containers"]] == ["pathways-rm"]
    assert "initContainers" not in head
    assert head["nodeSelector"] == {"cloud.google.com/gke-nodepool": "cpu-np"}
    assert jobset.parent.endswith("tpu-pathways:workloads:SharedPathwaysService::svc")


# --- through the stack: stacks/Pulumi.research-jobset.yaml -----------------------------------


def pod_spec(jobset, replicated_job: int) -> dict:
    job = jobset.inputs["spec"]["replicatedJobs"][replicated_job]
    return job["template"]["spec"]["template"]["spec"]


def test_the_research_jobset_stack_wires_queue_placement_and_identity(example_plan):
    plan = example_plan("research-jobset")
    jobsets = {j.inputs["metadata"]["name"]: j for j in plan.by_type(JOBSET)}
    assert sorted(jobsets) == ["llm-pretrain", "notebook", "research-svc"]
    labels = {name: j.inputs["metadata"]["labels"] for name, j in jobsets.items()}
    assert labels == {
        "llm-pretrain": {"kueue.x-k8s.io/queue-name": "multislice-queue"},
        "notebook": {"kueue.x-k8s.io/queue-name": "multislice-queue"},
        "research-svc": {
            "tpu-pathways/team": "research",
            "kueue.x-k8s.io/queue-name": "research-svc",
        },
    }
    # hostNetwork: false: every pod on the pod network as the team's service account
    for index in (0, 1):
        spec = pod_spec(jobsets["llm-pretrain"], index)
        assert "hostNetwork" not in spec
        assert spec["serviceAccountName"] == "pathways"
        assert spec["dnsPolicy"] == "ClusterFirst"
    # the headless head and the service's head on the CPU pool, on the host network
    for name in ("notebook", "research-svc"):
        head = pod_spec(jobsets[name], 0)
        assert head["nodeSelector"] == {"cloud.google.com/gke-nodepool": "cpu-np"}
        assert head["hostNetwork"] is True
    service_head = pod_spec(jobsets["research-svc"], 0)
    assert [c["name"] for c in service_head["containers"]] == ["pathways-rm"]
    install = next(
        r
        for r in plan.by_type("kubernetes:yaml/v2:ConfigFile")
        if r.inputs["file"].endswith("/jobset/releases/download/v0.10.1/manifests.yaml")
    )
    for jobset in jobsets.values():
        assert install.urn in jobset.dependencies


def test_the_contract_tells_team_stacks_no_controller_is_installed(example_plan):
    contract = example_plan("research-jobset").outputs["shared_cluster"]
    assert contract["versions"] == {"jobset": "v0.10.1", "kueue": "v0.17.1"}
