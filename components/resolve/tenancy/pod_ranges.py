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
not the alias ranges Pods get). Pure: the config in, the ranges and the problems out.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from components.config.schema import StackConfig
from components.config.schema.pools import TeamCpuPoolConfig
from components.errors import ConfigIssue
from components.resolve.capacity import pod_range_problem

DEDICATED_PODS_BLOCK = ipaddress.ip_network("10.16.0.0/12")
"""Where the default ranges are carved from (beside the network's default node, Pod and
Service ranges, 10.0.0.0/20, 10.4.0.0/14 and 10.8.0.0/20)."""
DEDICATED_PODS_PREFIX = 16
"""A default range's size: 256 nodes at GKE's /24 per node (110 Pods per node)."""


_DEFAULT_RANGES = tuple(
    str(r) for r in DEDICATED_PODS_BLOCK.subnets(new_prefix=DEDICATED_PODS_PREFIX)
)


def _team_ranges(config: StackConfig) -> Iterator[tuple[int, TeamCpuPoolConfig, str | None]]:
    """Each team CPU pool with its index and its Pod range: its own, else the default of its
    place (None: the default block is used up)."""
    for index, pool in enumerate(config.team_cpu_pools):
        default = _DEFAULT_RANGES[index] if index < len(_DEFAULT_RANGES) else None
        yield index, pool, pool.pods_cidr or default


def team_pods_cidrs(config: StackConfig) -> dict[str, str]:
    """The Pod range of each team with a dedicated CPU pool (every dedicated team has one),
    in teamCpuPools order."""
    return {pool.team: cidr for _, pool, cidr in _team_ranges(config) if cidr is not None}


def pod_range_issues(config: StackConfig) -> list[ConfigIssue]:
    """Each dedicated set's range: given where the default block is used up, overlapping
    neither the network's ranges nor another set's, and large enough for the nodes of the
    team's pools (its CPU pool and its TPU pools share it), in a stack that creates its
    cluster."""
    if not config.creates_cluster:
        return []
    network = config.cluster.network
    taken = {
        "cluster.network.nodesCidr": network.nodes_cidr,
        "cluster.network.podsCidr": network.pods_cidr,
        "cluster.network.servicesCidr": network.services_cidr,
    }
    issues = []
    for index, pool, cidr in _team_ranges(config):
        key = f"teamCpuPools[{index}].podsCidr"
        if cidr is None:
            issues.append(
                ConfigIssue(
                    key, f"required beyond the first {len(_DEFAULT_RANGES)} teams' CPU pools"
                )
            )
            continue
        shown = f"{cidr!r}" if pool.pods_cidr else f"its default {cidr!r}"
        net = ipaddress.ip_network(cidr)
        clash = next((k for k, v in taken.items() if ipaddress.ip_network(v).overlaps(net)), None)
        if clash is not None:
            message = f"{shown} overlaps {clash} {taken[clash]!r}; set it to a free range"
            issues.append(ConfigIssue(key, message))
        elif problem := pod_range_problem(cidr, _team_nodes(config, pool)):
            issues.append(ConfigIssue(key, problem))
        taken[key] = cidr
    return issues


def _team_nodes(config: StackConfig, pool: TeamCpuPoolConfig) -> int:
    """The most nodes that take their Pods' addresses from ``pool``'s range: the team's CPU
    pool and the TPU pools dedicated to the team."""
    tpu = (p.slices * p.shape.hosts for p in config.tpu_pools if p.team == pool.team)
    return pool.max_nodes + sum(tpu)
