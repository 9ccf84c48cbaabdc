"""A CRD's CEL validation rules (``x-kubernetes-validations``) as the API server evaluates them on
a custom resource (``crd_cel_errors``), on the project's real CEL evaluator
(``tests/kube_cel.evaluate``: common-expression-language).

The API server's semantics followed here (kubernetes staging/src/k8s.io/apiextensions-apiserver,
pkg/apiserver/schema/cel/validation.go ``Validator.validate``, ``validateExpressions``,
``validateMap``, ``validateArray``; pkg/apiserver/schema/defaulting/algorithm.go ``Default``):

- the object is defaulted first (a property absent from an object gets the schema's
  ``default``, recursively), the old object too;
- a rule is evaluated where its schema node has a value, with ``self`` bound to that value (the
  list item, the map value, the property) and ``oldSelf`` to the old object's value at the same
  place: an object's properties and a map's values by key, a list's items only in a
  ``x-kubernetes-list-type: map`` list (by its map keys), never in other lists;
- a transition rule (one that reads ``oldSelf``) is skipped when there is no old value (on
  create, or where the old object had nothing there);
- a rule that is false, or whose evaluation errs (a field read where it is absent), rejects the
  object with the rule's ``message`` at the rule's path.

Not modelled: ``messageExpression``, ``reason``/``fieldPath``, ``optionalOldSelf`` (no rule of
the pinned CRDs uses them), the cost budget, and the resource root's ``apiVersion``/``kind``/
``metadata`` (no pinned CRD has a rule at the root).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

from tests.kube_cel import evaluate

Document = dict[str, Any]
_OLD_SELF = re.compile(r"\boldSelf\b")


def with_defaults(schema: dict[str, Any], value: Any) -> Any:
    """``value`` with the schema's defaults filled in where a property is absent."""
    value = copy.deepcopy(value)
    _default(schema, value)
    return value


def _default(node: dict[str, Any], value: Any) -> None:
    if isinstance(value, dict):
        for name, sub in (node.get("properties") or {}).items():
            if name not in value and "default" in sub:
                value[name] = copy.deepcopy(sub["default"])
            if name in value:
                _default(sub, value[name])
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and not node.get("properties"):
            for item in value.values():
                _default(extra, item)
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        for item in value:
            _default(node["items"], item)


def _old_item(node: dict[str, Any], item: Any, old: Any) -> Any:
    """The old list's item correlated with ``item``: only in a map-type list, by its keys."""
    if node.get("x-kubernetes-list-type") != "map" or not isinstance(old, list):
        return None
    keys = node["x-kubernetes-list-map-keys"]
    wanted = [json.dumps(item.get(k), sort_keys=True) for k in keys]
    for candidate in old:
        if [json.dumps(candidate.get(k), sort_keys=True) for k in keys] == wanted:
            return candidate
    return None


def _rule_errors(node: dict[str, Any], value: Any, old: Any, path: str) -> list[str]:
    found = []
    for rule in node.get("x-kubernetes-validations") or []:
        transition = bool(_OLD_SELF.search(rule["rule"]))
        if transition and old is None:
            continue  # validation.go: evaluated only if there is a comparable existing value
        activation = {"self": value, **({"oldSelf": old} if transition else {})}
        try:
            allowed = evaluate(rule["rule"], activation) is True
        except Exception:  # an evaluation error rejects the object
            allowed = False
        if not allowed:
            message = rule.get("message") or f"failed rule: {rule['rule']}"
            found.append(f"{path or '<root>'}: {message} (CEL rule: {rule['rule']})")
    return found


def _walk(node: dict[str, Any], value: Any, old: Any, path: str) -> list[str]:
    if value is None:
        return []
    found = _rule_errors(node, value, old, path)
    if isinstance(value, dict):
        olds = old if isinstance(old, dict) else {}
        properties = node.get("properties") or {}
        extra = node.get("additionalProperties")
        for key, sub in value.items():
            where = f"{path}.{key}" if path else key
            if key in properties:
                found += _walk(properties[key], sub, olds.get(key), where)
            elif isinstance(extra, dict):
                found += _walk(extra, sub, olds.get(key), f"{path}[{key}]")
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        for index, item in enumerate(value):
            where = f"{path}[{index}]"
            found += _walk(node["items"], item, _old_item(node, item, old), where)
    return found


def crd_cel_errors(schema: dict[str, Any]) -> Callable[..., list[str]]:
    """The messages of the schema's CEL rules a document breaks (empty list = all hold); pass
    ``old`` (the stored object) to evaluate the transition rules of an update."""

    def errors(document: Document, old: Document | None = None) -> list[str]:
        current = with_defaults(schema, document)
        previous = None if old is None else with_defaults(schema, old)
        return _walk(schema, current, previous, "")

    return errors
