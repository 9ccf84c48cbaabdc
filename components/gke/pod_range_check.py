"""The teams' Pod ranges on an existing subnetwork checked while `pulumi preview` or `pulumi up`
runs, and the resources that wait for the check (``network.cluster_networking`` wires them).

How a failed check stops the update (pulumi/pulumi sdk/python/lib/pulumi, read at commit
1b5949891b and in the 3.272.0 wheel the lock pins): the check raises ``pulumi.RunError`` inside
an ``apply``, which faults that Output (``output.py`` ``Output.apply``: ``func`` runs in the
Output's future) and every Output derived from it. A resource whose inputs hold such an Output
never reaches the engine: ``runtime/resource.py`` ``register_resource`` awaits its inputs in
``prepare_resource`` (``rpc.serialize_properties``) before it sends ``RegisterResource``, and
the exception fails that RPC instead (``do_register`` rewraps only ValueError and
AssertionError). ``runtime/rpc_manager.py`` keeps the first such exception and
``runtime/stack.py`` ``wait_for_rpcs`` raises it once the other RPCs are done, so the program
fails; ``cmd/pulumi-language-python-exec`` logs a ``RunError`` as its message alone (no
traceback) and exits 1, and the engine fails the update. Resources that do not wait for the
check may still be created meanwhile.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import pulumi
import pulumi_gcp as gcp

from components.errors import ConfigError
from components.gke.subnetwork_ranges import (
    RangeClaim,
    SecondaryRange,
    range_issues,
    unchecked_note,
)

T = TypeVar("T")
FoundRanges = Sequence[gcp.compute.outputs.GetSubnetworkSecondaryIpRangeResult]


def after(checked: pulumi.Output[None] | None, value: pulumi.Input[T]) -> pulumi.Input[T]:
    """``value`` for a resource that must not be created on a range the subnetwork lacks: an
    Output that resolves once ``checked`` has (derived from a failed check, it fails that
    resource's registration, so the engine never gets it); ``value`` itself without a check."""
    if checked is None:
        return value
    return pulumi.Output.all(checked, value).apply(lambda both: both[1])


def checked_pod_ranges(
    subnetwork: str,
    claims: Sequence[RangeClaim],
    found: pulumi.Output[FoundRanges],
) -> pulumi.Output[None]:
    """The teams' ranges checked against the subnetwork's (``found``, from its lookup): None
    once each is there with its addresses; a ``pulumi.RunError`` naming every problem
    otherwise, which fails every resource whose inputs are derived from it and the program
    (the module's docstring). A preview whose lookup gave no
    ranges (the offline plan's mock engine) warns that they are checked at deploy time; during
    `pulumi up` no ranges is none there."""

    def check(ranges: FoundRanges | None) -> None:
        if ranges is None and pulumi.runtime.is_dry_run():
            pulumi.log.warn(unchecked_note(subnetwork, claims))
            return None
        has = [SecondaryRange(r.range_name, r.ip_cidr_range) for r in ranges or ()]
        issues = range_issues(subnetwork, claims, has)
        if issues:
            source = f"the secondary ranges of subnetwork {subnetwork!r}"
            raise pulumi.RunError(str(ConfigError(issues, source)))
        return None

    return found.apply(check)
