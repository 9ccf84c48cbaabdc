"""The README's config reference, generated from the config models' field docs: a stack's
keys (``StackConfig``), then a fleet stack's (``FleetStackConfig``). A model documented once is
referred to, not repeated; a model extending one documented lists only its own keys.

`python -m components config-reference` prints it; a test keeps the README's copy in step.
"""

from __future__ import annotations

import ast
import enum
import inspect
import itertools
import sys
import types
import typing
from functools import cache

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from components.config.schema import NAMESPACE, StackConfig
from components.config.schema.fleet import FleetStackConfig

BEGIN = "<!-- config-reference:begin -->"
END = "<!-- config-reference:end -->"
FLEET_TITLE = f"#### Fleet stack keys (`{NAMESPACE}:KEY` of a stack with `{NAMESPACE}:fleet`)"
FLEET_SECTION = " (fleet stack)"  # after the fleet's own sections' keys: some share a stack's


def render_reference() -> str:
    documented: dict[type[BaseModel], str] = {}
    lines = [BEGIN, ""]
    lines += _model_section(StackConfig, f"{NAMESPACE}:", documented, top=True)
    lines += [
        "",
        *_model_section(
            FleetStackConfig, f"{NAMESPACE}:", documented, title=FLEET_TITLE, label=FLEET_SECTION
        ),
    ]
    lines += ["", END]
    return "\n".join(lines)


def first_paragraph(docstring: str) -> str:
    """A docstring's first paragraph on one line: a sentence that spans lines stays whole."""
    paragraph = docstring.strip().split("\n\n", 1)[0]
    return " ".join(line.strip() for line in paragraph.splitlines())


def _model_section(
    model: type[BaseModel],
    prefix: str,
    documented: dict[type[BaseModel], str],
    top: bool = False,
    title: str | None = None,
    label: str = "",
) -> list[str]:
    """``model``'s table and, below it, the tables of the models it nests that ``documented``
    (model -> its section's key) does not hold yet; ``label`` follows the key in their titles."""
    documented.setdefault(model, prefix.rstrip("."))
    if title is None:
        key = prefix.rstrip(".")
        title = f"#### Top-level keys (`{prefix}KEY`)" if top else f"#### `{key}`{label}"
    lines = [title]
    doc = first_paragraph(model.__doc__ or "")
    base = _documented_base(model, documented)
    if base is not None:
        doc += f" Every key of `{documented[base]}`, and:"
    if doc:
        lines += ["", doc.strip()]
    lines += ["", "| key | type | default | meaning |", "|---|---|---|---|"]
    nested: list[tuple[type[BaseModel], str]] = []
    for name, field in model.model_fields.items():
        if base is not None and name in base.model_fields:
            continue
        key = field.alias or name
        annotation = field.annotation
        doc = field.description or field_docs(model).get(name, "")
        meaning = doc.replace("|", "/").replace(chr(10), " ")
        inner = _inner_model(annotation)
        if inner is not None and inner in documented:
            meaning += f" Its keys: `{documented[inner]}`."
        lines.append(f"| `{key}` | {_type_name(annotation)} | {_default(field)} | {meaning} |")
        if inner is not None and inner not in documented:
            suffix = "[]" if _is_list(annotation) else ""
            documented[inner] = f"{prefix}{key}{suffix}"
            nested.append((inner, f"{prefix}{key}{suffix}."))
    for inner, inner_prefix in nested:
        lines += ["", *_model_section(inner, inner_prefix, documented, label=label)]
    return lines


def field_docs(model: type[BaseModel]) -> dict[str, str]:
    """The docstring under each field of ``model`` and of the models it extends, by field name.

    Read from the source here, for the reference only: pydantic's ``use_attribute_docstrings``
    would read the source of every model class on import, a tenth of a plan's start-up."""
    docs: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if isinstance(cls, type) and issubclass(cls, BaseModel) and cls is not BaseModel:
            docs.update(_class_field_docs(cls.__module__, cls.__qualname__))
    return docs


@cache
def _class_field_docs(module: str, qualname: str) -> dict[str, str]:
    """``name: type`` followed by a string: that string (cleaned as a docstring) per name."""
    body = _module_source(module).body
    for part in qualname.split("."):
        found = [n for n in body if isinstance(n, ast.ClassDef) and n.name == part]
        if not found:
            return {}
        body = found[0].body
    docs: dict[str, str] = {}
    for statement, after in itertools.pairwise(body):
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[statement.target.id] = inspect.cleandoc(after.value.value)
    return docs


@cache
def _module_source(module: str) -> ast.Module:
    return ast.parse(inspect.getsource(sys.modules[module]))


def _documented_base(
    model: type[BaseModel], documented: dict[type[BaseModel], str]
) -> type[BaseModel] | None:
    """The documented model ``model`` extends, if any (its keys are not listed again)."""
    return next((b for b in model.__mro__[1:] if b in documented), None)


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
