"""Wire values (what the SDK sends the engine) as the plan shows them: secrets hidden, unknowns
marked, whole floats as ints, mappings sorted by key.

``readable`` takes the Python form of a wire value (a stack output, or a registration's inputs
as ``json_format.MessageToDict`` gives them); ``readable_struct`` takes a registration's inputs
as sent, a protobuf ``Struct``, and gives ``readable(MessageToDict(struct))`` in one pass
without the intermediate dict: json_format's generic walk (each value looked up through its
field descriptor) cost more than the registration's own recording (84 ms of 125 at 1,024
slices).
"""

from __future__ import annotations

import math
from typing import Any

from pulumi.runtime.rpc import UNKNOWN as WIRE_UNKNOWN

from components.plan.model import SECRET, UNKNOWN
from components.sdk import pulumi_private as sdk


def readable(value: Any) -> Any:
    """Wire values -> plan values: secrets hidden, unknowns marked, whole floats as ints."""
    if isinstance(value, dict):
        sig = value.get(sdk.SIG_KEY)
        if sig == sdk.SECRET_SIG:
            return SECRET
        if sig == sdk.RESOURCE_SIG:
            return value.get("urn")
        return {k: readable(v) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple):  # a program's tuple output is a list on the wire
        return [readable(v) for v in value]
    if value == WIRE_UNKNOWN:
        return UNKNOWN
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def readable_struct(struct: Any) -> Any:
    """``readable(json_format.MessageToDict(struct))`` for a ``google.protobuf.Struct``."""
    fields = struct.fields
    if sdk.SIG_KEY in fields:
        sig = _wire(fields[sdk.SIG_KEY])
        if sig == sdk.SECRET_SIG:
            return SECRET
        if sig == sdk.RESOURCE_SIG:
            return _wire(fields["urn"]) if "urn" in fields else None
    return {key: _readable_value(fields[key]) for key in sorted(fields)}


def _readable_value(value: Any) -> Any:
    """``readable`` of one ``google.protobuf.Value`` as MessageToDict converts it."""
    kind = value.WhichOneof("kind")
    if kind == "struct_value":
        return readable_struct(value.struct_value)
    if kind == "list_value":
        return [_readable_value(item) for item in value.list_value.values]
    plain = _wire(value, kind)
    if plain == WIRE_UNKNOWN:
        return UNKNOWN
    if isinstance(plain, float) and plain.is_integer():
        return int(plain)
    return plain


def _wire(value: Any, kind: str | None = None) -> Any:
    """One ``google.protobuf.Value`` as ``json_format.MessageToDict`` gives it."""
    kind = value.WhichOneof("kind") if kind is None else kind
    if kind == "string_value":
        return value.string_value
    if kind == "number_value":
        number = value.number_value
        if math.isinf(number) or math.isnan(number):  # refused as json_format refuses them
            shown = "Infinity" if math.isinf(number) else "NaN"
            raise ValueError(
                f"Fail to serialize {shown} for Value.number_value, which would parse as "
                "string_value"
            )
        return number
    if kind == "bool_value":
        return value.bool_value
    if kind == "struct_value":
        fields = value.struct_value.fields
        return {key: _wire(fields[key]) for key in fields}
    if kind == "list_value":
        return [_wire(item) for item in value.list_value.values]
    return None  # null_value, or no kind set
