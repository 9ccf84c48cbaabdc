"""The example stacks' plans, shared by the processes of one test run: the xdist workers, and the
pytest run tests/e2e/test_user_stacks.py starts inside a test.

The process that starts a run makes a directory and names it in ``VARIABLE`` (the processes it
starts inherit it); ``plan_of_file`` keeps each plan there, pickled, under a key made of
everything the plan is made from: the stack's name, every stack file of its directory (owners,
fleet workers and conflicts are read from there), the project's code (every file of the
``components`` package and the program), Python's version and every installed package's. A
plan made by one process is read by the others instead of planned again (about 0.2-0.9 CPU-s a
stack); plans are read-only, as the fixtures' in-process caches already require.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import sys
import tempfile
from collections.abc import Callable
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from components.plan.model import Plan

VARIABLE = "TPU_PATHWAYS_TEST_PLAN_CACHE"


def start() -> Path | None:
    """Make the run's directory unless a process above this one did; return it if made here
    (``stop`` removes it)."""
    if os.environ.get(VARIABLE):
        return None
    directory = Path(tempfile.mkdtemp(prefix="tpu-pathways-test-plans-"))
    os.environ[VARIABLE] = str(directory)
    return directory


def stop(directory: Path | None) -> None:
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)
        os.environ.pop(VARIABLE, None)


def plan_of_file(stack: str, stacks_dir: Path, plan: Callable[[], Plan]) -> Plan:
    """The plan ``plan()`` makes of ``stacks_dir/Pulumi.<stack>.yaml``, from the run's
    directory if a process of this run made it already (else made here and kept there)."""
    directory = os.environ.get(VARIABLE)
    if not directory:
        return plan()
    path = Path(directory) / f"{stack}-{_key(stack, stacks_dir)}.pickle"
    if path.exists():
        return pickle.loads(path.read_bytes())
    made = plan()
    written = path.with_suffix(f".{os.getpid()}")
    written.write_bytes(pickle.dumps(made, protocol=pickle.HIGHEST_PROTOCOL))
    os.replace(written, path)  # whole or absent for a reader in another process
    return made


def _key(stack: str, stacks_dir: Path) -> str:
    digest = hashlib.sha256(_code())
    digest.update(stack.encode())
    for path in sorted(stacks_dir.glob("Pulumi.*.yaml")):
        digest.update(f"\0{path.name}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:32]


@cache
def _code() -> bytes:
    """A digest of what a plan is made with besides the stack files."""
    from components.plan import engine

    digest = hashlib.sha256(sys.version.encode())
    # a set: a checkout's own *.egg-info, found through the working directory, repeats one
    installed = sorted({f"{d.metadata['Name']}=={d.version}" for d in metadata.distributions()})
    digest.update("\n".join(installed).encode())
    # (components/plan/engine.py's: `components` itself may be a namespace package, as in
    # test_user_stacks's copy of tests/, where tests/components/ is found first)
    package = Path(engine.__file__).resolve().parents[1]
    files = [p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    for path in [*sorted(files), engine.PROGRAM]:
        digest.update(f"\0{path.relative_to(package.parent)}\0".encode())
        digest.update(path.read_bytes())
    return digest.digest()
