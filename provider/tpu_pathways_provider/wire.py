"""A component's args as the stack file would hold them: the config models validate them.

The provider hands a component its args as Python names (snake_case, nested TypedDicts as
dicts, enum values as members) with every number a float: the gRPC Struct has no integers, and
``ComponentProvider.map_input_properties`` (pulumi 3.224 to 3.272) converts a top-level integer
and then overwrites it with the float, and never converts one in a list or nested type.
``stack_values`` turns them back into the stack file's form, led by the TypedDict's
annotations only: a key of a ``dict[str, ...]`` the user wrote (an env name such as ``MY_VAR``,
a label key) is kept as it is.
"""

import enum
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, Required, get_args, get_origin, is_typeddict

from pydantic.alias_generators import to_camel  # the config models' own alias generator


def stack_values(typed: type, value: Mapping[str, Any]) -> dict[str, Any]:
    """``value`` (of TypedDict ``typed``) with camelCase keys, integers as ints, enums as their
    values; None values are left out (an unset key)."""
    # The annotations as written (objects: no __future__ import here); get_type_hints would try
    # to resolve pulumi.Input's forward reference to Output.
    hints = typed.__annotations__
    return {
        to_camel(key): _value(hints[key], item)
        for key, item in value.items()
        if key in hints and item is not None
    }


def _value(annotation: Any, value: Any) -> Any:
    annotation = _unwrapped(annotation)
    if is_typeddict(annotation) and isinstance(value, Mapping):
        return stack_values(annotation, value)
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (list, Sequence):
        return [_value(args[0], item) for item in value] if isinstance(value, list) else value
    if origin in (dict, Mapping):
        if not isinstance(value, Mapping):
            return value
        return {key: _value(args[1], item) for key, item in value.items()}
    if isinstance(value, enum.Enum):
        return value.value
    if annotation is int and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _unwrapped(annotation: Any) -> Any:
    """``NotRequired[X]``, ``Required[X]``, ``X | None``: X."""
    while get_origin(annotation) in (NotRequired, Required):
        annotation = get_args(annotation)[0]
    if get_origin(annotation) in (typing.Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return members[0]
    return annotation
