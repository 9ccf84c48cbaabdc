"""Pinned images: every image a stack names (a workload's user image, a custom component's
image, the Pathways release) needs a tag other than ``latest``, or a digest, outside environment
dev; in dev an unpinned one is warned about. The controller pulls with imagePullPolicy Always,
so a restarted pod could run another build than the ones beside it. The guardrail rule
``images-pinned`` (``components.policy.access_checks``) checks the same on what the plan
registers, so a program of your own is held to it too."""

from __future__ import annotations

from components.config import grammars
from components.config.schema import StackConfig
from components.errors import ConfigIssue
from components.pathways.controller_model import LATEST, PATHWAYS_RELEASE
from components.vocabulary import Environment


def image_issues(config: StackConfig) -> list[ConfigIssue]:
    """Outside dev: every unpinned image and a ``latest`` Pathways release, by key."""
    if config.environment is Environment.DEV:
        return []
    why = (
        f"allowed only in environment dev (this stack is {config.environment.value}): the "
        "controller pulls images with imagePullPolicy Always, so a restarted worker could "
        "run another build than the resource manager"
    )
    return [
        ConfigIssue(
            key,
            f"{version!r} is {why}; use a Pathways release such as "
            f"'{PATHWAYS_RELEASE}' (the default)",
        )
        for key, version in _pathways_versions(config)
        if version is not None and version.lower() == LATEST
    ] + [
        ConfigIssue(key, f"{problem}; an unpinned image is {why}; pin a tag or a digest")
        for key, image in _images(config)
        if (problem := grammars.unpinned_image_problem(image))
    ]


def image_warnings(config: StackConfig) -> list[str]:
    """In dev: the unpinned images the plan warns about (refused in staging and production)."""
    if config.environment is not Environment.DEV:
        return []
    return [
        f"{key}: {problem}; allowed in dev, refused in staging and production (pin a tag or "
        "a digest)"
        for key, image in _images(config)
        if (problem := grammars.unpinned_image_problem(image))
    ]


def _pathways_versions(config: StackConfig) -> list[tuple[str, str | None]]:
    keys = [("pathwaysVersion", config.pathways_version)]
    keys += [
        (f"{key}.pathwaysVersion", entry.pathways_version) for key, entry in config.deployments()
    ]
    return keys


def _images(config: StackConfig) -> list[tuple[str, str]]:
    """Every image field of the stack with its key: user images, then component images."""
    images = [
        (f"workloads[{i}].image", workload.image)
        for i, workload in enumerate(config.workloads)
        if workload.image is not None
    ]
    images += [
        (f"{key}.customComponents[{i}].image", custom.image)
        for key, entry in config.deployments()
        for i, custom in enumerate(entry.custom_components)
        if custom.image is not None
    ]
    return images
