"""User-facing configuration errors.

Every mistake in a stack file, a workload spec or a CLI argument ends here: a list of issues,
each naming the config key, the bad value and what is allowed. The CLI prints them and exits 2;
nothing is registered with the engine before validation has passed.
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ValidationError


@dataclass(frozen=True)
class ConfigIssue:
    """One problem, located by its config key path (``tpuPools[1].topology``)."""

    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.key}: {self.message}" if self.key else self.message


class ConfigError(Exception):
    """A configuration that cannot be planned or deployed; carries every issue found."""

    def __init__(self, issues: Sequence[ConfigIssue], source: str = "config") -> None:
        self.issues = list(issues)
        self.source = source
        super().__init__(str(self))

    def __str__(self) -> str:
        count = len(self.issues)
        header = f"{self.source}: {count} problem{'s' if count != 1 else ''}"
        return header + "".join(f"\n  - {issue}" for issue in self.issues)


class KeyedError(ValueError):
    """Raised inside a validator to report issues at keys below the model being validated.

    Pydantic places a model validator's error at the model itself; this carries the sub-key
    (``topology``) so the user is pointed at the exact line of the stack file.
    """

    def __init__(self, issues: Iterable[ConfigIssue]) -> None:
        self.issues = list(issues)
        super().__init__("; ".join(str(issue) for issue in self.issues))

    @classmethod
    def at(cls, key: str, message: str) -> KeyedError:
        return cls([ConfigIssue(key, message)])


def format_loc(loc: Sequence[str | int]) -> str:
    """``('tpuPools', 1, 'topology')`` -> ``tpuPools[1].topology``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not _PLAIN_KEY.fullmatch(str(part)):
            out += f"[{str(part)!r}]"  # control characters, spaces, empty: shown quoted
        else:
            out += f".{part}" if out else str(part)
    return out


_UNION_TAG = re.compile(r"[a-z][a-z-]*\[.+\]")
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_:/.-]+")


def join_key(prefix: str, key: str) -> str:
    if not prefix:
        return key
    if not key:
        return prefix
    return f"{prefix}{key}" if key.startswith("[") else f"{prefix}.{key}"


def issues_from_validation(exc: ValidationError, root: type[BaseModel]) -> list[ConfigIssue]:
    """Turn pydantic's errors into issues with config-key paths and allowed values."""
    issues: list[ConfigIssue] = []
    for err in exc.errors(include_url=False):
        loc = [p for p in err["loc"] if not _is_union_tag(p)]
        key = format_loc(loc)
        cause = (err.get("ctx") or {}).get("error")
        if isinstance(cause, KeyedError):
            issues.extend(ConfigIssue(join_key(key, i.key), i.message) for i in cause.issues)
            continue
        issues.append(ConfigIssue(key, _describe(err, root, loc)))
    return issues


def _is_union_tag(part: str | int) -> bool:
    # pydantic inserts the member type name into locs of union members, e.g. 'function-after[...]'
    return isinstance(part, str) and _UNION_TAG.fullmatch(part) is not None


def _describe(err: dict, root: type[BaseModel], loc: list[str | int]) -> str:
    kind = err["type"]
    value = err.get("input")
    if kind == "missing":
        return "required key is missing"
    if kind == "extra_forbidden":
        allowed = allowed_keys(root, loc[:-1])
        return unknown_key_message(str(loc[-1]), allowed)
    message = err["msg"].removeprefix("Value error, ")
    if kind == "value_error":
        return message
    return f"{_show(value)} is not allowed: {message[0].lower()}{message[1:]}"


def unknown_key_message(key: str, allowed: Sequence[str]) -> str:
    hint = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
    did_you_mean = f"; did you mean '{hint[0]}'?" if hint else ""
    listed = f" Allowed keys: {', '.join(allowed)}." if allowed else ""
    return f"unknown key {key!r}{did_you_mean}{listed}"


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def allowed_keys(root: type[BaseModel], loc: Sequence[str | int]) -> list[str]:
    """The keys a config model accepts at ``loc`` (walking nested models, lists and dicts)."""
    current: object = root
    for part in loc:
        current = _unwrap(current)
        if isinstance(part, int) or not _is_model(current):
            current = _element_type(current)
            continue
        field = _field_by_key(current, part)
        if field is None:
            return []
        current = field.annotation
    current = _unwrap(current)
    if not _is_model(current):
        return []
    return [f.alias or name for name, f in current.model_fields.items()]


def _field_by_key(model: type[BaseModel], key: str):
    for name, field in model.model_fields.items():
        if key in (name, field.alias):
            return field
    return None


def _is_model(tp: object) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _unwrap(tp: object) -> object:
    """Strip Optional[...] / Annotated[...] down to the interesting type."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(tp) if a is not type(None)]
        return _unwrap(members[0]) if len(members) == 1 else tp
    return tp


def _element_type(tp: object) -> object:
    args = typing.get_args(tp)
    return args[-1] if args else tp
