"""The cluster's dedicated VPC: subnetwork with pod/service ranges, internal firewall, and a
Cloud Router + NAT when nodes are private.

TPU multislice traffic crosses the data-center network between slices; a VPC with MTU 8896
(instead of the default 1460) is what large TPU deployments use for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components.pathways.spec import PROXY_PORT, PYTHON_SIDECAR_PORT, RM_PORTS, WORKER_PORTS

PODS_RANGE = "pods"
SERVICES_RANGE = "services"

# Ports the PathwaysJob controller binds on the node's own address (components.pathways.spec).
PATHWAYS_HEAD_PORTS: tuple[str, ...] = tuple(map(str, (PROXY_PORT, *RM_PORTS)))
PATHWAYS_WORKER_PORTS: tuple[str, ...] = tuple(map(str, (*WORKER_PORTS, PYTHON_SIDECAR_PORT)))
PATHWAYS_PORTS: tuple[str, ...] = PATHWAYS_HEAD_PORTS + PATHWAYS_WORKER_PORTS
# Firewall priorities (lower wins): both rules sit above the default 1000 of any allow rule the
# VPC already has (e.g. the default network's default-allow-internal, or 0.0.0.0/0 rules).
ALLOW_FROM_CLUSTER_PRIORITY = 800
DENY_FROM_ELSEWHERE_PRIORITY = 810
ANYWHERE = "0.0.0.0/0"
# The largest MTU a VPC takes: what TPU multislice traffic between slices wants.
MAX_MTU = 8896


@dataclass(frozen=True)
class ClusterNetworkArgs:
    """Inputs of a ``ClusterNetwork``: the project and region it lives in and its ranges."""

    project: str
    region: str
    nodes_cidr: str = "10.0.0.0/20"
    """The subnetwork's primary range (node addresses)."""
    pods_cidr: str = "10.4.0.0/14"
    """Secondary range ``pods``."""
    services_cidr: str = "10.8.0.0/20"
    """Secondary range ``services``."""
    mtu: int = MAX_MTU
    private_nodes: bool = False
    """Nodes without external addresses: adds a Cloud Router and NAT for their egress."""


@dataclass(frozen=True)
class PathwaysPortsFirewallArgs:
    """Inputs of a ``PathwaysPortsFirewall``."""

    project: str
    network: pulumi.Input[str]
    cluster_ranges: Sequence[pulumi.Input[str]]
    """The ranges admitted: the cluster's node and pod ranges."""
    node_service_account: pulumi.Input[str]
    """The rules apply to the nodes running as this service account (email)."""


class ClusterNetwork(pulumi.ComponentResource):
    """A VPC, one regional subnetwork and the firewall and NAT the cluster needs."""

    network_name: pulumi.Output[str]
    subnetwork_name: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        args: ClusterNetworkArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tpu-pathways:network:ClusterNetwork", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        network, project, region = args, args.project, args.region

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
        self._internal_firewall(name, args, vpc.name)
        if args.private_nodes:
            self._nat(name, args, vpc.name)

        self.network_name = vpc.name
        self.subnetwork_name = subnet.name
        self.register_outputs(
            {"network_name": self.network_name, "subnetwork_name": self.subnetwork_name}
        )

    def _internal_firewall(
        self, name: str, args: ClusterNetworkArgs, network: pulumi.Input[str]
    ) -> None:
        """Pathways workers use host networking across slices; node and pod ranges talk."""
        gcp.compute.Firewall(
            f"{name}-allow-internal",
            name=f"{name}-allow-internal",
            project=args.project,
            network=network,
            direction="INGRESS",
            source_ranges=[args.nodes_cidr, args.pods_cidr],
            allows=[
                gcp.compute.FirewallAllowArgs(protocol="tcp"),
                gcp.compute.FirewallAllowArgs(protocol="udp"),
                gcp.compute.FirewallAllowArgs(protocol="icmp"),
            ],
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _nat(self, name: str, args: ClusterNetworkArgs, network: pulumi.Input[str]) -> None:
        """Private nodes reach the internet (image registries) through Cloud NAT."""
        child = pulumi.ResourceOptions(parent=self)
        router = gcp.compute.Router(
            f"{name}-router",
            name=f"{name}-router",
            project=args.project,
            region=args.region,
            network=network,
            opts=child,
        )
        gcp.compute.RouterNat(
            f"{name}-nat",
            name=f"{name}-nat",
            project=args.project,
            region=args.region,
            router=router.name,
            nat_ip_allocate_option="AUTO_ONLY",
            source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES",
            log_config=gcp.compute.RouterNatLogConfigArgs(enable=True, filter="ERRORS_ONLY"),
            opts=child,
        )


class PathwaysPortsFirewall(pulumi.ComponentResource):
    """Admit the host-network Pathways ports only from the cluster's own node and pod ranges.

    NetworkPolicy does not govern host-network pods, so these ports on the node IPs are open to
    whatever the VPC firewall admits. Two rules on the nodes (targeted by the node service
    account, so they also hold on an existing VPC): allow the cluster's ranges, then deny
    everyone else, both ahead of the VPC's own allow rules.
    """

    def __init__(
        self,
        name: str,
        args: PathwaysPortsFirewallArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tpu-pathways:network:PathwaysPortsFirewall", name, None, opts)
        project, network = args.project, args.network
        child = pulumi.ResourceOptions(parent=self)
        ports = [gcp.compute.FirewallAllowArgs(protocol="tcp", ports=list(PATHWAYS_PORTS))]
        targets = [args.node_service_account]
        gcp.compute.Firewall(
            f"{name}-allow",
            name=f"{name}-allow",
            project=project,
            network=network,
            direction="INGRESS",
            priority=ALLOW_FROM_CLUSTER_PRIORITY,
            source_ranges=list(args.cluster_ranges),
            target_service_accounts=targets,
            allows=ports,
            description="Pathways host-network ports: the cluster's own node and pod ranges",
            opts=child,
        )
        gcp.compute.Firewall(
            f"{name}-deny",
            name=f"{name}-deny",
            project=project,
            network=network,
            direction="INGRESS",
            priority=DENY_FROM_ELSEWHERE_PRIORITY,
            source_ranges=[ANYWHERE],
            target_service_accounts=targets,
            denies=[gcp.compute.FirewallDenyArgs(protocol="tcp", ports=list(PATHWAYS_PORTS))],
            description="Pathways host-network ports: nobody outside the cluster",
            opts=child,
        )
        self.register_outputs({})
