"""Every address range the stack takes in its VPC, with the key that sets it: the one list the
checks of a new range read (a team's Pod range, a Managed Lustre peering range), so no range
is checked against only some of the others.

What a created cluster takes: the subnetwork's primary range (nodes; on an existing subnetwork
its own, which the stack does not know), the cluster's Pod and Service ranges (secondary ranges
of the subnetwork: created with it, or added by GKE to an existing one), the Pod range of each
team with dedicated pools, and the Private Services Access range of each Managed Lustre
instance that sets one. The control plane takes none (no ``masterIpv4CidrBlock``: private
nodes reach it through its Private Service Connect endpoint), nor do the Filestore home shares
(no ``reservedIpRange``: Google picks a free one). Pure: the config in, the ranges out.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from components.config.schema import StackConfig
from components.config.schema.pools import TeamCpuPoolConfig

DEDICATED_PODS_BLOCK = ipaddress.ip_network("10.16.0.0/12")
"""Where the default ranges of the teams' Pods are carved from (beside the network's default
node, Pod and Service ranges, 10.0.0.0/20, 10.4.0.0/14 and 10.8.0.0/20)."""
DEDICATED_PODS_PREFIX = 16
"""A default range's size: 256 nodes at GKE's /24 per node (110 Pods per node)."""

DEFAULT_TEAM_RANGES = tuple(
    str(r) for r in DEDICATED_PODS_BLOCK.subnets(new_prefix=DEDICATED_PODS_PREFIX)
)


@dataclass(frozen=True)
class TakenRange:
    """A range of the VPC the stack takes, and the key that sets it."""

    key: str
    cidr: str
    default: bool = False
    """A team's default range, of its place in ``teamCpuPools``: the key is not in the stack
    file."""

    @property
    def described(self) -> str:
        """The range as a message about another key names it."""
        return f"{'the default ' if self.default else ''}{self.key} {self.cidr!r}"

    def overlaps(self, other: TakenRange) -> bool:
        return ipaddress.ip_network(self.cidr).overlaps(ipaddress.ip_network(other.cidr))


def team_ranges(config: StackConfig) -> Iterator[tuple[int, TeamCpuPoolConfig, str | None]]:
    """Each team CPU pool with its index and its Pod range: its own, else, on the subnetwork
    the stack creates, the default of its place (None: none given on an existing subnetwork,
    or the default block is used up)."""
    defaults = DEFAULT_TEAM_RANGES if config.cluster.network.create else ()
    for index, pool in enumerate(config.team_cpu_pools):
        default = defaults[index] if index < len(defaults) else None
        yield index, pool, pool.pods_cidr or default


def taken_ranges(config: StackConfig) -> list[TakenRange]:
    """The ranges a stack that creates its cluster takes, the cluster's first, then the teams'
    (in ``teamCpuPools`` order), then Managed Lustre's: a range clashes with an earlier one."""
    if not config.creates_cluster:
        return []
    network = config.cluster.network
    cluster = {"podsCidr": network.pods_cidr, "servicesCidr": network.services_cidr}
    if network.create:
        cluster = {"nodesCidr": network.nodes_cidr, **cluster}
    taken = [TakenRange(f"cluster.network.{key}", cidr) for key, cidr in cluster.items()]
    taken += [
        TakenRange(f"teamCpuPools[{i}].podsCidr", cidr, default=pool.pods_cidr is None)
        for i, pool, cidr in team_ranges(config)
        if cidr is not None
    ]
    taken += [
        TakenRange(f"lustre[{i}].peeringRange", system.peering_range)
        for i, system in enumerate(config.lustre)
        if system.peering_range
    ]
    return taken


def earlier_overlap(taken: Sequence[TakenRange], key: str) -> TakenRange | None:
    """The first range before ``key``'s in ``taken`` that overlaps it (None: none, or ``key``
    takes no range)."""
    index = next((i for i, r in enumerate(taken) if r.key == key), None)
    if index is None:
        return None
    return next((r for r in taken[:index] if r.overlaps(taken[index])), None)
