"""One scalar of a stack file, read twice: as PyYAML (YAML 1.1) reads it and as the Pulumi CLI
does (gopkg.in/yaml.v3: ``components.config.yaml_v3``). The offline plan uses Pulumi's reading,
the value `pulumi up` hands the program, and refuses what the two readers would take for
different values, naming the fix (the quoting, or the number to write):

- a top-level value (``tpu-pathways:<key>: ...``) reaches the program as text: it is read only if
  that text is the text written (``team: on`` is ``"on"``; ``pathwaysVersion: 0.10`` would
  arrive as ``"0.1"``: quote it);
- a value inside a mapping or list reaches the program as JSON: a number or true/false must be
  one for both readers (``1e3`` and ``0o10`` are numbers to Pulumi, text to YAML 1.1), and an
  integer must survive Pulumi's JSON (at most int64); ``on``/``yes``/``off`` are text, as to
  Pulumi;
- a key must be text to Pulumi (``1``, ``true``, ``~`` are not; ``ON`` is);
- never: dates (Pulumi passes ``2025-1-5`` as ``"2025-01-05 00:00:00 +0000 UTC"``), infinities
  and NaN (Pulumi cannot load the file), YAML 1.1's base-60 numbers, explicit tags other than
  ``!!str``/``!``.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Any

from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import ScalarNode

from components.config.yaml_v3 import GoScalar, Kind, nested_number, program_text, resolve_plain

STR = "tag:yaml.org,2002:str"
BOOL = "tag:yaml.org,2002:bool"
INT = "tag:yaml.org,2002:int"
FLOAT = "tag:yaml.org,2002:float"
NULL = "tag:yaml.org,2002:null"
MERGE = "tag:yaml.org,2002:merge"
TIMESTAMP = "tag:yaml.org,2002:timestamp"
VALUE = "tag:yaml.org,2002:value"  # YAML 1.1's `=`: PyYAML reads it as this tag, Pulumi as text
NON_SPECIFIC = "!"  # `! text`: both readers resolve it as if it had no tag


class Place(enum.Enum):
    """Where a scalar is, which decides how the program receives it."""

    TOP = "top"
    NESTED = "nested"
    KEY = "key"


@dataclass(frozen=True)
class Reading:
    """The value the program gets (``problem`` None) or why the plan refuses the scalar."""

    value: Any = None
    problem: str | None = None


_UNREADABLE = object()  # PyYAML's constructor failed on the text (``0x_``, ``0b_``)
_CONSTRUCTOR = SafeConstructor()


def read_scalar(node: ScalarNode, tag: str | None, place: Place, hidden: bool) -> Reading:
    """``node`` as the program receives it. ``tag``: the tag written on it (None: none);
    ``hidden``: a credential's value, never shown in a message."""
    text = node.value
    shown = "this" if hidden else repr(_short(text))
    if tag not in (None, NON_SPECIFIC, STR):
        return Reading(problem=_explicit_tag_problem(tag, shown))
    if tag == STR or node.style not in (None, ""):  # quoted, block or !!str: text to both
        return Reading(text)
    pulumi = resolve_plain(text)
    if problem := _never(node, pulumi, shown, hidden):
        return Reading(problem=problem)
    if place is Place.KEY:
        return _key(node, pulumi)
    if pulumi.kind is Kind.NULL:
        return Reading(None)
    if place is Place.TOP:
        return _top(text, pulumi, shown, hidden)
    return _nested(node, pulumi, shown, hidden)


def _never(node: ScalarNode, pulumi: GoScalar, shown: str, hidden: bool) -> str | None:
    """What neither reading can carry: dates, infinities, base-60 numbers, ``<<`` as a value."""
    text = node.value
    quote = "" if hidden else f'; if you mean the text, quote it: "{_short(text)}"'
    if pulumi.kind is Kind.TIMESTAMP or node.tag == TIMESTAMP:
        return (
            f"YAML reads {shown} as a date/time, which config cannot carry (Pulumi would pass "
            f"it on as a date in its own format){quote}"
        )
    if pulumi.kind is Kind.NOT_FINITE or (node.tag == FLOAT and not _finite(text)):
        return f"{shown} is not a finite number, which config cannot carry (JSON has none)"
    if node.tag in (INT, FLOAT) and ":" in text:
        return _sexagesimal_problem(text, shown, hidden)
    if node.tag == MERGE:
        return 'YAML reads << as a merge key, which only a key can be; quote it: "<<"'
    return None


# What a key read as something other than text becomes in the JSON the program gets (object.go
# unmarshalObject: ``fmt.Sprintf("%v", key)``), and what is lost with it.
_KEY_READ_AS = {Kind.NULL: "null", Kind.BOOL: "true/false", Kind.INT: "a number"}
_KEY_LOSS = {
    Kind.NULL: "~, null and an empty key would all become null",
    Kind.BOOL: "true, True and TRUE would all become true",
    Kind.INT: "1, 01 and 0x1 would all become 1",
    Kind.FLOAT: "1.0 and 1.00 would both become 1",
}


def _key(node: ScalarNode, pulumi: GoScalar) -> Reading:
    if pulumi.kind is Kind.TEXT:
        return Reading(node.value)
    text = _short(node.value)
    return Reading(
        problem=f"YAML reads the key {text!r} as {_KEY_READ_AS.get(pulumi.kind, 'a number')}, "
        f"not as a name ({_KEY_LOSS[pulumi.kind]}, and one value would be lost); quote it: "
        f'"{text}"'
    )


def _top(text: str, pulumi: GoScalar, shown: str, hidden: bool) -> Reading:
    """A top-level value is handed over as text: read only if that text is the text written."""
    passed = program_text(pulumi)
    if passed == text:
        return Reading(_stored(pulumi))
    if hidden:
        return Reading(problem=f"Pulumi would pass {shown} on other than as written; quote it")
    return Reading(
        problem=f"Pulumi passes {_short(text)} to the program as the {_what(pulumi)} text "
        f'{_short(passed)!r}, not as written; quote it: "{_short(text)}"'
    )


def _nested(node: ScalarNode, pulumi: GoScalar, shown: str, hidden: bool) -> Reading:
    pyyaml = _pyyaml_value(node)
    if pulumi.kind is Kind.TEXT:
        if node.tag in (STR, BOOL, VALUE):  # YAML 1.1's on/yes/off/no and `=` are text here
            return Reading(node.value)
        return Reading(problem=_disagree(node.value, None, pyyaml, shown, hidden))
    if pulumi.kind is Kind.BOOL:
        return Reading(pulumi.value)  # true/True/TRUE/false/...: both readers agree
    assert isinstance(pulumi.value, int | float)
    number = nested_number(pulumi.value)
    if number is None:
        return Reading(
            problem=f"{shown} is past the largest integer Pulumi carries (int64, "
            "9223372036854775807): the program would receive a rounded float; use a smaller "
            "number"
        )
    is_number = isinstance(pyyaml, int | float) and not isinstance(pyyaml, bool)
    if is_number and pyyaml == number:
        return Reading(number)
    return Reading(problem=_disagree(node.value, number, pyyaml, shown, hidden))


def _disagree(text: str, number: int | float | None, pyyaml: Any, shown: str, hidden: bool) -> str:
    """Pulumi reads ``number`` (None: the text), YAML 1.1 ``pyyaml``."""
    if hidden:
        return f"YAML readers disagree on {shown}; quote it"
    if pyyaml is _UNREADABLE:
        yaml_11 = "cannot read it"
    elif isinstance(pyyaml, str):
        yaml_11 = "reads the text"
    else:
        yaml_11 = f"reads {pyyaml!r}"
    pulumi = "the text" if number is None else f"the number {number}"
    fix = "" if number is None else f"write {number} or "
    return (
        f"YAML readers disagree on {_short(text)}: Pulumi's reads {pulumi}, YAML 1.1 "
        f'{yaml_11}; {fix}quote it: "{_short(text)}"'
    )


def _pyyaml_value(node: ScalarNode) -> Any:
    if node.tag in (STR, VALUE):
        return node.value
    try:
        return _CONSTRUCTOR.yaml_constructors[node.tag](_CONSTRUCTOR, node)
    except (ConstructorError, ValueError, KeyError, OverflowError):
        return _UNREADABLE


def _stored(pulumi: GoScalar) -> Any:
    """The value kept for a scalar (the same wherever an alias repeats it): the number the
    program reads back from JSON, or, past int64 (a top-level value, passed as its text), the
    number itself."""
    if pulumi.kind in (Kind.INT, Kind.FLOAT):
        assert isinstance(pulumi.value, int | float)
        number = nested_number(pulumi.value)
        return pulumi.value if number is None else number
    return pulumi.value


def _what(pulumi: GoScalar) -> str:
    return {Kind.BOOL: "true/false", Kind.INT: "number", Kind.FLOAT: "number"}.get(
        pulumi.kind, "plain"
    )


def _explicit_tag_problem(tag: str, shown: str) -> str:
    short = tag.replace("tag:yaml.org,2002:", "!!")
    return (
        f"{shown} has the tag {short}, which YAML readers apply differently (Pulumi reads "
        "!!float 1 as 1, PyYAML as 1.0); write the value without it, quoted if you mean text"
    )


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def _sexagesimal_problem(text: str, shown: str, hidden: bool) -> str:
    """YAML 1.1's base-60 numbers (``1:30`` is 90): PyYAML reads one, Pulumi's YAML reader
    (gopkg.in/yaml.v3: no base 60) reads the text, so the file means two things."""
    if hidden:
        return f"YAML 1.1 reads {shown} as a base-60 number, Pulumi as text; quote it"
    value = _base60(text)
    number = (
        f" or write the number ({value:g})" if value is not None and math.isfinite(value) else ""
    )
    return (
        f"YAML 1.1 reads {_short(text)!r} as a base-60 number, Pulumi's YAML reader as the text "
        f'{_short(text)!r}; quote it ("{_short(text)}"){number}'
    )


def _base60(text: str) -> float | None:
    digits = text.replace("_", "").lower()
    sign = -1.0 if digits.startswith("-") else 1.0
    total = 0.0
    try:
        for part in digits.lstrip("+-").split(":"):
            total = total * 60 + float(part)
    except (ValueError, OverflowError):
        return None
    return sign * total


def _finite(text: str) -> bool:
    """Whether a YAML 1.1 float (``1_000.5``, ``.inf``) is finite."""
    digits = text.replace("_", "").lower()
    if digits.lstrip("+-") in (".inf", ".nan"):
        return False
    value = _base60(digits)
    return value is not None and math.isfinite(value)
