"""Reading a file a user names (a stack file, a ``--diff`` base, a ``--program``), bounded; and
the repository's own YAML data files.

Only a regular file is read, and at most ``max_bytes + 1`` bytes of it: a FIFO would block
the read forever, a device (``/dev/zero``) never ends, a huge file would fill memory. The file
is opened without blocking and checked on the open descriptor, so nothing can be swapped in
between the check and the read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import yaml


class FileProblem(Exception):
    """Why a file cannot be read; the message completes "<path> ..."."""


def read_regular_file(path: Path, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of ``path``; FileProblem if it is not a regular file, holds more than
    ``max_bytes`` bytes (``what``: the kind of file, for the message) or cannot be read."""
    try:
        # O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise FileProblem(f"cannot be read: {exc.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # a directory, FIFO, device or socket
        os.close(fd)
        raise FileProblem("is not a regular file")
    with os.fdopen(fd, "rb") as stream:
        try:
            data = stream.read(max_bytes + 1)
        except OSError as exc:
            raise FileProblem(f"cannot be read: {exc.strerror}") from None
    if len(data) > max_bytes:
        raise FileProblem(f"is larger than {max_bytes} bytes, the most a {what} may have")
    return data


# libyaml's safe loader when PyYAML was built with it (its wheels are): the same values as
# ``yaml.safe_load`` (the same safe constructor), parsed in C in about a tenth of the time.
_DATA_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_data_yaml(path: Path) -> Any:
    """A YAML data file of this repository (a price table, a rights table): trusted and
    small, read with PyYAML's safe loader."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_DATA_LOADER)
