"""Node settings every pool of the cluster shares: identity, metadata server, shielded boot."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components.gke.operations import node_pool_timeouts
from components.labels import DRA_DRIVER_LABEL, POOL_LABEL, RESERVATION_LABEL, standard_labels
from components.tpu.catalog import TpuShape

CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform"


@dataclass(frozen=True)
class PoolTarget:
    """Where a node pool goes and what its nodes run as: the same for every pool of a stack
    (``GkeCluster.pool_target()`` gives the one of a cluster)."""

    project: str
    region: str
    zone: str
    """The zone the pool's nodes are in."""
    cluster_name: pulumi.Input[str]
    location: pulumi.Input[str]
    """The cluster's location (its region, or its zone when zonal)."""
    service_account: pulumi.Input[str]
    """Email of the service account the nodes run as."""
    team: str = ""
    """The team label of the nodes ("" for none)."""
    protect: bool = False
    node_pools: int = 1
    """How many node pools the stack creates in the cluster: sizes each pool's timeouts for a
    create queued behind the others (``operations.node_pool_timeouts``)."""

    def custom_timeouts(self) -> pulumi.CustomTimeouts:
        return pulumi.CustomTimeouts(**node_pool_timeouts(self.node_pools).as_strings())


def node_pool_config(
    machine_type: str,
    service_account: pulumi.Input[str],
    labels: dict[str, str],
    disk_size_gb: int | None = None,
    **capacity: object,
) -> gcp.container.NodePoolNodeConfigArgs:
    """A node config: dedicated service account (IAM decides access, hence the broad scope),
    GKE metadata server for Workload Identity, gVNIC, secure boot and integrity monitoring.
    ``capacity`` carries spot / flex_start / reservation_affinity."""
    return gcp.container.NodePoolNodeConfigArgs(
        machine_type=machine_type,
        service_account=service_account,
        oauth_scopes=[CLOUD_PLATFORM_SCOPE],
        disk_size_gb=disk_size_gb,
        labels=labels,
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


def tpu_pool_labels(
    team: str, pool: str, shape: TpuShape, reservation: str | None = None
) -> dict[str, str]:
    """The labels a TPU pool's node config sets (GKE adds its own TPU labels).

    v6e pools with accelerator_network_profile "auto" carry DRA_DRIVER_LABEL, as XPK creates
    them (xpk src/xpk/core/nodepool.py: --accelerator-network-profile=auto together with
    --node-labels=cloud.google.com/gke-networking-dra-driver=true): GKE's networking DRA driver
    is scheduled onto the nodes that carry it, and attaches the pool's extra accelerator NICs.
    Reservation pools carry RESERVATION_LABEL, set by this project so a workload can select it
    (whether GKE labels nodes of a Standard node pool with the reservation's name is not
    confirmed in its documentation, so the preflight does not assume it)."""
    labels = pool_labels(team, pool)
    if shape.needs_accelerator_network_profile:
        labels[DRA_DRIVER_LABEL] = "true"
    if reservation is not None:
        labels[RESERVATION_LABEL] = reservation.rsplit("/", 1)[-1]
    return labels


def pool_labels(team: str, pool: str) -> dict[str, str]:
    return standard_labels(team, **{POOL_LABEL: pool})
