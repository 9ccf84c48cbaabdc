"""Autoscaling CPU node pools: the one that runs Pathways head pods, and the system pool."""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from components.gke.node_config import PoolTarget, node_pool_config, pool_labels
from components.stack.schema import AutoscalingPoolConfig


class CpuNodePool(pulumi.ComponentResource):
    node_pool_name: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        pool: AutoscalingPoolConfig,
        target: PoolTarget,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tpu-pathways:nodepool:CpuNodePool", name, None, opts)
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
            node_config=node_pool_config(
                pool.machine_type,
                target.service_account,
                pool_labels(target.team, pool.name),
                pool.disk_size_gb,
            ),
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=target.protect,
                # Fixed GKE names: a replacement must delete the old pool first.
                delete_before_replace=True,
                # The autoscaler owns the node count after creation.
                ignore_changes=["initialNodeCount"],
            ),
        )
        self.node_pool_name = node_pool.name
        self.register_outputs({"node_pool_name": self.node_pool_name})
