"""The project's program runs at the bottom of a call stack of its own (``on_fresh_stack``): its
result and its exceptions are the caller's, it sees the caller's context variables, and the
SDK records fewer frames for each registration."""

from __future__ import annotations

import asyncio
import contextvars
import sys
import threading

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
