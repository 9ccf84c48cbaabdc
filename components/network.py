"""The cluster's dedicated VPC: subnetwork with pod/service ranges, internal firewall, and a
Cloud Router + NAT when nodes are private.

TPU multislice traffic crosses the data-center network between slices; a VPC with MTU 8896
(instead of the default 1460) is what large TPU deployments use for it.
"""

from __future__ import annotations

import pulumi
import pulumi_gcp as gcp

from components.config import GcpConfig, NetworkConfig

PODS_RANGE = "pods"
SERVICES_RANGE = "services"


class ClusterNetwork(pulumi.ComponentResource):
    """A VPC, one regional subnetwork and the firewall and NAT the cluster needs."""

    network_name: pulumi.Output[str]
    subnetwork_name: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        gcp_config: GcpConfig,
        network: NetworkConfig,
        private_nodes: bool,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tpu-pathways:network:ClusterNetwork", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        project, region = gcp_config.project, gcp_config.region

        vpc = gcp.compute.Network(
            name,
            name=name,
            project=project,
            auto_create_subnetworks=False,
            routing_mode="REGIONAL",
            mtu=network.mtu,
            opts=child,
        )
        subnet = gcp.compute.Subnetwork(
            f"{name}-subnet",
            name=f"{name}-subnet",
            project=project,
            region=region,
            network=vpc.name,
            ip_cidr_range=network.nodes_cidr,
            private_ip_google_access=True,
            secondary_ip_ranges=[
                gcp.compute.SubnetworkSecondaryIpRangeArgs(
                    range_name=PODS_RANGE, ip_cidr_range=network.pods_cidr
                ),
                gcp.compute.SubnetworkSecondaryIpRangeArgs(
                    range_name=SERVICES_RANGE, ip_cidr_range=network.services_cidr
                ),
            ],
            opts=child,
        )
        # Pathways workers use host networking across slices; allow node and pod ranges to talk.
        gcp.compute.Firewall(
            f"{name}-allow-internal",
            name=f"{name}-allow-internal",
            project=project,
            network=vpc.name,
            direction="INGRESS",
            source_ranges=[network.nodes_cidr, network.pods_cidr],
            allows=[
                gcp.compute.FirewallAllowArgs(protocol="tcp"),
                gcp.compute.FirewallAllowArgs(protocol="udp"),
                gcp.compute.FirewallAllowArgs(protocol="icmp"),
            ],
            opts=child,
        )
        if private_nodes:
            router = gcp.compute.Router(
                f"{name}-router",
                name=f"{name}-router",
                project=project,
                region=region,
                network=vpc.name,
                opts=child,
            )
            gcp.compute.RouterNat(
                f"{name}-nat",
                name=f"{name}-nat",
                project=project,
                region=region,
                router=router.name,
                nat_ip_allocate_option="AUTO_ONLY",
                source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
                log_config=gcp.compute.RouterNatLogConfigArgs(enable=True, filter="ERRORS_ONLY"),
                opts=child,
            )

        self.network_name = vpc.name
        self.subnetwork_name = subnet.name
        self.register_outputs(
            {"network_name": self.network_name, "subnetwork_name": self.subnetwork_name}
        )
