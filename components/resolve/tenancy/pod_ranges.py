"""The Pod range of each set of pools dedicated to a team: the Pathways ports of those pools
admit Pods from it alone (``gke.network.PathwaysPortsFirewall``), so no Pod of another team,
whatever NetworkPolicy it is under, reaches them.

GKE gives a node pool's Pods their addresses from a secondary range of the cluster's
subnetwork of its own (the node pool's ``networkConfig.podRange``: pulumi-gcp 10.2
``container.NodePoolNetworkConfigArgs.pod_range``, "uses an existing secondary range with this
ID"; the GKE API's NodeNetworkConfig: "If neither create_pod_range or pod_range are specified,
the cluster-level default is used"; fixed at the pool's creation), which the pools of one team
share. Chosen over a narrower firewall rule on the cluster's range: no other source tells a
team's Pods apart (a firewall's source service account matches a VM's primary address only,
not the alias ranges Pods get). On an existing subnetwork the stack adds no secondary range
(the cluster's own Pod and Service ranges are GKE's to add there), so each dedicated team names
the range its owner made (``teamCpuPools[].podsRange``) and its addresses (``podsCidr``, which
the firewall admits); the pools then take it by name, without ``create_pod_range``. Pure: the
config in, the ranges and the problems out.
"""

from __future__ import annotations

from components.config.schema import StackConfig
from components.config.schema.pools import TeamCpuPoolConfig
from components.errors import ConfigIssue
from components.resolve.capacity import pod_range_problem
from components.resolve.network_ranges import (
    DEFAULT_TEAM_RANGES,
    earlier_overlap,
    taken_ranges,
    team_ranges,
)
from components.vocabulary import team_pods_range


def team_pods_cidrs(config: StackConfig) -> dict[str, str]:
    """The Pod range of each team with a dedicated CPU pool (every dedicated team has one),
    in teamCpuPools order."""
    return {pool.team: cidr for _, pool, cidr in team_ranges(config) if cidr is not None}


def pod_range_issues(config: StackConfig) -> list[ConfigIssue]:
    """Each dedicated set's range: named where the subnetwork is not the stack's, given where
    the default block is used up, overlapping neither the network's ranges nor another set's,
    and large enough for the nodes of the team's pools (its CPU pool and its TPU pools share
    it), in a stack that creates its cluster."""
    if not config.creates_cluster:
        return []
    issues = _existing_subnetwork_issues(config)
    taken = taken_ranges(config)
    for index, pool, cidr in team_ranges(config):
        key = f"teamCpuPools[{index}].podsCidr"
        if cidr is None:
            if config.cluster.network.create:
                message = f"required beyond the first {len(DEFAULT_TEAM_RANGES)} teams' CPU pools"
                issues.append(ConfigIssue(key, message))
            continue
        shown = f"{cidr!r}" if pool.pods_cidr else f"its default {cidr!r}"
        if clash := earlier_overlap(taken, key):
            message = f"{shown} overlaps {clash.described}; set it to a free range"
            issues.append(ConfigIssue(key, message))
        elif problem := pod_range_problem(cidr, _team_nodes(config, pool)):
            issues.append(ConfigIssue(key, problem))
    return issues


def _existing_subnetwork_issues(config: StackConfig) -> list[ConfigIssue]:
    """On an existing subnetwork, each dedicated team names its secondary range and gives its
    addresses; on the stack's own, the stack names the ranges it creates."""
    subnetwork = config.cluster.network.existing_subnetwork
    issues = _shared_range_names(config)
    for index, pool in enumerate(config.team_cpu_pools):
        key = f"teamCpuPools[{index}]"
        if subnetwork is None:
            if pool.pods_range is not None:
                issues.append(
                    ConfigIssue(
                        f"{key}.podsRange",
                        f"{pool.pods_range!r} names a range of an existing subnetwork, allowed "
                        "only with cluster.network.existingSubnetwork; the subnetwork the "
                        f"stack creates gets the range {team_pods_range(pool.team)}: remove "
                        "podsRange",
                    )
                )
            continue
        where = f"on the existing subnetwork {subnetwork!r} (cluster.network.existingSubnetwork)"
        if pool.pods_range is None:
            issues.append(
                ConfigIssue(
                    f"{key}.podsRange",
                    f"required {where}, to which the stack adds no range: the name of the "
                    f"secondary range the pools of team {pool.team!r} give their Pods "
                    "addresses from; add it to the subnetwork first",
                )
            )
        if pool.pods_cidr is None:
            issues.append(
                ConfigIssue(
                    f"{key}.podsCidr",
                    f"required {where}: the addresses of the secondary range podsRange names, "
                    f"the only Pods the Pathways ports of the pools of team {pool.team!r} "
                    "admit (the default ranges are for a subnetwork the stack creates)",
                )
            )
    return issues


def _shared_range_names(config: StackConfig) -> list[ConfigIssue]:
    """Two teams never name one secondary range: their Pods would take addresses from it
    alike, and each team's Pathways ports, admitting its own podsCidr, would admit the other's
    Pods or none of its own."""
    issues, first = [], {}
    for index, pool in enumerate(config.team_cpu_pools):
        if pool.pods_range is None:
            continue
        if pool.pods_range in first:
            earlier = first[pool.pods_range]
            issues.append(
                ConfigIssue(
                    f"teamCpuPools[{index}].podsRange",
                    f"{pool.pods_range!r} is teamCpuPools[{earlier}].podsRange already: each "
                    "dedicated team's Pods need a secondary range of their own",
                )
            )
        first.setdefault(pool.pods_range, index)
    return issues


def _team_nodes(config: StackConfig, pool: TeamCpuPoolConfig) -> int:
    """The most nodes that take their Pods' addresses from ``pool``'s range: the team's CPU
    pool and the TPU pools dedicated to the team."""
    tpu = (p.slices * p.shape.hosts for p in config.tpu_pools if p.team == pool.team)
    return pool.max_nodes + sum(tpu)
