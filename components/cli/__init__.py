"""`python -m components`: each command's arguments, output and exit code (``main`` builds the
parser)."""

from __future__ import annotations

import argparse
from pathlib import Path

from components.errors import ConfigError, ConfigIssue

EXIT_USAGE = 2
"""A user mistake (also argparse's usage errors)."""


def path_argument(text: str) -> Path:
    """A file or directory option's value. Blank text is a usage error: ``Path('')`` is '.',
    so ``--out ''`` would otherwise mean the current directory."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"{text!r} names no file or directory")
    return Path(text)


def usage_error(command: str, key: str, message: str) -> ConfigError:
    """A user mistake in ``command``'s arguments: printed as a problem naming ``key``, exit 2."""
    return ConfigError([ConfigIssue(key, message)], command)
