"""A CRD's openAPIV3Schema as the API server applies it to a document (``crd_schema_errors``,
with jsonschema): the program checks the Kueue objects it builds with it (``addons.kueue_schema``)
and the contract tests the rendered objects of every plan."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

UniqueList = tuple[tuple[str, ...], list[str] | None]
"""(path, keys): a map list's items are unique by those keys; a set list's (keys None) whole."""


def crd_schema_errors(schema: dict[str, Any]) -> Callable[[dict[str, Any]], list[str]]:
    """The problems a CRD's openAPIV3Schema finds in a whole document (empty list = valid).

    The schema is checked with a Draft 7 validator plus what the API server enforces beyond JSON
    Schema: int32/int64 bounds (``format``), unknown fields (structural schemas have no unknown
    fields unless x-kubernetes-preserve-unknown-fields), unique keys of x-kubernetes-list-type:
    map lists and unique items of set lists. Patterns are the API server's (Go RE2) regexes; a
    leading ``^(?i)`` (RE2 takes flags anywhere, Python only first) is read as ``(?i)^``. CEL
    rules (x-kubernetes-validations) are not evaluated.
    """
    from jsonschema import Draft7Validator

    schema = copy.deepcopy(schema)
    unique_lists: list[UniqueList] = []
    _strict(schema, (), unique_lists)
    validator = Draft7Validator(schema, format_checker=_formats())

    def errors(document: dict[str, Any]) -> list[str]:
        found = [
            f"{'.'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}"
            for e in validator.iter_errors(document)
        ]
        for path, keys in unique_lists:
            what = "items in a list-type set" if keys is None else f"{keys} in a list-type map"
            found += [
                f"{'.'.join(path)}: duplicate {what}"
                for items in _at(document, path)
                if _has_duplicates(items, keys)
            ]
        return found

    return errors


def _strict(node: dict[str, Any], path: tuple[str, ...], unique_lists: list[UniqueList]) -> None:
    """The schema as the API server applies it (in place): no unknown fields, RE2 flags first;
    the map and set lists found are added to ``unique_lists``."""
    if node.get("x-kubernetes-list-type") == "map":
        unique_lists.append((path, node["x-kubernetes-list-map-keys"]))
    if node.get("x-kubernetes-list-type") == "set":
        unique_lists.append((path, None))
    if isinstance(node.get("pattern"), str):
        node["pattern"] = re.sub(r"^\^(\(\?[a-z]+\))", r"\1^", node["pattern"])
    props = node.get("properties")
    if (
        props is not None
        and "additionalProperties" not in node
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        node["additionalProperties"] = False
    for name, sub in (props or {}).items():
        _strict(sub, (*path, name), unique_lists)
    if isinstance(node.get("items"), dict):
        _strict(node["items"], (*path, "[]"), unique_lists)
    if isinstance(node.get("additionalProperties"), dict):
        _strict(node["additionalProperties"], (*path, "{}"), unique_lists)


def _formats() -> Any:
    """The API server's integer formats (int32, int64) as bounds."""
    from jsonschema import FormatChecker

    formats = FormatChecker()

    @formats.checks("int32")
    def _int32(value: object) -> bool:
        return not isinstance(value, int) or -(2**31) <= value <= 2**31 - 1

    @formats.checks("int64")
    def _int64(value: object) -> bool:
        return not isinstance(value, int) or -(2**63) <= value <= 2**63 - 1

    return formats


def _at(document: Any, path: tuple[str, ...]) -> list[Any]:
    """The values at ``path`` in ``document`` ("[]": each list item, "{}": each map value)."""
    nodes = [document]
    for part in path:
        if part == "[]":
            nodes = [x for n in nodes if isinstance(n, list) for x in n]
        elif part == "{}":
            nodes = [x for n in nodes if isinstance(n, dict) for x in n.values()]
        else:
            nodes = [n[part] for n in nodes if isinstance(n, dict) and part in n]
    return nodes


def _has_duplicates(items: list[Any], keys: list[str] | None) -> bool:
    """Whether a map list repeats a key tuple (keys) or a set list an item (keys None)."""
    if keys is None:
        seen = [json.dumps(item, sort_keys=True) for item in items]
    else:
        seen = [tuple(json.dumps(item.get(k)) for k in keys) for item in items]
    return len(seen) != len(set(seen))
