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

from components.config.schema import StackConfig
from components.errors import ConfigIssue

DEDICATED_PODS_BLOCK = ipaddress.ip_network("10.16.0.0/12")
"""Where the default ranges are carved from (beside the network's default node, Pod and
Service ranges, 10.0.0.0/20, 10.4.0.0/14 and 10.8.0.0/20)."""
DEDICATED_PODS_PREFIX = 16
"""A default range's size: 256 nodes at GKE's /24 per node (110 Pods per node)."""


def default_pods_cidr(index: int) -> str | None:
    """The default range of the ``index``-th team CPU pool (None: the block is used up)."""
    ranges = list(DEDICATED_PODS_BLOCK.subnets(new_prefix=DEDICATED_PODS_PREFIX))
    return str(ranges[index]) if index < len(ranges) else None


def team_pods_cidrs(config: StackConfig) -> dict[str, str]:
    """The Pod range of each team with a dedicated CPU pool (every dedicated team has one),
    in teamCpuPools order."""
    found = {}
    for index, pool in enumerate(config.team_cpu_pools):
        cidr = pool.pods_cidr or default_pods_cidr(index)
        if cidr is not None:
            found[pool.team] = cidr
    return found


def pod_range_issues(config: StackConfig) -> list[ConfigIssue]:
    """Each dedicated set's range: given where the default block is used up, and overlapping
    neither the network's ranges nor another set's (a stack that creates its cluster)."""
    if not config.creates_cluster:
        return []
    network = config.cluster.network
    taken = {
        "cluster.network.nodesCidr": network.nodes_cidr,
        "cluster.network.podsCidr": network.pods_cidr,
        "cluster.network.servicesCidr": network.services_cidr,
    }
    issues = []
    for index, pool in enumerate(config.team_cpu_pools):
        key = f"teamCpuPools[{index}].podsCidr"
        cidr = pool.pods_cidr or default_pods_cidr(index)
        if cidr is None:
            issues.append(
                ConfigIssue(key, f"required beyond the first {_defaults()} teams' CPU pools")
            )
            continue
        clash = next(
            (k for k, v in taken.items() if ipaddress.ip_network(v).overlaps(_net(cidr))), None
        )
        if clash is not None:
            shown = f"{cidr!r}" if pool.pods_cidr else f"its default {cidr!r}"
            issues.append(
                ConfigIssue(
                    key, f"{shown} overlaps {clash} {taken[clash]!r}; set it to a free range"
                )
            )
        taken[key] = cidr
    return issues


def _net(cidr: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    return ipaddress.ip_network(cidr)


def _defaults() -> int:
    return 2 ** (DEDICATED_PODS_PREFIX - DEDICATED_PODS_BLOCK.prefixlen)
