"""Kubernetes resource quantities (``"500m"``, ``"24"``, ``"100Gi"``) as plain integers.

CPU is kept in millicores and memory in bytes so that sizing checks are exact integer sums.
"""

from __future__ import annotations

import math
import re

_MEMORY_SUFFIXES = {
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
}
_MEMORY = re.compile(r"^(\d+(?:\.\d+)?)(|k|M|G|T|Ki|Mi|Gi|Ti)$")
_CPU = re.compile(r"^(\d+(?:\.\d+)?)(m?)$")

GIB = 2**30
MIB = 2**20


def parse_cpu(value: str | int | float) -> int:
    """CPU quantity -> millicores. Raises ValueError naming the allowed forms."""
    match = _CPU.match(str(value).strip())
    if not match:
        raise ValueError(
            f"{value!r} is not a CPU quantity; use cores ('24', '0.5') or millicores ('500m')"
        )
    number, milli = match.groups()
    millicores = float(number) if milli else float(number) * 1000
    if millicores <= 0 or millicores != int(millicores):
        raise ValueError(f"{value!r} is not a positive whole number of millicores")
    return int(millicores)


def parse_memory(value: str | int) -> int:
    """Memory quantity -> bytes. Raises ValueError naming the allowed suffixes."""
    match = _MEMORY.match(str(value).strip())
    if not match:
        raise ValueError(
            f"{value!r} is not a memory quantity; use a number with one of the suffixes "
            "Ki, Mi, Gi, Ti (binary) or k, M, G, T (decimal), e.g. '100Gi'"
        )
    number, suffix = match.groups()
    # Kubernetes rounds fractional byte quantities up.
    amount = math.ceil(float(number) * _MEMORY_SUFFIXES[suffix])
    if amount <= 0:
        raise ValueError(f"{value!r} must be more than zero")
    return amount


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
