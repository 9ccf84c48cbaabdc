"""examples/python-api: a program built only from ``from components import ...`` plans under the
mock engine, with the resources its README promises."""

from __future__ import annotations

import runpy

import pytest

from components.plan.engine import run_program
from components.plan.model import PlannedResource
from tests.conftest import PROJECT_ROOT

EXAMPLE = PROJECT_ROOT / "examples" / "python-api"
CONFIG = {"gcp:project": "acme-ml", "gcp:region": "us-east5", "gcp:zone": "us-east5-a"}


@pytest.fixture(scope="module")
def planned() -> dict[str, PlannedResource]:
    resources, _ = run_program(
        lambda: runpy.run_path(str(EXAMPLE / "__main__.py")) and {},
        stack="example",
        project="pathways-python-api",
        config=CONFIG,
    )
    return {f"{r.type}::{r.name}": r for r in resources}


def test_the_program_uses_only_the_public_api():
    source = (EXAMPLE / "__main__.py").read_text()
    imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert imports == ["import pulumi", "from components import ("]


def test_the_cluster(planned):
    cluster = planned["gcp:container/cluster:Cluster::pathways"]
    assert cluster.inputs["name"] == "pathways"
    assert cluster.inputs["project"] == "acme-ml"
    assert cluster.inputs["location"] == "us-east5"
    assert cluster.inputs["nodeLocations"] == ["us-east5-a"]
    assert cluster.parent.endswith("tpu-pathways:cluster:GkeCluster::pathways")


def test_one_node_pool_per_slice_of_the_tpu_shape(planned):
    slices = [planned[f"gcp:container/nodePool:NodePool::v5p-{i}"] for i in range(2)]
    assert [s.inputs["name"] for s in slices] == ["v5p-0", "v5p-1"]
    for node_pool in slices:
        assert node_pool.inputs["nodeConfig"]["machineType"] == "ct5p-hightpu-4t"
        assert node_pool.inputs["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "2x2x2"}
        assert node_pool.inputs["nodeCount"] == 2
        assert node_pool.inputs["cluster"] == "pathways"
        assert node_pool.parent.endswith("tpu-pathways:nodepool:TpuNodePool::v5p")
    assert "gcp:container/nodePool:NodePool::v5p-2" not in planned


def test_the_pathways_job(planned):
    job = planned["kubernetes:pathways-job.pathways.domain/v1:PathwaysJob::train"]
    assert job.inputs["metadata"] == {"name": "train", "namespace": "research"}
    assert job.inputs["spec"]["workers"] == [
        {"type": "ct5p-hightpu-4t", "topology": "2x2x2", "numSlices": 2}
    ]
    assert job.inputs["spec"]["pathwaysDir"] == "gs://acme-ml-pathways-scratch/research/"
    controller = "urn:pulumi:example::pathways-python-api::tpu-pathways:installs:ReleaseManifest"
    assert any(d.startswith(controller) and d.endswith("::pathways-job") for d in job.dependencies)
    assert job.provider.endswith("pulumi:providers:kubernetes::pathways-k8s")


def test_the_head_pool_and_installs(planned):
    heads = planned["gcp:container/nodePool:NodePool::heads"]
    assert heads.inputs["name"] == "cpu-np"
    assert heads.inputs["nodeConfig"]["machineType"] == "n2-standard-64"
    assert heads.inputs["autoscaling"] == {"minNodeCount": 1, "maxNodeCount": 2}
    assert planned["kubernetes:yaml/v2:ConfigFile::jobset"].inputs["file"] == (
        "https://github.com/kubernetes-sigs/jobset/releases/download/v0.10.1/manifests.yaml"
    )


def test_the_readme_shows_this_program():
    source = (EXAMPLE / "__main__.py").read_text()
    program = source[source.index("import pulumi") :]
    assert f"```python\n{program}```" in (PROJECT_ROOT / "README.md").read_text()
