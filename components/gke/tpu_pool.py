"""TPU node pools: one GKE node pool per slice, shaped from the TPU catalog.

A multislice of N slices is N node pools of identical shape, each with as many nodes as the
slice has hosts. Multi-host slices need COMPACT placement with the slice topology so GKE places
the VMs on one ICI-connected block; GKE rejects a topology on single-host pools.

Multi-host Ironwood slices (tpu7x, tpu7) are placed differently: GKE creates their node pools
with a Compute Engine workload policy (a regional resource policy of type HIGH_THROUGHPUT whose
accelerator topology is the slice topology), named in ``placementPolicy.policyName``, instead of
COMPACT placement with a TPU topology (GKE docs, "About Ironwood (TPU7x) in GKE": the workload
policy "replaces the --tpu-topology flag"). A COMPACT placement is refused for these machine
types ("Creation of a managed instance group with tpu7x-standard-4t machine type with placement
policy is not supported. Use workload policy instead.", as reported in vllm-project/ci-infra
PR #547). XPK 1.16 does the same (xpk/core/nodepool.py: ``ensure_resource_policy_exists`` runs
``gcloud beta compute resource-policies create workload-policy <name> --region=<region of the
zone> --type=HIGH_THROUGHPUT --accelerator-topology=<topology>``; the node pool gets
``--placement-policy=<name>`` and neither ``--placement-type=COMPACT`` nor ``--tpu-topology``).
XPK shares one policy per shape ("<device type>-<topology>-placement-policy") across every
cluster of the region; here each pool owns one policy, shared by its slices (all of one shape),
so a stack never depends on, or deletes, a policy another stack uses.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components.errors import ConfigError, ConfigIssue
from components.gke.maintenance import SliceUpgrade
from components.gke.node_config import PoolTarget, node_pool_config, pool_network_config
from components.labels import tpu_pool_labels
from components.tpu.catalog import TpuShape
from components.vocabulary import CapacityType, slice_pool_names

RESERVATION_KEY = "compute.googleapis.com/reservation-name"
# Multi-host TPU pools: GKE's recommended pod density for TPU hosts (XPK uses the same).
MULTI_HOST_MAX_PODS_PER_NODE = 15
# Compute Engine's workload policy type that co-locates the VMs for throughput (ML training);
# the only one GKE accepts for TPU slices (GKE docs, "About Ironwood (TPU7x) in GKE").
WORKLOAD_POLICY_TYPE = "HIGH_THROUGHPUT"
# Compute Engine resource names: RFC 1035 labels of at most 63 characters.
GCE_NAME_MAX = 63


@dataclass(frozen=True)
class TpuNodePoolArgs:
    """Inputs of a ``TpuNodePool``: a slice shape (``resolve_accelerator("v5p-16")``), how many
    slices of it, how their VMs are obtained, and where the pools go (``target``)."""

    name: str
    """Pool name: slice ``i`` is the GKE node pool ``<name>-<i>``."""
    shape: TpuShape
    target: PoolTarget
    slices: int = 1
    """Number of slices (a multislice of N is N node pools of this shape)."""
    capacity: CapacityType = CapacityType.ON_DEMAND
    reservation: str | None = None
    """The reservation (name, or projects/P/reservations/R) when capacity is RESERVATION."""

    def __post_init__(self) -> None:
        issues = []
        if self.slices < 1:
            issues.append(ConfigIssue("slices", f"{self.slices} is not allowed; at least 1"))
        if (self.capacity is CapacityType.RESERVATION) != (self.reservation is not None):
            issues.append(
                ConfigIssue(
                    "reservation",
                    f"{self.reservation!r} with capacity {self.capacity.value}; a reservation "
                    "is given exactly when capacity is RESERVATION",
                )
            )
        if issues:
            raise ConfigError(issues, f"TpuNodePoolArgs {self.name!r}")

    def node_pool_names(self) -> list[str]:
        return slice_pool_names(self.name, self.slices)


class TpuNodePool(pulumi.ComponentResource):
    """All slices of one TPU shape: one GKE node pool per slice."""

    node_pool_names: pulumi.Output[list[str]]
    """The GKE names of its slices' node pools, known before they exist: an input that must wait
    for the slices depends on the component (``depends_on=[pool]``), not on this output."""

    def __init__(
        self, name: str, args: TpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:nodepool:TpuNodePool", name, None, opts)
        pool, target, shape = args, args.target, args.shape
        flex = pool.capacity is CapacityType.FLEX_START
        workload_policy = (
            _workload_policy(name, shape.topology, target, self)
            if shape.needs_workload_policy
            else None
        )
        # The slices of a pool are one shape: their settings are built once and shared.
        management = _management(flex)
        upgrade_settings = None if flex else _slice_upgrade(shape.hosts)
        placement = _placement(shape.multi_host, shape.topology, workload_policy)
        network_config = pool_network_config(
            target.pod_range, shape.needs_accelerator_network_profile
        )
        node_config = node_pool_config(
            shape.machine_type,
            target.service_account,
            tpu_pool_labels(target.team, pool.name, shape, pool.reservation),
            dedicated_to=target.dedicated_to,
            **_capacity_args(pool),
        )
        slice_opts = _slice_options(self, target, shape.multi_host, workload_policy)
        # A loop, not a comprehension: one frame fewer under each slice's registration (the
        # SDK records the whole call stack of every registration).
        for index, node_pool_name in enumerate(pool.node_pool_names()):
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
                management=management,
                upgrade_settings=upgrade_settings,
                placement_policy=placement,
                max_pods_per_node=MULTI_HOST_MAX_PODS_PER_NODE if shape.multi_host else None,
                network_config=network_config,
                node_config=node_config,
                opts=slice_opts,
            )
        # The names the slices were given (GKE keeps a node pool's name), not an Output.all of
        # the slices' own: that chain (a gather, its tasks and an apply for each pool) cost
        # about 3% of a 2,048-slice plan, for a value known before any slice exists.
        self.node_pool_names = pulumi.Output.from_input(pool.node_pool_names())
        self.register_outputs({"node_pool_names": self.node_pool_names})


def _management(flex: bool) -> gcp.container.NodePoolManagementArgs:
    return gcp.container.NodePoolManagementArgs(
        # Flex-start VMs are not repaired in place; GKE re-provisions them.
        auto_repair=not flex,
        # GKE keeps auto-upgrade on for pools of a release-channel cluster; when it
        # upgrades is the cluster's maintenance window and exclusions.
        auto_upgrade=True,
    )


def _slice_options(
    parent: pulumi.Resource,
    target: PoolTarget,
    multi_host: bool,
    workload_policy: gcp.compute.ResourcePolicy | None,
) -> pulumi.ResourceOptions:
    return pulumi.ResourceOptions(
        parent=parent,
        protect=target.protect,
        # GKE node pool names are fixed: a replacement deletes the old slice first.
        delete_before_replace=True,
        # A slice is its topology on its machine type. The provider would update these in
        # place (a rolling recreate of the slice's VMs, or nothing); say in the preview
        # what really happens: the slice is replaced. A workload-policy slice takes its
        # topology from the policy, whose name carries the topology: a new name is a new
        # slice.
        replace_on_changes=[
            "placementPolicy.tpuTopology",
            "placementPolicy.policyName",
            "nodeConfig.machineType",
        ],
        ignore_changes=_ignored_placement(multi_host, workload_policy),
        custom_timeouts=target.custom_timeouts(),
        depends_on=list(target.created_first),
    )


def workload_policy_name(component_name: str, topology: str) -> str:
    """The pool's workload policy name: ``<component name>-<topology>``, a valid Compute Engine
    name. The topology is in the name so a changed topology is a new policy, created before the
    old one (still used by the old slices) is deleted. Names over 63 characters keep a prefix
    and end in a digest of the full name, so they stay unique and stable."""
    full = f"{component_name}-{topology}"
    if len(full) <= GCE_NAME_MAX:
        return full
    digest = hashlib.sha256(full.encode()).hexdigest()[:8]
    return f"{full[: GCE_NAME_MAX - len(digest) - 1].rstrip('-')}-{digest}"


def _workload_policy(
    name: str, topology: str, target: PoolTarget, parent: pulumi.Resource
) -> gcp.compute.ResourcePolicy:
    """The HIGH_THROUGHPUT workload policy every slice of a multi-host Ironwood pool names. It
    lives in the node pools' project and region (GKE requires both to match)."""
    return gcp.compute.ResourcePolicy(
        f"{name}-workload-policy",
        name=workload_policy_name(name, topology),
        project=target.project,
        region=target.region,
        description=f"Placement of the {topology} TPU slices of node pool group {name}",
        workload_policy=gcp.compute.ResourcePolicyWorkloadPolicyArgs(
            type=WORKLOAD_POLICY_TYPE, accelerator_topology=topology
        ),
        opts=pulumi.ResourceOptions(parent=parent, protect=target.protect),
    )


def _placement(
    multi_host: bool, topology: str, workload_policy: gcp.compute.ResourcePolicy | None
) -> gcp.container.NodePoolPlacementPolicyArgs | None:
    """Where GKE puts a slice's VMs: nothing to place for one host; a named workload policy for
    Ironwood; COMPACT placement with the TPU topology for every other generation."""
    if not multi_host:
        return None
    if workload_policy is not None:
        # No placement type: COMPACT asks GKE for a group placement policy, which Compute Engine
        # refuses next to a workload policy (XPK 1.16 passes only --placement-policy; GKE then
        # stores policyName with no type, vllm-project/ci-infra PR #547). The provider's
        # schema makes `type` required; the empty string sends none.
        return gcp.container.NodePoolPlacementPolicyArgs(type="", policy_name=workload_policy.name)
    return gcp.container.NodePoolPlacementPolicyArgs(type="COMPACT", tpu_topology=topology)


def _ignored_placement(
    multi_host: bool, workload_policy: gcp.compute.ResourcePolicy | None
) -> list[str] | None:
    """Placement fields GKE reads back differently from what was sent. GKE can read back an
    empty placement type for TPU pools; for a workload-policy slice it also stores the
    policy's topology as tpuTopology (vllm-project/ci-infra PR #547), which was never sent.
    Without these every refresh would show a diff and replace the slice (provider drift)."""
    if not multi_host:
        return None
    if workload_policy is not None:
        return ["placementPolicy.type", "placementPolicy.tpuTopology"]
    return ["placementPolicy.type"]


def _slice_upgrade(hosts: int) -> gcp.container.NodePoolUpgradeSettingsArgs:
    """The whole slice at once, with no surge TPU VM (``SliceUpgrade``)."""
    upgrade = SliceUpgrade(hosts)
    return gcp.container.NodePoolUpgradeSettingsArgs(
        strategy=upgrade.strategy.value,
        max_surge=upgrade.max_surge,
        max_unavailable=upgrade.max_unavailable,
    )


def _flex_autoscaling(hosts: int) -> gcp.container.NodePoolAutoscalingArgs:
    """Flex-start (DWS) grows the pool from zero to a whole slice when capacity is granted. The
    bounds are per zone (the pool has one): GKE checks a multi-host slice against the per-zone
    maximum, which the total bounds leave at 0 ("Maximum node count 0 is not a valid size of TPU
    pod slice with topology 2x2x2", vllm-project/ci-infra PR #545; XPK passes per-zone
    ``--max-nodes``, src/xpk/core/capacity.py). ANY: a balanced spread cannot assemble a slice."""
    return gcp.container.NodePoolAutoscalingArgs(
        min_node_count=0, max_node_count=hosts, location_policy="ANY"
    )


def _capacity_args(pool: TpuNodePoolArgs) -> dict[str, object]:
    """Node config keys for the pool's capacity type (on-demand needs none)."""
    kind = pool.capacity
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
                values=[pool.reservation],
            )
        }
    return {}
