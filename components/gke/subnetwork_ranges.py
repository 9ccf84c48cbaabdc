"""The dedicated teams' Pod ranges checked against the secondary ranges an existing subnetwork
has: each named range must be there, with the addresses the team's firewall admits.

On an existing subnetwork the stack adds no range: a team's pools take the range its network
owner made by name (``networkConfig.podRange``), and its Pathways ports firewall admits the
addresses the stack file gives for it (``podsCidr``). Nothing else ties the two together, so a
``podsCidr`` other than the range's own fences the wrong addresses: the firewall admits other
Pods, or none of the team's. Pure: the claims and what GCP answers in, the problems out (the
subnetwork is looked up, and the update failed on them before anything is registered, by
``pod_range_check.look_up_subnetwork``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass

from components.errors import ConfigIssue


@dataclass(frozen=True)
class SecondaryRange:
    """A secondary range of a subnetwork as GCP has it (pulumi-gcp 10.2
    ``compute.GetSubnetworkSecondaryIpRangeResult``: ``range_name``, ``ip_cidr_range``)."""

    name: str
    cidr: str


@dataclass(frozen=True)
class RangeClaim:
    """What a team's pools take from the subnetwork: a secondary range by name and the
    addresses its firewall admits, with the keys that gave each (named in the problems)."""

    name: str
    cidr: str
    name_key: str
    cidr_key: str


def range_issues(
    subnetwork: str, claims: Sequence[RangeClaim], found: Sequence[SecondaryRange]
) -> list[ConfigIssue]:
    """Every claim whose range ``subnetwork`` lacks (naming the ranges it has) or has with
    other addresses (naming them): all at once, in the claims' order."""
    has = {r.name: r.cidr for r in found}
    issues = []
    for claim in claims:
        actual = has.get(claim.name)
        if actual is None:
            issues.append(
                ConfigIssue(
                    claim.name_key,
                    f"{claim.name!r} is not a secondary range of subnetwork {subnetwork!r} "
                    f"({_listing(found)}); add it there first, or name one of those",
                )
            )
        elif not _same_range(actual, claim.cidr):
            issues.append(
                ConfigIssue(
                    claim.cidr_key,
                    f"secondary range {claim.name!r} of subnetwork {subnetwork!r} has {actual}, "
                    f"but {claim.cidr_key} says {claim.cidr}: the team's Pathways ports would "
                    f"admit the wrong Pods; set it to {actual}",
                )
            )
    return issues


def unchecked_note(subnetwork: str, claims: Sequence[RangeClaim]) -> str:
    """What the offline plan says, whose mock engine asks GCP nothing (its answer has a
    placeholder, ``tokens.DEPLOY_TIME``, for the primary range and no secondary ranges):
    the claims are checked when `pulumi preview` or `pulumi up` looks the subnetwork up."""
    named = ", ".join(f"{c.name_key} {c.name!r} with {c.cidr}" for c in claims)
    return (
        f"checked at deploy time, not in this preview (no secondary ranges of subnetwork "
        f"{subnetwork!r} here: the offline plan looks nothing up in GCP): {named}. "
        "`pulumi preview` and `pulumi up` compare them with the subnetwork's; on a mismatch "
        "`pulumi up` stops before it creates anything"
    )


def _listing(found: Sequence[SecondaryRange]) -> str:
    if not found:
        return "it has none"
    return "it has: " + ", ".join(f"{r.name}={r.cidr}" for r in found)


def _same_range(actual: str, claimed: str) -> bool:
    """One range however written (GCP answers in canonical form)."""
    try:
        return ipaddress.ip_network(actual, strict=False) == ipaddress.ip_network(
            claimed, strict=False
        )
    except ValueError:
        return actual == claimed
