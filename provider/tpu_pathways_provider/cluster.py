"""``Cluster``: a GKE cluster with its pools and installs, as a stack of no workloads."""

from typing import NotRequired, TypedDict

import pulumi

from components.resolve.checks import parse_stack_config
from components.stack.program import build_stack
from components.vocabulary import Environment, WorkloadBackend
from tpu_pathways_provider.kube import child_options
from tpu_pathways_provider.types import Addons, ClusterSettings, CpuPool, Gcp, Team, TpuPool
from tpu_pathways_provider.wire import stack_values


class ClusterArgs(TypedDict):
    """The stack file's keys of a cluster, its pools and installs (no workloads)."""

    environment: NotRequired[Environment]
    """dev, staging or production. Production protects the cluster, pools and bucket."""
    team: NotRequired[str]
    """Team label put on every node pool and bucket."""
    gcp: Gcp
    """Project, region and zone."""
    cluster: ClusterSettings
    """The GKE cluster."""
    cpu_pool: NotRequired[CpuPool]
    """The CPU pool for Pathways head pods (default n2-standard-64, 1 to 20 nodes)."""
    system_pool: NotRequired[CpuPool]
    """The pool for kube-system and the controllers (default e2-standard-16, 1 to 3 nodes)."""
    tpu_pools: NotRequired[list[TpuPool]]
    """TPU pools; each is one or more identical slices."""
    addons: NotRequired[Addons]
    """JobSet, PathwaysJob controller and Kueue installs."""
    teams: NotRequired[list[Team]]
    """Team namespaces (default: one team, pathways)."""
    workload_backend: NotRequired[WorkloadBackend]
    """What the cluster's workloads will be created as (jobset: no PathwaysJob controller)."""


class Cluster(pulumi.ComponentResource):
    """A GKE cluster for Pathways: its network, CPU and TPU pools, installs, teams and bucket."""

    cluster_name: pulumi.Output[str]
    """The GKE cluster's name."""
    location: pulumi.Output[str]
    """Its location (region, or zone when zonal)."""
    endpoint: pulumi.Output[str]
    """The control plane's endpoint."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig for the cluster (secret): give it to PathwaysWorkload and TeamTenant."""
    node_service_account: pulumi.Output[str]
    """Email of the service account the nodes run as (give it to TpuSlicePool)."""
    tpu_node_pools: pulumi.Output[dict[str, list[str]]]
    """Each TPU pool's GKE node pool names."""
    team_namespaces: pulumi.Output[dict[str, str]]
    """Each team's namespace."""
    scratch_bucket: pulumi.Output[str]
    """The Pathways scratch bucket (gs://...)."""

    def __init__(
        self, name: str, args: ClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:index:Cluster", name, None, opts)
        config = parse_stack_config(stack_values(ClusterArgs, args), f"Cluster {name!r}")
        made = build_stack(config, within=child_options(self, opts))
        self.cluster_name = pulumi.Output.from_input(made["cluster_name"])
        self.location = pulumi.Output.from_input(made["cluster_location"])
        self.endpoint = pulumi.Output.from_input(made["cluster_endpoint"])
        self.kubeconfig = pulumi.Output.secret(made["kubeconfig"])
        self.node_service_account = pulumi.Output.from_input(made["node_service_account"])
        self.tpu_node_pools = pulumi.Output.from_input(made["tpu_node_pools"])
        self.team_namespaces = pulumi.Output.from_input(made["team_namespaces"])
        self.scratch_bucket = pulumi.Output.from_input(made["scratch_bucket"])
        self.register_outputs(
            {
                "cluster_name": self.cluster_name,
                "location": self.location,
                "endpoint": self.endpoint,
                "kubeconfig": self.kubeconfig,
                "node_service_account": self.node_service_account,
                "tpu_node_pools": self.tpu_node_pools,
                "team_namespaces": self.team_namespaces,
                "scratch_bucket": self.scratch_bucket,
            }
        )
