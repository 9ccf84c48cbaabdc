"""Drift: what `pulumi preview --refresh --expect-no-changes --json` found per deployed stack,
as the Markdown body of the drift issue (``.github/workflows/drift.yml``).

The preview compares the program with the cloud's refreshed state and writes nothing (a
`pulumi refresh` would write the drift into the state before reporting it). Its JSON is the
CLI's ``PreviewDigest`` (pulumi/pulumi ``pkg/display/json.go``): ``steps`` each with ``op``,
``urn``, ``diffReasons`` and ``detailedDiff``. A resource drifted when its step is anything but
``same``; a ``refresh`` or ``read`` step only when it names what differs. Exit codes of the CLI
(>= 3.226, ``pkg/cmd/pulumi/cmd/exit_codes.go``): 0 nothing to change, 7 changes found
(``--expect-no-changes``), anything else a failed preview.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MARKER = "<!-- tpu-pathways-drift -->"
EXIT_CLEAN, EXIT_CHANGES = 0, 7
_QUIET_OPS = {"same"}
_REFRESH_OPS = {"refresh", "read"}
STACK_TYPE = "pulumi:pulumi:Stack"


@dataclass(frozen=True)
class DriftedResource:
    op: str
    type: str
    name: str
    keys: tuple[str, ...]
    """The properties that differ (empty: the preview did not say)."""


@dataclass(frozen=True)
class StackDrift:
    stack: str
    status: int
    resources: list[DriftedResource] = field(default_factory=list)
    problem: str = ""
    """Why the preview failed (its error diagnostics), when it did."""

    @property
    def failed(self) -> bool:
        return self.status not in (EXIT_CLEAN, EXIT_CHANGES)

    @property
    def drifted(self) -> bool:
        return bool(self.resources) or self.status == EXIT_CHANGES


def _urn_parts(urn: str) -> tuple[str, str]:
    """(type, name) of ``urn:pulumi:stack::project::parent$type::name``."""
    qualified, _, name = urn.rpartition("::")
    return qualified.rsplit("$", 1)[-1].rsplit("::", 1)[-1], name


def drifted_resources(digest: Mapping[str, Any]) -> list[DriftedResource]:
    found = []
    for step in digest.get("steps") or []:
        op = str(step.get("op", ""))
        keys = tuple(sorted({*(step.get("diffReasons") or []), *(step.get("detailedDiff") or {})}))
        if op in _QUIET_OPS or (op in _REFRESH_OPS and not keys):
            continue
        type_, name = _urn_parts(str(step.get("urn", "")))
        if type_ == STACK_TYPE:
            continue  # the stack itself (its outputs), not a cloud resource
        found.append(DriftedResource(op, type_, name, keys))
    return sorted(found, key=lambda r: (r.type, r.name))


def stack_drift(stack: str, status: int, digest: Mapping[str, Any] | None) -> StackDrift:
    digest = digest or {}
    errors = [
        str(d.get("message", "")).strip()
        for d in digest.get("diagnostics") or []
        if d.get("severity") == "error"
    ]
    return StackDrift(stack, status, drifted_resources(digest), "; ".join(e for e in errors if e))


def render(drifts: list[StackDrift]) -> str:
    """The issue body: each drifted or failed stack with its resources, then the clean ones."""
    drifted = [d for d in drifts if d.drifted and not d.failed]
    failed = [d for d in drifts if d.failed]
    clean = [d.stack for d in drifts if not d.drifted and not d.failed]
    lines = [
        MARKER,
        f"## Drift: {len(drifted)} of {len(drifts)} stacks differ from their program",
        "",
    ]
    for drift in drifted:
        lines += [f"### `{drift.stack}`: {len(drift.resources)} resources", ""]
        lines += ["| Operation | Type | Name | What differs |", "| --- | --- | --- | --- |"]
        for r in drift.resources:
            keys = ", ".join(f"`{k}`" for k in r.keys) or "(not reported)"
            lines.append(f"| {r.op} | `{r.type}` | `{r.name}` | {keys} |")
        lines.append("")
    for drift in failed:
        why = f": {drift.problem}" if drift.problem else ""
        lines += [f"### `{drift.stack}`: the preview failed (exit {drift.status}){why}", ""]
    if clean:
        lines += ["No drift: " + ", ".join(f"`{s}`" for s in clean) + ".", ""]
    return "\n".join(lines)
