"""The settings of a created GKE cluster, each a typed pulumi-gcp Args: the temporary default
pool's nodes, the control plane's endpoints and who reaches them, Google Groups for RBAC,
Secrets encryption, Binary Authorization, the CSI drivers and the metrics GKE collects
(``cluster.GkeCluster``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pulumi
import pulumi_gcp as gcp

from components.gke.node_config import CLOUD_PLATFORM_SCOPE
from components.vocabulary import DnsProvider

if TYPE_CHECKING:
    from components.gke.cluster import AuthorizedNetwork


def default_pool_node_config(service_account: pulumi.Input[str]):
    """The short-lived default pool must not run as the default compute service account."""
    return gcp.container.ClusterNodeConfigArgs(
        service_account=service_account,
        oauth_scopes=[CLOUD_PLATFORM_SCOPE],
        shielded_instance_config=gcp.container.ClusterNodeConfigShieldedInstanceConfigArgs(
            enable_secure_boot=True, enable_integrity_monitoring=True
        ),
        workload_metadata_config=gcp.container.ClusterNodeConfigWorkloadMetadataConfigArgs(
            mode="GKE_METADATA"
        ),
    )


def workload_identity(project: str):
    """The project's Workload Identity pool, which team service accounts are granted through."""
    return gcp.container.ClusterWorkloadIdentityConfigArgs(workload_pool=f"{project}.svc.id.goog")


def addons_config(lustre: bool = False, filestore: bool = False):
    """GKE's CSI drivers: Cloud Storage FUSE always; Managed Lustre and Filestore when the stack
    has such a file system (GKE enables neither by default)."""
    container = gcp.container
    return container.ClusterAddonsConfigArgs(
        gcs_fuse_csi_driver_config=container.ClusterAddonsConfigGcsFuseCsiDriverConfigArgs(
            enabled=True
        ),
        # Off, explicitly: GKE turns NodeLocal DNSCache on by default from 1.34.1-gke.3720000
        # (GKE "Set up NodeLocal DNSCache"), which would move kube-dns clients' resolver to a
        # node-local address the team NetworkPolicy does not name. With Cloud DNS it has no role.
        dns_cache_config=container.ClusterAddonsConfigDnsCacheConfigArgs(enabled=False),
        lustre_csi_driver_config=(
            container.ClusterAddonsConfigLustreCsiDriverConfigArgs(enabled=True) if lustre else None
        ),
        gcp_filestore_csi_driver_config=(
            container.ClusterAddonsConfigGcpFilestoreCsiDriverConfigArgs(enabled=True)
            if filestore
            else None
        ),
    )


def dns_config(provider: DnsProvider):
    """The cluster's DNS provider, set explicitly: Cloud DNS for GKE in cluster scope (pods
    resolve at 169.254.169.254; GKE "Using Cloud DNS for GKE") or kube-dns."""
    if provider is DnsProvider.CLOUD_DNS:
        return gcp.container.ClusterDnsConfigArgs(
            cluster_dns="CLOUD_DNS", cluster_dns_scope="CLUSTER_SCOPE"
        )
    return gcp.container.ClusterDnsConfigArgs(cluster_dns="KUBE_DNS")


def monitoring_config(components: Sequence[str], managed_prometheus: bool | None):
    """GKE's metric packages and Managed Service for Prometheus, said explicitly so GKE's
    defaults never drift the diff (None, no components: GKE's defaults)."""
    if not components and managed_prometheus is None:
        return None
    prometheus = (
        None
        if managed_prometheus is None
        else gcp.container.ClusterMonitoringConfigManagedPrometheusArgs(enabled=managed_prometheus)
    )
    return gcp.container.ClusterMonitoringConfigArgs(
        enable_components=list(components) or None, managed_prometheus=prometheus
    )


def private_cluster_config(private_nodes: bool):
    if not private_nodes:
        return None
    return gcp.container.ClusterPrivateClusterConfigArgs(enable_private_nodes=True)


def authenticator_groups(security_group: str | None):
    """Google Groups for RBAC (``gke-security-groups@<domain>``), when named."""
    if not security_group:
        return None
    return gcp.container.ClusterAuthenticatorGroupsConfigArgs(security_group=security_group)


def binary_authorization(enforced: bool):
    if not enforced:
        return None
    return gcp.container.ClusterBinaryAuthorizationArgs(
        evaluation_mode="PROJECT_SINGLETON_POLICY_ENFORCE"
    )


def control_plane_endpoints(networks: Sequence[AuthorizedNetwork], tokens_via_dns: bool):
    """The IAM-gated DNS endpoint always; the IP endpoint only when networks are listed to
    reach it (CIS GKE Benchmark v2.0.0, 5.6.4: prefer DNS-based access, disable the IP-based
    endpoint where it is not needed). Kubernetes tokens on the DNS endpoint only when asked (a
    fleet's worker): the field is left unset otherwise, GKE's default."""
    return gcp.container.ClusterControlPlaneEndpointsConfigArgs(
        dns_endpoint_config=gcp.container.ClusterControlPlaneEndpointsConfigDnsEndpointConfigArgs(
            allow_external_traffic=True,
            enable_k8s_tokens_via_dns=True if tokens_via_dns else None,
        ),
        ip_endpoints_config=gcp.container.ClusterControlPlaneEndpointsConfigIpEndpointsConfigArgs(
            enabled=bool(networks)
        ),
    )


def authorized_networks(networks: Sequence[AuthorizedNetwork]):
    """Only the listed networks reach the IP endpoint: not Google Cloud's public IPs either
    (gcp_public_cidrs_access_enabled, on by GKE's default, would let any VM in any project
    try). With no network listed the IP endpoint is off and there is nothing to configure."""
    if not networks:
        return None
    return gcp.container.ClusterMasterAuthorizedNetworksConfigArgs(
        cidr_blocks=[
            gcp.container.ClusterMasterAuthorizedNetworksConfigCidrBlockArgs(
                cidr_block=n.cidr, display_name=n.display_name or None
            )
            for n in networks
        ],
        gcp_public_cidrs_access_enabled=False,
    )


def secrets_encryption(kms_key: str | None):
    """Application-layer Secrets encryption with the given key (pulumi-gcp database_encryption:
    state ENCRYPTED + key_name)."""
    if kms_key is None:
        return None
    return gcp.container.ClusterDatabaseEncryptionArgs(state="ENCRYPTED", key_name=kms_key)


def no_service_external_ips() -> gcp.container.ClusterServiceExternalIpsConfigArgs:
    """No Service may claim an external IP (CVE-2020-8554: a Service's ``spec.externalIPs``
    intercepts the traffic every pod and node sends to that address; pulumi-gcp Cluster
    ``serviceExternalIpsConfig.enabled``: "Whether external IPs specified by a service will be
    allowed", on by default). The team namespaces' admission policy denies them too."""
    return gcp.container.ClusterServiceExternalIpsConfigArgs(enabled=False)
