"""The plan document: every resource the program registers, with its inputs, options and the
dependencies the SDK sent to the engine, plus the stack outputs and a TPU summary."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator

from components.tokens import KUBERNETES_PREFIX

SECRET = "[secret]"
UNKNOWN = "[unknown]"  # known only after the cloud creates the resource
# The counts per TPU generation of ``summary.tpu``, in the order the plan document lists them.
TPU_COUNTS = ("pools", "slices", "hosts", "chips")


@dataclass(frozen=True)
class PlannedResource:
    urn: str
    type: str
    name: str
    parent: str | None
    custom: bool
    provider: str | None
    inputs: dict[str, Any]
    dependencies: list[str]
    options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The resource as a plain dict. Shallow (it shares ``inputs``; plans are read-only):
        ``dataclasses.asdict`` deep-copies every value, about 35 ms per pass over a 256-slice
        plan (benchmarks/README.md)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def is_kubernetes_object(self) -> bool:
        return self.custom and self.type.startswith(KUBERNETES_PREFIX) and "kind" in self.inputs


@dataclass
class Plan:
    stack: str
    project: str
    resources: list[PlannedResource]
    outputs: dict[str, Any]
    summary: dict[str, Any]

    @classmethod
    def load(cls, document: Any) -> Plan:
        """A plan from its document (``to_dict``, or a saved ``plan --json``), validated
        against ``PlanDocument`` first: raises pydantic's ValidationError on anything else."""
        PlanDocument.model_validate(document)
        resources = [
            PlannedResource(**{f.name: r[f.name] for f in fields(PlannedResource) if f.name in r})
            for r in document["resources"]
        ]
        return cls(
            document["stack"],
            document["project"],
            resources,
            document["outputs"],
            document["summary"],
        )

    def to_dict(self) -> dict[str, Any]:
        """The plan document (``plan --json`` prints it); ``load`` reads it back."""
        return {
            "stack": self.stack,
            "project": self.project,
            "resources": [r.to_dict() for r in self.resources],
            "outputs": self.outputs,
            "summary": self.summary,
        }

    def by_type(self, type_token: str) -> list[PlannedResource]:
        return [r for r in self.resources if r.type == type_token]

    def get(self, type_token: str, name: str) -> PlannedResource:
        matches = [r for r in self.resources if r.type == type_token and r.name == name]
        if len(matches) != 1:
            raise KeyError(f"{len(matches)} resources of type {type_token} named {name}")
        return matches[0]


class _Document(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ResourceOptionsDocument(_Document):
    """``options`` of a planned resource: the ones the diff reads are typed, others pass."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    protect: bool | None = None
    delete_before_replace: bool | None = Field(None, alias="deleteBeforeReplace")
    ignore_changes: list[str] | None = Field(None, alias="ignoreChanges")
    replace_on_changes: list[str] | None = Field(None, alias="replaceOnChanges")


class ResourceDocument(_Document):
    """One entry of ``resources`` (``PlannedResource.to_dict``)."""

    urn: str
    type: str
    name: str
    parent: str | None
    custom: bool
    provider: str | None
    inputs: dict[str, JsonValue]
    dependencies: list[str]
    options: ResourceOptionsDocument = ResourceOptionsDocument()


class SummaryDocument(_Document):
    """``summary``: TPU chips per generation, the resource count and the cost estimate."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    tpu: dict[str, dict[str, int]] = {}
    resources: int | None = None
    cost: dict[str, JsonValue] | None = None


class PlanDocument(_Document):
    """The schema of the plan document (``Plan.to_dict``, ``plan --json``); ``Plan.load``
    validates with it, so a ``--diff`` base that does not match is refused."""

    stack: str
    project: str
    resources: list[ResourceDocument]
    outputs: dict[str, JsonValue]
    summary: SummaryDocument

    @field_validator("resources")
    @classmethod
    def _one_per_urn(cls, resources: list[ResourceDocument]) -> list[ResourceDocument]:
        """A plan has one resource per URN; a second would shadow the first in a diff."""
        first: dict[str, int] = {}
        for i, resource in enumerate(resources):
            if resource.urn in first:
                urn = resource.urn if len(resource.urn) <= 200 else resource.urn[:197] + "..."
                raise ValueError(
                    f"two resources have the URN {urn!r} (resources[{first[resource.urn]}] "
                    f"and resources[{i}])"
                )
            first[resource.urn] = i
        return resources
