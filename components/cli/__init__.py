"""`python -m components`: each command's arguments, output and exit code (``main`` builds the
parser)."""

from __future__ import annotations

import argparse
from pathlib import Path


def path_argument(text: str) -> Path:
    """A file or directory option's value. Blank text is a usage error: ``Path('')`` is '.',
    so ``--out ''`` would otherwise mean the current directory."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"{text!r} names no file or directory")
    return Path(text)
