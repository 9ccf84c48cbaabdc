"""Kubernetes resource quantities (``"500m"``, ``"24"``, ``"100Gi"``) as plain integers.

CPU is kept in millicores and memory in bytes so that sizing checks are exact integer sums.
"""

from __future__ import annotations

import re
from decimal import Decimal

# Kubernetes' quantity grammar (k8s.io/apimachinery/pkg/api/resource/quantity.go):
#   <quantity> ::= <signedNumber><suffix>; <suffix> ::= <binarySI> | <decimalSI> | e<signedNumber>
#   <binarySI> ::= Ki | Mi | Gi | Ti | Pi | Ei;  <decimalSI> ::= m | "" | k | M | G | T | P | E
# Signs are left out here: a request is never negative. Surrounding whitespace is trimmed (a
# YAML block scalar leaves a trailing newline); whitespace inside is not part of the grammar.
_SUFFIXES = {
    "m": Decimal("0.001"),
    "": Decimal(1),
    "k": Decimal(10) ** 3,
    "M": Decimal(10) ** 6,
    "G": Decimal(10) ** 9,
    "T": Decimal(10) ** 12,
    "P": Decimal(10) ** 15,
    "E": Decimal(10) ** 18,
    "Ki": Decimal(2) ** 10,
    "Mi": Decimal(2) ** 20,
    "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40,
    "Pi": Decimal(2) ** 50,
    "Ei": Decimal(2) ** 60,
}
# The forms accepted here, a subset of that grammar: CPU in cores or millicores, memory with a
# byte suffix (no exponents, no millibytes: they are legal but never meant).
_CPU = re.compile(r"(?P<number>[0-9]+(?:\.[0-9]+)?)(?P<suffix>m?)")
_MEMORY = re.compile(r"(?P<number>[0-9]+(?:\.[0-9]+)?)(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|)")

GIB = 2**30
MIB = 2**20
INT64_MAX = 2**63 - 1
"""Kubernetes keeps a quantity's value as an int64 of its base unit (Quantity.MilliValue for
CPU, Quantity.Value for bytes: k8s.io/apimachinery/pkg/api/resource/quantity.go); past it the
scheduler's sums overflow."""


def normalize_quantity(value: str | int) -> str:
    """The quantity as it goes into a manifest: surrounding whitespace trimmed."""
    return str(value).strip()


def _amount(value: str | int, grammar: re.Pattern[str]) -> Decimal | None:
    if isinstance(value, bool):
        return None
    match = grammar.fullmatch(normalize_quantity(value))
    if match is None:
        return None
    return Decimal(match["number"]) * _SUFFIXES[match["suffix"]]


def parse_cpu(value: str | int | float) -> int:
    """CPU quantity -> millicores. Raises ValueError naming the allowed forms."""
    amount = _amount(value, _CPU)
    if amount is None:
        raise ValueError(
            f"{value!r} is not a CPU quantity; use cores ('24', '0.5') or millicores ('500m')"
        )
    millicores = amount * 1000
    if millicores <= 0 or millicores != millicores.to_integral_value():
        raise ValueError(f"{value!r} is not a positive whole number of millicores")
    if millicores > INT64_MAX:
        raise ValueError(f"{value!r} is more millicores than Kubernetes can count (int64)")
    return int(millicores)


def parse_memory(value: str | int) -> int:
    """Memory quantity -> bytes. Raises ValueError naming the allowed suffixes."""
    amount = _amount(value, _MEMORY)
    if amount is None:
        raise ValueError(
            f"{value!r} is not a memory quantity; use a number with one of the suffixes "
            "Ki, Mi, Gi, Ti (binary) or k, M, G, T (decimal), e.g. '100Gi'"
        )
    if amount == 0:
        raise ValueError(f"{value!r} must be more than zero")
    if amount < 1:
        raise ValueError(f"{value!r} is below one byte; memory is at least '1' (e.g. '100Gi')")
    if amount != amount.to_integral_value():
        raise ValueError(f"{value!r} is not a whole number of bytes")
    if amount > INT64_MAX:
        raise ValueError(f"{value!r} is more bytes than Kubernetes can count (int64)")
    return int(amount)


def format_cpu(millicores: int) -> str:
    return f"{millicores // 1000}" if millicores % 1000 == 0 else f"{millicores}m"


def format_memory(num_bytes: int) -> str:
    if num_bytes % GIB == 0:
        return f"{num_bytes // GIB}Gi"
    if num_bytes % MIB == 0:
        return f"{num_bytes // MIB}Mi"
    return str(num_bytes)


def describe_memory(num_bytes: int) -> str:
    """For messages: binary units, one decimal."""
    return f"{num_bytes / GIB:.1f}Gi"
