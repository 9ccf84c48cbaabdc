"""The cluster's dedicated VPC: subnetwork with pod/service ranges, internal firewall, and a
Cloud Router + NAT when nodes are private.

TPU multislice traffic crosses the data-center network between slices; a VPC with MTU 8896
(instead of the default 1460) is what large TPU deployments use for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp

from components.errors import ConfigError, ConfigIssue
from components.gke.pod_range_check import look_up_subnetwork
from components.gke.subnetwork_ranges import RangeClaim
from components.pathways.spec import PROXY_PORT, PYTHON_SIDECAR_PORT, RM_PORTS, WORKER_PORTS
from components.vocabulary import network_project, team_pods_range, truncated

PODS_RANGE = "pods"
SERVICES_RANGE = "services"


@dataclass(frozen=True)
class TeamPodRange:
    """The Pod range of the pools dedicated to one team: a secondary range of the cluster's
    subnetwork that the pools name as their ``networkConfig.podRange`` (pulumi-gcp 10.2
    ``container.NodePoolNetworkConfigArgs.pod_range``: without ``create_pod_range``, "uses an
    existing secondary range with this ID")."""

    cidr: str
    """Its addresses: the only Pod addresses the Pathways ports of the team's pools admit."""
    name: str | None = None
    """The secondary range's name: on an existing subnetwork, the range its owner made there
    (required: the stack adds no range to a subnetwork it does not create); None: the range
    ``team_pods_range(team)`` the stack creates in its own subnetwork."""
    keys: tuple[str, str] | None = None
    """The keys that gave ``name`` and ``cidr``, named when the existing subnetwork lacks the
    range or has it with other addresses (the stack file's ``teamCpuPools[0].podsRange`` and
    ``.podsCidr``); None: ``team_pod_ranges['<team>'].name`` and ``.cidr``."""

    def range_name(self, team: str) -> str:
        return self.name or team_pods_range(team)

    def claim(self, team: str) -> RangeClaim:
        """What the team's pools take from an existing subnetwork, for ``range_issues``."""
        keys = self.keys or (f"team_pod_ranges[{team!r}].name", f"team_pod_ranges[{team!r}].cidr")
        return RangeClaim(self.range_name(team), self.cidr, *keys)


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
GCE_NAME_MAX = 63
# private.googleapis.com (GCP "Configure Private Google Access": most Google APIs; restricted.
# googleapis.com serves only VPC Service Controls' services) and the zones that point at it:
# (domain, the name its records resolve to).
PRIVATE_GOOGLE_ACCESS_ADDRESSES = ("199.36.153.8", "199.36.153.9", "199.36.153.10", "199.36.153.11")
PRIVATE_GOOGLE_ACCESS_ZONES = (
    ("googleapis.com", "private.googleapis.com"),
    ("pkg.dev", "pkg.dev"),
    ("gcr.io", "gcr.io"),
)


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
    team_pod_ranges: Mapping[str, TeamPodRange] = field(default_factory=dict)
    """Team -> the range of its dedicated pools' Pods: a secondary range each."""
    mtu: int = MAX_MTU
    private_nodes: bool = False
    """Nodes without external addresses: adds a Cloud Router and NAT for their egress."""


@dataclass(frozen=True)
class PathwaysPortsFirewallArgs:
    """Inputs of a ``PathwaysPortsFirewall``: one set of pools (the shared ones, or one team's
    dedicated ones), known by the service account its nodes run as."""

    project: str
    network: pulumi.Input[str]
    pods_range: pulumi.Input[str]
    """The Pod range of the set's pools (the cluster's for the shared pools, its own for a
    team's dedicated pools): the Pods on those pools, off the host network, are admitted; no
    Pod of another set is, whatever NetworkPolicy it is under."""
    node_service_account: pulumi.Input[str]
    """The rules apply to the nodes running as this service account (email), and admit
    traffic from nodes running as it."""


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
                *(
                    gcp.compute.SubnetworkSecondaryIpRangeArgs(
                        range_name=pods.range_name(team), ip_cidr_range=pods.cidr
                    )
                    for team, pods in network.team_pod_ranges.items()
                ),
            ],
            opts=child,
        )
        self._internal_firewall(name, args, vpc.name)
        self._google_apis_dns(name, args, vpc.id)
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
            source_ranges=[
                args.nodes_cidr,
                args.pods_cidr,
                *(pods.cidr for pods in args.team_pod_ranges.values()),
            ],
            allows=[
                gcp.compute.FirewallAllowArgs(protocol="tcp"),
                gcp.compute.FirewallAllowArgs(protocol="udp"),
                gcp.compute.FirewallAllowArgs(protocol="icmp"),
            ],
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _google_apis_dns(
        self, name: str, args: ClusterNetworkArgs, network: pulumi.Input[str]
    ) -> None:
        """Private zones that resolve Google APIs, Artifact Registry and Container Registry to
        private.googleapis.com's addresses inside the VPC, where the team namespaces'
        NetworkPolicy sends pods' HTTPS (GCP "Configure Private Google Access", DNS
        configuration; Cloud DNS for GKE and the metadata server resolve through the VPC's
        private zones). The subnetwork has Private Google Access, and a created VPC keeps the
        default route to the internet gateway these addresses need."""
        child = pulumi.ResourceOptions(parent=self)
        visibility = gcp.dns.ManagedZonePrivateVisibilityConfigArgs(
            networks=[gcp.dns.ManagedZonePrivateVisibilityConfigNetworkArgs(network_url=network)]
        )
        for domain, address in PRIVATE_GOOGLE_ACCESS_ZONES:
            zone_name = f"{name}-{domain.replace('.', '-')}"
            zone = gcp.dns.ManagedZone(
                zone_name,
                name=truncated(zone_name, GCE_NAME_MAX),
                project=args.project,
                dns_name=f"{domain}.",
                visibility="private",
                private_visibility_config=visibility,
                description=f"{domain} through Private Google Access",
                opts=child,
            )
            records = (
                ("A", address, list(PRIVATE_GOOGLE_ACCESS_ADDRESSES)),
                ("CNAME", f"*.{domain}", [f"{address}."]),
            )
            for kind, record, data in records:
                gcp.dns.RecordSet(
                    f"{zone_name}-{kind.lower()}",
                    project=args.project,
                    managed_zone=zone.name,
                    name=f"{record}.",
                    type=kind,
                    ttl=300,
                    rrdatas=data,
                    opts=child,
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
    """Admit the host-network Pathways ports of one set of pools only from the nodes of that
    set and from the Pods on them, off the host network.

    NetworkPolicy does not govern host-network pods, so these ports on the node IPs are open to
    whatever the VPC firewall admits. Two rules on the set's nodes (targeted by their service
    account, so they also hold on an existing VPC): allow the set's own nodes (source service
    account: it matches a node's primary address, where host-network pods send from) and the
    set's Pod range, then deny everyone else, both ahead of the VPC's own allow rules. Another
    team's host-network pods send from their own nodes' addresses, which run as another
    account, and its other Pods from its own Pod range. A dedicated set's Pods have a range of
    their own (``TeamPodRange``), so the rule admits no Pod of another team even when a
    NetworkPolicy would let one send (the NetworkPolicy a member could write: none, since the
    namespace admission policies keep them the stack's).
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
        rule = truncated(name, GCE_NAME_MAX - len("-allow"))
        gcp.compute.Firewall(
            f"{name}-allow",
            name=f"{rule}-allow",
            project=project,
            network=network,
            direction="INGRESS",
            priority=ALLOW_FROM_CLUSTER_PRIORITY,
            source_ranges=[args.pods_range],
            source_service_accounts=targets,
            target_service_accounts=targets,
            allows=ports,
            description="Pathways host-network ports: nodes of the same pools, and pods",
            opts=child,
        )
        gcp.compute.Firewall(
            f"{name}-deny",
            name=f"{rule}-deny",
            project=project,
            network=network,
            direction="INGRESS",
            priority=DENY_FROM_ELSEWHERE_PRIORITY,
            source_ranges=[ANYWHERE],
            target_service_accounts=targets,
            denies=[gcp.compute.FirewallDenyArgs(protocol="tcp", ports=list(PATHWAYS_PORTS))],
            description="Pathways host-network ports: nobody else (other pools, outside)",
            opts=child,
        )
        self.register_outputs({})


@dataclass(frozen=True)
class ExistingSubnetwork:
    """An existing subnetwork the cluster goes in, as GCP has it (``existing_subnetwork``)."""

    network: str
    name: str
    nodes_range: str
    """Its primary range: the nodes' addresses."""


def existing_subnetwork(
    args: ClusterNetworkArgs,
    network: str | None,
    subnetwork: str | None,
    key: str = "existing_subnetwork",
    opts: pulumi.InvokeOptions | None = None,
) -> ExistingSubnetwork | None:
    """``subnetwork`` of ``network`` as GCP has it, once it has each team's Pod range (by its
    ``TeamPodRange.name``) with the team's addresses; a ConfigError naming every one it lacks
    or has with other addresses otherwise (``look_up_subnetwork``). Blocks until GCP answers:
    call it before registering anything a failed check must stop. None (nothing looked up):
    the cluster's own VPC. ``network`` is the cluster's project's, and ``subnetwork`` is
    looked up there; one of a Shared VPC host is a ConfigError (the cluster would need, there,
    named secondary ranges for its own Pods and Services, and its firewall rules in the host
    project: it makes neither). ``key``: what named ``subnetwork``, in the error when GCP does
    not give it; ``opts``: the lookup's provider (``invoke_options``)."""
    if network is None or subnetwork is None:
        return None
    if (host := network_project(network, args.project)) != args.project:
        message = (
            f"{network!r} is in project {host!r}, not the cluster's {args.project!r}: a Shared "
            f"VPC host's network is not supported; name a network of project {args.project!r}"
        )
        raise ConfigError([ConfigIssue("existing_network", message)], "the cluster's network")
    unnamed = [team for team, pods in args.team_pod_ranges.items() if pods.name is None]
    if unnamed:
        issues = [
            ConfigIssue(
                f"team_pod_ranges[{team!r}].name",
                f"none: on the existing subnetwork {subnetwork!r} a team's Pod range is one of "
                "its secondary ranges, by name",
            )
            for team in unnamed
        ]
        raise ConfigError(issues, "the cluster's network")
    claims = [pods.claim(team) for team, pods in args.team_pod_ranges.items()]
    nodes_range = look_up_subnetwork(args.project, args.region, subnetwork, claims, key, opts)
    return ExistingSubnetwork(network, subnetwork, nodes_range)


@dataclass(frozen=True)
class ClusterNetworking:
    """The network a created cluster runs in: its own VPC, or an existing subnetwork."""

    network: pulumi.Input[str]
    subnetwork: pulumi.Input[str]
    ip_allocation: gcp.container.ClusterIpAllocationPolicyArgs
    nodes_range: pulumi.Input[str]


def cluster_networking(
    name: str,
    args: ClusterNetworkArgs,
    existing: ExistingSubnetwork | None,
    opts: pulumi.ResourceOptions,
) -> ClusterNetworking:
    """The cluster's own ``ClusterNetwork`` with its secondary ranges, or, on an existing
    subnetwork (looked up and its teams' ranges checked: ``existing_subnetwork``), nothing
    created: GKE adds the cluster's Pod and Service ranges (``pods_cidr``, ``services_cidr``)
    to it, and each team's Pod range names a secondary range the subnetwork has."""
    if existing is None:
        network = ClusterNetwork(name, args, opts=opts)
        ip_allocation = gcp.container.ClusterIpAllocationPolicyArgs(
            cluster_secondary_range_name=PODS_RANGE,
            services_secondary_range_name=SERVICES_RANGE,
            additional_pod_ranges_config=_additional_pod_ranges(args.team_pod_ranges),
        )
        return ClusterNetworking(
            network.network_name, network.subnetwork_name, ip_allocation, args.nodes_cidr
        )
    ip_allocation = gcp.container.ClusterIpAllocationPolicyArgs(
        cluster_ipv4_cidr_block=args.pods_cidr,
        services_ipv4_cidr_block=args.services_cidr,
        additional_pod_ranges_config=_additional_pod_ranges(args.team_pod_ranges),
    )
    return ClusterNetworking(existing.network, existing.name, ip_allocation, existing.nodes_range)


def _additional_pod_ranges(
    ranges: Mapping[str, TeamPodRange],
) -> gcp.container.ClusterIpAllocationPolicyAdditionalPodRangesConfigArgs | None:
    """The dedicated pools' Pod ranges, declared on the cluster (GKE's additionalPodRangesConfig:
    its record of the Pod ranges beside its own, which the provider would otherwise see change)."""
    if not ranges:
        return None
    return gcp.container.ClusterIpAllocationPolicyAdditionalPodRangesConfigArgs(
        pod_range_names=[pods.range_name(team) for team, pods in ranges.items()]
    )
