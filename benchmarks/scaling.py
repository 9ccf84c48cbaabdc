"""Scaling shapes (issue 35): how one plan command grows along one dimension of its input,
reported beside the slice scaling of ``run.py``.

A shape is a command run as a fresh process at several sizes. ``run.py`` measures each size
(``--scaling-runs`` runs after a warm-up: median CPU, wall and peak RSS), applies the growth
check of the slice scaling to the CPU medians (``growth``: the quadratic term's share, the
marginal cost per size band) and checks the largest size against the shape's budget.

Shapes (``SHAPES``):

- ``diff-base``: ``plan --stack research-v5p --diff BASE --format markdown`` (what the PR
  workflow runs for every stack), BASE being the stack's ``plan --json`` plus N extra node
  pools, workloads and team objects, removed in the current plan (``diff_base.py``). Sizes:
  the base's resources. Budget: under 20 s at 70,000 (issue 35), CPU seconds of the process.
- ``teams``: ``plan --stack teams-N --json`` of a stack that owns its cluster and lists N team
  namespaces (``stacks.write_teams_stack``). Sizes: the teams. Budget: under 15 s at 1,000
  (issue 35), CPU seconds of the process (the wall time of a single-threaded plan on an idle
  machine; a loaded one is reported beside it).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
PROJECT_DIR = BENCH_DIR.parent


@dataclass(frozen=True)
class Prepared:
    """One size of a shape, ready to measure: the command, the size it measures (in the
    shape's unit) and the files made for it (removed once measured)."""

    command: list[str]
    size: int
    files: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Shape:
    name: str
    unit: str  # what a size counts
    what: str  # the command measured, for the report
    steps: tuple[int, ...]  # the sizes asked for, as ``prepare`` takes them
    max_cpu_s: float  # budget at the largest size: CPU seconds of the whole process
    prepare: Callable[[Path, int], Prepared]  # (work directory, step) -> the size to measure


# --- diff base size ---------------------------------------------------------------------------

DIFF_STACK = "research-v5p"
# Extra resources in the base: with the stack's own 64, the largest base has 70,064. The growth
# check compares the last size band's marginal cost with the first above the smallest size:
# bands of 19,000 and 35,000 resources (1.5 s and 3 s of CPU), wide against a run's noise.
DIFF_EXTRAS = (4_000, 16_000, 35_000, 70_000)
MAX_DIFF_CPU_S = 20.0  # issue 35: a 70,000-resource base in under 20 s on an idle 2-core machine


def _run(command: list[str]) -> bytes:
    done = subprocess.run(command, cwd=PROJECT_DIR, capture_output=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr}")
    return done.stdout


def _stack_plan(work: Path, stack: str) -> Path:
    """``plan --stack STACK --json`` of the project's stacks/, once per work directory."""
    saved = work / f"{stack}.plan.json"
    if not saved.exists():
        command = [sys.executable, "-m", "components", "plan", "--stack", stack, "--json"]
        saved.write_bytes(_run(command))
    return saved


def prepare_diff_base(work: Path, extras: int) -> Prepared:
    """The base is written by another process: a measured child's peak RSS (``ru_maxrss``)
    counts the memory of the process it was started from (Linux keeps the high-water mark
    across ``exec``), so the measuring process stays small."""
    plan = _stack_plan(work, DIFF_STACK)
    base = work / f"diff-base-{extras}.json"
    _run([sys.executable, str(BENCH_DIR / "diff_base.py"), str(plan), str(extras), str(base)])
    command = [
        *(sys.executable, "-m", "components", "plan", "--stack", DIFF_STACK),
        *("--diff", str(base), "--format", "markdown"),
    ]
    resources = len(json.loads(plan.read_text())["resources"])
    return Prepared(command, resources + extras, (base,))


DIFF_BASE = Shape(
    name="diff-base",
    unit="resources in the diff base",
    what=f"plan --stack {DIFF_STACK} --diff BASE --format markdown",
    steps=DIFF_EXTRAS,
    max_cpu_s=MAX_DIFF_CPU_S,
    prepare=prepare_diff_base,
)


# --- teams count ------------------------------------------------------------------------------

# Team namespaces on one cluster: bands of 250 teams (about 2,000 resources) and more.
TEAMS = (100, 250, 500, 750, 1_000)
MAX_TEAMS_CPU_S = 15.0  # issue 35: 1,000 teams planned in under 15 s on an idle 2-core machine


def prepare_teams(work: Path, teams: int) -> Prepared:
    """A directory of its own per size: a plan reads every stack file beside its own."""
    from stacks import write_teams_stack  # benchmarks/ is on sys.path (run.py puts it there)

    stacks_dir = work / f"teams-{teams}"
    stacks_dir.mkdir(exist_ok=True)
    stack = write_teams_stack(stacks_dir, teams)
    command = [
        *(sys.executable, "-m", "components", "plan", "--stack", stack),
        *("--stacks-dir", str(stacks_dir), "--json"),
    ]
    return Prepared(command, teams, (stacks_dir / f"Pulumi.{stack}.yaml",))


TEAMS_COUNT = Shape(
    name="teams",
    unit="team namespaces",
    what="plan --stack teams-N --json",
    steps=TEAMS,
    max_cpu_s=MAX_TEAMS_CPU_S,
    prepare=prepare_teams,
)


SHAPES: dict[str, Shape] = {DIFF_BASE.name: DIFF_BASE, TEAMS_COUNT.name: TEAMS_COUNT}


# --- targets and report (run.py checks and prints them with the others) -----------------------


def targets(part: dict, max_quadratic_share: float, max_band_growth: float) -> list[tuple]:
    """(target, value, limit) of one measured shape: the growth check of the slice scaling on
    its CPU medians, and its budget at the largest size."""
    name, fit, largest = part["shape"], part["growth"], part["sizes"][-1]
    return [
        (
            f"{name} growth: quadratic term's share of the largest size's variable CPU",
            fit["quadratic_share"],
            max_quadratic_share,
        ),
        (
            f"{name} growth: marginal CPU per unit, last size band / first",
            fit["band_growth"],
            max_band_growth,
        ),
        (
            f"{name} at {largest['size']:,} {part['unit']}: CPU s of the whole process",
            largest["cpu_s"]["median"],
            part["max_cpu_s"],
        ),
    ]


def report_lines(part: dict) -> list[str]:
    """One shape's table: each size's CPU (median, min-max), wall, peak RSS and marginal cost
    per unit over the size before it; then its growth figures."""
    fit = part["growth"]
    lines = [
        f"{part['shape']}: {part['command']} (fresh processes, median of"
        f" {part['runs']} runs after a warm-up; load {part['loadavg'][0][0]}"
        f"-{part['loadavg'][1][0]}):",
        f"| {part['unit']} | CPU s (min-max) | wall s | peak RSS MiB | marginal ms per unit |",
        "|--:|--:|--:|--:|--:|",
    ]
    marginals = ["", *(f"{m:.3f}" for m in fit["band_marginals_ms"])]
    for row, marginal in zip(part["sizes"], marginals, strict=True):
        cpu = row["cpu_s"]
        lines.append(
            f"| {row['size']:,} | {cpu['median']:.2f} ({cpu['min']:.2f}-{cpu['max']:.2f})"
            f" | {row['wall_s']['median']:.2f} | {row['rss_mb']['median']:.0f} | {marginal} |"
        )
    lines += [
        f"  growth: quadratic share {fit['quadratic_share']}; last band / first"
        f" {fit['band_growth']}",
        "",
    ]
    return lines
