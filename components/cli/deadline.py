"""`plan --timeout`: a plan that has not finished in time stops with one line, not a hang.

`plan --program` runs the user's program as `pulumi up` would (with the user's rights), so a
program that never returns would otherwise hold the command forever. A timer signal (SIGALRM)
interrupts Python code and blocking calls in the main thread: the plan ends with a clean error.
Code that never gives control back to the interpreter (a C loop holding the GIL, such as
``sum(range(10**12))``) cannot be interrupted from inside the process, so a user's program also
gets a watchdog process that prints the same line and kills the plan a little later.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator

DEFAULT_SECONDS = 600
"""Ten minutes: a 5,000-workload stack plans in well under a minute."""
GRACE_SECONDS = 10
"""How long the watchdog waits for the plan to stop itself after the timer signal."""

# The watchdog: sleeps, then (if the plan it watches is still its parent) prints the message
# and kills it. It polls its parent, so it never outlives it or signals a reused process id.
_WATCHDOG = """
import os, signal, sys, time
parent, seconds, message = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
end = time.monotonic() + seconds
while time.monotonic() < end:
    if os.getppid() != parent:
        sys.exit(0)
    time.sleep(min(1.0, max(end - time.monotonic(), 0.01)))
if os.getppid() == parent:
    os.write(2, message.encode())
    os.kill(parent, signal.SIGKILL)
"""


def add_timeout_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_SECONDS,
        metavar="SECONDS",
        help=f"stop a plan not finished after SECONDS (default {DEFAULT_SECONDS}; 0: no limit): "
        "a program runs as `pulumi up` would run it, so one that never returns would hang",
    )


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < 10**9:  # also NaN
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; a number of seconds, 0 or more")
    return value


class PlanTimeout(BaseException):
    """The plan ran past ``--timeout``. A BaseException, so the user's program cannot swallow
    it with ``except Exception``."""

    def __init__(self, seconds: float) -> None:
        super().__init__(seconds)
        self.seconds = seconds

    def __str__(self) -> str:
        return (
            f"the plan did not finish within {self.seconds:g} seconds (--timeout); a program "
            "that never returns is stopped here (raise --timeout, or 0 for no limit)"
        )


@contextlib.contextmanager
def deadline(seconds: float, watchdog: bool = False) -> Iterator[None]:
    """Raise PlanTimeout in the main thread after ``seconds`` (0: no limit). ``watchdog``:
    also kill the process GRACE_SECONDS later if it has not stopped (a user's program)."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not seconds or not usable:
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise PlanTimeout(seconds)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    guard = _start_watchdog(seconds) if watchdog else None
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if guard is not None:
            guard.kill()
            guard.wait()


def _start_watchdog(seconds: float) -> subprocess.Popen[bytes]:
    message = f"error: plan: {PlanTimeout(seconds)}; killed\n"
    command = [
        sys.executable,
        "-S",
        "-c",
        _WATCHDOG,
        str(os.getpid()),
        str(seconds + GRACE_SECONDS),
    ]
    return subprocess.Popen(
        [*command, message], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL
    )
