"""JobSetControllerMemory from its Args: a server-side patch of the controller's memory."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s
import pytest

from components.addons.installs import (
    JobSetControllerMemory,
    JobSetControllerMemoryArgs,
    jobset_memory_mib,
)
from tests.components.harness import k8s_provider, register, urn

PATCH = "kubernetes:apps/v1:DeploymentPatch"


@pytest.fixture(scope="module")
def memory():
    def build():
        provider = k8s_provider()
        install = k8s.core.v1.Namespace("jobset", opts=pulumi.ResourceOptions(provider=provider))
        JobSetControllerMemory("mem", JobSetControllerMemoryArgs(6000, provider, install))

    return register(build)


def test_the_patch(memory):
    patch = memory.one(PATCH, "mem")
    assert patch.inputs["metadata"] == {
        "name": "jobset-controller-manager",
        "namespace": "jobset-system",
        "annotations": {"pulumi.com/patchForce": "true"},
    }
    container = patch.inputs["spec"]["template"]["spec"]["containers"][0]
    assert container == {
        "name": "manager",
        "resources": {"limits": {"memory": "6000Mi"}, "requests": {"memory": "6000Mi"}},
    }
    assert patch.dependencies == [urn("kubernetes:core/v1:Namespace", "jobset")]


@pytest.mark.parametrize(("nodes", "mib"), [(0, 4096), (3413, 4096), (3414, 4097), (10000, 12000)])
def test_xpk_sizing(nodes, mib):
    assert jobset_memory_mib(nodes) == mib
