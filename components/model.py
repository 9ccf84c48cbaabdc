"""The base of every config model, shared by the stack schema and the pricing overrides."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class ConfigModel(BaseModel):
    """Base for every config model: camelCase keys, unknown keys rejected, immutable."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        frozen=True,
        # The string under each field is its doc: cli/reference.py reads it from the source
        # (pydantic's use_attribute_docstrings would parse every model's source on import).
    )
