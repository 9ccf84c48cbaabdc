"""`python -m components drift-report DIR`: the drift issue's Markdown from the per-stack
results ``.github/workflows/drift.yml`` collects in DIR: ``<stack>.json`` (the preview's JSON)
and ``<stack>.status`` (its exit code). Exit 0 when no stack drifted, 1 when one did or its
preview failed, 2 for a DIR without results."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from components.cli import path_argument, usage_error
from components.plan.drift import StackDrift, render, stack_drift


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", type=path_argument, metavar="DIR", help="<stack>.json/.status")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    drifts = read_results(args.dir)
    sys.stdout.write(render(drifts))
    return 1 if any(d.drifted or d.failed for d in drifts) else 0


def read_results(folder: Path) -> list[StackDrift]:
    statuses = sorted(folder.glob("*.status")) if folder.is_dir() else []
    if not statuses:
        raise usage_error("drift-report", "DIR", f"{str(folder)!r} holds no <stack>.status file")
    return [_result(path) for path in statuses]


def _result(status_file: Path) -> StackDrift:
    stack = status_file.name.removesuffix(".status")
    text = status_file.read_text().strip()
    status = int(text) if text.isdigit() else 255
    digest = None
    output = status_file.with_suffix(".json")
    if output.is_file():
        try:
            loaded = json.loads(output.read_text() or "null")
        except json.JSONDecodeError:
            loaded = None
        digest = loaded if isinstance(loaded, dict) else None
    return stack_drift(stack, status, digest)
