"""Progress on stderr: only on a terminal, only for work longer than the threshold, erased."""

from __future__ import annotations

import io
import time

from components.cli.progress import progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_slow_work_on_a_terminal_shows_a_line_then_erases_it():
    stream = Terminal()
    with progress("planning stack 'dev'", stream, after=0.05):
        time.sleep(0.3)
    text = stream.getvalue()
    assert text.startswith("\rplanning stack 'dev'... 0s")
    assert text.endswith("\r" + " " * len("planning stack 'dev'... 0s") + "\r")


def test_quick_work_shows_nothing():
    stream = Terminal()
    with progress("planning", stream, after=5):
        pass
    assert stream.getvalue() == ""


def test_a_pipe_or_file_gets_nothing():
    stream = io.StringIO()  # not a terminal
    with progress("planning", stream, after=0):
        time.sleep(0.05)
    assert stream.getvalue() == ""
