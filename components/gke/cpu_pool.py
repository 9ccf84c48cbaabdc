"""Autoscaling CPU node pools: the one that runs Pathways head pods, and the system pool."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components.gke.node_config import PoolTarget, node_pool_config, pool_network_config
from components.labels import pool_labels


@dataclass(frozen=True)
class CpuNodePoolArgs:
    """Inputs of a ``CpuNodePool``: the GKE node pool's name, machine and size, and where it
    goes (``target``)."""

    name: str
    """GKE node pool name (also the ``tpu-pathways/pool`` label of its nodes)."""
    machine_type: str
    target: PoolTarget
    min_nodes: int = 1
    max_nodes: int = 20
    disk_size_gb: int | None = None
    """Boot disk size (GKE's default when None)."""
    system: bool = False
    """The pool of the cluster's controllers: tainted ``labels.SYSTEM_TAINT``, which GKE's
    managed components and the installs' controllers tolerate, and no team pod may."""


class CpuNodePool(pulumi.ComponentResource):
    """One autoscaling GKE node pool of CPU machines."""

    node_pool_name: pulumi.Output[str]

    def __init__(
        self, name: str, args: CpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:nodepool:CpuNodePool", name, None, opts)
        pool, target = args, args.target
        node_pool = gcp.container.NodePool(
            name,
            name=pool.name,
            project=target.project,
            cluster=target.cluster_name,
            location=target.location,
            node_locations=[target.zone],
            initial_node_count=pool.min_nodes,
            autoscaling=gcp.container.NodePoolAutoscalingArgs(
                min_node_count=pool.min_nodes, max_node_count=pool.max_nodes
            ),
            management=gcp.container.NodePoolManagementArgs(auto_repair=True, auto_upgrade=True),
            network_config=pool_network_config(target.pod_range),
            node_config=node_pool_config(
                pool.machine_type,
                target.service_account,
                pool_labels(target.team, pool.name),
                pool.disk_size_gb,
                target.dedicated_to,
                system=pool.system,
            ),
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=target.protect,
                # Fixed GKE names: a replacement must delete the old pool first.
                delete_before_replace=True,
                # The autoscaler owns the node count after creation.
                ignore_changes=["initialNodeCount"],
                custom_timeouts=target.custom_timeouts(),
                depends_on=list(target.created_first),
            ),
        )
        self.node_pool_name = node_pool.name
        self.register_outputs({"node_pool_name": self.node_pool_name})
