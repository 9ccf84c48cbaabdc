"""Mermaid pictures for the PR comment (GitHub renders ```mermaid blocks natively).

- ``change_flowchart``: what a stack's change touches, as cluster -> node pools / in-cluster
  installs -> workloads, each changed resource a node marked add / replace / remove / update.
- ``fleet_flowchart``: a fleet stack's manager, its workers (with their regions) and the
  dispatch edges of its workloads (to the worker each may run on).
- ``timeline_gantt``: the modeled critical path of `pulumi up` (components/plan/critical_path.py)
  before and after, one section each, on one time axis.

Names come from stack configs and may hold characters Mermaid parses (quotes, brackets, ``#``,
``;``, ``:``, backticks that would end the code fence). Node ids are generated (``n0``, ``n1``,
...), never taken from names; flowchart labels are quoted and every character outside a small
safe set is written as a Mermaid entity code (``#35;``); Gantt task names, which have no entity
codes, keep only the safe characters and start with their step number (so a name can never read
as a Gantt keyword such as ``section``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from components.plan.critical_path import CriticalPath, Step, minutes
from components.plan.views import is_workload
from components.tokens import (
    CLUSTER,
    KUBERNETES_PREFIX,
    NODE_POOL,
    PROJECT_PREFIX,
    PULUMI_PREFIX,
)

MAX_NODES = 8  # per group; the rest are counted in one node
_SAFE = re.compile(r"[A-Za-z0-9 _.,/+-]")  # plain in any Mermaid text
_SAFE_IN_QUOTES = re.compile(r"[A-Za-z0-9 _.,/+():-]")  # also inside a quoted flowchart label
_MARKS = {"add": "add", "replace": "replace", "remove": "remove", "update": "update"}
_STYLES = {
    "add": "fill:#dafbe1,stroke:#1a7f37,color:#1f2328",
    "replace": "fill:#fff1e5,stroke:#bc4c00,color:#1f2328",
    "remove": "fill:#ffebe9,stroke:#cf222e,color:#1f2328",
    "update": "fill:#ddf4ff,stroke:#0969da,color:#1f2328",
}
_GROUPS = (
    ("pools", "node pools"),
    ("installs", "installs and in-cluster objects"),
    ("workloads", "workloads"),
    ("other", "other cloud resources"),
)


@dataclass(frozen=True)
class Changed:
    """One changed resource as the flowchart needs it."""

    type: str
    name: str
    kind: str  # add, replace, remove, update


def label(text: str) -> str:
    """Text for a quoted flowchart label: unsafe characters as entity codes (#35; for #)."""
    return "".join(c if _SAFE_IN_QUOTES.fullmatch(c) else f"#{ord(c)};" for c in text)


def task_name(text: str) -> str:
    """Text for a Gantt task name: only safe characters (no ':', '#', ';' or newlines)."""
    cleaned = "".join(c if _SAFE.fullmatch(c) else " " for c in text)
    return " ".join(cleaned.split())


def group_of(type_token: str) -> str | None:
    """Which box of the flowchart a resource type goes in (None: not drawn)."""
    if type_token.startswith((PULUMI_PREFIX, PROJECT_PREFIX)):
        return None  # providers and our own component groupings
    if type_token == NODE_POOL:
        return "pools"
    if is_workload(type_token):
        return "workloads"
    if type_token.startswith(KUBERNETES_PREFIX):
        return "installs"
    return "other"


def _short_kind(type_token: str) -> str:
    return type_token.rsplit(":", 1)[-1]


def change_flowchart(changes: Sequence[Changed], cluster: str | None) -> list[str]:
    """Lines of a ```mermaid flowchart of the changes; [] when nothing drawable changed."""
    cluster_change = next((c for c in changes if c.type == CLUSTER), None)
    groups: dict[str, list[Changed]] = {key: [] for key, _ in _GROUPS}
    for change in changes:
        key = group_of(change.type)
        if key is not None and change.type != CLUSTER:
            groups[key].append(change)
    if cluster_change is None and not any(groups.values()):
        return []
    lines = ["```mermaid", "flowchart LR"]
    classes: dict[str, list[str]] = {}
    if cluster_change is not None:
        text = f"{_MARKS[cluster_change.kind]}: GKE cluster {cluster_change.name}"
        classes.setdefault(cluster_change.kind, []).append("cluster")
    elif cluster is not None:
        text = f"GKE cluster {cluster} (unchanged)"
    else:
        text = "GKE cluster of another stack"
    lines.append(f'  cluster["{label(text)}"]')
    counter = 0
    for key, title in _GROUPS:
        members = groups[key]
        if not members:
            continue
        lines.append(f'  subgraph {key}["{label(title)}"]')
        for change in members[:MAX_NODES]:
            node = f"n{counter}"
            counter += 1
            what = change.name if key in ("pools", "workloads") else _short_kind(change.type)
            if key not in ("pools", "workloads"):
                what += f" {change.name}"
            lines.append(f'    {node}["{label(f"{_MARKS[change.kind]}: {what}")}"]')
            classes.setdefault(change.kind, []).append(node)
        if len(members) > MAX_NODES:
            rest = members[MAX_NODES:]
            kinds = ", ".join(
                f"{sum(1 for c in rest if c.kind == kind)} {kind}"
                for kind in _MARKS
                if any(c.kind == kind for c in rest)
            )
            lines.append(f'    n{counter}["{label(f"... {len(rest)} more: {kinds}")}"]')
            counter += 1
        lines.append("  end")
    middle = [key for key in ("pools", "installs") if groups[key]]
    for key in middle:
        lines.append(f"  cluster --> {key}")
    if groups["workloads"]:
        for source in middle or ["cluster"]:
            lines.append(f"  {source} --> workloads")
    if groups["other"]:
        lines.append("  other -.- cluster")
    for kind, nodes in classes.items():
        lines.append(f"  classDef {kind} {_STYLES[kind]}")
        lines.append(f"  class {','.join(nodes)} {kind}")
    lines.append("```")
    return lines


def fleet_flowchart(manager: str | None, fleet: dict) -> list[str]:
    """Lines of a ```mermaid flowchart of a fleet (its ``fleet`` output): the manager cluster,
    each worker with its region, each workload dispatched to the workers that can run it."""
    workers = fleet.get("workers") or {}
    placements = fleet.get("placements") or {}
    ids = {worker: f"w{i}" for i, worker in enumerate(workers)}
    text = f"MultiKueue manager {manager}" if manager else "MultiKueue manager"
    lines = ["```mermaid", "flowchart LR", f'  manager["{label(text)}"]']
    lines += [f'  {ids[w]}["{label(f"worker {w} ({region})")}"]' for w, region in workers.items()]
    for i, (workload, targets) in enumerate(list(placements.items())[:MAX_NODES]):
        lines.append(f'  j{i}["{label(workload)}"]')
        lines.append(f"  manager --> j{i}")
        lines += [f"  j{i} -.->|dispatch| {ids[t]}" for t in targets if t in ids]
    lines.append("```")
    return lines


def _signature(path: CriticalPath | None) -> tuple:
    if path is None:
        return ()
    steps = tuple((s.label, s.type, round(s.start), round(s.finish)) for s in path.chain)
    return steps, round(path.parallel["typical"])


def timeline_changed(before: CriticalPath | None, after: CriticalPath | None) -> bool:
    """Did the modeled critical path change (its steps, their times, or the total)?"""
    return before is not None and after is not None and _signature(before) != _signature(after)


def _tasks(prefix: str, steps: Sequence[Step]) -> list[str]:
    lines = []
    for index, step in enumerate(steps):
        name = task_name(f"{index + 1}. {step.label} {step.name}")
        start, finish = round(step.start), max(round(step.finish), round(step.start) + 1)
        lines.append(f"    {name} :{prefix}{index}, {start}, {finish}")
    return lines


def timeline_gantt(before: CriticalPath, after: CriticalPath) -> list[str]:
    """Lines of a ```mermaid Gantt of the typical critical path before and after."""
    total_before, total_after = before.parallel["typical"], after.parallel["typical"]
    longest = max(total_before, total_after)
    title = f"Modeled pulumi up, typical: {minutes(total_before)} to {minutes(total_after)}"
    return [
        "```mermaid",
        "gantt",
        f"    title {task_name(title)}",
        "    dateFormat X",
        # minutes:seconds from the start; hours once the run is that long
        f"    axisFormat {'%H:%M' if longest >= 3600 else '%M:%S'}",
        "    section before",
        *_tasks("b", before.chain),
        "    section after",
        *_tasks("a", after.chain),
        "```",
    ]
