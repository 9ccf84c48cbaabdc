"""The project's program runs at the bottom of a call stack of its own (``on_fresh_stack``): its
result and its exceptions are the caller's, it sees the caller's context variables, and the
SDK records fewer frames for each registration."""

from __future__ import annotations

import asyncio
import contextvars
import sys
import threading
import traceback
from pathlib import Path

import pulumi
import pytest

from components.plan.engine import run_program
from components.plan.fresh_stack import on_fresh_stack

SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="unset")


def depth() -> int:
    frame, count = sys._getframe(), 0
    while frame is not None:
        frame, count = frame.f_back, count + 1
    return count


def test_the_work_runs_on_another_thread_with_a_shallow_stack_and_gives_its_result():
    caller = threading.get_ident()
    here = depth()
    ident, there = on_fresh_stack(lambda: (threading.get_ident(), depth()))
    assert ident != caller
    assert there <= 3  # the thread's loop (no threading bootstrap), the lambda, depth()
    assert here > 10  # pytest's own frames, at least


def test_an_exception_of_the_work_is_raised_in_the_caller_as_itself():
    class Refused(Exception):
        pass

    error = Refused("no")

    def refuse() -> None:
        raise error

    with pytest.raises(Refused) as raised:
        on_fresh_stack(refuse)
    assert raised.value is error
    with pytest.raises(SystemExit):
        on_fresh_stack(lambda: sys.exit(3))


def test_the_work_sees_the_callers_context_and_the_program_threads_own_event_loop():
    token = SEEN.set("from the caller")
    try:
        seen, loop = on_fresh_stack(lambda: (SEEN.get(), asyncio.get_event_loop()))
    finally:
        SEEN.reset(token)
    assert seen == "from the caller"
    assert SEEN.get() == "unset"
    # One loop, kept from plan to plan (the SDK's executor threads keep theirs too).
    assert on_fresh_stack(asyncio.get_event_loop) is loop
    assert not loop.is_closed()


def test_work_asked_for_on_the_program_thread_runs_there_directly():
    outer, inner = on_fresh_stack(
        lambda: (threading.get_ident(), on_fresh_stack(threading.get_ident))
    )
    assert outer == inner


def test_a_program_under_the_mock_engine_runs_there_and_its_registrations_are_recorded():
    threads: list[int] = []

    def program() -> dict:
        threads.append(threading.get_ident())
        pulumi.ComponentResource("t:m:C", "one")
        return {"answer": 42}

    resources, outputs = run_program(program, "t")
    assert [r.name for r in resources] == ["one"]
    assert outputs == {"answer": 42}
    assert threads and threads[0] != threading.get_ident()


# --- the frames the SDK records under each registration --------------------------------------

TPU_POOL_FRAMES = [
    ("tpu_pool.py", "__init__"),  # TpuNodePool: gcp.container.NodePool(...)
    ("program.py", "_node_pools"),  # TpuNodePool(...)
    ("program.py", "build_stack"),
    ("__main__.py", "<module>"),  # the project's program, exec'd with no frame of its own
    ("stack.py", "run_pulumi_func"),  # the SDK: result = func()
    ("events.py", "_run"),  # asyncio: the loop runs the SDK's task
    ("base_events.py", "_run_once"),
    ("base_events.py", "run_forever"),
    ("base_events.py", "run_until_complete"),
    ("sync_await.py", "_sync_await"),  # the SDK's loop.run_until_complete
    ("engine.py", "_run_program"),  # sdk.sync_await(sdk.program_run(run))
    ("fresh_stack.py", "_serve"),  # the program thread's loop: its first Python frame
]


def test_a_tpu_node_pools_registration_records_12_frames(
    sdk_stack_trace, monkeypatch, plan_of, stack_values
):
    """The SDK records every frame below a resource's constructor (``_get_stack_trace``, about
    8 us each, under each of a large plan's thousands of registrations). Under a TPU pool's
    NodePool the offline plan records the 12 frames of ``TPU_POOL_FRAMES`` (top first): the
    project's 4 (the pool component, the program's two functions, ``__main__``), the SDK's and
    asyncio's 6, which `pulumi up` has too, and the plan's own 2: the engine's ``_run_program``
    and the program thread's loop; no runpy, CLI, threading bootstrap, ``sdk.run`` or
    ``_as_function`` frame (components/plan/fresh_stack.py, main_module.py). A frame added
    anywhere below a TPU pool fails this. Frames are named (file, function); asyncio's are the
    same on CPython 3.11 to 3.13."""
    from components.plan import engine

    names: dict[tuple, list[tuple[str, str]]] = {}

    def recording():
        trace = sdk_stack_trace()
        recorded = traceback.extract_stack()[: len(trace.frames)]  # the SDK's: the bottom ones
        key = tuple((f.pc.uri, f.pc.line) for f in trace.frames)
        names[key] = [(Path(f.filename).name, f.name) for f in reversed(recorded)]
        return trace

    monkeypatch.setattr(sys.modules["pulumi.runtime.resource"], "_get_stack_trace", recording)
    registered: dict[str, tuple] = {}
    original = engine.RecordingMonitor.RegisterResource

    def spy(self, request):
        key = tuple((f.pc.uri, f.pc.line) for f in request.stackTrace.frames)
        registered[f"{request.type}::{request.name}"] = key
        return original(self, request)

    monkeypatch.setattr(engine.RecordingMonitor, "RegisterResource", spy)
    plan_of(stack_values(), "frame-count")  # a stack name of its own: planned here
    frames = registered["gcp:container/nodePool:NodePool::pathways-dev-v5e-0"]
    assert len(frames) == 12
    assert names[frames] == TPU_POOL_FRAMES
