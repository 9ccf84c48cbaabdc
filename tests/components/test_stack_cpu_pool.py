"""The autoscaling CPU node pool for Pathways head pods, as registered with the engine."""

from __future__ import annotations

import pytest

NODE_POOL = "gcp:container/nodePool:NodePool"
CPU_COMPONENT = "tpu-pathways:nodepool:CpuNodePool"


def cpu_pools(plan) -> dict[str, object]:
    """The CPU node pools by GKE name: the head pool and the system pool."""
    pools = [r for r in plan.by_type(NODE_POOL) if f"${CPU_COMPONENT}::" in (r.parent or "")]
    return {r.inputs["name"]: r for r in pools}


def cpu_pool(plan):
    (pool,) = [p for name, p in cpu_pools(plan).items() if name != "system-np"]
    return pool


@pytest.fixture(scope="module")
def dev_pool(plan_of, stack_values):
    return cpu_pool(plan_of(stack_values()))


@pytest.fixture(scope="module")
def custom_pool(plan_of, stack_values):
    values = stack_values(
        cpuPool={
            "name": "head",
            "machineType": "n2-highmem-64",
            "minNodes": 0,
            "maxNodes": 5,
            "diskSizeGb": 500,
        }
    )
    return cpu_pool(plan_of(values))


@pytest.mark.parametrize(
    ("pool", "name", "expected"),
    [
        (
            "dev_pool",
            "pathways-dev-cpu-np",
            {
                "name": "cpu-np",
                "machineType": "n2-standard-64",
                "autoscaling": {"minNodeCount": 1, "maxNodeCount": 3},
                "initialNodeCount": 1,
                "diskSizeGb": 200,
                "pool label": "cpu-np",
            },
        ),
        (
            "custom_pool",
            "pathways-dev-head",
            {
                "name": "head",
                "machineType": "n2-highmem-64",
                "autoscaling": {"minNodeCount": 0, "maxNodeCount": 5},
                "initialNodeCount": 0,
                "diskSizeGb": 500,
                "pool label": "head",
            },
        ),
    ],
)
def test_cpu_pool_settings(request, pool, name, expected):
    resource = request.getfixturevalue(pool)
    inputs, node_config = resource.inputs, resource.inputs["nodeConfig"]
    assert resource.name == name
    assert {
        "name": inputs["name"],
        "machineType": node_config["machineType"],
        "autoscaling": inputs["autoscaling"],
        "initialNodeCount": inputs["initialNodeCount"],
        "diskSizeGb": node_config["diskSizeGb"],
        "pool label": node_config["labels"]["tpu-pathways/pool"],
    } == expected


def test_the_dev_pool_is_in_the_clusters_zone(dev_pool):
    inputs = dev_pool.inputs
    assert inputs["cluster"] == "pathways-dev"
    assert inputs["location"] == "us-west4"
    assert inputs["nodeLocations"] == ["us-west4-a"]
    assert inputs["management"] == {"autoRepair": True, "autoUpgrade": True}


def test_cpu_pool_is_not_a_tpu_pool(dev_pool):
    inputs = dev_pool.inputs
    for key in ("placementPolicy", "nodeCount", "maxPodsPerNode", "networkConfig"):
        assert key not in inputs
    for key in ("spot", "flexStart", "reservationAffinity"):
        assert key not in inputs["nodeConfig"]


def test_cpu_pool_service_account_and_node_settings(dev_pool):
    node_config = dev_pool.inputs["nodeConfig"]
    assert node_config["serviceAccount"] == (
        "pathways-dev-nodes@tpu-pathways-dev.iam.gserviceaccount.com"
    )
    assert node_config["gvnic"] == {"enabled": True}
    assert node_config["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
    assert node_config["shieldedInstanceConfig"] == {
        "enableSecureBoot": True,
        "enableIntegrityMonitoring": True,
    }
    assert node_config["metadata"] == {"disable-legacy-endpoints": "true"}


def test_cpu_pool_options_and_dependencies(plan_of, stack_values, dev_pool):
    cluster = plan_of(stack_values()).by_type("gcp:container/cluster:Cluster")[0]
    assert cluster.urn in dev_pool.dependencies
    assert dev_pool.options["deleteBeforeReplace"] is True
    # the autoscaler owns the node count after creation
    assert dev_pool.options["ignoreChanges"] == ["initialNodeCount"]
    assert "protect" not in dev_pool.options


def test_system_pool_is_small_and_autoscaling(plan_of, stack_values):
    system = cpu_pools(plan_of(stack_values()))["system-np"]
    assert system.name == "pathways-dev-system-np"
    assert system.inputs["nodeConfig"]["machineType"] == "e2-standard-16"
    assert system.inputs["autoscaling"] == {"minNodeCount": 1, "maxNodeCount": 3}
    assert system.inputs["nodeConfig"]["diskSizeGb"] == 100


def test_system_pool_is_configurable(plan_of, stack_values):
    values = stack_values(systemPool={"machineType": "e2-standard-8", "maxNodes": 5})
    system = cpu_pools(plan_of(values))["system-np"]
    assert system.inputs["nodeConfig"]["machineType"] == "e2-standard-8"
    assert system.inputs["autoscaling"] == {"minNodeCount": 1, "maxNodeCount": 5}


def test_no_system_pool_on_an_existing_cluster(plan_of, stack_values):
    values = stack_values(
        cluster={"name": "pathways-dev", "existing": {"kubeconfigContext": "ctx"}},
        scratchBucket={"name": "team-bucket"},
    )
    del values["cluster"]["deletionProtection"]  # the owner's setting, refused here
    assert "system-np" not in cpu_pools(plan_of(values))


def test_a_system_pool_that_could_hold_a_head_is_refused(stack_values, config_error):
    error = config_error(stack_values(systemPool={"machineType": "n2-standard-64"}))
    (issue,) = error.issues
    assert issue.key == "systemPool.machineType"
    assert "could hold a Pathways head pod" in issue.message
