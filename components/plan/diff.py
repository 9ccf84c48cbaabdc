"""Compare two offline plans of a stack: what a PR adds, removes, replaces and changes.

Resources are matched by URN. Inputs are compared property by property (objects are walked,
lists and scalars compare whole); secrets stay ``[secret]`` and values only the cloud knows stay
``[unknown]``, exactly as the plan documents hold them. Changes under ``options.ignoreChanges``
are listed but do not count: Pulumi would not apply them.

A change is a REPLACE when Pulumi would delete and recreate the resource instead of updating
it: for a TPU node pool that is the difference between a rolling update and losing a running
slice. The rules are data (below): the Google provider's ForceNew fields per resource type, the
Kubernetes provider's name rules, ``options.replaceOnChanges`` (``*`` = any change) and the few
fields GKE cannot change in place although the provider would plan an update.
"""

from __future__ import annotations

import json
import re
from typing import Any

from components.plan.cost import plan_cost
from components.plan.critical_path import CriticalPath, critical_path
from components.plan.diff_model import ABSENT, KIND_ORDER, PropertyChange, ResourceChange, StackDiff
from components.plan.diff_rules import (
    FORCE_NEW,
    GKE_IMMUTABLE,
    KUBERNETES,
    RECREATES_NODES,
    ZONE_PATHS,
)
from components.plan.model import SECRET, TPU_COUNTS, Plan
from components.plan.schedule import UNBOUNDED
from components.plan.views import Bound, ClusterView, NodePoolView
from components.tokens import CLUSTER, KUBERNETES_PREFIX, KUBERNETES_YAML_PREFIX, NODE_POOL
from components.tpu.pricing import PriceTable

# The estimates of `pulumi up`'s critical path a diff draws (mermaid.timeline_gantt): typical.
DRAWN_ESTIMATES = ("typical",)

# The wire signature Pulumi gives a secret value; plan documents already hide secrets, but a
# hand-made or older document is masked again so no secret reaches a diff.
_SECRET_SIG = ("4dabf18193072939515e22adb298388d", "1b47061264138c4ac30d75fd1eb44270")


def mask_secrets(value: Any) -> Any:
    """Values as a diff may show them: anything carrying Pulumi's secret signature is hidden."""
    if isinstance(value, dict):
        if any(value.get(key) == sig for key in value for sig in _SECRET_SIG):
            return SECRET
        return {k: mask_secrets(v) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_secrets(v) for v in value]
    return value


# Inputs that hold a JSON document in one string (a dashboard's ``dashboardJson``): compared as
# documents, so a change names the tile or query it is in instead of one long string.
JSON_DOCUMENTS = ("dashboardJson",)


def _documents(before: Any, after: Any, prefix: str) -> tuple[Any, Any] | None:
    if prefix.rsplit(".", 1)[-1] not in JSON_DOCUMENTS:
        return None
    if not (isinstance(before, str) and isinstance(after, str)) or before == after:
        return None
    try:
        return json.loads(before), json.loads(after)
    except ValueError:
        return None


def property_changes(before: Any, after: Any, prefix: str = "") -> list[tuple[str, Any, Any]]:
    """(path, before, after) for every differing property. Objects are walked key by key; lists
    of named objects (containers, env, volumes, ...) item by item as ``containers[main]``, other
    lists of objects of one length by index (``workers[0]``); any other list compares whole; a
    JSON document in a string (``JSON_DOCUMENTS``) as the document."""
    if (documents := _documents(before, after, prefix)) is not None:
        return property_changes(*documents, prefix)
    if isinstance(before, dict) and isinstance(after, dict):
        found: list[tuple[str, Any, Any]] = []
        for key in sorted(set(before) | set(after)):
            path = f"{prefix}.{key}" if prefix else key
            found += property_changes(before.get(key, ABSENT), after.get(key, ABSENT), path)
        return found
    if isinstance(before, list) and isinstance(after, list) and before != after:
        found = _list_changes(before, after, prefix)
        if found:
            return found
    # Two [unknown]s compare equal: what only the cloud knows is not a change the plan can show.
    return [] if before == after else [(prefix, before, after)]


def _names(items: list[Any]) -> list[str] | None:
    """The items' names if every item is an object with a distinct, plain string ``name``."""
    names = [item.get("name") if isinstance(item, dict) else None for item in items]
    if not all(isinstance(n, str) and "[" not in n and "]" not in n for n in names):
        return None
    return names if len(set(names)) == len(names) else None  # type: ignore[return-value]


def _list_changes(before: list[Any], after: list[Any], prefix: str) -> list[tuple[str, Any, Any]]:
    """Item-wise changes of two lists, or [] when they only compare whole (e.g. a reordering)."""
    old_names, new_names = _names(before), _names(after)
    if old_names is not None and new_names is not None:
        old = dict(zip(old_names, before, strict=True))
        new = dict(zip(new_names, after, strict=True))
        keys = new_names + [n for n in old_names if n not in new]
        pairs = [(old.get(k, ABSENT), new.get(k, ABSENT), f"{prefix}[{k}]") for k in keys]
    elif len(before) == len(after) and all(isinstance(i, dict) for i in [*before, *after]):
        pairs = [
            (b, a, f"{prefix}[{i}]") for i, (b, a) in enumerate(zip(before, after, strict=True))
        ]
    else:
        return []
    return [
        change
        for old_item, new_item, path in pairs
        for change in property_changes(old_item, new_item, path)
    ]


def _segments(path: str) -> list[str]:
    # "spec.containers[*].image", "spec.containers[main].image" -> ["spec", "containers",
    # "image"]: the rules name properties, and a list item selector is not one.
    cleaned = re.sub(r"\[[^\]]*\]", "", path)
    return [s for s in cleaned.split(".") if s and not s.isdigit()]


def _value_at(value: Any, segments: list[str]) -> Any:
    for part in segments:
        if isinstance(value, list):
            return value  # below a list: compare the whole list
        if not isinstance(value, dict):
            return ABSENT
        value = value.get(part, ABSENT)
    return value


def _matches(pattern: list[str], path: list[str]) -> bool:
    return len(pattern) <= len(path) and all(
        p in ("*", s) for p, s in zip(pattern, path, strict=False)
    )


def _covers(rule: str, path: str, before: dict, after: dict) -> bool:
    """Does a change at ``path`` touch the property ``rule`` names (``*`` = any segment)?"""
    if rule == "*":
        return True
    pattern, changed = _segments(rule), _segments(path)
    if _matches(pattern, changed):
        return True  # the change is at or below the rule's property
    if _matches(changed, pattern) and "*" not in pattern:
        # the change is above it (a block appeared, vanished or was rewritten): look inside
        return _value_at(before, pattern) != _value_at(after, pattern)
    # a wildcard below the change: assume it is touched
    return _matches(changed, pattern[: len(changed)])


def _replace_reason(
    type_token: str, path: str, before: dict, after: dict, options: dict[str, Any]
) -> str | None:
    for rule in options.get("replaceOnChanges") or ():
        if _covers(rule, path, before, after):
            return f"options.replaceOnChanges {rule!r}"
    tables = [FORCE_NEW.get(type_token), GKE_IMMUTABLE.get(type_token)]
    yaml = type_token.startswith(KUBERNETES_YAML_PREFIX)
    if type_token.startswith(KUBERNETES_PREFIX) and not yaml:
        tables.append(KUBERNETES)
    for rules in tables:
        if rules is None:
            continue
        for rule in rules.values:
            if _covers(rule, path, before, after):
                return f"{rule} ({rules.source})"
        for block in rules.blocks:
            whole = _value_at(before, _segments(block)), _value_at(after, _segments(block))
            if path == block and ABSENT in whole:
                return f"{block} added or removed ({rules.source})"
    return None


def _ignored(path: str, options: dict[str, Any]) -> bool:
    changed = _segments(path)
    return any(_matches(_segments(rule), changed) for rule in options.get("ignoreChanges") or ())


def compare_resource(before: dict[str, Any], after: dict[str, Any]) -> ResourceChange | None:
    """The change of one resource present in both plans (None when nothing differs)."""
    type_token = after["type"]
    old_inputs = mask_secrets(before.get("inputs") or {})
    new_inputs = mask_secrets(after.get("inputs") or {})
    old_options, new_options = before.get("options") or {}, after.get("options") or {}
    # Pulumi applies the new program's options to the diff of the old state's inputs.
    options = new_options
    changes: list[PropertyChange] = []
    for path, old, new in property_changes(old_inputs, new_inputs):
        ignored = _ignored(path, options)
        reason = (
            None if ignored else _replace_reason(type_token, path, old_inputs, new_inputs, options)
        )
        recreates = any(
            _covers(rule, path, old_inputs, new_inputs)
            for rule in RECREATES_NODES.get(type_token, ())
        )
        moves = any(
            _covers(rule, path, old_inputs, new_inputs) for rule in ZONE_PATHS.get(type_token, ())
        )
        changes.append(PropertyChange(path, old, new, reason, ignored, recreates, moves))
    for path, old, new in property_changes(old_options, new_options, "options"):
        changes.append(PropertyChange(path, old, new))
    if not changes:
        return None
    effective = [c for c in changes if not c.ignored]
    if any(c.replace_reason for c in effective):
        kind = "replace"
    elif effective:
        kind = "update"
    else:
        kind = "ignored"
    return ResourceChange(
        urn=after["urn"],
        type=type_token,
        name=after.get("name", ""),
        kind=kind,
        changes=tuple(changes),
        delete_before_replace=bool(new_options.get("deleteBeforeReplace")),
        protected=bool(old_options.get("protect")),
        tpu_hosts=_tpu_hosts(type_token, new_inputs),
    )


def _tpu_hosts(type_token: str, inputs: dict[str, Any]) -> int | None:
    """Hosts of a TPU node pool, every zone: the most nodes it can have (its node count, or its
    autoscaling maximum, e.g. flex-start); None when the plan does not know them; 0 for anything
    that is not a TPU node pool."""
    pool = NodePoolView(inputs)
    if type_token != NODE_POOL or not pool.is_tpu:
        return 0
    return pool.node_count(Bound.MAXIMUM).nodes


def _whole(resource: dict[str, Any], kind: str) -> ResourceChange:
    options = resource.get("options") or {}
    return ResourceChange(
        urn=resource["urn"],
        type=resource["type"],
        name=resource.get("name", ""),
        kind=kind,
        protected=bool(options.get("protect")),
    )


def _capacity(before: dict | None, after: dict | None) -> dict[str, dict[str, dict[str, int]]]:
    def tpu(document: dict | None) -> dict[str, dict[str, int]]:
        return ((document or {}).get("summary") or {}).get("tpu") or {}

    old, new = tpu(before), tpu(after)
    empty = dict.fromkeys(TPU_COUNTS, 0)
    return {
        generation: {"before": old.get(generation, empty), "after": new.get(generation, empty)}
        for generation in sorted(set(old) | set(new))
    }


def diff_plans(
    old_plan: Plan | None, new_plan: Plan | None, table: PriceTable | None = None
) -> StackDiff:
    """Compare two plans of one stack; either may be None (a stack that is new or gone).
    Both sides are priced with the same price table (the repo's)."""
    if old_plan is None and new_plan is None:
        raise ValueError("nothing to compare")
    before = old_plan.to_dict() if old_plan is not None else None
    after = new_plan.to_dict() if new_plan is not None else None
    stack = (after or before or {}).get("stack", "")
    old = {r["urn"]: r for r in (before or {}).get("resources") or []}
    new = {r["urn"]: r for r in (after or {}).get("resources") or []}
    changes: list[ResourceChange] = []
    unchanged = 0
    for urn, resource in new.items():
        if urn not in old:
            changes.append(_whole(resource, "add"))
            continue
        change = compare_resource(old[urn], resource)
        if change is None:
            unchanged += 1
        else:
            changes.append(change)
    changes += [_whole(r, "remove") for urn, r in old.items() if urn not in new]
    changes.sort(key=lambda c: KIND_ORDER.index(c.kind))  # stable: plan order within a kind
    return StackDiff(
        stack=stack,
        resources=changes,
        unchanged=unchanged,
        new_stack=before is None,
        removed_stack=after is None,
        capacity=_capacity(before, after),
        cost_before=plan_cost(before, table) if before is not None else None,
        cost_after=plan_cost(after, table) if after is not None else None,
        cluster=_cluster_name([*new.values(), *old.values()]),
        path_before=_critical_path(old_plan),
        path_after=_critical_path(new_plan),
        fleet=_fleet(after),
        jobs_on=_jobs_on(before),
    )


def _jobs_on(plan: dict[str, Any] | None) -> dict[str, list[str]]:
    """The base plan's jobs by the node pools their pods land on (its preflight summary)."""
    jobs: dict[str, list[str]] = {}
    for key, job in (((plan or {}).get("summary") or {}).get("workloads") or {}).items():
        for part in ("head", "workers"):
            for pool in (job.get(part) or {}).get("landsOn") or []:
                if key not in jobs.setdefault(pool, []):
                    jobs[pool].append(key)
    return jobs


def _fleet(plan: dict[str, Any] | None) -> dict[str, Any] | None:
    """A fleet stack's ``fleet`` output (its workers and where each workload may run)."""
    fleet = ((plan or {}).get("outputs") or {}).get("fleet")
    return fleet if isinstance(fleet, dict) else None


def _cluster_name(resources: list[dict[str, Any]]) -> str | None:
    for resource in resources:
        if resource["type"] == CLUSTER:
            return ClusterView(resource.get("inputs") or {}).name or resource.get("name")
    return None


def _critical_path(plan: Plan | None) -> CriticalPath | None:
    """The modeled critical path of a plan; None when there is none to draw (no plan, or a
    hand-made document the model cannot schedule). The graph's own chain, without the engine's
    and GKE's limits: a diff compares the shapes of two graphs (``plan --critical-path`` models
    the queue). Only the typical estimate, the one the diff draws."""
    if plan is None:
        return None
    try:
        return critical_path(plan.resources, limits=UNBOUNDED, estimates=DRAWN_ESTIMATES)
    except (KeyError, TypeError, ValueError):
        return None
