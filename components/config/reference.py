"""The README's config reference, generated from the config models' field docs.

`python -m components config-reference` prints it; a test keeps the README's copy in step.
"""

from __future__ import annotations

import enum
import types
import typing

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from components.config.schema import NAMESPACE, StackConfig

BEGIN = "<!-- config-reference:begin -->"
END = "<!-- config-reference:end -->"


def render_reference() -> str:
    lines = [BEGIN, ""]
    lines += _model_section(StackConfig, f"{NAMESPACE}:", top=True)
    lines += ["", END]
    return "\n".join(lines)


def first_paragraph(docstring: str) -> str:
    """A docstring's first paragraph on one line: a sentence that spans lines stays whole."""
    paragraph = docstring.strip().split("\n\n", 1)[0]
    return " ".join(line.strip() for line in paragraph.splitlines())


def _model_section(model: type[BaseModel], prefix: str, top: bool = False) -> list[str]:
    lines = [f"#### `{prefix.rstrip('.')}`" if not top else f"#### Top-level keys (`{prefix}KEY`)"]
    doc = first_paragraph(model.__doc__ or "")
    if doc:
        lines += ["", doc]
    lines += ["", "| key | type | default | meaning |", "|---|---|---|---|"]
    nested: list[tuple[type[BaseModel], str]] = []
    for name, field in model.model_fields.items():
        key = field.alias or name
        annotation = field.annotation
        lines.append(
            f"| `{key}` | {_type_name(annotation)} | {_default(field)} | "
            f"{(field.description or '').replace('|', '/').replace(chr(10), ' ')} |"
        )
        inner = _inner_model(annotation)
        if inner is not None:
            suffix = "[]" if _is_list(annotation) else ""
            nested.append((inner, f"{prefix}{key}{suffix}."))
    for inner, inner_prefix in nested:
        lines += ["", *_model_section(inner, inner_prefix)]
    return lines


def _default(field) -> str:
    if field.is_required():
        return "required"
    value = field.default
    if value is PydanticUndefined or value is None:
        return "-"
    if isinstance(value, BaseModel):
        return "see below"
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, list):
        return "`[]`" if not value else "see below"
    if value == "":
        return '`""`'
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def _members(annotation) -> list:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return [a for a in typing.get_args(annotation) if a is not type(None)]
    return [annotation]


def _is_list(annotation) -> bool:
    return any(typing.get_origin(m) is list for m in _members(annotation))


def _inner_model(annotation) -> type[BaseModel] | None:
    for member in _members(annotation):
        candidates = typing.get_args(member) if typing.get_origin(member) is list else (member,)
        for candidate in candidates:
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                return candidate
    return None


def _type_name(annotation) -> str:
    names = []
    for member in _members(annotation):
        origin = typing.get_origin(member)
        if origin is typing.Annotated:
            member = typing.get_args(member)[0]
            origin = typing.get_origin(member)
        if origin is list:
            names.append(f"list of {_type_name(typing.get_args(member)[0])}")
        elif origin is dict:
            names.append("map")
        elif isinstance(member, type) and issubclass(member, enum.Enum):
            names.append(" / ".join(f"`{m.value}`" for m in member))
        elif isinstance(member, type) and issubclass(member, BaseModel):
            names.append("object")
        elif isinstance(member, type):
            names.append(member.__name__)
        else:
            names.append(str(member))
    return " or ".join(names)
