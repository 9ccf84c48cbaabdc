"""TpuNodePool from its Args: one GKE node pool per slice, shaped from the TPU catalog, with the
pool's capacity type; Ironwood slices placed by a workload policy."""

from __future__ import annotations

import pytest

from components.errors import ConfigError
from components.gke.node_config import PoolTarget
from components.gke.tpu_pool import TpuNodePool, TpuNodePoolArgs
from components.tpu.catalog import resolve_accelerator
from components.vocabulary import CapacityType
from tests.components.harness import register

NODE_POOL = "gcp:container/nodePool:NodePool"
POLICY = "gcp:compute/resourcePolicy:ResourcePolicy"
TARGET = PoolTarget(
    project="acme-ml",
    region="us-east5",
    zone="us-east5-a",
    cluster_name="pathways",
    location="us-east5",
    service_account="nodes@acme-ml.iam.gserviceaccount.com",
)


def tpu_pool(accelerator: str, **overrides):
    args = TpuNodePoolArgs("tpu", resolve_accelerator(accelerator), TARGET, **overrides)

    def build():
        return {"names": TpuNodePool("pc-tpu", args).node_pool_names}

    return register(build)


@pytest.fixture(scope="module")
def v5p_multislice():
    return tpu_pool("v5p-16", slices=3, capacity=CapacityType.SPOT)


def test_one_node_pool_per_slice(v5p_multislice):
    assert v5p_multislice.names(NODE_POOL) == ["pc-tpu-0", "pc-tpu-1", "pc-tpu-2"]
    assert v5p_multislice.outputs == {"names": ["tpu-0", "tpu-1", "tpu-2"]}


def test_a_multi_host_slice_is_compact_with_its_topology(v5p_multislice):
    node_pool = v5p_multislice.one(NODE_POOL, "pc-tpu-1")
    assert node_pool.inputs["name"] == "tpu-1"
    assert node_pool.inputs["nodeCount"] == 2
    assert node_pool.inputs["maxPodsPerNode"] == 15
    assert node_pool.inputs["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "2x2x2"}
    assert node_pool.inputs["nodeConfig"]["machineType"] == "ct5p-hightpu-4t"
    assert node_pool.inputs["nodeConfig"]["spot"] is True
    assert node_pool.inputs["nodeConfig"]["labels"] == {
        "tpu-pathways/pool": "tpu",
        "tpu-pathways/shared-pool": "true",
    }
    # upgraded whole: both hosts at once, no surge TPU VM
    assert node_pool.inputs["upgradeSettings"] == {
        "strategy": "SURGE",
        "maxSurge": 0,
        "maxUnavailable": 2,
    }
    assert node_pool.inputs["management"] == {"autoRepair": True, "autoUpgrade": True}
    assert node_pool.options["replaceOnChanges"] == [
        "nodeConfig.machineType",
        "placementPolicy.policyName",
        "placementPolicy.tpuTopology",
    ]


def test_a_single_host_slice_has_no_placement():
    single = tpu_pool("v6e-4").one(NODE_POOL, "pc-tpu-0")
    assert "placementPolicy" not in single.inputs
    assert "maxPodsPerNode" not in single.inputs
    assert single.inputs["nodeCount"] == 1
    assert single.inputs["upgradeSettings"] == {
        "strategy": "SURGE",
        "maxSurge": 0,
        "maxUnavailable": 1,
    }
    # v6e: the accelerator network profile, and the label GKE's networking DRA driver needs
    assert single.inputs["networkConfig"] == {"acceleratorNetworkProfile": "auto"}
    assert single.inputs["nodeConfig"]["labels"] == {
        "tpu-pathways/pool": "tpu",
        "cloud.google.com/gke-networking-dra-driver": "true",
        "tpu-pathways/shared-pool": "true",
    }


def test_flex_start_scales_from_zero():
    node_pool = tpu_pool("v5p-16", capacity=CapacityType.FLEX_START).one(NODE_POOL, "pc-tpu-0")
    assert "nodeCount" not in node_pool.inputs
    assert node_pool.inputs["initialNodeCount"] == 0
    # per-zone bounds (the pool's one zone): GKE checks a multi-host slice against them
    assert node_pool.inputs["autoscaling"] == {
        "minNodeCount": 0,
        "maxNodeCount": 2,
        "locationPolicy": "ANY",
    }
    assert node_pool.inputs["management"] == {"autoRepair": False, "autoUpgrade": True}
    # GKE upgrades flex-start nodes its own way (short-lived upgrades)
    assert "upgradeSettings" not in node_pool.inputs
    assert node_pool.inputs["nodeConfig"]["flexStart"] is True
    assert node_pool.inputs["nodeConfig"]["reservationAffinity"] == {
        "consumeReservationType": "NO_RESERVATION"
    }


def test_a_specific_reservation():
    reserved = tpu_pool(
        "v5p-16",
        capacity=CapacityType.RESERVATION,
        reservation="projects/shared/reservations/v5p-block",
    ).one(NODE_POOL, "pc-tpu-0")
    config = reserved.inputs["nodeConfig"]
    assert config["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["projects/shared/reservations/v5p-block"],
    }
    assert config["labels"]["tpu-pathways/reservation"] == "v5p-block"


def test_ironwood_slices_are_placed_by_one_workload_policy():
    ironwood = tpu_pool("tpu7x-16", slices=2)
    policy = ironwood.one(POLICY, "pc-tpu-workload-policy")
    assert policy.inputs["name"] == "pc-tpu-2x2x2"
    assert policy.inputs["region"] == "us-east5"
    assert policy.inputs["workloadPolicy"] == {
        "type": "HIGH_THROUGHPUT",
        "acceleratorTopology": "2x2x2",
    }
    for index in range(2):
        node_pool = ironwood.one(NODE_POOL, f"pc-tpu-{index}")
        assert node_pool.inputs["placementPolicy"] == {"type": "", "policyName": "pc-tpu-2x2x2"}


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"slices": 0}, "  - slices: 0 is not allowed; at least 1"),
        (
            {"capacity": CapacityType.RESERVATION},
            "  - reservation: None with capacity reservation; a reservation is given exactly "
            "when capacity is RESERVATION",
        ),
        ({"reservation": "r"}, "  - reservation: 'r' with capacity onDemand"),
    ],
)
def test_inconsistent_args_are_refused(overrides, message):
    # The error report of a stack file (ConfigError: every problem, exit 2 under plan).
    with pytest.raises(ConfigError) as refused:
        TpuNodePoolArgs("tpu", resolve_accelerator("v5p-16"), TARGET, **overrides)
    assert str(refused.value).startswith("TpuNodePoolArgs 'tpu': 1 problem\n")
    assert message in str(refused.value)
