"""What a list of CIDR ranges admits, by meaning rather than spelling: the control plane's
authorized networks must not open its IP endpoint to the internet, however the ranges are
written.

IPv6 has prefixes whose addresses carry an IPv4 address, so an IPv6 range can stand for IPv4
ranges (the ipaddress module reads the same embeddings: ``IPv6Address.ipv4_mapped``,
``.sixtofour``):

- IPv4-mapped ``::ffff:0:0/96`` (RFC 4291 section 2.5.5.2): how a dual-stack socket shows an
  IPv4 client, so ``::ffff:0.0.0.0/96`` is every IPv4 client;
- IPv4-compatible ``::/96`` (RFC 4291 section 2.5.5.1, deprecated);
- NAT64's well-known prefix ``64:ff9b::/96`` (RFC 6052): IPv4 hosts reached through a
  translator;
- 6to4 ``2002::/16`` (RFC 3056): ``2002:WWXX:YYZZ::/48`` is the IPv4 host W.X.Y.Z's network.

Ranges refused here: those that together admit every IPv4 address (``::/0`` and ``2000::/3``
do: they hold the prefixes above), more public IPv4 addresses than a /8 (16,777,216: the
largest block IANA ever gave one organisation; a private range such as 10.0.0.0/8 counts for
nothing), or more global IPv6 addresses (``2000::/3``) than a /12 (what IANA gives a regional
internet registry).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

IPv4 = ipaddress.IPv4Network
IPv6 = ipaddress.IPv6Network

# (IPv6 prefix, the bit where the IPv4 address starts, what it is called)
_EMBEDDINGS: tuple[tuple[IPv6, int, str], ...] = (
    (IPv6("::ffff:0:0/96"), 96, "IPv4-mapped"),
    (IPv6("::/96"), 96, "IPv4-compatible"),
    (IPv6("64:ff9b::/96"), 96, "NAT64"),
    (IPv6("2002::/16"), 16, "6to4"),
)
EVERY_IPV4 = IPv4("0.0.0.0/0")
IPV6_INTERNET = IPv6("2000::/3")
LARGEST_BLOCK = 2**24
"""A /8: more public IPv4 addresses than this is a large part of the internet."""
LARGEST_IPV6_BLOCK = 2**116
"""A /12: more global IPv6 addresses than this is a large part of the internet."""
# IANA IPv4 Special-Purpose Address Registry (RFC 6890 and its updates): blocks that are not
# globally reachable (or not unicast), so they are no part of the internet a range opens to.
_NOT_PUBLIC = tuple(
    IPv4(n)
    for n in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",
        "240.0.0.0/4",
    )
)


@dataclass(frozen=True)
class Meaning:
    """An IPv4 range a written range admits, and how it is spelled (empty: as IPv4)."""

    network: IPv4
    spelling: str = ""

    def describe(self, written: str) -> str:
        if not self.spelling:
            return written
        return f"{written} ({self.network} written as IPv6, {self.spelling})"


def ipv4_meanings(network: IPv4 | IPv6) -> list[Meaning]:
    """The IPv4 ranges ``network`` admits: itself, or those its IPv6 addresses carry. An IPv6
    range narrower than one IPv4 address's block is taken for that whole address."""
    if isinstance(network, IPv4):
        return [Meaning(network)]
    meanings = []
    for prefix, start, name in _EMBEDDINGS:
        if not network.overlaps(prefix):
            continue
        if network.prefixlen <= prefix.prefixlen:  # it holds the whole prefix
            meanings.append(Meaning(EVERY_IPV4, name))
            continue
        bits = min(network.prefixlen - start, 32)
        address = (int(network.network_address) >> (128 - start - 32)) & 0xFFFFFFFF
        meanings.append(Meaning(IPv4((address, bits), strict=False), name))
    return meanings


def _networks(cidrs: Iterable[str]) -> list[tuple[str, IPv4 | IPv6]]:
    """Valid ranges only (a malformed one is reported against its own key)."""
    parsed = []
    for cidr in cidrs:
        try:
            parsed.append((cidr, ipaddress.ip_network(cidr, strict=False)))
        except ValueError:
            continue
    return parsed


def everywhere(cidr: str) -> str | None:
    """'0.0.0.0/0' or '::/0' (with how it is spelled, if not plainly) when this one range
    admits every IPv4 or every IPv6 address, else None."""
    for _, network in _networks([cidr]):
        if network.prefixlen == 0:
            return str(network)  # ::/0 holds the IPv4 prefixes too
        spelled = [m for m in ipv4_meanings(network) if m.network == EVERY_IPV4]
        if spelled:
            return f"0.0.0.0/0, written as IPv6 ({spelled[0].spelling})"
    return None


@dataclass(frozen=True)
class Exposure:
    """What ranges together admit (to follow "together these ranges") and how much of the
    internet that is."""

    what: str
    reach: str = "the whole internet"


def exposure(cidrs: Iterable[str]) -> Exposure | None:
    """What the ranges together open the endpoint to, if it is the internet or a large part of
    it."""
    networks = _networks(cidrs)
    meanings = [(c, m) for c, n in networks for m in ipv4_meanings(n)]
    ipv4 = list(ipaddress.collapse_addresses(m.network for _, m in meanings))
    spelled = [m.describe(c) for c, m in meanings if m.spelling]
    how = f" ({', '.join(spelled[:3])})" if spelled else ""
    if EVERY_IPV4 in ipv4:
        return Exposure(f"cover 0.0.0.0/0{how}")
    public = public_addresses(ipv4)
    if public > LARGEST_BLOCK:
        return Exposure(
            f"admit {public:,} public IPv4 addresses{how}, more than a /8 ({LARGEST_BLOCK:,}), "
            "the largest block one organisation holds",
            "a large part of the internet",
        )
    ipv6 = ipaddress.collapse_addresses(n for _, n in networks if isinstance(n, IPv6))
    global_ipv6 = sum(_overlap(n, IPV6_INTERNET) for n in ipv6)
    if global_ipv6 > LARGEST_IPV6_BLOCK:
        return Exposure(
            f"admit {global_ipv6 // LARGEST_IPV6_BLOCK:,} times a /12 of global IPv6 addresses "
            f"({IPV6_INTERNET}), more than a regional internet registry holds",
            "a large part of the internet",
        )
    return None


def public_addresses(networks: Iterable[IPv4]) -> int:
    """Addresses of disjoint ``networks`` outside the blocks that are not public."""
    total = 0
    for network in networks:
        total += network.num_addresses
        total -= sum(_overlap(network, block) for block in _NOT_PUBLIC)
    return total


def _overlap(a: IPv4 | IPv6, b: IPv4 | IPv6) -> int:
    if not a.overlaps(b):
        return 0
    return min(a.num_addresses, b.num_addresses)  # CIDR blocks overlap only by containment
