"""Node settings every pool of the cluster shares: identity, metadata server, shielded boot."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components.gke.operations import node_pool_timeouts
from components.labels import (
    DEDICATED_TAINT_EFFECT,
    DEDICATED_TO_LABEL,
    SHARED_POOL_LABEL,
    SHARED_POOL_VALUE,
    SYSTEM_TAINT,
    SYSTEM_TAINT_EFFECT,
    SYSTEM_TAINT_VALUE,
)

# The nodes' and the cluster's default OAuth scope: IAM alone decides what they may reach.
CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"


@dataclass(frozen=True)
class PoolTarget:
    """Where a node pool goes and what its nodes run as: the same for every pool of a stack
    (``GkeCluster.pool_target()`` gives the one of a cluster)."""

    project: str
    region: str
    zone: str
    """The zone the pool's nodes are in."""
    cluster_name: str
    location: str
    """The cluster's location (its region, or its zone when zonal)."""
    service_account: str
    """Email of the service account the nodes run as."""
    created_first: Sequence[pulumi.Resource] = ()
    """The cluster and the service account: the names above are known before they exist (the
    config gives them), so each pool depends on them explicitly. Plain names instead of their
    outputs: the same graph, without three Output chains per node pool (a 1,024-slice stack
    has 1,026 node pools)."""
    team: str = ""
    """The team label of the nodes ("" for none)."""
    dedicated_to: str = ""
    """The team namespace the pools are dedicated to ("" for the shared pools): their nodes run
    as its own service account and carry the label and NoExecute taint ``DEDICATED_TO_LABEL``
    = the namespace."""
    pod_range: pulumi.Input[str] | None = None
    """The secondary range the pools' Pods get addresses from (None: the cluster's); on an
    existing subnetwork an Output that resolves once the subnetwork is found to have it."""
    protect: bool = False
    node_pools: int = 1
    """How many node pools the stack creates in the cluster: sizes each pool's timeouts for a
    create queued behind the others (``operations.node_pool_timeouts``)."""

    def custom_timeouts(self) -> pulumi.CustomTimeouts:
        return pulumi.CustomTimeouts(**node_pool_timeouts(self.node_pools).as_strings())


def pool_network_config(
    pod_range: pulumi.Input[str] | None, accelerator_network: bool = False
) -> gcp.container.NodePoolNetworkConfigArgs | None:
    """A node pool's network: its Pod range (None: the cluster's), and for a TPU shape that
    needs it the accelerator network profile "auto" (None: GKE's defaults for both)."""
    if pod_range is None and not accelerator_network:
        return None
    return gcp.container.NodePoolNetworkConfigArgs(
        pod_range=pod_range, accelerator_network_profile="auto" if accelerator_network else None
    )


def node_pool_config(
    machine_type: str,
    service_account: pulumi.Input[str],
    labels: dict[str, str],
    disk_size_gb: int | None = None,
    dedicated_to: str = "",
    system: bool = False,
    **capacity: object,
) -> gcp.container.NodePoolNodeConfigArgs:
    """A node config: dedicated service account (IAM decides access, hence the broad scope),
    GKE metadata server for Workload Identity, gVNIC, secure boot and integrity monitoring; a
    pool ``dedicated_to`` a team namespace is labelled and tainted (NoExecute) with it, any
    other but the ``system`` pool labelled ``SHARED_POOL_LABEL``; the ``system`` pool is
    tainted ``SYSTEM_TAINT``. ``capacity`` carries spot / flex_start /
    reservation_affinity."""
    taints = None
    if dedicated_to:
        labels = {**labels, DEDICATED_TO_LABEL: dedicated_to}
        taints = [
            gcp.container.NodePoolNodeConfigTaintArgs(
                key=DEDICATED_TO_LABEL,
                value=dedicated_to,
                effect=DEDICATED_TAINT_EFFECT.gke,
            )
        ]
    elif not system:
        labels = {**labels, SHARED_POOL_LABEL: SHARED_POOL_VALUE}
    if system:
        taints = [
            gcp.container.NodePoolNodeConfigTaintArgs(
                key=SYSTEM_TAINT,
                value=SYSTEM_TAINT_VALUE,
                effect=SYSTEM_TAINT_EFFECT.gke,
            )
        ]
    return gcp.container.NodePoolNodeConfigArgs(
        machine_type=machine_type,
        service_account=service_account,
        oauth_scopes=[CLOUD_PLATFORM_SCOPE],
        disk_size_gb=disk_size_gb,
        labels=labels,
        taints=taints,
        gvnic=gcp.container.NodePoolNodeConfigGvnicArgs(enabled=True),
        workload_metadata_config=gcp.container.NodePoolNodeConfigWorkloadMetadataConfigArgs(
            mode="GKE_METADATA"
        ),
        shielded_instance_config=gcp.container.NodePoolNodeConfigShieldedInstanceConfigArgs(
            enable_secure_boot=True, enable_integrity_monitoring=True
        ),
        metadata={"disable-legacy-endpoints": "true"},
        **capacity,
    )
