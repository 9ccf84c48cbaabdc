"""One plan per stack file within a command that plans many stacks (``plan --all``).

A team stack's plan first plans its owner stack (what the owner exports is what the team stack
is checked against), and a fleet's plan plans each of its workers. Planning every stack of a
directory therefore planned an owner once for itself and once more for each team stack on its
cluster, and printed the owner's warnings each time. Within ``each_stack_planned_once`` a stack
file's plan is made once and shared by every stack that reads it: the files do not change
while one command runs, and plans are read-only.

Outside it (one ``plan --stack S``, a program of your own, the tests) every call plans afresh.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Hashable, Iterator
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")

_shared: ContextVar[dict[Hashable, object] | None] = ContextVar("shared_plans", default=None)


@contextlib.contextmanager
def each_stack_planned_once() -> Iterator[None]:
    """Within: ``shared(key, make)`` makes each key's plan once."""
    token = _shared.set({})
    try:
        yield
    finally:
        _shared.reset(token)


def shared(key: Hashable, make: Callable[[], T]) -> T:
    """``make()``, or the plan made for ``key`` earlier within ``each_stack_planned_once``.
    A plan that fails (ConfigError) is not kept: each stack that reads it reports it."""
    plans = _shared.get()
    if plans is None:
        return make()
    if key not in plans:
        plans[key] = make()
    return plans[key]  # type: ignore[return-value]
