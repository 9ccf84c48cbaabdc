"""The project's Pulumi program run at the bottom of a call stack of its own, as the Python
language host runs it under `pulumi up`, not under the plan's command-line frames.

The SDK records the whole call stack of every registration (pulumi/runtime/resource.py
``_get_stack_trace``: ``traceback.extract_stack()``, then a ``SourcePosition`` with pathlib's
``as_uri`` for each frame below the resource's constructor), about 14 us a frame. Under
`python -m components plan` the program ran below runpy, the CLI and the plan engine: ten
frames `pulumi up` does not have, under each of a 1,024-slice plan's 1,614 registrations (and
more under a team stack's owner or a fleet's workers, planned while that stack is read). On a
thread of its own the program starts five frames deep.

The thread runs in a copy of the caller's context (Pulumi keeps its settings in context
variables) with an event loop of its own, closed when the work ends; the caller waits for it,
so the work is the caller's in all but the stack: its result is returned and its exception
raised in the caller's thread. A signal (Ctrl-C, ``plan --timeout``'s alarm) interrupts the
caller's wait as it would have interrupted the work. A user's own program (``plan
--program``) keeps the main thread: it may install signal handlers, which only the main thread
can.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def on_fresh_stack(work: Callable[[], T]) -> T:
    """``work()`` on a thread of its own (a fresh call stack and event loop), waited for."""
    outcome: dict[str, object] = {}

    def run() -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            outcome["result"] = work()
        except BaseException as exc:  # handed to the caller, whatever it is
            outcome["error"] = exc
        finally:
            asyncio.set_event_loop(None)
            loop.close()

    thread = threading.Thread(
        target=contextvars.copy_context().run, args=(run,), name="program", daemon=True
    )
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["result"]  # type: ignore[return-value]
