"""File systems in the stack's VPC, each reached from a team's namespace through a claim
(``storage.team_claim``): Managed Lustre for high-throughput checkpoints (``ManagedLustre``) and
a Filestore share per team for home directories (``FilestoreHomes``).

Managed Lustre (docs.cloud.google.com/managed-lustre and GKE "Access Managed Lustre instances",
read 2026-11): an instance is reached through the VPC's Private Services Access, a range reserved
for ``servicenetworking.googleapis.com`` and one peering connection listing every such range of
the network; the nodes must accept the Lustre servers' traffic on TCP 988 from that range (6988,
the legacy port, only for nodes before 1.33.2-gke.4655000 or instances created with GKE
support, which these are not). GKE's driver mounts a static PersistentVolume whose volumeHandle
is ``<project>/<location>/<instance>`` and whose attributes are the instance's IP and file
system name (``mount_point`` is ``<ip>@tcp:/<fs>``).

Filestore (GKE "Access Filestore instances with the Filestore CSI driver"): a static volume's
handle is ``modeInstance/<location>/<instance>/<share>`` with the instance's IP and share name.
NFS is mounted by the kubelet, so what reaches an instance is a node's address: the exports admit
the nodes' range (``nodes_range``), read-write, with root as root (Pathways containers run as
root). A team's share is its own instance, claimed from its namespace only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components.addons.storage import ClaimedVolume, team_claim
from components.vocabulary import HOME_CLAIM, FilestoreTier, lustre_claim

LUSTRE_DRIVER = "lustre.csi.storage.gke.io"
FILESTORE_DRIVER = "filestore.csi.storage.gke.io"
LUSTRE_PORT = "988"
HOME_SHARE = "home"
# Tiers whose instances are regional (a region as location); the others are zonal.
REGIONAL_TIERS = (FilestoreTier.REGIONAL, FilestoreTier.ENTERPRISE)


def network_path(project: str, network: pulumi.Input[str]) -> pulumi.Output[str]:
    return pulumi.Output.from_input(network).apply(
        lambda n: n if n.startswith("projects/") else f"projects/{project}/global/networks/{n}"
    )


@dataclass(frozen=True)
class LustreSystem:
    """One Managed Lustre instance and the namespaces (by team) that get a claim of it."""

    name: str
    instance_id: str
    filesystem: str
    capacity_gib: int
    throughput: int
    namespaces: Mapping[str, pulumi.Input[str]]
    peering_range: str | None = None


@dataclass(frozen=True)
class ManagedLustreArgs:
    """Inputs of ``ManagedLustre``: where (project, zone, the VPC by name or path), the nodes'
    service account (the firewall rule's target), the instances."""

    project: str
    zone: str
    network: pulumi.Input[str]
    node_service_account: pulumi.Input[str]
    systems: Sequence[LustreSystem]
    provider: k8s.Provider
    labels: Mapping[str, str] = field(default_factory=dict)
    protect: bool = False


class ManagedLustre(pulumi.ComponentResource):
    """Private Services Access for the VPC, the Lustre instances, the nodes' firewall rule and
    each team's claim; ``claims`` is what a workload mounting them waits for."""

    claims: list[pulumi.Resource]

    def __init__(
        self, name: str, args: ManagedLustreArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:storage:ManagedLustre", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, protect=args.protect)
        network = network_path(args.project, args.network)
        ranges = [self._range(name, s, args.project, network, child) for s in args.systems]
        peering = gcp.servicenetworking.Connection(
            f"{name}-psa",
            network=network,
            service="servicenetworking.googleapis.com",
            reserved_peering_ranges=[r.name for r in ranges],
            opts=child,
        )
        gcp.compute.Firewall(
            f"{name}-lustre-to-nodes",
            gcp.compute.FirewallArgs(
                project=args.project,
                network=network,
                direction="INGRESS",
                source_ranges=[
                    pulumi.Output.concat(r.address, "/", r.prefix_length.apply(str)) for r in ranges
                ],
                target_service_accounts=[args.node_service_account],
                allows=[gcp.compute.FirewallAllowArgs(protocol="tcp", ports=[LUSTRE_PORT])],
                description="Managed Lustre servers to the cluster's nodes (TCP 988)",
            ),
            opts=child,
        )
        self.claims = []
        for system in args.systems:
            instance = gcp.lustre.Instance(
                f"{name}-{system.name}",
                gcp.lustre.InstanceArgs(
                    project=args.project,
                    location=args.zone,
                    instance_id=system.instance_id,
                    filesystem=system.filesystem,
                    capacity_gib=str(system.capacity_gib),
                    per_unit_storage_throughput=str(system.throughput),
                    network=network,
                    labels=dict(args.labels),
                    deletion_policy="PREVENT" if args.protect else None,
                ),
                opts=pulumi.ResourceOptions.merge(
                    child, pulumi.ResourceOptions(depends_on=[peering])
                ),
            )
            self.claims += self._claims(name, system, instance, args)
        self.register_outputs({})

    def _range(
        self,
        name: str,
        system: LustreSystem,
        project: str,
        network: pulumi.Input[str],
        child: pulumi.ResourceOptions,
    ) -> gcp.compute.GlobalAddress:
        address, prefix = (system.peering_range or "/20").split("/")
        return gcp.compute.GlobalAddress(
            f"{name}-{system.name}-range",
            gcp.compute.GlobalAddressArgs(
                project=project,
                purpose="VPC_PEERING",
                address_type="INTERNAL",
                address=address or None,
                prefix_length=int(prefix),
                network=network,
                description=f"Private Services Access range of Managed Lustre {system.name}",
            ),
            opts=child,
        )

    def _claims(
        self,
        name: str,
        system: LustreSystem,
        instance: gcp.lustre.Instance,
        args: ManagedLustreArgs,
    ) -> list[pulumi.Resource]:
        csi = {
            "driver": LUSTRE_DRIVER,
            "volume_handle": f"{args.project}/{args.zone}/{system.instance_id}",
            "volume_attributes": {
                "ip": instance.mount_point.apply(lambda m: m.split("@")[0]),
                "filesystem": system.filesystem,
            },
        }
        return [
            team_claim(
                f"{name}-{system.name}-{team}",
                ClaimedVolume(
                    f"{system.instance_id}-{team}",
                    namespace,
                    lustre_claim(system.name),
                    system.capacity_gib,
                    csi,
                ),
                args.provider,
                self,
            )
            for team, namespace in sorted(system.namespaces.items())
        ]


@dataclass(frozen=True)
class HomeShare:
    """A team's Filestore instance name and namespace."""

    team: str
    instance: str
    namespace: pulumi.Input[str]


@dataclass(frozen=True)
class FilestoreHomesArgs:
    """Inputs of ``FilestoreHomes``: one share per team of ``capacity_gib`` on ``tier``."""

    project: str
    region: str
    zone: str
    network: pulumi.Input[str]
    nodes_range: pulumi.Input[str]
    shares: Sequence[HomeShare]
    provider: k8s.Provider
    tier: FilestoreTier = FilestoreTier.BASIC_HDD
    capacity_gib: int = 1024
    labels: Mapping[str, str] = field(default_factory=dict)
    protect: bool = False

    @property
    def location(self) -> str:
        return self.region if self.tier in REGIONAL_TIERS else self.zone


class FilestoreHomes(pulumi.ComponentResource):
    """A Filestore instance per team and its claim ``home``; ``claims`` is what a workload
    mounting them waits for."""

    claims: list[pulumi.Resource]

    def __init__(
        self, name: str, args: FilestoreHomesArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:storage:FilestoreHomes", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, protect=args.protect)
        self.claims = []
        for share in args.shares:
            instance = gcp.filestore.Instance(
                f"{name}-{share.team}",
                gcp.filestore.InstanceArgs(
                    project=args.project,
                    name=share.instance,
                    location=args.location,
                    tier=args.tier.value,
                    file_shares=gcp.filestore.InstanceFileSharesArgs(
                        name=HOME_SHARE,
                        capacity_gb=args.capacity_gib,
                        nfs_export_options=[
                            gcp.filestore.InstanceFileSharesNfsExportOptionArgs(
                                ip_ranges=[args.nodes_range],
                                access_mode="READ_WRITE",
                                squash_mode="NO_ROOT_SQUASH",
                            )
                        ],
                    ),
                    networks=[
                        gcp.filestore.InstanceNetworkArgs(network=args.network, modes=["MODE_IPV4"])
                    ],
                    deletion_protection_enabled=args.protect,
                    labels=dict(args.labels),
                ),
                opts=child,
            )
            ip = instance.networks.apply(lambda n: n[0].ip_addresses[0])
            csi = {
                "driver": FILESTORE_DRIVER,
                "volume_handle": f"modeInstance/{args.location}/{share.instance}/{HOME_SHARE}",
                "volume_attributes": {"ip": ip, "volume": HOME_SHARE},
            }
            volume = ClaimedVolume(
                share.instance, share.namespace, HOME_CLAIM, args.capacity_gib, csi
            )
            self.claims.append(team_claim(f"{name}-{share.team}", volume, args.provider, self))
        self.register_outputs({})
