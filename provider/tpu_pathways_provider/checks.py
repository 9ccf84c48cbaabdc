"""Validating a component's args with the stack file's config models: every problem at once."""

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from components.errors import ConfigError, ConfigIssue, issues_from_validation, join_key

M = TypeVar("M", bound=BaseModel)


class Problems:
    """The problems found in one component's args, keyed by the input's path."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.issues: list[ConfigIssue] = []

    def model(self, model: type[M], key: str, values: dict[str, Any]) -> M | None:
        """``values`` (at input ``key``) as ``model``, or None with its problems kept."""
        try:
            return model.model_validate(values)
        except ValidationError as exc:
            self.issues += [
                ConfigIssue(join_key(key, i.key), i.message)
                for i in issues_from_validation(exc, model)
            ]
            return None

    def add(self, key: str, message: str) -> None:
        self.issues.append(ConfigIssue(key, message))

    def raise_any(self) -> None:
        if self.issues:
            raise ConfigError(self.issues, self.source)
