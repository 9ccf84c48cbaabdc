"""The stack config mapped to the components' ``*Args``: the only place a component's inputs
are read from the stack file's model. Each function is one component's mapping."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.addons.data_buckets import DataBucketGrant, DataBucketGrantsArgs
from components.addons.installs import (
    CONTROLLER_PRIORITY_CLASS,
    ControllerPatchArgs,
    ControllerPriorityClass,
    Install,
    ReleaseManifest,
    ReleaseManifestArgs,
)
from components.addons.kueue import (
    DedicatedQueueArgs,
    KueueQueuesArgs,
    LocalQueuesArgs,
    TeamQuotaArgs,
    tpu_flavors,
)
from components.addons.kueue_config import ConfiguredKueue
from components.addons.scratch_bucket import ScratchBucketArgs, TeamNodeAccount, WorkloadAccount
from components.addons.team_isolation import TeamQuota
from components.addons.teams import TeamNamespaceArgs
from components.config.schema import (
    AutoscalingPoolConfig,
    MaintenanceExclusionConfig,
    MaintenanceWindowConfig,
    ReleaseAddon,
    StackConfig,
    TeamConfig,
    TpuPoolConfig,
)
from components.gke.cluster import AuthorizedNetwork, ExistingClusterArgs, GkeClusterArgs
from components.gke.cpu_pool import CpuNodePoolArgs
from components.gke.maintenance import MaintenanceExclusion, MaintenanceWindow
from components.gke.network import TeamPodRange
from components.gke.node_config import PoolTarget
from components.gke.node_identity import ImageRepository
from components.gke.tpu_pool import TpuNodePoolArgs
from components.labels import NODE_POOL_LABEL, SYSTEM_TAINT, SYSTEM_TAINT_EFFECT, SYSTEM_TAINT_VALUE
from components.pathways.controller_model import Toleration
from components.resolve.tenancy.isolation import google_api_egress, placements, team_tpu_chips
from components.resolve.tenancy.pod_ranges import team_pods_cidrs
from components.resolve.tenancy.team_share import ComputeShare, compute_share
from components.resolve.workload_specs import service_queue_name
from components.vocabulary import DnsProvider, GoogleApiEgress, HostNetworkPlacement, Isolation

SYSTEM_POOL_TOLERATION = Toleration(
    SYSTEM_TAINT, value=SYSTEM_TAINT_VALUE, effect=SYSTEM_TAINT_EFFECT
)
"""What the installs' controllers tolerate: the system pool's taint (``cpu_pool_args``)."""


def team_pod_ranges(config: StackConfig) -> dict[str, TeamPodRange]:
    """Each dedicated team's Pod range: its addresses, and on an existing subnetwork the name
    of the secondary range it has there (``teamCpuPools[].podsRange``)."""
    entries = {pool.team: (i, pool.pods_range) for i, pool in enumerate(config.team_cpu_pools)}
    ranges = {}
    for team, cidr in team_pods_cidrs(config).items():
        index, name = entries[team]
        keys = (f"teamCpuPools[{index}].podsRange", f"teamCpuPools[{index}].podsCidr")
        ranges[team] = TeamPodRange(cidr, name, keys)
    return ranges


def gke_cluster_args(config: StackConfig) -> GkeClusterArgs:
    cluster, network = config.cluster, config.cluster.network
    return GkeClusterArgs(
        project=config.gcp.project,
        region=config.gcp.region,
        zone=config.gcp.zone,
        name=cluster.name,
        regional=cluster.regional,
        release_channel=config.release_channel,
        deletion_protection=cluster.deletion_protection,
        private_nodes=config.private_nodes,
        kubernetes_tokens_via_dns=cluster.kubernetes_tokens_via_dns,
        authorized_networks=tuple(
            AuthorizedNetwork(n.cidr, n.display_name) for n in cluster.authorized_networks
        ),
        nodes_cidr=network.nodes_cidr,
        pods_cidr=network.pods_cidr,
        services_cidr=network.services_cidr,
        mtu=network.mtu,
        existing_network=network.existing_network,
        existing_subnetwork=network.existing_subnetwork,
        existing_subnetwork_key="cluster.network.existingSubnetwork",
        maintenance_window=maintenance_window(config.cluster.maintenance.window),
        maintenance_exclusions=tuple(
            maintenance_exclusion(e) for e in config.maintenance_exclusions
        ),
        environment=config.environment,
        team=config.team,
        protect=config.protects_state,
        # the system pool, the CPU pool, the teams' CPU pools, one per TPU slice
        node_pools=2 + len(config.team_cpu_pools) + sum(pool.slices for pool in config.tpu_pools),
        security_group=cluster.security_group,
        secrets_kms_key=cluster.secrets_encryption.kms_key if cluster.secrets_encryption else None,
        binary_authorization=cluster.binary_authorization,
        image_repositories=tuple(image_repository(name) for name in cluster.image_repositories),
        dedicated_teams=tuple(config.dedicated_teams),
        team_pod_ranges=team_pod_ranges(config),
        dns=cluster.dns,
        lustre_csi=bool(config.lustre),
        filestore_csi=config.home_dirs is not None,
        monitoring_components=tuple(c.value for c in config.observability.system_components),
        managed_prometheus=config.observability.managed_prometheus,
        min_master_version=cluster.min_master_version,
    )


def image_repository(name: str) -> ImageRepository:
    """``projects/P/locations/L/repositories/R`` (validated) as the component's value."""
    _, project, _, location, _, repository = name.split("/")
    return ImageRepository(project, location, repository)


def maintenance_window(window: MaintenanceWindowConfig) -> MaintenanceWindow:
    return MaintenanceWindow(window.start_time, window.end_time, window.recurrence)


def maintenance_exclusion(exclusion: MaintenanceExclusionConfig) -> MaintenanceExclusion:
    """An exclusion without an end time lasts until the version's end of support."""
    return MaintenanceExclusion(
        exclusion.name, exclusion.scope, exclusion.start_time, exclusion.end_time
    )


def existing_cluster_args(config: StackConfig) -> ExistingClusterArgs:
    """A cluster named by ``existing.name``/``location``, or a kubeconfig context (reported
    under the stack's cluster name and region)."""
    existing = config.cluster.existing
    assert existing is not None  # the program maps only stacks on an existing cluster here
    return ExistingClusterArgs(
        project=config.gcp.project,
        name=existing.name or config.cluster.name,
        location=existing.location or config.gcp.region,
        kubeconfig_context=existing.kubeconfig_context,
    )


def cpu_pool_args(
    pool: AutoscalingPoolConfig, target: PoolTarget, system: bool = False
) -> CpuNodePoolArgs:
    """A CPU pool; ``system``: the pool of the cluster's controllers (tainted
    ``SYSTEM_TAINT``)."""
    return CpuNodePoolArgs(
        name=pool.name,
        machine_type=pool.machine_type,
        target=target,
        min_nodes=pool.min_nodes,
        max_nodes=pool.max_nodes,
        disk_size_gb=pool.disk_size_gb,
        system=system,
    )


def tpu_pool_args(pool: TpuPoolConfig, target: PoolTarget) -> TpuNodePoolArgs:
    return TpuNodePoolArgs(
        name=pool.name,
        shape=pool.shape,
        target=target,
        slices=pool.slices,
        capacity=pool.capacity.type,
        reservation=pool.capacity.reservation,
    )


def release_args(
    addon: ReleaseAddon, provider: k8s.Provider, depends_on: Sequence[pulumi.Resource]
) -> ReleaseManifestArgs:
    return ReleaseManifestArgs(
        url=addon.url,
        version=addon.version,
        provider=provider,
        depends_on=tuple(depends_on),
        sha256=addon.sha256,
    )


def controller_patch_args(
    config: StackConfig,
    install: Install,
    provider: k8s.Provider,
    release: ReleaseManifest,
    memory_mib: int | None = None,
    configured: ConfiguredKueue | None = None,
    priority: ControllerPriorityClass | None = None,
) -> ControllerPatchArgs | None:
    """A stack that owns its cluster keeps an install's controller on its system pool (GKE labels
    each node with its pool's name; the controller tolerates the pool's taint) at the
    controllers' priority (``priority``, which the patch waits for) unless the install says
    otherwise; on another's cluster the owner decides where they run. A controller that reads a
    configuration only at start (``configured``) is patched after it, with its digest as a pod
    annotation: a new one rolls the pods. None: nothing to change (no placement, no memory, no
    configuration)."""
    on_system_pool = config.creates_cluster and install.system_pool
    if not on_system_pool and memory_mib is None and configured is None:
        return None
    placed = on_system_pool and priority is not None
    return ControllerPatchArgs(
        deployment=install.controller,
        provider=provider,
        install=configured.config_map if configured else release.manifest,
        node_selector={NODE_POOL_LABEL: config.system_pool.name} if on_system_pool else None,
        memory_mib=memory_mib,
        pod_annotations=configured.pod_annotations if configured else None,
        tolerations=(SYSTEM_POOL_TOLERATION,) if on_system_pool else (),
        priority_class=CONTROLLER_PRIORITY_CLASS if placed else None,
        after=(priority.priority_class,) if placed and priority else (),
    )


def team_namespace_args(
    team: TeamConfig,
    provider: k8s.Provider,
    host_network: HostNetworkPlacement | None = None,
    tpu_chips: int | None = None,
    dns: DnsProvider = DnsProvider.CLOUD_DNS,
    google_apis: GoogleApiEgress = GoogleApiEgress.PRIVATE_ACCESS,
    share: ComputeShare | None = None,
) -> TeamNamespaceArgs:
    """A team namespace on a cluster: ``host_network`` where its host-network pods may run
    (default: the shared pools if the team declared isolation: shared, else nowhere),
    ``tpu_chips`` its quota's (default: the team's own setting), the cluster's DNS provider,
    where its pods may send HTTPS, and ``share`` the pods, CPU and memory its quota allows
    unless the team sets them (None: unbounded)."""
    if host_network is None:
        shared = team.isolation is Isolation.SHARED
        host_network = HostNetworkPlacement.SHARED if shared else HostNetworkPlacement.NONE
    return TeamNamespaceArgs(
        name=team.name,
        provider=provider,
        service_account=team.service_account,
        group=team.group,
        quota=team_quota(team, tpu_chips, share),
        host_network=host_network,
        priority_classes=tuple(p.value for p in team.priority_classes),
        dns=dns,
        google_apis=google_apis,
    )


def team_quota(team: TeamConfig, tpu_chips: int | None, share: ComputeShare | None) -> TeamQuota:
    """The team's ResourceQuota limits: each key it sets, else ``tpu_chips`` and ``share``."""
    quota = team.resource_quota

    def chosen(value: int | None, default: int | None) -> int | None:
        return default if value is None else value

    return TeamQuota(
        pods=chosen(quota.pods, share and share.pods),
        cpu=chosen(quota.cpu, share and share.cpu),
        memory_gib=chosen(quota.memory_gib, share and share.memory_gib),
        tpu_chips=chosen(quota.tpu_chips, tpu_chips),
        load_balancers=quota.load_balancers,
        node_ports=quota.node_ports,
        ingresses=quota.ingresses,
    )


def stack_team_namespace_args(
    config: StackConfig,
    team: TeamConfig,
    provider: k8s.Provider,
    host_network: HostNetworkPlacement | None = None,
) -> TeamNamespaceArgs:
    """A team namespace of the stack: its placement among the stack's pools (``host_network``
    overrides it), its share of the chips, pods, CPU and memory, the cluster's DNS and
    egress."""
    return team_namespace_args(
        team,
        provider,
        host_network or placements(config)[team.name],
        team_tpu_chips(config, team),
        config.cluster.dns,
        google_api_egress(config),
        # On a cluster another tool made, the stack does not know its pools (its cpuPool is
        # the schema's default): no share is guessed from them; teams[].resourceQuota sets it.
        compute_share(config, team) if config.creates_cluster or config.owner else None,
    )


def kueue_queues_args(
    config: StackConfig,
    namespaces: Mapping[str, pulumi.Input[str]],
    provider: k8s.Provider,
    kueue_install: pulumi.Resource,
) -> KueueQueuesArgs:
    """The shared pools' flavors and queues, and each dedicated team's own."""
    shared = [pool for pool in config.tpu_pools if pool.team is None]
    return KueueQueuesArgs(
        provider=provider,
        kueue_install=kueue_install,
        cohort=config.cluster.name,
        tpu_flavors=tuple(tpu_flavors((pool.shape, pool.slices) for pool in shared)),
        cpu_pool=config.cpu_pool.name,
        cpu_machine_type=config.cpu_pool.machine_type,
        cpu_max_nodes=config.cpu_pool.max_nodes,
        namespaces=dict(namespaces),
        team_quotas=tuple(
            TeamQuotaArgs(q.team, dict(q.chips), q.borrowing_limit)
            for q in config.addons.kueue.team_quotas
        ),
        service_queues=service_queues(config),
        dedicated=tuple(dedicated_queue_args(config, team) for team in config.dedicated_teams),
        shared_pool_label=bool(config.creates_cluster or config.owner),
    )


def dedicated_queue_args(config: StackConfig, team: str) -> DedicatedQueueArgs:
    cpu = config.team_cpu_pool(team)
    assert cpu is not None  # the isolation checks refuse dedicated TPU pools without one
    pools = [pool for pool in config.tpu_pools if pool.team == team]
    return DedicatedQueueArgs(
        team=team,
        tpu_flavors=tuple(tpu_flavors((pool.shape, pool.slices) for pool in pools)),
        cpu_pool=cpu.name,
        cpu_machine_type=cpu.machine_type,
        cpu_max_nodes=cpu.max_nodes,
    )


def service_queues(config: StackConfig) -> dict[str, str]:
    """Each shared service's LocalQueue (in namespace default) -> the team that owns it."""
    return {service_queue_name(s): s.team for s in config.shared_services}


def local_queues_args(
    config: StackConfig, namespaces: Mapping[str, pulumi.Input[str]], provider: k8s.Provider
) -> LocalQueuesArgs:
    """A team stack's LocalQueues point at the ClusterQueues its owner exports."""
    assert config.shared_cluster is not None  # only team stacks queue on another's Kueue
    queues = config.shared_cluster.queues
    return LocalQueuesArgs(
        provider=provider,
        namespaces=dict(namespaces),
        cluster_queues={team: queues.cluster_queue(team) for team in namespaces},
        service_queues=service_queues(config),
    )


def scratch_bucket_args(
    config: StackConfig,
    cluster_ready: Sequence[pulumi.Resource],
    node_service_account: pulumi.Input[str] | None,
    team_node_accounts: Mapping[str, pulumi.Input[str]] | None = None,
) -> ScratchBucketArgs:
    """Each team's workload account gets its prefix through Workload Identity: the identity of
    its notebooks and of its Pathways pods off the host network (JobSet backend,
    ``hostNetwork: false``); host-network Pathways pods act as the node service account. A
    namespace's ``default`` account gets nothing."""
    bucket = config.scratch_bucket
    return ScratchBucketArgs(
        project=config.gcp.project,
        region=config.gcp.region,
        bucket_name=config.bucket_name,
        create=bucket.create,
        retention_days=bucket.retention_days,
        delete_on_destroy=bucket.delete_on_destroy,
        team=config.team,
        protect=config.protects_state,
        workload_accounts=tuple(
            WorkloadAccount(team.name, team.service_account, config.scratch_prefix(team.name))
            for team in config.teams
        ),
        cluster_ready=tuple(cluster_ready),
        node_service_account=node_service_account,
        team_node_accounts=tuple(
            TeamNodeAccount(team, config.scratch_prefix(team), email)
            for team, email in (team_node_accounts or {}).items()
        ),
    )


def data_bucket_grants_args(
    config: StackConfig, node_service_account: pulumi.Input[str], team: str | None = None
) -> DataBucketGrantsArgs:
    """The stack's ``dataBuckets`` of ``team`` (None: the shared pools'), granted to the account
    the nodes of those pools run as."""
    return DataBucketGrantsArgs(
        node_service_account=node_service_account,
        grants=tuple(
            DataBucketGrant(b.name, b.access) for b in config.data_buckets if b.team == team
        ),
    )
