"""The guardrail check of the workloads a stack registers (PathwaysJobs, JobSets): every image
they run is pinned outside dev, as the stack file's check (``resolve.image_checks``) requires.
A program of your own that registers a workload with an unpinned image is held to it by
``plan --policy`` and the policy pack."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from components.config import grammars
from components.pathways.controller_model import LATEST
from components.plan.views import is_unknown
from components.policy.model import Resource, StackContext
from components.vocabulary import Environment


def images_pinned(resource: Resource, context: StackContext) -> Iterator[str]:
    """Outside dev: no image without a tag or digest, none tagged ``latest``, and no
    ``latest`` Pathways release."""
    if context.environment == Environment.DEV.value:
        return
    for path, image in _images(resource.inputs, ""):
        if problem := grammars.unpinned_image_problem(image):
            yield f"{path}: {problem} (pin a tag or a digest outside dev)"
    spec = resource.inputs.get("spec")
    version = spec.get("pathwaysVersion") if isinstance(spec, Mapping) else None
    if isinstance(version, str) and version.lower() == LATEST:
        yield (
            f"spec.pathwaysVersion is {version!r}, which names no fixed build (use a Pathways "
            "release such as jax-0.9.0 outside dev)"
        )


def _images(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """Every ``image`` string of the inputs with its path (containers, custom components)."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if key == "image" and isinstance(item, str) and not is_unknown(item):
                yield where, item
            else:
                yield from _images(item, where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _images(item, f"{path}[{index}]")
