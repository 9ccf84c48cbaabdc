"""ReleaseManifest from its Args: the manifest applied through the given provider, after what
it must wait for."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s
import pytest

from components.addons.installs import ReleaseManifest, ReleaseManifestArgs
from tests.components.harness import k8s_provider, register, urn

URL = "https://github.com/kubernetes-sigs/jobset/releases/download/v0.10.1/manifests.yaml"


@pytest.fixture(scope="module")
def release():
    def build():
        provider = k8s_provider()
        before = k8s.core.v1.Namespace("before", opts=pulumi.ResourceOptions(provider=provider))
        args = ReleaseManifestArgs(URL, "v0.10.1", provider, depends_on=[before])
        ReleaseManifest("jobset", args)

    return register(build)


def test_the_manifest(release):
    manifest = release.one("kubernetes:yaml/v2:ConfigFile", "jobset")
    assert manifest.inputs["file"] == URL
    assert manifest.parent == urn("tpu-pathways:installs:ReleaseManifest", "jobset")
    assert manifest.provider == f"{urn('pulumi:providers:kubernetes', 'k8s')}"


def test_it_waits_for_its_dependencies(release):
    manifest = release.one("kubernetes:yaml/v2:ConfigFile", "jobset")
    assert manifest.dependencies == [urn("kubernetes:core/v1:Namespace", "before")]
