"""The GKE Standard cluster, and the explicit Kubernetes provider every in-cluster object uses.

``GkeCluster`` creates the cluster (with its network and node service account);
``ExistingCluster`` targets one another stack or XPK made. Both expose the same surface, so
node pools, installs and workloads do not care which one they got.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components.gke.cluster_settings import (
    addons_config,
    authenticator_groups,
    authorized_networks,
    binary_authorization,
    control_plane_endpoints,
    default_pool_node_config,
    dns_config,
    monitoring_config,
    no_service_external_ips,
    private_cluster_config,
    secrets_encryption,
    workload_identity,
)
from components.gke.kubeconfig import gke_kubeconfig
from components.gke.maintenance import (
    MaintenanceExclusion,
    MaintenanceWindow,
    maintenance_policy,
)
from components.gke.network import (
    ClusterNetworkArgs,
    ClusterNetworking,
    ExistingSubnetwork,
    PathwaysPortsFirewall,
    PathwaysPortsFirewallArgs,
    TeamPodRange,
    cluster_networking,
    existing_subnetwork,
)
from components.gke.node_config import PoolTarget
from components.gke.node_identity import (
    ImageRepository,
    NodeServiceAccount,
    NodeServiceAccountArgs,
)
from components.gke.operations import cluster_timeouts
from components.gke.pod_range_check import invoke_options
from components.labels import gcp_resource_labels
from components.vocabulary import (
    DnsProvider,
    Environment,
    ReleaseChannel,
    node_service_account_email,
    team_node_service_account_email,
)

DEFAULT_MAINTENANCE_WINDOW = MaintenanceWindow()


@dataclass(frozen=True)
class AuthorizedNetwork:
    """A CIDR allowed to reach the control plane's IP endpoint."""

    cidr: str
    display_name: str = ""


@dataclass(frozen=True)
class GkeClusterArgs:
    """Inputs of a ``GkeCluster``: where it goes, its network and how it is protected.

    The cluster creates its own VPC (``ClusterNetwork``) unless ``existing_network`` and
    ``existing_subnetwork`` name one; ``pods_cidr`` and ``services_cidr`` are then the
    cluster's own secondary ranges."""

    project: str
    region: str
    zone: str
    """The zone the node pools are in (a zonal cluster's location)."""
    name: str
    """The GKE cluster's name."""
    regional: bool = True
    """A regional control plane (nodes stay in ``zone``)."""
    release_channel: ReleaseChannel = ReleaseChannel.RAPID
    deletion_protection: bool = True
    private_nodes: bool = False
    authorized_networks: Sequence[AuthorizedNetwork] = ()
    kubernetes_tokens_via_dns: bool = False
    """The DNS-based endpoint also takes Kubernetes service-account tokens (GKE's
    enableK8sTokensViaDns); off, it takes Google credentials only."""
    # The network's defaults are ClusterNetwork's.
    nodes_cidr: str = ClusterNetworkArgs.nodes_cidr
    pods_cidr: str = ClusterNetworkArgs.pods_cidr
    services_cidr: str = ClusterNetworkArgs.services_cidr
    mtu: int = ClusterNetworkArgs.mtu
    existing_network: str | None = None
    existing_subnetwork: str | None = None
    existing_subnetwork_key: str = "existing_subnetwork"
    """The key that named ``existing_subnetwork``, in the error when GCP does not give it (the
    stack file's ``cluster.network.existingSubnetwork``)."""
    maintenance_window: MaintenanceWindow = DEFAULT_MAINTENANCE_WINDOW
    """When GKE may upgrade the control plane and nodes."""
    maintenance_exclusions: Sequence[MaintenanceExclusion] = ()
    """Periods (within or across windows) when GKE holds back the upgrades of their scope."""
    environment: Environment = Environment.DEV
    team: str = ""
    """The team label of the cluster (and of its node pools' ``pool_target``)."""
    protect: bool = False
    """Protect the cluster, its network and identity from deletion (production)."""
    node_pools: int = 1
    """How many node pools the stack creates in the cluster: sizes the timeouts of a pool's
    operation queued behind the others, and of a cluster update, which waits for them
    (``operations``)."""
    security_group: str | None = None
    """Google Groups for RBAC: ``gke-security-groups@<domain>`` (None: groups are not read)."""
    secrets_kms_key: str | None = None
    """Cloud KMS key that encrypts Secrets in etcd (None: GKE's default encryption)."""
    binary_authorization: bool = False
    """Enforce the project's Binary Authorization policy on every image."""
    image_repositories: Sequence[ImageRepository] = ()
    """Artifact Registry repositories the nodes may pull from (read on each, nothing more)."""
    dedicated_teams: Sequence[str] = ()
    """Team namespaces the stack dedicates pools to: each gets its own node service account
    and Pathways ports firewall."""
    team_pod_ranges: Mapping[str, TeamPodRange] = field(default_factory=dict)
    """Dedicated team -> the Pod range of its pools (a secondary range of the subnetwork: one
    the stack creates, or on an existing subnetwork one it has, by name), the only Pods its
    Pathways ports admit (absent: the cluster's)."""
    dns: DnsProvider = DnsProvider.CLOUD_DNS
    """The cluster's DNS provider."""
    lustre_csi: bool = False
    """Enable GKE's Managed Lustre CSI driver."""
    filestore_csi: bool = False
    """Enable GKE's Filestore CSI driver."""
    monitoring_components: Sequence[str] = ()
    """GKE metric packages (SYSTEM_COMPONENTS, POD, DEPLOYMENT, JOBSET, ...); none: GKE's."""
    managed_prometheus: bool | None = None
    """Managed Service for Prometheus on or off (None: GKE's default)."""
    min_master_version: str | None = None
    """The lowest GKE version of the control plane (None: the release channel's default)."""

    @property
    def location(self) -> str:
        """The cluster's location: its region, or its zone when zonal."""
        return self.region if self.regional else self.zone


@dataclass(frozen=True)
class ExistingClusterArgs:
    """Inputs of an ``ExistingCluster``: either ``kubeconfig_context`` (a context of the
    user's kubeconfig), or ``name`` + ``location`` of a GKE cluster in ``project``."""

    project: str
    name: str
    """The GKE cluster's name (also reported as ``cluster_name`` for a context)."""
    location: str
    """Its region or zone (reported as ``location`` for a context)."""
    kubeconfig_context: str | None = None


class ClusterTarget(pulumi.ComponentResource):
    """What the rest of the program needs from a cluster, created or existing."""

    cluster_name: pulumi.Output[str]
    location: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider
    # The resources in-cluster installs must wait for (the control plane, not node pools).
    control_plane: list[pulumi.Resource]

    def _finish(self) -> None:
        self.register_outputs(
            {
                "cluster_name": self.cluster_name,
                "location": self.location,
                "endpoint": self.endpoint,
                "kubeconfig": self.kubeconfig,
            }
        )

    def _make_provider(self, name: str, kubeconfig: pulumi.Input[str] | None, context=None):
        # server-side apply: the JobSet and PathwaysJob CRDs are too large for client-side apply.
        return k8s.Provider(
            f"{name}-k8s",
            kubeconfig=kubeconfig,
            context=context,
            enable_server_side_apply=True,
            opts=pulumi.ResourceOptions(parent=self),
        )


class GkeCluster(ClusterTarget):
    """A VPC-native GKE Standard cluster shaped for TPU + Pathways (as XPK builds it)."""

    node_service_account: pulumi.Output[str]

    def __init__(self, name: str, args: GkeClusterArgs, opts: pulumi.ResourceOptions | None = None):
        # Before this component registers, so that a failed check of the teams' Pod ranges on
        # an existing subnetwork leaves nothing of the stack created (``pod_range_check``).
        network_args = _network_args(args)
        existing = _existing_subnetwork(network_args, args, invoke_options(opts))
        super().__init__("tpu-pathways:cluster:GkeCluster", name, None, opts)
        project, location = args.project, args.location
        self._args = args
        # Production protects what the cluster stands on; children inherit it from the component.
        protected = pulumi.ResourceOptions(parent=self, protect=args.protect)
        network = cluster_networking(f"{name}-net", network_args, existing, protected)
        node_sa = NodeServiceAccount(
            f"{name}-nodes",
            NodeServiceAccountArgs(project, args.name, args.image_repositories),
            opts=protected,
        )
        team_accounts = {
            team: NodeServiceAccount(
                f"{name}-{team}-nodes",
                NodeServiceAccountArgs(project, args.name, args.image_repositories, team=team),
                opts=protected,
            )
            for team in args.dedicated_teams
        }
        sets = [("", node_sa, args.pods_cidr)]
        sets += [(f"{t}-", a, _pods_cidr(args, t)) for t, a in team_accounts.items()]
        for prefix, account, pods in sets:
            PathwaysPortsFirewall(
                f"{name}-{prefix}pathways-ports",
                PathwaysPortsFirewallArgs(
                    project=project,
                    network=network.network,
                    pods_range=pods,
                    node_service_account=account.email,
                ),
                opts=protected,
            )
        cluster = self._cluster(name, args, network, node_sa.email)
        dns_endpoint = cluster.control_plane_endpoints_config.apply(
            lambda c: c.dns_endpoint_config.endpoint if c and c.dns_endpoint_config else None
        )
        self.cluster_name = cluster.name
        self.location = cluster.location
        self.endpoint = dns_endpoint
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(cluster.name, dns_endpoint).apply(
                lambda args: gke_kubeconfig(f"gke_{project}_{location}_{args[0]}", args[1])
            )
        )
        self.node_service_account = node_sa.email
        # The VPC (name) and the nodes' range: what file systems in it are reached through.
        self.network = pulumi.Output.from_input(network.network)
        self.nodes_range = pulumi.Output.from_input(network.nodes_range)
        self.control_plane = [cluster]
        self._pool_dependencies = (cluster, node_sa.account)
        self._team_accounts = {team: a.account for team, a in team_accounts.items()}
        self.provider = self._make_provider(name, self.kubeconfig)
        self._finish()

    def _cluster(
        self,
        name: str,
        args: GkeClusterArgs,
        network: ClusterNetworking,
        node_service_account: pulumi.Input[str],
    ) -> gcp.container.Cluster:
        return gcp.container.Cluster(
            name,
            name=args.name,
            project=args.project,
            location=args.location,
            node_locations=[args.zone] if args.regional else None,
            deletion_protection=args.deletion_protection,
            # Pulumi's way to get a cluster without GKE's default pool: create one node, drop it.
            remove_default_node_pool=True,
            initial_node_count=1,
            node_config=default_pool_node_config(node_service_account),
            release_channel=gcp.container.ClusterReleaseChannelArgs(
                channel=args.release_channel.value
            ),
            network=network.network,
            subnetwork=network.subnetwork,
            networking_mode="VPC_NATIVE",
            ip_allocation_policy=network.ip_allocation,
            datapath_provider="ADVANCED_DATAPATH",  # Dataplane V2
            # v6e pools use accelerator_network_profile "auto" (extra NICs through GKE's
            # networking DRA driver), which needs a multi-networking cluster. Every cluster has
            # it from the start, so adding a v6e pool never has to change the cluster, as XPK
            # 1.16 creates every cluster (xpk commands/cluster.py: --enable-multi-networking in
            # run_gke_cluster_create_command). Multi-networking requires Dataplane V2 (above).
            enable_multi_networking=True,
            maintenance_policy=maintenance_policy(
                args.maintenance_window, args.maintenance_exclusions
            ),
            workload_identity_config=workload_identity(args.project),
            addons_config=addons_config(args.lustre_csi, args.filestore_csi),
            dns_config=dns_config(args.dns),
            monitoring_config=monitoring_config(
                args.monitoring_components, args.managed_prometheus
            ),
            min_master_version=args.min_master_version,
            control_plane_endpoints_config=control_plane_endpoints(
                args.authorized_networks, args.kubernetes_tokens_via_dns
            ),
            private_cluster_config=private_cluster_config(args.private_nodes),
            master_authorized_networks_config=authorized_networks(args.authorized_networks),
            enable_shielded_nodes=True,
            enable_legacy_abac=False,
            service_external_ips_config=no_service_external_ips(),
            authenticator_groups_config=authenticator_groups(args.security_group),
            database_encryption=secrets_encryption(args.secrets_kms_key),
            binary_authorization=binary_authorization(args.binary_authorization),
            resource_labels=gcp_resource_labels(args.team, environment=args.environment.value),
            opts=self._cluster_options(args),
        )

    def _cluster_options(self, args: GkeClusterArgs) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(
            parent=self,
            protect=args.protect,
            # node_config only shapes the temporary default pool; changing it would
            # otherwise replace the whole cluster.
            ignore_changes=["nodeConfig", "initialNodeCount"],
            custom_timeouts=pulumi.CustomTimeouts(**cluster_timeouts(args.node_pools).as_strings()),
        )

    def pool_target(self, dedicated_to: str = "") -> PoolTarget:
        """Where this cluster's node pools go, and what their nodes run as: the shared pools'
        account, or that of the pools dedicated to a team namespace."""
        args = self._args
        account = node_service_account_email(args.project, args.name)
        created_first = self._pool_dependencies
        pod_range = None
        if dedicated_to:
            account = team_node_service_account_email(args.project, args.name, dedicated_to)
            created_first = (created_first[0], self._team_accounts[dedicated_to])
            if pods := args.team_pod_ranges.get(dedicated_to):
                # On an existing subnetwork, found there before the cluster registered.
                pod_range = pods.range_name(dedicated_to)
        return PoolTarget(
            project=args.project,
            region=args.region,
            zone=args.zone,
            cluster_name=args.name,
            location=args.location,
            service_account=account,
            created_first=created_first,
            team=args.team,
            dedicated_to=dedicated_to,
            pod_range=pod_range,
            protect=args.protect,
            node_pools=args.node_pools,
        )

    def team_node_service_accounts(self) -> dict[str, pulumi.Output[str]]:
        """The node service account of each team namespace's dedicated pools (email)."""
        return {team: account.email for team, account in self._team_accounts.items()}


def _pods_cidr(args: GkeClusterArgs, team: str) -> str:
    """The Pod addresses a dedicated team's Pathways ports admit: its own range's (on an existing
    subnetwork, found there with them before the cluster registered), else the cluster's."""
    pods = args.team_pod_ranges.get(team)
    return args.pods_cidr if pods is None else pods.cidr


def _existing_subnetwork(
    network: ClusterNetworkArgs, args: GkeClusterArgs, opts: pulumi.InvokeOptions
) -> ExistingSubnetwork | None:
    """Looked up with the gcp provider the cluster's resources get (``invoke_options``)."""
    existing = args.existing_network, args.existing_subnetwork, args.existing_subnetwork_key
    return existing_subnetwork(network, *existing, opts=opts)


def _network_args(args: GkeClusterArgs) -> ClusterNetworkArgs:
    return ClusterNetworkArgs(
        project=args.project,
        region=args.region,
        nodes_cidr=args.nodes_cidr,
        pods_cidr=args.pods_cidr,
        services_cidr=args.services_cidr,
        team_pod_ranges=dict(args.team_pod_ranges),
        mtu=args.mtu,
        private_nodes=args.private_nodes,
    )


class ExistingCluster(ClusterTarget):
    """A cluster this stack does not own: only the provider that reaches it is created."""

    def __init__(
        self, name: str, args: ExistingClusterArgs, opts: pulumi.ResourceOptions | None = None
    ):
        super().__init__("tpu-pathways:cluster:ExistingCluster", name, None, opts)
        existing = args
        if existing.kubeconfig_context is not None:
            self.cluster_name = pulumi.Output.from_input(args.name)
            self.location = pulumi.Output.from_input(args.location)
            self.endpoint = pulumi.Output.from_input(
                f"kubeconfig context {existing.kubeconfig_context}"
            )
            self.kubeconfig = pulumi.Output.secret("")
            self.provider = self._make_provider(name, None, context=existing.kubeconfig_context)
        else:
            found = gcp.container.get_cluster_output(
                name=existing.name, location=existing.location, project=args.project
            )
            dns_endpoint = found.control_plane_endpoints_configs.apply(
                lambda cs: cs[0].dns_endpoint_configs[0].endpoint
            )
            self.cluster_name = found.name
            self.location = found.location
            self.endpoint = dns_endpoint
            context = f"gke_{args.project}_{existing.location}_{existing.name}"
            self.kubeconfig = pulumi.Output.secret(
                dns_endpoint.apply(lambda endpoint: gke_kubeconfig(context, endpoint))
            )
            self.provider = self._make_provider(name, self.kubeconfig)
        self.control_plane = []
        self._finish()
