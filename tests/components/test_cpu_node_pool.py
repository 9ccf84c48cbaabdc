"""CpuNodePool from its Args: one autoscaling node pool on the target cluster."""

from __future__ import annotations

import pytest

from components.gke.cpu_pool import CpuNodePool, CpuNodePoolArgs
from components.gke.node_config import PoolTarget
from tests.components.harness import register

NODE_POOL = "gcp:container/nodePool:NodePool"
TARGET = PoolTarget(
    project="acme-ml",
    region="us-east5",
    zone="us-east5-b",
    cluster_name="pathways",
    location="us-east5",
    service_account="nodes@acme-ml.iam.gserviceaccount.com",
    team="research",
)


@pytest.fixture(scope="module")
def pool():
    args = CpuNodePoolArgs("cpu-np", "n2-standard-32", TARGET, min_nodes=2, max_nodes=5)

    def build():
        return {"name": CpuNodePool("pc-cpu", args).node_pool_name}

    return register(build)


def test_the_node_pool(pool):
    node_pool = pool.one(NODE_POOL, "pc-cpu")
    assert node_pool.inputs["name"] == "cpu-np"
    assert node_pool.inputs["cluster"] == "pathways"
    assert node_pool.inputs["nodeLocations"] == ["us-east5-b"]
    assert node_pool.inputs["initialNodeCount"] == 2
    assert node_pool.inputs["autoscaling"] == {"minNodeCount": 2, "maxNodeCount": 5}
    assert node_pool.inputs["management"] == {"autoRepair": True, "autoUpgrade": True}
    assert pool.outputs == {"name": "cpu-np"}


def test_the_node_config(pool):
    config = pool.one(NODE_POOL, "pc-cpu").inputs["nodeConfig"]
    assert config["machineType"] == "n2-standard-32"
    assert config["serviceAccount"] == "nodes@acme-ml.iam.gserviceaccount.com"
    assert config["labels"] == {
        "tpu-pathways/pool": "cpu-np",
        "tpu-pathways/team": "research",
        "tpu-pathways/shared-pool": "true",
    }
    assert config["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
    assert "diskSizeGb" not in config


def test_the_autoscaler_owns_the_size(pool):
    options = pool.one(NODE_POOL, "pc-cpu").options
    assert options["ignoreChanges"] == ["initialNodeCount"]
    assert options["deleteBeforeReplace"] is True
