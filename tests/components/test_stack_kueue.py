"""Kueue objects computed from the stack's pools: flavors per TPU shape, a ClusterQueue whose TPU
quota is the provisioned chips, LocalQueues per team, XPK's priority classes."""

from __future__ import annotations

import pytest

CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
CLUSTER_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
LOCAL_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"
PRIORITY_CLASS = "kubernetes:scheduling.k8s.io/v1:PriorityClass"
NAMESPACE = "kubernetes:core/v1:Namespace"
KUEUE_URL = "https://github.com/kubernetes-sigs/kueue/releases/download/v0.17.1/manifests.yaml"

ACCELERATOR = "cloud.google.com/gke-tpu-accelerator"
TOPOLOGY = "cloud.google.com/gke-tpu-topology"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
TPU = "google.com/tpu"

KUEUE_ON = {"kueue": {"enabled": True}}


DEDICATED_TO = "tpu-pathways/dedicated-to"
SHARED_POOL = "tpu-pathways/shared-pool"


def tpu_flavors(plan) -> dict[str, tuple[str, str]]:
    """Flavor name -> (accelerator label, topology label), for flavors that select the shared
    pools' TPU nodes."""
    flavors = {}
    for r in plan.by_type(FLAVOR):
        labels = r.inputs["spec"]["nodeLabels"]
        if ACCELERATOR in labels and DEDICATED_TO not in labels:
            assert set(labels) == {ACCELERATOR, TOPOLOGY, INSTANCE_TYPE, SHARED_POOL}, labels
            flavors[r.inputs["metadata"]["name"]] = (labels[ACCELERATOR], labels[TOPOLOGY])
    return flavors


def tpu_quota_by_shape(plan) -> dict[tuple[str, str], int]:
    """(accelerator, topology) -> the ClusterQueue's nominal google.com/tpu quota."""
    (queue,) = [
        q for q in plan.by_type(CLUSTER_QUEUE) if q.inputs["metadata"]["name"] == "cluster-queue"
    ]
    flavors = tpu_flavors(plan)
    quota: dict[tuple[str, str], int] = {}
    for group in queue.inputs["spec"]["resourceGroups"]:
        if TPU not in group["coveredResources"]:
            continue
        assert group["coveredResources"] == [TPU]
        for flavor in group["flavors"]:
            (resource,) = flavor["resources"]
            assert resource["name"] == TPU
            shape = flavors[flavor["name"]]  # the ClusterQueue names an existing flavor
            quota[shape] = resource["nominalQuota"]
    return quota


@pytest.fixture(scope="module")
def research(example_plan):
    """Two slices of v5p-16 (2x2x2, 8 chips each) with Kueue on."""
    return example_plan("research-v5p")


@pytest.fixture(scope="module")
def two_shapes(plan_of, stack_values):
    """v6e 2x2 x3 (4 chips each) + v6e 2x4 x1 (8 chips), two teams."""
    return plan_of(
        stack_values(
            gcp={"project": "tpu-pathways-dev", "region": "us-east5", "zone": "us-east5-b"},
            tpuPools=[
                {"name": "small", "generation": "v6e", "topology": "2x2", "slices": 3},
                {"name": "big", "generation": "v6e", "topology": "2x4"},
            ],
            teams=[
                {"name": "alpha", "isolation": "shared"},
                {"name": "beta", "serviceAccount": "runner", "isolation": "shared"},
            ],
            addons=KUEUE_ON,
        )
    )


@pytest.fixture(scope="module")
def same_shape_twice(plan_of, stack_values):
    """Two pools of the same v5e 2x4 shape (1 + 2 slices, 8 chips each)."""
    return plan_of(
        stack_values(
            tpuPools=[
                {"name": "a", "generation": "v5e", "topology": "2x4"},
                {"name": "b", "generation": "v5e", "topology": "2x4", "slices": 2},
            ],
            addons=KUEUE_ON,
        )
    )


def test_one_flavor_per_tpu_shape_v5p(research):
    assert sorted(tpu_flavors(research).values()) == [("tpu-v5p-slice", "2x2x2")]


def test_tpu_quota_is_the_provisioned_chips_v5p(research):
    # 2 slices x 2x2x2 (8 chips) = 16; the slice dedicated to nlp is not the shared queue's
    assert tpu_quota_by_shape(research) == {("tpu-v5p-slice", "2x2x2"): 16}


def test_a_dedicated_team_has_its_own_flavors_and_queue(research):
    """nlp's slice and CPU pool: flavors that add nlp's label and toleration to the pods Kueue
    admits there, and a ClusterQueue of exactly them, admitting nlp (and its shared services
    in default) only, in no cohort."""
    flavors = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in research.by_type(FLAVOR)}
    # no effect: it tolerates the pools' NoExecute taint
    toleration = {"key": DEDICATED_TO, "operator": "Equal", "value": "nlp"}
    assert flavors["tpu-v5p-slice-2x2x2-4t-nlp"] == {
        "nodeLabels": {
            ACCELERATOR: "tpu-v5p-slice",
            TOPOLOGY: "2x2x2",
            INSTANCE_TYPE: "ct5p-hightpu-4t",
            DEDICATED_TO: "nlp",
        },
        "tolerations": [toleration],
    }
    assert flavors["cpu-nlp-cpu"] == {
        "nodeLabels": {"cloud.google.com/gke-nodepool": "nlp-cpu", DEDICATED_TO: "nlp"},
        "tolerations": [toleration],
    }
    (queue,) = [
        q
        for q in research.by_type(CLUSTER_QUEUE)
        if q.inputs["metadata"]["name"] == "nlp-cluster-queue"
    ]
    spec = queue.inputs["spec"]
    assert spec["namespaceSelector"] == {
        "matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["nlp", "default"]}
        ]
    }
    assert "cohortName" not in spec
    tpu, cpu = spec["resourceGroups"]
    assert tpu["flavors"] == [
        {"name": "tpu-v5p-slice-2x2x2-4t-nlp", "resources": [{"name": TPU, "nominalQuota": 8}]}
    ]
    # two n2-standard-64 nodes' allocatable
    assert [f["name"] for f in cpu["flavors"]] == ["cpu-nlp-cpu"]


def test_two_shapes_two_flavors_with_their_own_quotas(two_shapes):
    assert sorted(tpu_flavors(two_shapes).values()) == [
        ("tpu-v6e-slice", "2x2"),
        ("tpu-v6e-slice", "2x4"),
    ]
    # 3 x 2x2 (4 chips) = 12; 1 x 2x4 (8 chips) = 8
    assert tpu_quota_by_shape(two_shapes) == {
        ("tpu-v6e-slice", "2x2"): 12,
        ("tpu-v6e-slice", "2x4"): 8,
    }


def test_pools_of_one_shape_share_a_flavor(same_shape_twice):
    assert list(tpu_flavors(same_shape_twice).values()) == [("tpu-v5-lite-podslice", "2x4")]
    # (1 + 2) slices x 8 chips
    assert tpu_quota_by_shape(same_shape_twice) == {("tpu-v5-lite-podslice", "2x4"): 24}


def test_cpu_flavor_selects_the_cpu_pool(plan_of, stack_values):
    plan = plan_of(stack_values(cpuPool={"name": "head-pool"}, addons=KUEUE_ON))
    selectors = [r.inputs["spec"]["nodeLabels"] for r in plan.by_type(FLAVOR)]
    assert {"cloud.google.com/gke-nodepool": "head-pool", SHARED_POOL: "true"} in selectors
    assert len(selectors) == 2  # one TPU shape + the CPU pool


def test_cluster_queue_is_cluster_scoped_and_named(research):
    shared, dedicated = research.by_type(CLUSTER_QUEUE)
    assert shared.inputs["metadata"] == {"name": "cluster-queue"}
    assert dedicated.inputs["metadata"] == {"name": "nlp-cluster-queue"}
    assert shared.inputs["apiVersion"] == "kueue.x-k8s.io/v1beta2"


def test_a_local_queue_per_team_namespace(two_shapes):
    queues = two_shapes.by_type(LOCAL_QUEUE)
    assert sorted(q.inputs["metadata"]["namespace"] for q in queues) == ["alpha", "beta"]
    for queue in queues:
        assert queue.inputs["metadata"]["name"] == "multislice-queue"
        assert queue.inputs["spec"] == {"clusterQueue": "cluster-queue"}


def test_local_queues_wait_for_their_namespace_and_the_cluster_queue(two_shapes):
    namespaces = {r.inputs["metadata"]["name"]: r.urn for r in two_shapes.by_type(NAMESPACE)}
    (cluster_queue,) = two_shapes.by_type(CLUSTER_QUEUE)
    queues = two_shapes.by_type(LOCAL_QUEUE)
    assert len(queues) == 2  # alpha's and beta's
    for queue in queues:
        assert namespaces[queue.inputs["metadata"]["namespace"]] in queue.dependencies
        assert cluster_queue.urn in queue.dependencies


def test_priority_classes_are_xpks_five(research):
    """And the controllers' own, above them (it comes with the cluster, Kueue or not)."""
    classes = {
        r.inputs["metadata"]["name"]: r.inputs["value"] for r in research.by_type(PRIORITY_CLASS)
    }
    assert classes == {
        "very-low": 100,
        "low": 250,
        "medium": 500,
        "high": 750,
        "very-high": 1000,
        "tpu-pathways-controllers": 1000000,
    }
    for r in research.by_type(PRIORITY_CLASS):
        assert r.inputs["globalDefault"] is False


@pytest.mark.parametrize("kind", [FLAVOR, CLUSTER_QUEUE, LOCAL_QUEUE])
def test_queue_objects_wait_for_the_kueue_install(research, kind):
    installs = {r.inputs["file"]: r.urn for r in research.by_type(CONFIG_FILE)}
    kueue = installs[KUEUE_URL]
    objects = research.by_type(kind)
    assert objects
    for r in objects:
        assert kueue in r.dependencies, r.urn


def test_kueue_is_on_by_default_in_a_stack_that_owns_its_cluster(example_plan):
    plan = example_plan("dev")  # no addons.kueue key
    assert KUEUE_URL in {r.inputs["file"] for r in plan.by_type(CONFIG_FILE)}
    assert plan.by_type(CLUSTER_QUEUE)


def test_no_kueue_objects_when_disabled(example_plan):
    plan = example_plan("serving-v6e")  # addons.kueue.enabled: false
    for kind in (FLAVOR, CLUSTER_QUEUE, LOCAL_QUEUE):
        assert plan.by_type(kind) == []
    (controllers,) = plan.by_type(PRIORITY_CLASS)  # the installs' controllers', not Kueue's
    assert controllers.inputs["metadata"]["name"] == "tpu-pathways-controllers"
    assert KUEUE_URL not in {r.inputs["file"] for r in plan.by_type(CONFIG_FILE)}


def test_production_protects_the_installs_and_every_kueue_object(plan_of, stack_values):
    """Deleting a CRD deletes every object of it; a queue's deletion strands queued jobs."""
    kinds = (CONFIG_FILE, FLAVOR, CLUSTER_QUEUE, LOCAL_QUEUE, PRIORITY_CLASS)
    production = plan_of(stack_values(environment="production", addons=KUEUE_ON))
    objects = [r for r in production.resources if r.type in kinds]
    assert {r.type for r in objects} == set(kinds)
    assert [r.name for r in objects if r.options.get("protect") is not True] == []
    dev = plan_of(stack_values(addons=KUEUE_ON))
    assert [r.name for r in dev.resources if r.type in kinds and r.options.get("protect")] == []
