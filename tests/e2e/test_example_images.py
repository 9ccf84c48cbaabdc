"""Every example workload runs an image that has what its command imports: a published image at
a pinned tag, whose Python packages are written out here from its upstream build (a command
importing anything else would fail at once, as `import pathwaysutils` in python:3.12 did)."""

from __future__ import annotations

import ast
import sys

import pytest

from components.resolve.stack_files import STACKS_DIR

# MaxText 0.2.3's TPU pre-training image (AI-Hypercomputer/maxtext docs/tutorials/
# build_maxtext.md, "Pre-built MaxText Docker images"), built from tag maxtext-v0.2.3 with
# src/dependencies/requirements/generated_requirements/tpu-requirements.txt (jax>=0.10.0,
# pathwaysutils>=0.1.8, orbax-checkpoint, ...) and MaxText itself in /deps/src/maxtext.
MAXTEXT_IMAGE = "us-docker.pkg.dev/cloud-tpu-images/maxtext-images/tpu_pre_training:0.2.3"
IMAGE_PACKAGES = {MAXTEXT_IMAGE: {"jax", "pathwaysutils", "maxtext", "orbax"}}
EXAMPLES = ["dev", "research-v5p", "serving-v6e", "team-research"]


def _user_workloads(example_plan):
    for stack in EXAMPLES:
        for key, job in example_plan(stack).summary["workloads"].items():
            if job["image"] is not None:
                yield f"{stack}:{key}", job["image"], job["command"]


def imported_modules(command: list[str]) -> set[str]:
    """Top-level modules a python3 command imports: `-c CODE` parsed, `-m MODULE` named."""
    assert command[0] in ("python3", "python"), command
    if command[1] == "-m":
        return {command[2].split(".")[0]}
    assert command[1] == "-c", command
    found = set()
    for node in ast.walk(ast.parse(command[2])):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Constant) and _dotted_name(node.value):
            # runpy.run_module('pkg.mod', ...) names a module too
            found.add(node.value.split(".")[0])
    return found


def _dotted_name(value: object) -> bool:
    return isinstance(value, str) and "." in value and value.replace(".", "_").isidentifier()


def test_the_examples_have_user_workloads(example_plan):
    assert sorted(key for key, _, _ in _user_workloads(example_plan)) == [
        "dev:pathways/hello-train",
        "research-v5p:research/llm-pretrain",
        "serving-v6e:serving/batch-infer",
    ]


def test_each_command_imports_only_what_its_image_has(example_plan):
    for key, image, command in _user_workloads(example_plan):
        assert image in IMAGE_PACKAGES, f"{key}: {image} is not a known published image"
        missing = imported_modules(command) - IMAGE_PACKAGES[image] - sys.stdlib_module_names
        assert missing == set(), f"{key}: {image} lacks {sorted(missing)}"


def test_the_first_run_job_is_the_getting_started_page_s(example_plan):
    job = example_plan("dev").summary["workloads"]["pathways/hello-train"]
    assert job["image"] == MAXTEXT_IMAGE
    assert job["command"] == [
        "python3",
        "-c",
        "import pathwaysutils, jax; pathwaysutils.initialize(); print(jax.devices())",
    ]
    first_run = (STACKS_DIR.parent / "docs" / "getting-started.md").read_text()
    assert MAXTEXT_IMAGE in first_run


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (["python", "-c", "import pathwaysutils, jax"], {"pathwaysutils", "jax"}),
        (["python3", "-m", "MaxText.train", "base.yml"], {"MaxText"}),
        (["python3", "-c", "import runpy; runpy.run_module('a.b')"], {"runpy", "a"}),
    ],
)  # fmt: skip
def test_imports_are_read_from_the_command(command, expected):
    assert imported_modules(command) == expected
