"""TPU node pools: one GKE node pool per slice, shaped from the TPU catalog.

A multislice of N slices is N node pools of identical shape, each with as many nodes as the
slice has hosts. Multi-host slices need COMPACT placement with the slice topology so GKE places
the VMs on one ICI-connected block; GKE rejects a topology on single-host pools.
"""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from components.config import CapacityType, TpuPoolConfig
from components.node_config import PoolTarget, node_pool_config, tpu_pool_labels

RESERVATION_KEY = "compute.googleapis.com/reservation-name"
# Multi-host TPU pools: GKE's recommended pod density for TPU hosts (XPK uses the same).
MULTI_HOST_MAX_PODS_PER_NODE = 15


class TpuNodePool(pulumi.ComponentResource):
    """All slices of one TPU pool of the stack config."""

    node_pool_names: pulumi.Output[list[str]]

    def __init__(
        self,
        name: str,
        pool: TpuPoolConfig,
        target: PoolTarget,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tpu-pathways:nodepool:TpuNodePool", name, None, opts)
        shape = pool.shape
        flex = pool.capacity.type is CapacityType.FLEX_START
        slices = []
        for index, node_pool_name in enumerate(pool.node_pool_names()):
            slices.append(
                gcp.container.NodePool(
                    f"{name}-{index}",
                    name=node_pool_name,
                    project=target.project,
                    cluster=target.cluster_name,
                    location=target.location,
                    node_locations=[target.zone],
                    node_count=None if flex else shape.hosts,
                    initial_node_count=0 if flex else None,
                    autoscaling=_flex_autoscaling(shape.hosts) if flex else None,
                    management=gcp.container.NodePoolManagementArgs(
                        # Flex-start VMs are not repaired in place; GKE re-provisions them.
                        auto_repair=not flex,
                        auto_upgrade=True,
                    ),
                    placement_policy=(
                        gcp.container.NodePoolPlacementPolicyArgs(
                            type="COMPACT", tpu_topology=shape.topology
                        )
                        if shape.multi_host
                        else None
                    ),
                    max_pods_per_node=MULTI_HOST_MAX_PODS_PER_NODE if shape.multi_host else None,
                    network_config=(
                        gcp.container.NodePoolNetworkConfigArgs(accelerator_network_profile="auto")
                        if shape.needs_accelerator_network_profile
                        else None
                    ),
                    node_config=node_pool_config(
                        shape.machine_type,
                        target.service_account,
                        tpu_pool_labels(target.team, pool),
                        **_capacity_args(pool),
                    ),
                    opts=pulumi.ResourceOptions(
                        parent=self,
                        protect=target.protect,
                        # GKE node pool names are fixed: a replacement deletes the old slice first.
                        delete_before_replace=True,
                        # A slice is its topology on its machine type. The provider would update
                        # these in place (a rolling recreate of the slice's VMs, or nothing);
                        # say in the preview what really happens: the slice is replaced.
                        replace_on_changes=[
                            "placementPolicy.tpuTopology",
                            "nodeConfig.machineType",
                        ],
                        # GKE can read back an empty placement type for TPU pools; without this
                        # every preview would show a diff and roll the slice (provider drift).
                        ignore_changes=["placementPolicy.type"] if shape.multi_host else None,
                    ),
                )
            )
        self.node_pool_names = pulumi.Output.all(*[s.name for s in slices])
        self.register_outputs({"node_pool_names": self.node_pool_names})


def _flex_autoscaling(hosts: int) -> gcp.container.NodePoolAutoscalingArgs:
    # Flex-start (DWS) grows the pool from zero to a whole slice when capacity is granted.
    return gcp.container.NodePoolAutoscalingArgs(
        total_min_node_count=0, total_max_node_count=hosts, location_policy="ANY"
    )


def _capacity_args(pool: TpuPoolConfig) -> dict[str, object]:
    """Node config keys for the pool's capacity type (on-demand needs none)."""
    kind = pool.capacity.type
    if kind is CapacityType.SPOT:
        return {"spot": True}
    if kind is CapacityType.FLEX_START:
        return {
            "flex_start": True,
            "reservation_affinity": gcp.container.NodePoolNodeConfigReservationAffinityArgs(
                consume_reservation_type="NO_RESERVATION"
            ),
        }
    if kind is CapacityType.RESERVATION:
        return {
            "reservation_affinity": gcp.container.NodePoolNodeConfigReservationAffinityArgs(
                consume_reservation_type="SPECIFIC_RESERVATION",
                key=RESERVATION_KEY,
                values=[pool.capacity.reservation],
            )
        }
    return {}
