"""The provider host constructs every component under the mock engine and registers the same
resources as the Python API for the same inputs.

Inputs are the YAML example's properties (``examples/yaml/Pulumi.yaml``), sent as the engine
sends them: through a protobuf Struct, which makes every number a float. The Python side is
written with the public API and literal values, so the two do not share the translation under
test. Resources are compared by type, name, inputs, options and what they depend on (by type and
name: the wrapper adds its own type to every child's URN).
"""

import json
from pathlib import Path
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s
import pytest
import yaml
from google.protobuf import struct_pb2
from pulumi.runtime import rpc

from components import (
    CapacityType,
    DeploymentMode,
    PathwaysJob,
    PathwaysJobArgs,
    PathwaysJobSet,
    PathwaysJobSetArgs,
    PathwaysJobSpec,
    PoolTarget,
    TeamNamespace,
    TeamNamespaceArgs,
    TpuNodePool,
    TpuNodePoolArgs,
    UserContainer,
    Worker,
    WorkerType,
    resolve_accelerator,
)
from components.addons.team_isolation import TeamQuota
from components.plan.engine import run_program
from components.resolve.checks import parse_stack_config
from components.stack.program import build_stack
from tests.components.harness import SubnetworkWithRanges
from tpu_pathways_provider import provider

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = yaml.safe_load((ROOT / "examples" / "yaml" / "Pulumi.yaml").read_text())["resources"]
KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: []\n"
PROVIDER = provider()


def wire(properties: dict[str, Any]) -> dict[str, Any]:
    """The properties as a Construct request carries them (``${x.kubeconfig}`` given a value)."""
    values = {
        k: KUBECONFIG if isinstance(v, str) and v.startswith("${") else v
        for k, v in properties.items()
    }
    struct = struct_pb2.Struct()
    struct.update(values)
    return rpc.deserialize_properties(struct, keep_unknowns=True)


def construct(logical: str, opts: pulumi.ResourceOptions | None = None):
    resource = EXAMPLE[logical]
    token = f"tpu-pathways:index:{resource['type'].rsplit(':', 1)[1]}"

    def program() -> None:
        PROVIDER.construct(logical, token, wire(resource["properties"]), opts)

    return run_program(program, "dev")[0]


def comparable(resources, wrapper: str | None) -> list[tuple]:
    """(type, name, inputs, options, parent, dependencies) of every resource but the wrapper;
    URNs as (type, name), the wrapper and the stack as None; a URN alias as the type and name
    it ends in (its parent chain holds the wrapper's type on one side only)."""
    by_urn = {r.urn: (r.type, r.name) for r in resources if r.type != wrapper}

    def ref(urn: str | None):
        return by_urn.get(urn) if urn else None

    def options(r) -> str:
        aliases = [
            {"urn": a["urn"].rsplit("$", 1)[-1]} if "urn" in a else a
            for a in r.options.get("aliases", [])
        ]
        return json.dumps(
            {**r.options, **({"aliases": aliases} if aliases else {})}, sort_keys=True
        )

    return sorted(
        (
            r.type,
            r.name,
            json.dumps(r.inputs, sort_keys=True),
            options(r),
            ref(r.parent),
            sorted(map(str, filter(None, map(ref, r.dependencies)))),
        )
        for r in resources
        if r.type != wrapper
    )


def test_the_example_cluster_is_the_stack_program_of_the_same_keys():
    properties = EXAMPLE["cluster"]["properties"]
    made = construct("cluster")
    config = parse_stack_config(dict(properties))  # the stack file's keys, as written
    python, _ = run_program(lambda: build_stack(config), "dev")
    assert [r.type for r in made].count("tpu-pathways:index:Cluster") == 1
    assert comparable(made, "tpu-pathways:index:Cluster") == comparable(python, None)
    pools = sorted(r.name for r in made if r.type == "gcp:container/nodePool:NodePool")
    assert pools == ["pathways-yaml-cpu-np", "pathways-yaml-system-np", "pathways-yaml-v5e-0"]


def test_the_example_slice_pool_is_a_tpu_node_pool():
    made = construct("inference-slices")
    target = PoolTarget(
        project="my-gcp-project",
        region="us-west4",
        zone="us-west4-a",
        cluster_name="pathways-yaml",
        location="us-west4",
        service_account="pathways-yaml-nodes@my-gcp-project.iam.gserviceaccount.com",
        node_pools=2,
    )
    args = TpuNodePoolArgs(
        "v6e", resolve_accelerator("v6e-8"), target, slices=2, capacity=CapacityType.SPOT
    )

    def program() -> None:
        TpuNodePool("inference-slices", args)

    python, _ = run_program(program, "dev")
    assert comparable(made, "tpu-pathways:index:TpuSlicePool") == comparable(python, None)
    pools = sorted(
        (r.name, r.inputs["name"]) for r in made if r.type == "gcp:container/nodePool:NodePool"
    )
    assert pools == [("inference-slices-0", "v6e-0"), ("inference-slices-1", "v6e-1")]


def _kube(name: str) -> k8s.Provider:
    return k8s.Provider(f"{name}-k8s", kubeconfig=KUBECONFIG, enable_server_side_apply=True)


def test_the_example_training_job_is_a_pathways_job():
    made = construct("train")
    container = UserContainer(
        image="us-docker.pkg.dev/cloud-tpu-images/maxtext-images/tpu_pre_training:0.2.3",
        command=[
            "python3",
            "-c",
            "import pathwaysutils, jax; pathwaysutils.initialize(); print(jax.devices())",
        ],
        cpu="8",
        memory="32Gi",
        service_account="pathways",
    )
    spec = PathwaysJobSpec(
        workers=[Worker(type=WorkerType.CT5LP_HIGHTPU_4T, topology="2x4", num_slices=1)],
        controller=container.controller(DeploymentMode.DEFAULT, "cpu-np"),
        pathways_dir="gs://my-gcp-project-pathways-yaml-pathways/research/hello-train",
    )

    def program() -> None:
        args = PathwaysJobArgs(
            name="hello-train",
            namespace="research",
            spec=spec,
            provider=_kube("train"),
            labels={"kueue.x-k8s.io/queue-name": "multislice-queue"},
        )
        PathwaysJob("train", args)

    python, _ = run_program(program, "dev")
    assert comparable(made, "tpu-pathways:index:PathwaysWorkload") == comparable(python, None)
    kinds = [r.type for r in made if r.custom]
    assert kinds == [
        "pulumi:providers:kubernetes",
        "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob",
    ]


def test_the_example_headless_job_is_a_jobset():
    made = construct("notebook")
    spec = PathwaysJobSpec(
        workers=[Worker(type=WorkerType.CT5LP_HIGHTPU_4T, topology="2x4", num_slices=1)],
        controller={"deploymentMode": "default"},
        pathways_dir="gs://my-gcp-project-pathways-yaml-pathways/research/notebook",
    )

    def program() -> None:
        args = PathwaysJobSetArgs(
            name="notebook",
            namespace="research",
            spec=spec,
            provider=_kube("notebook"),
            queue_name="multislice-queue",
            head_node_selector={"cloud.google.com/gke-nodepool": "cpu-np"},
        )
        PathwaysJobSet("notebook", args)

    python, _ = run_program(program, "dev")
    assert comparable(made, "tpu-pathways:index:PathwaysWorkload") == comparable(python, None)
    assert [r.type for r in made if r.custom][-1] == "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"


def test_the_example_team_is_a_team_namespace():
    made = construct("serving")

    def program() -> None:
        args = TeamNamespaceArgs(name="serving", provider=_kube("serving"))
        args = TeamNamespaceArgs(
            name="serving", provider=args.provider, quota=TeamQuota(tpu_chips=16)
        )
        TeamNamespace("serving", args)

    python, _ = run_program(program, "dev")
    assert comparable(made, "tpu-pathways:index:TeamTenant") == comparable(python, None)
    namespaces = [r.inputs["metadata"]["name"] for r in made if r.type.endswith(":Namespace")]
    assert namespaces == ["serving"]


def _refusal(logical: str, changes: dict[str, Any]) -> pulumi.InputPropertiesError:
    resource = EXAMPLE[logical]
    token = f"tpu-pathways:index:{resource['type'].rsplit(':', 1)[1]}"
    caught: list[Exception] = []

    def program() -> None:
        try:
            PROVIDER.construct(logical, token, wire({**resource["properties"], **changes}), None)
        except pulumi.InputPropertiesError as exc:
            caught.append(exc)

    resources, _ = run_program(program, "dev")
    assert len(caught) == 1, "the mistake was not refused as an input error"
    # nothing but the wrapper itself was registered
    assert [r.type for r in resources] == [token]
    return caught[0]  # type: ignore[return-value]


def test_a_bad_accelerator_of_a_slice_pool_names_the_property():
    error = _refusal("inference-slices", {"pool": {"name": "v6e", "accelerator": "v9z-8"}})
    assert [e["property_path"] for e in error.errors] == ["pool.accelerator"]
    assert "v9z-8" in error.errors[0]["reason"]


def test_every_mistake_of_a_cluster_is_reported_at_once():
    pools = [{"name": "v5e", "accelerator": "v5litepod-8", "slices": 0}]
    error = _refusal(
        "cluster",
        {"tpuPools": pools, "cpuPool": {"machineType": "ct5lp-hightpu-4t"}},
    )
    assert sorted(e["property_path"] for e in error.errors) == [
        "cpuPool.machineType",
        "tpuPools[0].slices",
    ]


def test_a_workload_mistake_names_the_input():
    error = _refusal("train", {"accelerator": "v5p-9999", "name": "Not_A_Name"})
    assert sorted(e["property_path"] for e in error.errors) == ["accelerator", "name"]


def test_depends_on_reaches_the_node_pools():
    """The SDK does not pass a component's depends_on on to its children: the wrapper does."""

    def program() -> None:
        first = pulumi.CustomResource("test:index:Thing", "first")
        resource = EXAMPLE["inference-slices"]
        opts = pulumi.ResourceOptions(depends_on=[first])
        PROVIDER.construct(
            "pool", "tpu-pathways:index:TpuSlicePool", wire(resource["properties"]), opts
        )

    made, _ = run_program(program, "dev")
    thing = next(r.urn for r in made if r.type == "test:index:Thing")
    node_pools = [r for r in made if r.type == "gcp:container/nodePool:NodePool"]
    assert len(node_pools) == 2
    assert all(thing in r.dependencies for r in node_pools)


@pytest.mark.parametrize(
    ("logical", "env_key"),
    [("train", "MY_VAR"), ("train", "jax.config")],
)
def test_user_map_keys_are_kept_as_written(logical, env_key):
    resource = EXAMPLE[logical]
    properties = {**resource["properties"], "env": {env_key: "1"}}

    def program() -> None:
        PROVIDER.construct(logical, "tpu-pathways:index:PathwaysWorkload", wire(properties), None)

    made, _ = run_program(program, "dev")
    job = next(r for r in made if r.type.endswith(":PathwaysJob"))
    container = job.inputs["spec"]["controller"]["template"]["spec"]["containers"][0]
    assert {"name": env_key, "value": "1"} in container["env"]


def test_a_clusters_subnetwork_is_looked_up_with_the_callers_gcp_provider():
    """The engine sends a Construct its providers map; the existing subnetwork is read with the
    gcp provider the cluster's resources get from it, not the default one."""
    properties = dict(EXAMPLE["cluster"]["properties"])
    network = {"existingNetwork": "shared-vpc", "existingSubnetwork": "shared-subnet"}
    properties["cluster"] = {**properties["cluster"], "network": network}
    mocks = SubnetworkWithRanges({})

    def program() -> None:
        other = gcp.Provider("other", project="other-project")
        opts = pulumi.ResourceOptions(providers={"gcp": other})
        PROVIDER.construct("cluster", "tpu-pathways:index:Cluster", wire(properties), opts)

    made, _ = run_program(program, "dev", mocks=mocks)
    other = "urn:pulumi:dev::tpu-pathways::pulumi:pulumi:Stack$pulumi:providers:gcp::other"
    assert [provider for _, provider in mocks.lookups] == [
        f"{other}::04da6b54-80e4-46f7-96ec-b56ff0331ba9"
    ]
    (cluster,) = [r for r in made if r.type == "gcp:container/cluster:Cluster"]
    assert cluster.provider == other
