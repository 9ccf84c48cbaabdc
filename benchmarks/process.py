"""Whole-process measurement (part 3 of ``run.py``): the project's CLI against two floors.

- **typed floor** ``baseline.py SHAPE``: the same resources through the SDK's typed classes;
- **independent floor** ``baseline.py --independent SHAPE``: the same type tokens, names,
  parents, providers, ``depends_on`` and input dicts as plain registrations
  (``pulumi.CustomResource`` / ``ComponentResource``), the same SDK modules imported, the same
  exit (``os._exit`` once the output is flushed).

Each comparison is ``pairs`` rounds of the three commands back to back (the order rotates), in
fresh processes: CPU (user + system of the child), wall time and peak RSS. A ratio is the median
of the per-round ratios, with min, max and interquartile range.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
PROJECT_DIR = BENCH_DIR.parent
SIDES = ("project", "baseline", "independent")
ATTRS = ("wall_s", "cpu_s", "rss_mb")

# Targets, CPU project / floor of the whole process (median of the pair ratios).
MAX_TYPED_RATIO = {1024: 1.3, 2048: 1.4}  # issue 23, against the typed floor
MAX_INDEPENDENT_RATIO = {1024: 1.5, 2048: 1.5}  # issue 34, against the independent floor
MAX_INDEPENDENT_EXAMPLE_RATIO = 1.3  # issue 34: every example stack
MAX_RSS_RATIO = 1.3  # issue 34: peak RSS, project / independent floor, every row


@dataclass(frozen=True)
class ProcessSample:
    wall_s: float
    cpu_s: float
    rss_mb: float


def run_process(command: list[str]) -> ProcessSample:
    """Run ``command`` in a fresh process: its wall time, its own CPU time and peak RSS."""
    with tempfile.TemporaryFile() as stderr:
        start = time.perf_counter()
        child = subprocess.Popen(command, cwd=PROJECT_DIR, stdout=subprocess.DEVNULL, stderr=stderr)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        if (code := os.waitstatus_to_exitcode(status)) != 0:
            stderr.seek(0)
            raise SystemExit(f"{' '.join(command)} exited {code}:\n{stderr.read().decode()}")
    # ru_maxrss is in KiB on Linux.
    return ProcessSample(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def floor_command(shape: Path, independent: bool = False) -> list[str]:
    flag = ["--independent"] if independent else []
    return [sys.executable, str(BENCH_DIR / "baseline.py"), *flag, str(shape)]


def measure(
    commands: dict[str, list[str]],
    pairs: int,
    stats: Callable[[Sequence[float]], dict[str, float]],
    ratios: Callable[[Sequence[float], Sequence[float]], list[float]],
    tick: Callable[[], None] = lambda: None,
) -> dict[str, Any]:
    """``pairs`` rounds of every side of ``commands`` (the first side rotates); the figures of
    each side and the ratios of the project to each floor, and of the typed to the independent
    floor."""
    samples: dict[str, list[ProcessSample]] = {side: [] for side in commands}
    for side in commands:
        if side != "project":  # warm-up (the project's was its plan for the shape)
            run_process(commands[side])
    order = list(commands)
    for i in range(pairs):
        for side in order[i % len(order) :] + order[: i % len(order)]:
            samples[side].append(run_process(commands[side]))
        tick()

    def series(side: str, attr: str) -> list[float]:
        return [getattr(s, attr) for s in samples[side]]

    def ratio(a: str, b: str, attr: str) -> dict[str, float]:
        return stats(ratios(series(a, attr), series(b, attr)))

    return {
        **{f"{side}_{attr}": stats(series(side, attr)) for side in samples for attr in ATTRS},
        # project / typed floor (the key names of issue 23's results)
        **{f"{attr}_ratio": ratio("project", "baseline", attr) for attr in ATTRS},
        **{f"{attr}_ratio_independent": ratio("project", "independent", attr) for attr in ATTRS},
        "typed_floor_cpu_s_ratio_independent": ratio("baseline", "independent", "cpu_s"),
        "typed_floor_rss_mb_ratio_independent": ratio("baseline", "independent", "rss_mb"),
        "runs [wall_s, cpu_s, rss_mb]": {
            side: [[round(x.wall_s, 3), round(x.cpu_s, 3), round(x.rss_mb, 1)] for x in runs]
            for side, runs in samples.items()
        },
    }


def targets(row: dict[str, Any]) -> list[tuple[str, dict[str, float], float]]:
    """(name, ratio figures, limit) of every target a process row has."""
    found = []
    slices = row.get("slices")
    if (limit := MAX_TYPED_RATIO.get(slices)) is not None:
        name = f"{row['stack']} whole process, project / typed floor (CPU, equal exit)"
        found.append((name, row["cpu_s_ratio"], limit))
    if "cpu_s_ratio_independent" not in row:  # a row measured before issue 34
        return found
    limit = MAX_INDEPENDENT_RATIO.get(slices) if slices else MAX_INDEPENDENT_EXAMPLE_RATIO
    if limit is not None:
        name = f"{row['stack']} whole process, project / independent floor (CPU, equal exit)"
        found.append((name, row["cpu_s_ratio_independent"], limit))
    name = f"{row['stack']} peak memory, project / independent floor (RSS)"
    found.append((name, row["rss_mb_ratio_independent"], MAX_RSS_RATIO))
    return found


def report_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    lines = [
        "Whole process, paired (project: python -m components plan --json; typed floor:"
        " baseline.py; independent floor: baseline.py --independent; all leave by os._exit):",
        "| stack | resources | project CPU s | typed floor CPU s | independent floor CPU s "
        "| CPU / typed (min-max) | CPU / independent (min-max) | typed / independent "
        "| MiB / independent | load |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|",
    ]
    for r in rows:
        if "cpu_s_ratio_independent" not in r:
            continue
        c, i = r["cpu_s_ratio"], r["cpu_s_ratio_independent"]
        lines.append(
            f"| {r['stack']} | {r['resources']} | {r['project_cpu_s']['median']:.2f} "
            f"| {r['baseline_cpu_s']['median']:.2f} | {r['independent_cpu_s']['median']:.2f} "
            f"| {c['median']:.2f} ({c['min']:.2f}-{c['max']:.2f}) "
            f"| {i['median']:.2f} ({i['min']:.2f}-{i['max']:.2f}) "
            f"| {r['typed_floor_cpu_s_ratio_independent']['median']:.2f} "
            f"| {r['rss_mb_ratio_independent']['median']:.2f} "
            f"| {r['loadavg'][0][0]}-{r['loadavg'][1][0]} |"
        )
    return [*lines, ""]
