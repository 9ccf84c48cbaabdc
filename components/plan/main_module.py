"""A Pulumi program file run as the Python language host runs it: as ``__main__``."""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pulumi

from components.errors import ConfigError, ConfigIssue


def main_program(path: Path) -> MainProgram:
    """The Pulumi program in ``path`` (a project's `__main__.py`), run as the Python language
    host runs it: as ``__main__``, its exports kept by the root stack (``MainProgram``)."""
    return MainProgram(path)


@dataclass(frozen=True)
class MainProgram:
    """A program file run as ``__main__``: call it, or (the plan engine) run the function
    ``running`` gives, which has no Python frame of its own.

    The project's program turns a ConfigError into ``pulumi.RunError`` (the engine shows its
    message without a traceback); the plan reports that ConfigError itself. Any other RunError
    is a refusal by the program, reported with its message."""

    path: Path

    def __call__(self) -> None:
        with self.running() as run:
            run()

    @contextlib.contextmanager
    def running(self) -> Iterator[Callable[[], None]]:
        """Within the block, the program as a function to run (``partial(exec, code,
        namespace)``: the module's code runs right below its caller, one frame fewer under each
        registration than a function that calls ``exec``), with ``__main__`` and
        ``sys.argv[0]`` set (``as_main``); a RunError the block raises becomes its report."""
        try:
            with as_main(self.path) as (code, namespace):
                yield partial(exec, code, namespace)
        except pulumi.RunError as exc:
            if isinstance(exc.__context__, ConfigError):
                raise exc.__context__ from None
            raise ConfigError([ConfigIssue("", str(exc))], self.path.name) from None


@contextlib.contextmanager
def as_main(path: Path) -> Iterator[tuple[types.CodeType, dict[str, Any]]]:
    """The compiled code of ``path`` and the namespace of a fresh ``__main__`` module to run it
    in, with the module in ``sys.modules`` and ``sys.argv[0]`` its path until the block ends
    (the caller runs the code: ``exec(code, namespace)``), as ``runpy.run_path(path,
    run_name="__main__")`` would, without runpy's three Python frames: the SDK walks the whole
    call stack for the source position of every registration (~8 us a frame)."""
    code = compile(path.read_bytes(), str(path), "exec")
    module = types.ModuleType("__main__")
    module.__dict__.update(__file__=str(path), __cached__=None, __loader__=None, __spec__=None)
    saved_main = sys.modules.get("__main__")
    saved_argv = list(sys.argv)
    sys.modules["__main__"] = module
    sys.argv[:1] = [str(path)]
    try:
        yield code, module.__dict__
    finally:
        sys.argv[:] = saved_argv
        if saved_main is None:
            sys.modules.pop("__main__", None)
        else:
            sys.modules["__main__"] = saved_main
