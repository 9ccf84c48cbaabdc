"""ControllerPatch from its Args: a server-side patch of an installed controller's Deployment
(memory, node selector), with resolved outputs."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s
import pytest

from components.addons.installs import (
    JOBSET_CONTROLLER,
    KUEUE_CONTROLLER,
    PATHWAYS_JOB_CONTROLLER,
    ControllerDeployment,
    ControllerPatch,
    ControllerPatchArgs,
)
from components.pathways.controller_model import Toleration
from components.vocabulary import jobset_memory_mib
from tests.components.harness import k8s_provider, register, urn

PATCH = "kubernetes:apps/v1:DeploymentPatch"
SYSTEM_POOL = {"cloud.google.com/gke-nodepool": "system-np"}


def patched(deployment, **fields):
    def build():
        provider = k8s_provider()
        install = k8s.core.v1.Namespace("install", opts=pulumi.ResourceOptions(provider=provider))
        patch = ControllerPatch("ctl", ControllerPatchArgs(deployment, provider, install, **fields))
        return {"deployment": patch.deployment}

    return register(build)


@pytest.fixture(scope="module")
def jobset():
    return patched(JOBSET_CONTROLLER, node_selector=SYSTEM_POOL, memory_mib=6000)


def test_memory_and_node_selector_in_one_patch(jobset):
    patch = jobset.one(PATCH, "ctl")
    assert patch.inputs["metadata"] == {
        "name": "jobset-controller-manager",
        "namespace": "jobset-system",
        "annotations": {"pulumi.com/patchForce": "true"},
    }
    assert patch.inputs["spec"]["template"]["spec"] == {
        "nodeSelector": {"cloud.google.com/gke-nodepool": "system-np"},
        "containers": [
            {
                "name": "manager",
                "resources": {"limits": {"memory": "6000Mi"}, "requests": {"memory": "6000Mi"}},
            }
        ],
    }
    assert patch.dependencies == [urn("kubernetes:core/v1:Namespace", "install")]
    assert patch.parent == urn("tpu-pathways:installs:ControllerPatch", "ctl")


def test_the_output_names_the_patched_deployment(jobset):
    assert jobset.outputs == {"deployment": "jobset-system/jobset-controller-manager"}


@pytest.mark.parametrize(
    ("deployment", "namespace", "name"),
    [
        (PATHWAYS_JOB_CONTROLLER, "pathways-job-system", "pathways-job-controller-manager"),
        (KUEUE_CONTROLLER, "kueue-system", "kueue-controller-manager"),
    ],
)
def test_a_node_selector_alone_leaves_the_containers_alone(deployment, namespace, name):
    patch = patched(deployment, node_selector=SYSTEM_POOL).one(PATCH, "ctl")
    assert (patch.inputs["metadata"]["namespace"], patch.inputs["metadata"]["name"]) == (
        namespace,
        name,
    )
    assert patch.inputs["spec"]["template"]["spec"] == {
        "nodeSelector": {"cloud.google.com/gke-nodepool": "system-np"}
    }


def test_memory_alone_on_a_cluster_without_a_system_pool():
    patch = patched(JOBSET_CONTROLLER, memory_mib=4096).one(PATCH, "ctl")
    assert "nodeSelector" not in patch.inputs["spec"]["template"]["spec"]


def test_a_patch_that_changes_nothing_is_refused():
    with pytest.raises(ValueError, match="changes a node selector, memory, pod annotations"):
        ControllerPatchArgs(JOBSET_CONTROLLER, None, None)  # type: ignore[arg-type]


@pytest.mark.parametrize(("nodes", "mib"), [(0, 4096), (3413, 4096), (3414, 4097), (10000, 12000)])
def test_xpk_sizing(nodes, mib):
    assert jobset_memory_mib(nodes) == mib


def test_the_patch_keeps_the_releases_own_tolerations_and_node_selector():
    """Server-side apply gives the patch the whole ``tolerations`` list and ``nodeSelector`` map
    (both atomic in PodSpec): a release's own entries must be in the patch or they are lost."""
    own = ControllerDeployment(
        "kueue-system",
        "kueue-controller-manager",
        release_tolerations=(Toleration("CriticalAddonsOnly", "Exists"),),
        release_node_selector=(("kubernetes.io/os", "linux"),),
    )
    system = Toleration("tpu-pathways/system", value="true", effect="NoSchedule")
    patch = patched(
        own,
        node_selector=SYSTEM_POOL,
        tolerations=(system, Toleration("CriticalAddonsOnly", "Exists")),
    ).one(PATCH, "ctl")
    spec = patch.inputs["spec"]["template"]["spec"]
    assert spec["tolerations"] == [
        {"key": "CriticalAddonsOnly", "operator": "Exists", "value": "", "effect": ""},
        {
            "key": "tpu-pathways/system",
            "operator": "Equal",
            "value": "true",
            "effect": "NoSchedule",
        },
    ]
    assert spec["nodeSelector"] == {
        "kubernetes.io/os": "linux",
        "cloud.google.com/gke-nodepool": "system-np",
    }
