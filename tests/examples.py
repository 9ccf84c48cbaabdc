"""The example stacks this repository ships in stacks/, declared here: the tests that plan
"every example stack" plan these, from a copy of their own (``EXAMPLES_DIR``), so a stack file of
your own in stacks/ (say Pulumi.vision.yaml, valid or half-written) changes no test but the one
meant for it: tests/e2e/test_stacks.py plans each of yours too, and fails only on its own
problems, saying that it is yours.

Adding an example: add its name to ``EXAMPLE_STACKS`` (``test_the_declared_examples_are_shipped``
checks both ways against git's list of stacks/)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SHIPPED_DIR = PROJECT_ROOT / "stacks"
EXAMPLE_STACKS: tuple[str, ...] = (
    "dev",
    "fleet",
    "research-jobset",
    "research-v5p",
    "serving-v6e",
    "team-research",
)


def _copy_of_examples() -> Path:
    """A directory with exactly the example stack files (removed when the process ends)."""
    directory = Path(tempfile.mkdtemp(prefix="tpu-pathways-examples-")) / "stacks"
    directory.mkdir()
    atexit.register(shutil.rmtree, directory.parent, True)
    for name in EXAMPLE_STACKS:
        shutil.copy2(SHIPPED_DIR / f"Pulumi.{name}.yaml", directory)
    return directory


EXAMPLES_DIR = _copy_of_examples()


def example_files() -> list[Path]:
    """The example stack files (in the copy), sorted by name."""
    return [EXAMPLES_DIR / f"Pulumi.{name}.yaml" for name in sorted(EXAMPLE_STACKS)]


def user_stacks() -> list[str]:
    """The stack files in stacks/ that are not examples: yours."""
    names = (
        p.name.removeprefix("Pulumi.").removesuffix(".yaml")
        for p in SHIPPED_DIR.glob("Pulumi.*.yaml")
    )
    return sorted(n for n in names if n not in EXAMPLE_STACKS)
