"""TPU node pools as registered with the engine: one GKE node pool per slice, shaped and
provisioned per capacity type. Expected shapes are known answers (XPK / GKE docs)."""

from __future__ import annotations

import pytest

NODE_POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"
TPU_COMPONENT = "tpu-pathways:nodepool:TpuNodePool"
NODE_SA = "pathways-dev-nodes@tpu-pathways-dev.iam.gserviceaccount.com"

POOLS = [
    {"name": "spot", "generation": "v5e", "topology": "2x4", "capacity": {"spot": True}},
    {
        "name": "resv",
        "accelerator": "v5p-16",
        "slices": 2,
        "capacity": {"reservation": "my-resv"},
        "allowUnlistedZone": True,
    },
    {
        "name": "shared",
        "accelerator": "v5p-8",
        "capacity": {"reservation": "projects/other-proj/reservations/r1"},
        "allowUnlistedZone": True,
    },
    {"name": "flex", "accelerator": "v5litepod-16", "capacity": {"flexStart": True}},
    {
        "name": "ondemand",
        "generation": "v6e",
        "topology": "2x2",
        "slices": 2,
        "capacity": {"onDemand": True},
        "allowUnlistedZone": True,
    },
    {"name": "default", "accelerator": "v6e-8", "allowUnlistedZone": True},
    {"name": "eight", "generation": "v5e", "topology": "2x4", "machineType": "ct5lp-hightpu-8t"},
]

# GKE node pool name -> (machine type, hosts = node count, multi-host topology or None)
EXPECTED = {
    "spot-0": ("ct5lp-hightpu-4t", 2, "2x4"),  # v5e 2x4: two 4-chip hosts (XPK's choice)
    "resv-0": ("ct5p-hightpu-4t", 2, "2x2x2"),  # v5p-16 = 16 cores = 8 chips = 2x2x2
    "resv-1": ("ct5p-hightpu-4t", 2, "2x2x2"),
    "shared-0": ("ct5p-hightpu-4t", 1, None),  # v5p-8 = 2x2x1, the one single-host v5p
    "flex-0": ("ct5lp-hightpu-4t", 4, "4x4"),  # v5litepod-16 = 4x4 = 16 chips / 4
    "ondemand-0": ("ct6e-standard-4t", 1, None),  # v6e 2x2: one 4-chip host
    "ondemand-1": ("ct6e-standard-4t", 1, None),
    "default-0": ("ct6e-standard-4t", 2, "2x4"),  # v6e-8 = 2x4
    "eight-0": ("ct5lp-hightpu-8t", 1, None),  # 8 chips on one host
}


@pytest.fixture(scope="module")
def values(stack_values):
    return stack_values(tpuPools=POOLS)


@pytest.fixture(scope="module")
def plan(plan_of, values):
    return plan_of(values)


@pytest.fixture(scope="module")
def pools(plan):
    """GKE node pool name -> registered NodePool, for the TPU pools only."""
    found = [r for r in plan.by_type(NODE_POOL) if f"${TPU_COMPONENT}::" in (r.parent or "")]
    return {r.inputs["name"]: r for r in found}


def test_one_node_pool_per_slice(pools):
    assert sorted(pools) == sorted(EXPECTED)


def test_node_pool_resource_names(pools):
    for name, resource in pools.items():
        assert resource.name == f"pathways-dev-{name}"
        pool = name.rsplit("-", 1)[0]
        assert resource.parent.endswith(f"${TPU_COMPONENT}::pathways-dev-{pool}")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_shape(pools, name):
    machine, hosts, topology = EXPECTED[name]
    inputs = pools[name].inputs
    assert inputs["nodeConfig"]["machineType"] == machine
    if name.startswith("flex"):
        assert "nodeCount" not in inputs
        assert inputs["autoscaling"]["maxNodeCount"] == hosts
    else:
        assert inputs["nodeCount"] == hosts
    if topology:
        assert inputs["placementPolicy"] == {"type": "COMPACT", "tpuTopology": topology}
        assert inputs["maxPodsPerNode"] == 15
        assert pools[name].options["ignoreChanges"] == ["placementPolicy.type"]
    else:
        # GKE rejects a TPU topology on single-host pools
        assert "placementPolicy" not in inputs
        assert "maxPodsPerNode" not in inputs
        assert "ignoreChanges" not in pools[name].options


def test_v6e_pools_get_the_accelerator_network_profile(pools):
    for resource in pools.values():
        v6e = resource.inputs["nodeConfig"]["machineType"].startswith("ct6e")
        labels = resource.inputs["nodeConfig"]["labels"]
        if v6e:
            assert resource.inputs["networkConfig"] == {"acceleratorNetworkProfile": "auto"}
            # what XPK pairs with the profile (xpk core/nodepool.py)
            assert labels["cloud.google.com/gke-networking-dra-driver"] == "true"
        else:
            assert "networkConfig" not in resource.inputs
            assert "cloud.google.com/gke-networking-dra-driver" not in labels


def test_every_cluster_has_multi_networking_with_or_without_v6e(plan, plan_of, stack_values):
    (cluster,) = plan.by_type("gcp:container/cluster:Cluster")
    assert cluster.inputs["enableMultiNetworking"] is True
    assert cluster.inputs["datapathProvider"] == "ADVANCED_DATAPATH"  # multi-networking needs it
    # without v6e too: adding a v6e pool later must not replace the cluster
    (v5e_only,) = plan_of(stack_values()).by_type("gcp:container/cluster:Cluster")
    assert v5e_only.inputs["enableMultiNetworking"] is True


def test_slices_are_upgraded_whole_without_a_surge_vm(pools):
    found = {name: resource.inputs.get("upgradeSettings") for name, resource in pools.items()}
    whole = {"strategy": "SURGE", "maxSurge": 0}
    assert found == {
        "spot-0": {**whole, "maxUnavailable": 2},
        "resv-0": {**whole, "maxUnavailable": 2},
        "resv-1": {**whole, "maxUnavailable": 2},
        "shared-0": {**whole, "maxUnavailable": 1},
        "flex-0": None,  # flex-start: GKE's short-lived upgrades
        "ondemand-0": {**whole, "maxUnavailable": 1},
        "ondemand-1": {**whole, "maxUnavailable": 1},
        "default-0": {**whole, "maxUnavailable": 2},
        "eight-0": {**whole, "maxUnavailable": 1},
    }


def test_reservation_pools_label_their_nodes_with_the_reservation(pools):
    found = {
        name: resource.inputs["nodeConfig"]["labels"].get("tpu-pathways/reservation")
        for name, resource in pools.items()
    }
    # a shared reservation's label is its short name (label values cannot hold '/')
    assert {name: value for name, value in found.items() if value} == {
        "resv-0": "my-resv",
        "resv-1": "my-resv",
        "shared-0": "r1",
    }


def test_spot(pools):
    node_config = pools["spot-0"].inputs["nodeConfig"]
    assert node_config["spot"] is True
    assert "reservationAffinity" not in node_config
    assert "flexStart" not in node_config
    assert pools["spot-0"].inputs["management"] == {"autoRepair": True, "autoUpgrade": True}


@pytest.mark.parametrize(
    ("name", "reservation"),
    [
        ("resv-0", "my-resv"),
        ("resv-1", "my-resv"),
        ("shared-0", "projects/other-proj/reservations/r1"),
    ],
)
def test_reservation(pools, name, reservation):
    node_config = pools[name].inputs["nodeConfig"]
    assert node_config["reservationAffinity"] == {
        "consumeReservationType": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": [reservation],
    }
    assert "spot" not in node_config
    assert "flexStart" not in node_config


def test_flex_start(pools):
    inputs = pools["flex-0"].inputs
    assert inputs["nodeConfig"]["flexStart"] is True
    assert inputs["nodeConfig"]["reservationAffinity"] == {
        "consumeReservationType": "NO_RESERVATION"
    }
    assert "spot" not in inputs["nodeConfig"]
    assert inputs["autoscaling"] == {
        "minNodeCount": 0,
        "maxNodeCount": 4,
        "locationPolicy": "ANY",
    }
    # one zone: the per-zone bound is the pool's
    assert inputs["nodeLocations"] == ["us-west4-a"]
    assert inputs["initialNodeCount"] == 0
    assert "nodeCount" not in inputs
    assert inputs["management"]["autoRepair"] is False


@pytest.mark.parametrize("name", ["ondemand-0", "ondemand-1", "default-0", "eight-0"])
def test_on_demand(pools, name):
    inputs = pools[name].inputs
    for key in ("spot", "flexStart", "reservationAffinity"):
        assert key not in inputs["nodeConfig"]
    assert "autoscaling" not in inputs
    assert inputs["management"] == {"autoRepair": True, "autoUpgrade": True}


def test_common_node_settings(pools):
    for name, resource in pools.items():
        inputs = resource.inputs
        node_config = inputs["nodeConfig"]
        assert inputs["cluster"] == "pathways-dev"
        assert inputs["project"] == "tpu-pathways-dev"
        assert inputs["location"] == "us-west4"  # the regional cluster
        assert inputs["nodeLocations"] == ["us-west4-a"]  # TPU capacity is zonal
        assert node_config["gvnic"] == {"enabled": True}
        assert node_config["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
        assert node_config["shieldedInstanceConfig"] == {
            "enableSecureBoot": True,
            "enableIntegrityMonitoring": True,
        }
        assert node_config["oauthScopes"] == ["https://www.googleapis.com/auth/cloud-platform"]
        assert node_config["labels"]["tpu-pathways/pool"] == name.rsplit("-", 1)[0]
        assert node_config["labels"]["tpu-pathways/team"] == "ml-platform"


def test_nodes_run_as_the_dedicated_service_account(pools):
    for resource in pools.values():
        email = resource.inputs["nodeConfig"]["serviceAccount"]
        assert email == NODE_SA
        assert not email.endswith("-compute@developer.gserviceaccount.com")


def test_each_node_pool_depends_on_the_cluster(plan, pools):
    (cluster,) = plan.by_type(CLUSTER)
    account = plan.get("gcp:serviceaccount/account:Account", "pathways-dev-nodes")
    for resource in pools.values():
        assert cluster.urn in resource.dependencies
        assert account.urn in resource.dependencies


def test_delete_before_replace_and_no_protect_in_dev(pools):
    for resource in pools.values():
        assert resource.options["deleteBeforeReplace"] is True
        assert "protect" not in resource.options


def test_production_protects_node_pools(plan_of, values, stack_values):
    production = stack_values(**dict(values, environment="production"))
    plan = plan_of(production)
    node_pools = plan.by_type(NODE_POOL)
    assert len(node_pools) == len(EXPECTED) + 2  # + the CPU pool and the system pool
    for resource in node_pools:
        assert resource.options["protect"] is True
        assert resource.options["deleteBeforeReplace"] is True


def test_node_pool_names_output(plan):
    assert plan.outputs["tpu_node_pools"] == {
        "spot": ["spot-0"],
        "resv": ["resv-0", "resv-1"],
        "shared": ["shared-0"],
        "flex": ["flex-0"],
        "ondemand": ["ondemand-0", "ondemand-1"],
        "default": ["default-0"],
        "eight": ["eight-0"],
    }


def test_tpu_summary(plan):
    assert plan.summary["tpu"] == {
        "v5e": {"pools": 3, "slices": 3, "hosts": 2 + 4 + 1, "chips": 8 + 16 + 8},
        "v5p": {"pools": 2, "slices": 3, "hosts": 2 * 2 + 1, "chips": 2 * 8 + 4},
        "v6e": {"pools": 2, "slices": 3, "hosts": 2 * 1 + 2, "chips": 2 * 4 + 8},
    }
