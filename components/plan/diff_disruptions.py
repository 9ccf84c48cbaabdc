"""What a plan diff's headline names first: every change that disrupts more than the resource
itself, so a reviewer sees it without opening the details. A replaced cluster (every pool and
workload on it), a replaced node pool or one whose nodes GKE recreates (the pods on it restart,
with the jobs of the base plan that run there), a replaced bucket (its objects), a changed
install or controller patch (its controller restarts; for the PathwaysJob controller a new
version), a replaced job (it starts again from the beginning). Also: memory quantities shown in
one unit on both sides of a change."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from components.plan.diff_model import ResourceChange, StackDiff
from components.tokens import BUCKET, CLUSTER, CONFIG_FILE, NODE_POOL, WORKLOAD_TYPES

DEPLOYMENT_PATCH = "kubernetes:apps/v1:DeploymentPatch"
MAX_JOBS_NAMED = 5
_VERSION = re.compile(r"/download/(v[0-9][^/]*)/")


def disruptions(diff: StackDiff) -> list[str]:
    """The disruptive changes of one stack, most destructive first."""
    changed = [r for r in diff.resources if r.kind in ("replace", "update")]
    replaced = [r for r in changed if r.kind == "replace"]
    clusters = [r for r in replaced if r.type == CLUSTER]
    notes = [
        f"replaces GKE cluster {r.name}: destroys every node pool and workload on it"
        for r in clusters
    ]
    if not clusters:  # a replaced cluster's pools and jobs go with it
        notes += [_pool_note(diff, r) for r in changed if r.type == NODE_POOL and _disrupts(r)]
    notes += [
        f"replaces bucket {r.name}: deletes it with its objects (refused while it holds "
        "objects unless forceDestroy is on)"
        for r in replaced
        if r.type == BUCKET
    ]
    notes += [_install_note(r) for r in changed if r.type in (CONFIG_FILE, DEPLOYMENT_PATCH)]
    if not clusters:
        notes += [
            f"replaces job {r.name}: it starts again from the beginning"
            for r in replaced
            if r.type in WORKLOAD_TYPES
        ]
    return notes


def _disrupts(resource: ResourceChange) -> bool:
    return resource.kind == "replace" or any(
        c.recreates_nodes or c.moves_zone for c in resource.changes
    )


def _pool_note(diff: StackDiff, resource: ResourceChange) -> str:
    pool = resource.name.removeprefix(f"{diff.cluster}-") if diff.cluster else resource.name
    jobs = diff.jobs_on.get(pool) or diff.jobs_on.get(pool.rpartition("-")[0]) or []
    running = f" (interrupts {_named(jobs)})" if jobs else ""
    if resource.kind == "replace":
        lost = (
            "its TPU hosts and the workloads on them"
            if resource.tpu_hosts != 0
            else ("its nodes and the pods on them")
        )
        return f"replaces node pool {resource.name}: destroys {lost}{running}"
    return f"recreates the nodes of node pool {resource.name}: the pods on them restart{running}"


def _named(jobs: list[str]) -> str:
    shown = ", ".join(jobs[:MAX_JOBS_NAMED])
    more = len(jobs) - MAX_JOBS_NAMED
    return shown + (f" and {more} more" if more > 0 else "")


def _install_note(resource: ResourceChange) -> str:
    verb = "replaces" if resource.kind == "replace" else "changes"
    what = "install" if resource.type == CONFIG_FILE else "controller patch"
    versions = [
        (_version(c.before), _version(c.after)) for c in resource.changes if c.path == "file"
    ]
    moved = next(((a, b) for a, b in versions if a and b and a != b), None)
    step = f" {moved[0]} → {moved[1]}" if moved else ""
    return f"{verb} {what} {resource.name}{step}: its controller restarts"


def _version(url: Any) -> str | None:
    match = _VERSION.search(url) if isinstance(url, str) else None
    return match[1] if match else None


# --- quantities in one unit ---------------------------------------------------------------

_QUANTITY = re.compile(r"([0-9]+(?:\.[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei)?")
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def same_unit(before: Any, after: Any) -> tuple[str | None, str | None]:
    """A memory quantity on each side in different units (``"786050989425"`` and
    ``"1520340Mi"``): each side restated in the larger binary unit of the two (``≈ 749636.2Mi``);
    None for a side that needs no restating (or when the values are no such pair)."""
    parsed = [_quantity(before), _quantity(after)]
    if None in parsed or parsed[0][1] == parsed[1][1]:  # type: ignore[index]
        return None, None
    units = [unit for _, unit in parsed if unit]  # type: ignore[misc]
    if not units:
        return None, None
    unit = max(units, key=_BINARY.__getitem__)
    return tuple(  # type: ignore[return-value]
        None if side_unit == unit else _in(amount, unit)
        for amount, side_unit in parsed  # type: ignore[misc]
    )


def _quantity(value: Any) -> tuple[Decimal, str] | None:
    match = _QUANTITY.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return None
    return Decimal(match[1]) * _BINARY.get(match[2] or "", 1), match[2] or ""


def _in(amount: Decimal, unit: str) -> str:
    value = amount / _BINARY[unit]
    exact = value == value.to_integral_value()
    shown = f"{value:.0f}" if exact else f"{value:.1f}"
    return f"{'=' if exact else '≈'} {shown}{unit}"
