"""A CRD's openAPIV3Schema as the API server applies it to a document (``crd_schema_errors``),
its CEL rules included (``tests/crd_cel.py``): a plain module, so test files import it (a
``conftest`` module is not importable by name once a folder has a conftest of its own)."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

from tests.crd_cel import crd_cel_errors


def crd_schema_errors(schema: dict[str, Any]) -> Callable[[dict[str, Any]], list[str]]:
    """The problems a CRD's openAPIV3Schema finds in a whole document (empty list = valid).

    The schema is checked with a Draft 7 validator plus what the API server enforces beyond JSON
    Schema: int32/int64 bounds (``format``), unknown fields (structural schemas have no unknown
    fields unless x-kubernetes-preserve-unknown-fields), unique keys of x-kubernetes-list-type:
    map lists and unique items of set lists. Patterns are the API server's (Go RE2) regexes; a
    leading ``^(?i)`` (RE2 takes flags anywhere, Python only first) is read as ``(?i)^``. The
    CEL rules (x-kubernetes-validations) are evaluated as on a create (``tests/crd_cel.py``:
    the object defaulted, ``self`` at each rule's place, transition rules skipped).
    """
    from jsonschema import Draft7Validator, FormatChecker

    schema = copy.deepcopy(schema)
    # (path, keys): a map list's items are unique by those keys; a set list's (keys None) whole
    unique_lists: list[tuple[tuple[str, ...], list[str] | None]] = []

    def strict(node: dict[str, Any], path: tuple[str, ...]) -> None:
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
            strict(sub, (*path, name))
        if isinstance(node.get("items"), dict):
            strict(node["items"], (*path, "[]"))
        if isinstance(node.get("additionalProperties"), dict):
            strict(node["additionalProperties"], (*path, "{}"))

    strict(schema, ())
    formats = FormatChecker()

    @formats.checks("int32")
    def _int32(value: object) -> bool:
        return not isinstance(value, int) or -(2**31) <= value <= 2**31 - 1

    @formats.checks("int64")
    def _int64(value: object) -> bool:
        return not isinstance(value, int) or -(2**63) <= value <= 2**63 - 1

    validator = Draft7Validator(schema, format_checker=formats)
    rules = crd_cel_errors(schema)

    def at(document: Any, path: tuple[str, ...]) -> list[Any]:
        nodes = [document]
        for part in path:
            if part == "[]":
                nodes = [x for n in nodes if isinstance(n, list) for x in n]
            elif part == "{}":
                nodes = [x for n in nodes if isinstance(n, dict) for x in n.values()]
            else:
                nodes = [n[part] for n in nodes if isinstance(n, dict) and part in n]
        return nodes

    def errors(document: dict[str, Any]) -> list[str]:
        found = [
            f"{'.'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}"
            for e in validator.iter_errors(document)
        ]
        for path, keys in unique_lists:
            what = "items in a list-type set" if keys is None else f"{keys} in a list-type map"
            found += [
                f"{'.'.join(path)}: duplicate {what}"
                for items in at(document, path)
                if _has_duplicates(items, keys)
            ]
        return found + rules(document)

    return errors


def _has_duplicates(items: list[Any], keys: list[str] | None) -> bool:
    """Whether a map list repeats a key tuple (keys) or a set list an item (keys None)."""
    if keys is None:
        seen = [json.dumps(item, sort_keys=True) for item in items]
    else:
        seen = [tuple(json.dumps(item.get(k)) for k in keys) for item in items]
    return len(seen) != len(set(seen))
