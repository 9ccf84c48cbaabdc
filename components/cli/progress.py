"""A line of progress on stderr while a slow command works: shown only when stderr is a
terminal and the work takes longer than ``after`` seconds (a plan of a large stack, 9-22 s of
silence otherwise), updated each second, erased when the work ends. Pipes, files and CI logs
get nothing."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

SHOW_AFTER = 2.0
"""Seconds of work before the line appears: a quick plan prints nothing extra."""


@contextmanager
def progress(what: str, stream: TextIO | None = None, after: float = SHOW_AFTER) -> Iterator[None]:
    """``what`` (e.g. "planning stack 'dev'") with the seconds taken, while the block runs."""
    stream = sys.stderr if stream is None else stream
    if not _is_terminal(stream):
        yield
        return
    done = threading.Event()
    shown = [0]  # the width of the line on screen

    def show() -> None:
        start, wait = time.monotonic(), after
        while not done.wait(wait):
            text = f"{what}... {time.monotonic() - start:.0f}s"
            _write(stream, "\r" + text.ljust(shown[0]))
            shown[0], wait = len(text), 1.0

    thread = threading.Thread(target=show, name="progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        if shown[0]:
            _write(stream, "\r" + " " * shown[0] + "\r")


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):  # a closed or odd stream
        return False


def _write(stream: TextIO, text: str) -> None:
    try:
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):  # the terminal went away: progress is not worth failing for
        pass
