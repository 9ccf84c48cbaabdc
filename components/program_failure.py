"""A Pulumi program of the user's (``plan --program``) that raised: the CLI reports it as the
program's failure, one line, then the program's own frames, without the frames of this project,
of Pulumi and of Python's machinery around them, which say nothing about the user's mistake."""

from __future__ import annotations

import traceback
from pathlib import Path

from components.errors import bounded

_PACKAGE = Path(__file__).resolve().parent


class ProgramFailed(Exception):
    """``program`` (a file or a project directory) raised ``error``."""

    def __init__(self, program: Path, error: BaseException) -> None:
        self.program = program
        summary = "".join(traceback.format_exception_only(type(error), error)).strip()
        self.summary = bounded(summary)
        self.frames = program_frames(error, program)
        super().__init__(str(self))

    def __str__(self) -> str:
        head = f"the program {self.program} failed: {self.summary.splitlines()[0]}"
        if not self.frames:
            return head
        frames = "".join(traceback.format_list(self.frames))
        return f"{head}\nTraceback (the program's own frames):\n{frames}{self.summary}"


def program_frames(error: BaseException, program: Path) -> list[traceback.FrameSummary]:
    """The frames of ``error``'s traceback in the program's own files: under its directory, but
    not this package's modules or installed packages there (a project's .venv)."""
    root = (program if program.is_dir() else program.parent).resolve()
    frames = []
    for frame in traceback.extract_tb(error.__traceback__):
        path = Path(frame.filename)
        if not path.is_absolute():  # "<frozen runpy>", "<string>"
            continue
        path = path.resolve()
        inside = path.is_relative_to(root) and not path.is_relative_to(_PACKAGE)
        if inside and "site-packages" not in path.parts:
            frames.append(frame)
    return frames
