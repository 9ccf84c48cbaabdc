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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pydantic is imported where a validation runs: `shapes` never loads it
    from pydantic import BaseModel, ValidationError


@dataclass(frozen=True)
class ConfigIssue:
    """One problem, located by its config key path (``tpuPools[1].topology``)."""

    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.key}: {self.message}" if self.key else self.message


MAX_MESSAGE = 2000
"""Characters of a reported key or message. Messages quote the bad value; a hostile one (a
4 MiB name) is cut here, wherever the message was written."""
_LONG_WORD = re.compile(r"\S{120,}")


def bounded(text: str) -> str:
    """``text`` as a report shows it: words over 120 characters cut, then the whole bounded."""
    if len(text) <= MAX_MESSAGE:
        return text
    text = _LONG_WORD.sub(lambda m: f"{m[0][:60]}...({len(m[0])} characters)", text)
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE] + "...(cut)"


class ConfigError(Exception):
    """A configuration that cannot be planned or deployed; carries every issue found."""

    def __init__(
        self, issues: Sequence[ConfigIssue], source: str = "config", later: str = ""
    ) -> None:
        self.issues = [ConfigIssue(bounded(i.key), bounded(i.message)) for i in issues]
        self.source = source
        self.later = later  # the checks that could not run yet: they run once these are fixed
        super().__init__(str(self))

    def __str__(self) -> str:
        count = len(self.issues)
        header = f"{self.source}: {count} problem{'s' if count != 1 else ''}"
        later = f"\n  {self.later}" if self.later else ""
        return header + "".join(f"\n  - {issue}" for issue in self.issues) + later


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
        if isinstance(part, str):
            part = key_part(part)
        if isinstance(part, int):
            out += f"[{part}]"
        elif not _PLAIN_KEY.fullmatch(str(part)):
            out += f"[{str(part)!r}]"  # control characters, spaces, empty: shown quoted
        else:
            out += f".{part}" if out else str(part)
    return out


MAX_KEY_PART = 64


def key_part(name: str) -> str:
    """A key as a report shows it: a very long one (a 4 MiB env name) cut short."""
    if len(name) <= MAX_KEY_PART:
        return name
    return f"{name[: MAX_KEY_PART - 24]}...({len(name)} characters)"


_UNION_TAG = re.compile(r"[a-z][a-z-]*\[.+\]")
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_:/.-]+")


def join_key(prefix: str, key: str) -> str:
    if not prefix:
        return key
    if not key:
        return prefix
    return f"{prefix}{key}" if key.startswith("[") else f"{prefix}.{key}"


def issues_from_validation(
    exc: ValidationError,
    root: type[BaseModel],
    hides_value: Callable[[str], bool] = lambda key: False,
) -> list[ConfigIssue]:
    """Turn pydantic's errors into issues with config-key paths and allowed values. A value at
    a key ``hides_value`` names (a credential's) is never shown, only its type."""
    issues: list[ConfigIssue] = []
    for err in exc.errors(include_url=False):
        loc = config_loc(err)
        key = format_loc(loc)
        cause = (err.get("ctx") or {}).get("error")
        if isinstance(cause, KeyedError):
            issues.extend(ConfigIssue(join_key(key, i.key), i.message) for i in cause.issues)
            continue
        names_a_key = "[key]" in err["loc"] or err["type"] in ("missing", "extra_forbidden")
        whole_key = ".".join(str(part) for part in loc)  # ``key`` may show a name cut short
        value = err.get("input")
        hidden = hides_value(whole_key) and not names_a_key and value is not None
        message = _describe(err, root, loc, hidden)
        if isinstance(value, str) and len(value) > 80:  # a validator quoted all of it
            message = message.replace(repr(value), shown_value(value))
        if hidden:
            message = _hidden(message, value)
        issues.append(ConfigIssue(key, message))
    return issues


def config_loc(err: dict) -> list[str | int]:
    """A pydantic error's location as config keys: union member names left out, and '[key]',
    pydantic's mark of an error in a mapping's key (which the key path names)."""
    return [p for p in err["loc"] if not _is_union_tag(p) and p != "[key]"]


def is_flag(root: type[BaseModel], loc: Sequence[str | int], word: object) -> bool:
    """``capacity: spot``: ``word`` is a true/false key of the mapping expected at ``loc``."""
    if not isinstance(word, str) or word not in allowed_keys(root, loc):
        return False
    field = field_at(root, [*loc, word])
    return field is not None and field.annotation is bool


_KINDS = {bool: "true/false", int: "a number", float: "a number", list: "a list", dict: "a mapping"}


def _hidden(message: str, value: object) -> str:
    """``message`` with the value it is about taken out: the leading value of ``_describe``'s
    messages, and a text value wherever a validator quoted it."""
    kind = f"{_KINDS.get(type(value), 'text')} (value not shown)"
    if message.startswith(shown_value(value)):
        message = kind + message[len(shown_value(value)) :]
    if isinstance(value, str):
        for shown in (repr(value), shown_value(value)):
            message = message.replace(shown, kind)
    return message


def _is_union_tag(part: str | int) -> bool:
    # pydantic inserts the member type name into locs of union members, e.g. 'function-after[...]'
    return isinstance(part, str) and _UNION_TAG.fullmatch(part) is not None


def _describe(err: dict, root: type[BaseModel], loc: list[str | int], hidden: bool) -> str:
    """Our message for a pydantic error; ``hidden``: the value is a credential's, so no form
    of it is suggested (a credential is not written as text at all)."""
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
    ours = _in_our_words(err, root, loc, hidden)
    if kind in ("too_short", "too_long"):  # about the count, not the entries
        return ours or message
    if ours is None:
        ours = _CLASS_NAME.sub("", f"{message[0].lower()}{message[1:]}")
    return f"{shown_value(value)} is not allowed: {ours}"


# pydantic names the model class it expected ("a valid dictionary or instance of
# SecretKeySelector"); a stack file has no classes, so that part never reaches a report.
_CLASS_NAME = re.compile(r" or (an )?instance of \w+")


_RANGES = {
    "greater_than_equal",
    "less_than_equal",
    "greater_than",
    "less_than",
    "too_short",
    "too_long",
}
_MAPPING_EXPECTED = {"model_type", "dict_type", "model_attributes_type"}
_SCALARS = (bool, int, float)


def _in_our_words(
    err: dict, root: type[BaseModel], loc: list[str | int], hidden: bool = False
) -> str | None:
    """The classes of pydantic errors a stack file meets, said as what to write instead (None:
    pydantic's message, its documentation URL left out). ``hidden``: nothing said quotes the
    value or suggests writing it as text."""
    kind, value = err["type"], err.get("input")
    name, written = _subject(loc)
    ctx = err.get("ctx") or {}
    if kind in _MAPPING_EXPECTED:
        flag = not hidden and is_flag(root, loc, value)
        return _mapping_expected(name, written, value, allowed_keys(root, loc), flag)
    if kind == "list_type":
        return f"{name} is a list (e.g. {written('[...]')})"
    if kind == "string_type" and value is None:
        return f"{name} is text, not null"
    text_form = kind in ("string_type", "env_value_form") and isinstance(value, _SCALARS)
    if text_form and not hidden:
        quoted = f'"{engine_text(value)}"'
        return f"{name} is text; quote it: {written(quoted)}"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"{name} is a whole number{'' if hidden else _whole_number_hint(written, value)}"
    if kind == "bool_type":
        return f"{name} is true or false (unquoted)"
    if kind in ("enum", "literal_error"):
        return f"{name} is one of {ctx.get('expected', '').replace(chr(39), '')}"
    if kind in _RANGES:
        return _range_message(name, kind, root, loc, ctx)
    return None


def _subject(loc: Sequence[str | int]) -> tuple[str, Callable[[str], str]]:
    """How a message names the value at ``loc``, and how the stack file writes a value there:
    ``capacity`` / ``capacity: X`` for a key, ``each teams entry`` / ``teams: [X]`` for an
    entry of a list."""
    name = next((str(p) for p in reversed(loc) if isinstance(p, str)), "value")
    if loc and isinstance(loc[-1], int):
        return f"each {name} entry", lambda text: f"{name}: [{text}]"
    return name, lambda text: f"{name}: {text}"


def _whole_number_hint(written: Callable[[str], str], value: object) -> str:
    """How to write a number given as text (``"2"``) or with a fraction (``3.0``)."""
    text = value.strip() if isinstance(value, str) else None
    if isinstance(value, float) and value.is_integer():
        text = str(int(value))
    return f" (write {written(text)}, unquoted)" if text and text.isdigit() else ""


def engine_text(value: object) -> str:
    """A scalar as the text the user meant (YAML's ``true`` as "true")."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _mapping_expected(
    name: str, written: Callable[[str], str], value: object, keys: Sequence[str], flag: bool
) -> str:
    if flag:
        return f"{name} is a mapping; write {written(f'{{{value}: true}}')}"
    if keys:
        example = written(f"{{{keys[0]}: ...}}")
        return f"{name} is a mapping with the keys {', '.join(keys)} (e.g. {example})"
    return f"{name} is a mapping"


def _range_message(
    name: str, kind: str, root: type[BaseModel], loc: list[str | int], ctx: dict
) -> str:
    low, high = _bounds(root, loc)
    if kind in ("too_short", "too_long"):
        low, high = ctx.get("min_length", low), ctx.get("max_length", high)
        count = ctx.get("actual_length")
        unit = f"entries (it has {count})" if count is not None else "entries"
        if low is not None and low == high:
            return f"{name} takes exactly {low} {'entry' if low == 1 else 'entries'}" + (
                f" (it has {count})" if count is not None else ""
            )
        if low is not None and high is not None:
            return f"{name} takes {low} to {high} {unit}"
        return f"{name} takes at {'least' if high is None else 'most'} {low or high} {unit}"
    low = ctx.get("ge", ctx.get("gt", low)) if low is None else low
    high = ctx.get("le", ctx.get("lt", high)) if high is None else high
    if low is not None and high is not None:
        return f"{name} must be from {low} to {high}"
    return f"{name} must be at least {low}" if high is None else f"{name} must be at most {high}"


def _bounds(root: type[BaseModel], loc: Sequence[str | int]) -> tuple[object, object]:
    """A field's inclusive bounds (Field(ge=..., le=...)), from the model that declares it."""
    field = field_at(root, loc)
    low = high = None
    for rule in getattr(field, "metadata", ()):
        low = getattr(rule, "ge", low)
        high = getattr(rule, "le", high)
        low = getattr(rule, "min_length", low)
        high = getattr(rule, "max_length", high)
    return low, high


def unknown_key_message(key: str, allowed: Sequence[str]) -> str:
    hint = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
    key = key_part(key)
    did_you_mean = f"; did you mean '{hint[0]}'?" if hint else ""
    listed = f" Allowed keys: {', '.join(allowed)}." if allowed else ""
    return f"unknown key {key!r}{did_you_mean or ('.' if listed else '')}{listed}"


def shown_value(value: object) -> str:
    """A value as a report quotes it, in the stack file's own (YAML) terms: null, true/false,
    [a, b] and {key: value}; text quoted. Cut at 80 characters."""
    text = _yaml_form(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _yaml_form(value: object, depth: int = 0) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return engine_text(value)
    if depth > 8:  # a deeply nested value is cut at 80 characters anyway
        return "..."
    if isinstance(value, dict):
        items = (f"{_key_form(k)}: {_yaml_form(v, depth + 1)}" for k, v in value.items())
        return "{" + ", ".join(_first(items)) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_first(_yaml_form(v, depth + 1) for v in value)) + "]"
    return repr(value)


def _key_form(key: object) -> str:
    if isinstance(key, str):
        return key if _PLAIN_KEY.fullmatch(key) else repr(key)
    return _yaml_form(key)


def _first(parts: Iterable[str], limit: int = 20) -> list[str]:
    """At most ``limit`` parts (a 100,000-entry list is shown cut anyway), then '...'."""
    kept = [part for _, part in zip(range(limit + 1), parts, strict=False)]
    return kept if len(kept) <= limit else [*kept[:limit], "..."]


def allowed_keys(root: type[BaseModel], loc: Sequence[str | int]) -> list[str]:
    """The keys a config model accepts at ``loc`` (walking nested models, lists and dicts)."""
    current = _unwrap(_walk(root, loc)[0])
    if not _is_model(current):
        return []
    return [f.alias or name for name, f in current.model_fields.items()]


def field_at(root: type[BaseModel], loc: Sequence[str | int]):
    """The pydantic field declared at ``loc`` (None when ``loc`` ends in a list or dict)."""
    return _walk(root, loc)[1]


def _walk(root: type[BaseModel], loc: Sequence[str | int]) -> tuple[object, object]:
    """The type at ``loc`` and the field that declares it (None past a list index or dict)."""
    current: object = root
    field = None
    for part in loc:
        current = _unwrap(current)
        if isinstance(part, str) and not _is_model(current):
            current = _member_with(current, part) or current  # a union: the member with it
        if isinstance(part, int) or not _is_model(current):
            current, field = _element_type(current), None
            continue
        field = _field_by_key(current, part)
        if field is None:
            return None, None
        current = field.annotation
    return current, field


def _field_by_key(model: type[BaseModel], key: str):
    for name, field in model.model_fields.items():
        if key in (name, field.alias):
            return field
    return None


def _member_with(tp: object, key: str) -> type[BaseModel] | None:
    """The model among a union's members that has the key ``key``."""
    members = [_unwrap(a) for a in typing.get_args(tp)]
    models = [m for m in members if _is_model(m) and _field_by_key(m, key) is not None]
    return models[0] if len(models) == 1 else None


def _is_model(tp: object) -> bool:
    from pydantic import BaseModel

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
