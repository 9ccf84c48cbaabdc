"""The stack's storage as components: each team's bucket grants (``TeamBucketGrants``), its
Managed Lustre file systems (``ManagedLustre``) and its teams' home shares (``FilestoreHomes``).
``build_storage`` returns what a workload that mounts them waits for."""

from __future__ import annotations

from collections.abc import Mapping

import pulumi

from components.addons.file_systems import (
    FilestoreHomes,
    FilestoreHomesArgs,
    HomeShare,
    LustreSystem,
    ManagedLustre,
    ManagedLustreArgs,
)
from components.addons.storage import TeamBucket, TeamBucketGrants, TeamBucketGrantsArgs
from components.config.schema import StackConfig
from components.gke.cluster import ClusterTarget, GkeCluster
from components.labels import gcp_resource_labels
from components.resolve.storage import teams_of_home_dirs
from components.vocabulary import home_instance_name, lustre_instance_id


def team_bucket_grants_args(
    config: StackConfig, cluster_ready: list[pulumi.Resource]
) -> TeamBucketGrantsArgs:
    return TeamBucketGrantsArgs(
        project=config.gcp.project,
        grants=tuple(
            TeamBucket(team.name, team.service_account, b.name, b.access, b.prefix)
            for team in config.teams
            for b in team.buckets
        ),
        cluster_ready=tuple(cluster_ready),
    )


def lustre_args(
    config: StackConfig, cluster: GkeCluster, namespaces: Mapping[str, pulumi.Input[str]]
) -> ManagedLustreArgs:
    name = config.cluster.name
    return ManagedLustreArgs(
        project=config.gcp.project,
        zone=config.gcp.zone,
        network=cluster.network,
        node_service_account=cluster.node_service_account,
        systems=tuple(
            LustreSystem(
                name=system.name,
                instance_id=lustre_instance_id(name, system.name),
                filesystem=system.filesystem_name,
                capacity_gib=system.capacity,
                throughput=system.throughput.value,
                namespaces={team: namespaces[team] for team in system.teams},
                peering_range=system.peering_range,
            )
            for system in config.lustre
        ),
        provider=cluster.provider,
        labels=gcp_resource_labels(config.team, purpose="pathways-checkpoints"),
        protect=config.protects_state,
    )


def filestore_args(
    config: StackConfig, cluster: GkeCluster, namespaces: Mapping[str, pulumi.Input[str]]
) -> FilestoreHomesArgs:
    homes = config.home_dirs
    assert homes is not None  # mapped only when the stack has home shares
    return FilestoreHomesArgs(
        project=config.gcp.project,
        region=config.gcp.region,
        zone=config.gcp.zone,
        network=cluster.network,
        nodes_range=cluster.nodes_range,
        shares=tuple(
            HomeShare(team, home_instance_name(config.cluster.name, team), namespaces[team])
            for team in teams_of_home_dirs(config)
        ),
        provider=cluster.provider,
        tier=homes.tier,
        capacity_gib=homes.capacity_gib,
        labels=gcp_resource_labels(config.team, purpose="pathways-home"),
        protect=config.protects_state,
    )


def build_storage(
    config: StackConfig,
    cluster: ClusterTarget,
    namespaces: Mapping[str, pulumi.Input[str]],
    within: pulumi.ResourceOptions | None = None,
) -> list[pulumi.Resource]:
    """Team bucket grants, Lustre and home shares (``within``: ``build_stack``'s options);
    what workloads wait for."""
    name = config.cluster.name
    ready: list[pulumi.Resource] = []
    if any(team.buckets for team in config.teams):
        grants_args = team_bucket_grants_args(config, cluster.control_plane)
        ready += TeamBucketGrants(f"{name}-team-buckets", grants_args, within).grants
    if isinstance(cluster, GkeCluster) and config.lustre:
        lustre = lustre_args(config, cluster, namespaces)
        ready += ManagedLustre(f"{name}-lustre", lustre, within).claims
    if isinstance(cluster, GkeCluster) and config.home_dirs is not None:
        homes = filestore_args(config, cluster, namespaces)
        ready += FilestoreHomes(f"{name}-homes", homes, within).claims
    return ready
