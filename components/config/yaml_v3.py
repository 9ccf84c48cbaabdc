"""What the Pulumi CLI makes of a plain (unquoted, untagged) scalar of a stack file, and the
value the program is handed for it.

The CLI reads `Pulumi.<stack>.yaml` with gopkg.in/yaml.v3 v3.0.1 (the version pulumi/pulumi pins
in sdk/go.mod), whose resolver is neither PyYAML's YAML 1.1 nor YAML 1.2's core schema: booleans
are only ``true True TRUE false False FALSE`` (``on``/``yes`` stay text), a leading ``0`` is
octal, ``0o``/``0x``/``0b`` and ``_`` in numbers are read, ``1e3`` is a number, base-60
(``1:30``) is text, dates with one-digit months are dates. This module restates that resolver
(gopkg.in/yaml.v3 resolve.go, ``resolve`` and ``parseTimestamp``; Go's strconv.ParseInt/ParseUint
base 0 and ParseFloat) and the way Pulumi turns the result into the text the program receives
(pulumi/pulumi v3.259 sdk/go/common/resource/config/object.go ``MarshalString``: numbers and
booleans as Go's encoding/json writes them; a structured value as JSON, re-read by
``Map.Decrypt`` with ``json.Decoder.UseNumber``, so an integer past int64 becomes a float).

Pure functions, no YAML parser: ``components.config.scalar_readings`` compares these readings
with PyYAML's for every scalar of a stack file.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass
from decimal import Decimal

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
UINT64_MAX = 2**64 - 1


class Kind(enum.Enum):
    """What yaml.v3 resolves a plain scalar to (decoding into Go's ``any``)."""

    TEXT = "text"
    NULL = "null"
    BOOL = "true/false"
    INT = "an integer"
    FLOAT = "a number"
    TIMESTAMP = "a date/time"
    NOT_FINITE = "an infinite or NaN number"


@dataclass(frozen=True)
class GoScalar:
    kind: Kind
    value: str | bool | int | float | None


# resolve.go resolveMap: looked up for any text whose first character has a hint.
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_NOT_FINITE = frozenset(
    sign + inf for sign in ("", "+", "-") for inf in (".inf", ".Inf", ".INF")
) | frozenset({".nan", ".NaN", ".NAN"})
MAYBE_NOT_TEXT = frozenset("+-0123456789yYnNtTfFoO~.")
"""resolve.go resolveTable: a plain scalar is text to yaml.v3 unless it starts with one of
these (or is empty, a null)."""
# resolve.go yamlStyleFloat, applied after every '_' is removed.
_YAML_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
# Go's ParseFloat on text starting with '.': a Go float literal, '_' only between digits.
_DOT_FLOAT = re.compile(r"\.[0-9](_?[0-9])*([eE][-+]?[0-9](_?[0-9])*)?")


def resolve_plain(text: str) -> GoScalar:
    """yaml.v3's ``resolve("", text)`` for a plain scalar."""
    if text in _BOOLS:
        return GoScalar(Kind.BOOL, _BOOLS[text])
    if text in _NULLS:
        return GoScalar(Kind.NULL, None)
    if text in _NOT_FINITE:
        return GoScalar(Kind.NOT_FINITE, text)
    if text[:1] == ".":
        number = _DOT_FLOAT.fullmatch(text) and _finite_float(text.replace("_", ""))
        return GoScalar(Kind.FLOAT, number) if number is not None else GoScalar(Kind.TEXT, text)
    if text[:1] not in "+-0123456789" or not text:  # the map lookups above were the rest
        return GoScalar(Kind.TEXT, text)
    if is_timestamp(text):
        return GoScalar(Kind.TIMESTAMP, text)
    plain = text.replace("_", "")
    integer = _parse_int(plain, 0, signed=True)
    if integer is None:
        integer = _parse_int(plain, 0, signed=False)
    if integer is not None:
        return GoScalar(Kind.INT, integer)
    if _YAML_STYLE_FLOAT.fullmatch(plain) and (number := _finite_float(plain)) is not None:
        return GoScalar(Kind.FLOAT, number)
    integer = _prefixed_int(plain)
    return GoScalar(Kind.INT, integer) if integer is not None else GoScalar(Kind.TEXT, text)


def _finite_float(text: str) -> float | None:
    """Go's ParseFloat: out of range is an error (the text stays text); underflow is 0."""
    number = float(text)
    return number if math.isfinite(number) else None


_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def _parse_uint(text: str, base: int) -> int | None:
    """strconv.ParseUint(text, base, 64): base 0 takes a 0b/0o/0x prefix or a leading 0
    (octal); no sign, no '_' (yaml.v3 removed them)."""
    if not text:
        return None
    if base == 0:
        base = 10
        if text[0] == "0":
            prefixes = {"b": 2, "o": 8, "x": 16}
            if len(text) >= 3 and text[1].lower() in prefixes:
                base, text = prefixes[text[1].lower()], text[2:]
            else:
                base, text = 8, text[1:]
    value = 0
    for char in text.lower():
        digit = _DIGITS.find(char)
        if not 0 <= digit < base:
            return None
        value = value * base + digit
        if value > UINT64_MAX:
            return None
    return value


def _parse_int(text: str, base: int, signed: bool) -> int | None:
    """strconv.ParseInt (``signed``: an optional sign, int64's range) or ParseUint."""
    if not signed:
        return _parse_uint(text, base)
    sign = 1
    if text[:1] in ("+", "-"):
        sign, text = (-1 if text[0] == "-" else 1), text[1:]
    magnitude = _parse_uint(text, base)
    if magnitude is None:
        return None
    value = sign * magnitude
    return value if INT64_MIN <= value <= INT64_MAX else None


def _prefixed_int(plain: str) -> int | None:
    """resolve.go's last resort: ``0b``/``0o`` then ParseInt of the rest in base 2/8, which
    takes a sign there (``0b-101`` is -5); ``-0b``/``-0o`` then ParseInt of '-' + the rest."""
    for prefix, base in (("0b", 2), ("0o", 8)):
        if plain.startswith(prefix):
            value = _parse_int(plain[2:], base, signed=True)
            return value if value is not None else _parse_int(plain[2:], base, signed=False)
        if plain.startswith("-" + prefix):
            return _parse_int("-" + plain[3:], base, signed=True)
    return None


# resolve.go allowedTimestampFormats, as Go's time.Parse reads them: a 4-digit year, 1-2 digit
# month, day, hour, minute and second, any fraction after '.' or ',', and a zone (Z or +hh:mm)
# after 'T'/'t', none after ' '.
_DATE = r"\d{4}-\d\d?-\d\d?"
_TIME = r"\d\d?:\d\d?:\d\d?(?:[.,]\d+)?"
_TIMESTAMP = re.compile(rf"{_DATE}(?:[Tt]{_TIME}(?:Z|[+-]\d\d:\d\d)| {_TIME})?")


def is_timestamp(text: str) -> bool:
    """Whether yaml.v3 may read ``text`` as a timestamp: its layouts, without the range checks
    of Go's time.Parse (``2025-02-30`` is text to it), which changed between Go releases (a
    zone of +25:00 is a date to Go 1.19). Taking every such text for a date only refuses more:
    quoting it is always the fix."""
    return _TIMESTAMP.fullmatch(text) is not None


def go_json_number(value: int | float) -> str:
    """A number as Go's encoding/json writes it: integers in full; floats in the shortest
    form that reads back, as plain digits from 1e-6 to 1e21 and with an exponent outside
    (``1e+21``, ``1e-7``). -0 is 0: Pulumi's YAML round trip made it the integer 0."""
    if isinstance(value, int) or value == 0:
        return str(int(value))
    digits = Decimal(repr(value)).normalize()
    if 1e-6 <= abs(value) < 1e21:
        return format(digits, "f")
    sign, numerals, exponent = digits.as_tuple()
    assert isinstance(exponent, int)
    mantissa = "".join(map(str, numerals))
    if len(mantissa) > 1:
        mantissa = f"{mantissa[0]}.{mantissa[1:]}"
    power = exponent + len(numerals) - 1
    text = f"{'-' if sign else ''}{mantissa}e{'+' if power >= 0 else '-'}{abs(power):02d}"
    return re.sub(r"e-0(\d)$", r"e-\1", text)  # encoding/json's "clean up e-09 to e-9"


def program_text(scalar: GoScalar) -> str:
    """The text a top-level ``tpu-pathways:<key>`` is handed as (object.go MarshalString:
    booleans and numbers as JSON, text as itself, a null as empty text)."""
    if scalar.kind is Kind.BOOL:
        return "true" if scalar.value else "false"
    if scalar.kind in (Kind.INT, Kind.FLOAT):
        assert isinstance(scalar.value, int | float)
        return go_json_number(scalar.value)
    return "" if scalar.value is None else str(scalar.value)


def nested_number(value: int | float) -> int | float | None:
    """A number inside a structured value, as the program reads it back from the JSON Pulumi
    passes (None: not the number written). Map.Decrypt re-reads the JSON with UseNumber: an
    integer past int64 becomes a float and loses digits. Integral floats under 1e21 are
    written without a point, so the program reads an int (``1.0`` arrives as 1)."""
    if isinstance(value, int):
        return value if INT64_MIN <= value <= INT64_MAX else None
    text = go_json_number(value)
    return int(text) if re.fullmatch(r"-?\d+", text) else value
