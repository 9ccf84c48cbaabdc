"""The project's Pulumi program run at the bottom of a call stack of its own, as the Python
language host runs it under `pulumi up`, not under the plan's command-line frames.

The SDK records the whole call stack of every registration (pulumi/runtime/resource.py
``_get_stack_trace``: ``traceback.extract_stack()``, then a ``SourcePosition`` with pathlib's
``as_uri`` for each frame below the resource's constructor), about 8 us a frame. Under
`python -m components plan` the program ran below runpy, the CLI and the plan engine: ten
frames `pulumi up` does not have, under each of a 1,024-slice plan's 1,614 registrations (and
more under a team stack's owner or a fleet's workers, planned while that stack is read). On the
program thread the program starts two frames deep (this module's loop, then the plan engine).

The program thread is one long-lived thread per process, started by the first plan, with an
event loop it keeps, as the main thread kept its loop before: the SDK's mock monitor also
waits from its executor's threads, each of which makes an event loop of its own
(pulumi/runtime/sync_await.py, ``_ensure_event_loop``) that lives as long as the thread, so a loop
and threads made afresh for every plan would leave unclosed loops behind. Each work item runs
in a copy of the caller's context (Pulumi keeps its settings in context variables); the caller
waits for it, so the work is the caller's in all but the stack: its result is returned and its
exception raised in the caller's thread. A signal (Ctrl-C, ``plan --timeout``'s alarm)
interrupts the caller's wait as it would have interrupted the work (the CLI then ends the
process). Work asked for on the program thread itself runs there directly, and a forked
process starts a thread of its own. A user's own program (``plan --program``) keeps the main
thread: it may install signal handlers, which only the main thread can.

The thread is started with ``_thread.start_new_thread`` (the documented low-level API under
``threading``), whose first Python frame is the thread's own loop: a ``threading.Thread`` adds
three frames of its bootstrap (``_bootstrap``, ``_bootstrap_inner``, ``run``) under every
registration, and a job run through a method of its own a fourth. The loop runs each job in
place. Like a daemon thread it does not keep the process alive.
"""

from __future__ import annotations

import _thread
import asyncio
import contextvars
import os
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass
class _Job:
    """One call of ``on_fresh_stack``: the work, the caller's context, and its outcome."""

    work: Callable[[], Any]
    context: contextvars.Context
    done: threading.Event = field(default_factory=threading.Event)
    outcome: dict[str, Any] = field(default_factory=dict)


def _serve(jobs: queue.SimpleQueue[_Job]) -> None:
    """The program thread: its own event loop, kept for every program run here, and the jobs
    one after the other, each run in place (a method of the job would be one more frame under
    every registration)."""
    asyncio.set_event_loop(asyncio.new_event_loop())
    while True:
        job = jobs.get()
        try:
            job.outcome["result"] = job.context.run(job.work)
        except BaseException as exc:  # handed to the caller, whatever it is
            job.outcome["error"] = exc
        finally:
            job.done.set()


class _ProgramThread:
    """The process's program thread and its queue of jobs."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self.ident = _thread.start_new_thread(_serve, (self.jobs,))


_program_thread: _ProgramThread | None = None
_starting = threading.Lock()


def _thread_of_process() -> _ProgramThread:
    global _program_thread
    with _starting:
        if _program_thread is None or _program_thread.pid != os.getpid():
            _program_thread = _ProgramThread()
        return _program_thread


def on_fresh_stack(work: Callable[[], T]) -> T:
    """``work()`` on the program thread (a short call stack), waited for."""
    program = _thread_of_process()
    if threading.get_ident() == program.ident:
        return work()
    job = _Job(work, contextvars.copy_context())
    program.jobs.put(job)
    job.done.wait()
    if "error" in job.outcome:
        raise job.outcome["error"]
    return job.outcome["result"]
