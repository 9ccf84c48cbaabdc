"""Benchmark the offline plan against a bare baseline, paired, in CPU time first.

    .venv/bin/python benchmarks/run.py [--pairs 10] [--sizes 1 16 64 256 1024 2048]
        [--process-sizes 1024 2048] [--stacks dev ...]

Three measurements (README.md explains each and its target; exit 1 if a target is missed):

1. **Fixed cost** (fresh processes, paired): the CPU time the project spends before its first
   resource is constructed (imports of project code, stack file, validation, catalog, component
   setup) minus the same for the bare baseline, both after importing the SDK modules they share.
   An absolute budget.
2. **Per-resource slope** (one process, paired): project plan and bare baseline of generated
   stacks of ``--sizes`` TPU slices, alternating; least-squares slope of CPU time over resources
   for each, and their ratio; the growth check: a least-squares fit t = a + b r + c r^2 whose
   quadratic term must stay a small share of the largest size's variable time, and the
   marginal CPU per resource of each size band (between consecutive sizes) against the first.
3. **Whole process** (fresh processes, paired; ``process.py``): ``python -m components plan
   --json`` of the generated stacks of ``--process-sizes`` slices and of each example stack
   against two floors that register the same resources, print them and leave by ``os._exit`` as
   the CLI does: the typed floor ``python benchmarks/baseline.py SHAPE`` (the SDK's typed
   classes) and the independent floor ``baseline.py --independent SHAPE`` (plain
   registrations); CPU and peak memory.
4. **Scaling shapes** (fresh processes; ``scaling.py``): a plan command along one dimension
   of its input (the diff base's size; the teams count), ``--scaling-runs`` runs per size: the
   growth check of 2. on its CPU medians, and its budget at the largest size.

Every comparison is ``--pairs`` alternating runs (who goes first alternates); each figure is the
median of the pair ratios with min, max and interquartile range, with the load average. Writes
benchmarks/results.json; with ``--merge``, the parts this run skips are kept from it (e.g.
``--skip fixed slope process --merge`` measures the scaling shapes alone). ``--worker`` is
internal (a measured child process).
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import statistics
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
for _path in (str(BENCH_DIR), str(PROJECT_DIR)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import process  # noqa: E402 (benchmarks/ is on the path from here)
from process import run_process  # noqa: E402

SIZES = (1, 16, 64, 256, 1024, 2048)
PROCESS_SIZES = (1024, 2048)
PAIRS = 10
# Targets (README.md, "Targets"). CPU seconds unless said otherwise.
MAX_FIXED_COST_S = 0.6  # project CPU before its first resource, above the baseline's
MAX_SLOPE_RATIO = 1.4  # project / baseline, CPU per resource
# The growth check (``growth``): the quadratic term's share of the largest size's variable time,
# and the marginal CPU per resource of the last size band over the first band's.
MAX_QUADRATIC_SHARE = 0.15
MAX_BAND_GROWTH = 1.5
# Whole process: the targets against both floors are in process.py.
SCALING_RUNS = 5  # fresh processes per size of a scaling shape, after a warm-up
PARTS = ("fixed_cost", "slope", "process", "scaling")


# --- statistics (pure; tested in tests/e2e/test_benchmark_stacks.py) -----------------------------


def spread(values: Sequence[float]) -> dict[str, float]:
    """Median, min, max and interquartile range (inclusive quartiles) of ``values``."""
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "q1": q1,
        "q3": q3,
    }


def pair_ratios(numerators: Sequence[float], denominators: Sequence[float]) -> list[float]:
    return [a / b for a, b in zip(numerators, denominators, strict=True)]


def least_squares(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """(slope, intercept) of the least-squares line through the points."""
    slope, intercept = statistics.linear_regression(xs, ys)
    return slope, intercept


def marginal_growth(resources: Sequence[int], seconds: Sequence[float]) -> float:
    """Marginal cost per resource at the largest size / at the second-largest size.

    The marginal cost at size i is (t_i - t_0) / (r_i - r_0), t_0 and r_0 at the smallest size:
    the fixed part cancels, so a linear program gives 1.0 and a quadratic one about
    (r_last + r_prev) / r_prev.
    """
    r0, t0 = resources[0], seconds[0]

    def marginal(i: int) -> float:
        return (seconds[i] - t0) / (resources[i] - r0)

    return marginal(-1) / marginal(-2)


def quadratic_fit(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float, float]:
    """(a, b, c) of the least-squares y = a + b x + c x^2 (normal equations, Cramer's rule)."""
    n = len(xs)
    s1, s2, s3, s4 = (sum(x**k for x in xs) for k in (1, 2, 3, 4))
    pairs = list(zip(xs, ys, strict=True))
    t0, t1, t2 = sum(ys), sum(x * y for x, y in pairs), sum(x * x * y for x, y in pairs)
    m = ((n, s1, s2), (s1, s2, s3), (s2, s3, s4))

    def det(a: Sequence[Sequence[float]]) -> float:
        return (
            a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1])
            - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0])
            + a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])
        )

    d = det(m)
    rhs = (t0, t1, t2)
    a, b, c = (
        det([[rhs[i] if j == k else m[i][j] for j in range(3)] for i in range(3)]) / d
        for k in range(3)
    )
    return a, b, c


def band_marginals(resources: Sequence[int], seconds: Sequence[float]) -> list[float]:
    """Marginal seconds per resource between consecutive sizes (the fixed part cancels)."""
    return [
        (seconds[i] - seconds[i - 1]) / (resources[i] - resources[i - 1])
        for i in range(1, len(resources))
    ]


def growth(resources: Sequence[int], seconds: Sequence[float]) -> dict[str, float]:
    """The growth check's figures for one side. ``quadratic_share``: the fitted c r^2 over the
    variable time b r + c r^2 at the largest size (0 if linear; a program quadratic enough to
    cost 15% more at its largest size fails). ``band_growth``: the last band's marginal cost
    over the first band's (1 if linear), the first band taken above the smallest size, where
    per-run noise dominates."""
    _, b, c = quadratic_fit(resources, seconds)
    largest = resources[-1]
    variable = b * largest + c * largest * largest
    bands = band_marginals(resources, seconds)
    first = bands[1] if len(bands) > 2 else bands[0]
    return {
        "quadratic_share": (c * largest * largest / variable) if variable > 0 else 0.0,
        "band_growth": bands[-1] / first,
        "band_marginals_ms": [round(m * 1000, 3) for m in bands],
    }


def rounded(figures: dict[str, float], digits: int = 3) -> dict[str, float]:
    return {k: round(v, digits) for k, v in figures.items()}


# --- the project and the baseline, as measured --------------------------------------------------


def project_plan(stack: str, stacks_dir: Path) -> None:
    """The project's offline plan of one stack, in-process (what the CLI runs before printing):
    the stack file validated, then the project's `__main__.py` run under the mock engine."""
    from components.plan.engine import plan_file
    from components.resolve.checks import forget_validated

    forget_validated()  # validated afresh each time, as in the one plan of a CLI process
    plan_file(stack, stacks_dir)


def shape_of(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """What the baseline registers: each resource, its inputs, its structure as indexes."""
    index = {r["urn"]: i for i, r in enumerate(plan["resources"])}
    return [
        {
            "type": r["type"],
            "name": r["name"],
            "custom": r["custom"],
            "inputs": r["inputs"],
            "parent": index.get(r["parent"]),
            "provider": index.get(r["provider"]),
            "dependencies": sorted(index[d] for d in r["dependencies"] if d in index),
        }
        for r in plan["resources"]
    ]


def write_shape(plan: dict[str, Any], path: Path) -> int:
    """The baseline's shape file: ``plan``'s resources. A team stack's or a fleet's plan reads
    its owner's or workers' contracts from their stack files, without planning them, so the
    baseline registers the plan's own resources alone. Returns how many there are."""
    shape = shape_of(plan)
    path.write_text(json.dumps(shape))
    return len(shape)


@dataclass(frozen=True)
class Case:
    stack: str
    stacks_dir: Path
    shape: Path
    resources: int

    def to_dict(self) -> dict[str, Any]:
        return {"stack": self.stack, "stacks_dir": str(self.stacks_dir), "shape": str(self.shape)}


def prepare(stack: str, stacks_dir: Path, work: Path) -> Case:
    """Plan ``stack`` with the CLI once (also a warm-up); its plan gives the baseline's shape."""
    shape = work / f"{stack}.shape.json"
    return Case(stack, stacks_dir, shape, write_shape(_cli_plan(stack, stacks_dir), shape))


def generated_case(work: Path, slices: int) -> Case:
    """A generated stack in a directory of its own: a plan reads every stack file beside its
    own (the checks between stacks), and a user's stacks/ holds no 2,048-slice neighbours."""
    from stacks import write_stack  # not at the top: the fixed-cost workers must not load yaml

    stacks_dir = work / f"bench-{slices}"
    stacks_dir.mkdir(exist_ok=True)
    return prepare(write_stack(stacks_dir, slices), stacks_dir, work)


def _cli_plan(stack: str, stacks_dir: Path) -> dict[str, Any]:
    command = [*plan_command(stack, stacks_dir)]
    done = subprocess.run(command, cwd=PROJECT_DIR, capture_output=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr.decode()}")
    return json.loads(done.stdout)


def plan_command(stack: str, stacks_dir: Path) -> list[str]:
    return [
        *(sys.executable, "-m", "components", "plan", "--stack", stack),
        *("--stacks-dir", str(stacks_dir), "--json"),
    ]


def baseline_command(case: Case, independent: bool = False) -> list[str]:
    """The typed floor of ``case`` (with ``independent``: the independent floor)."""
    return process.floor_command(case.shape, independent)


# --- workers (measured child processes) ---------------------------------------------------------


def _cpu() -> float:
    return time.process_time()  # the whole process: the SDK registers from worker threads


def read_shape(path: str) -> list[dict[str, Any]]:
    """A shape file's resources (see ``write_shape``)."""
    return json.loads(Path(path).read_text())


def worker_fixed(side: str, case: dict[str, Any]) -> dict[str, float]:
    """CPU seconds from after the shared SDK imports to the first resource, and to the end."""
    import baseline
    import pulumi

    shape = read_shape(case["shape"])
    baseline.classes_of(shape)  # imports the SDK modules of every type: shared by both sides
    first: list[float] = []
    construct = pulumi.Resource.__init__

    def spy(self: Any, t: str, *args: Any, **kwargs: Any) -> None:
        if not first and t != baseline.STACK_TYPE:
            first.append(_cpu())
        construct(self, t, *args, **kwargs)

    pulumi.Resource.__init__ = spy  # type: ignore[method-assign]
    start = _cpu()
    if side == "project":
        project_plan(case["stack"], Path(case["stacks_dir"]))
    else:
        baseline.run_shape(shape)
    return {"first_resource_s": first[0] - start, "total_s": _cpu() - start}


def worker_slope(cases: list[dict[str, Any]], pairs: int) -> dict[str, Any]:
    """Alternating in-process runs of each case: CPU and wall seconds per side."""
    import baseline

    shapes = {c["stack"]: read_shape(c["shape"]) for c in cases}
    sides: dict[str, Callable[[dict[str, Any]], Any]] = {
        "project": lambda c: project_plan(c["stack"], Path(c["stacks_dir"])),
        "baseline": lambda c: baseline.run_shape(shapes[c["stack"]]),
        "independent": lambda c: baseline.run_shape(shapes[c["stack"]], True),
    }
    for case in cases:  # warm-up: lazy SDK submodules, project imports
        for run in sides.values():
            run(case)
    results: dict[str, Any] = {}
    for case in cases:
        samples: dict[str, dict[str, list[float]]] = {s: {"cpu": [], "wall": []} for s in sides}
        for i in range(pairs):
            for side in sorted(sides, reverse=i % 2 == 1):
                gc.collect()  # the garbage of the previous run, outside the timing
                cpu, wall = _cpu(), time.perf_counter()
                sides[side](case)
                samples[side]["cpu"].append(_cpu() - cpu)
                samples[side]["wall"].append(time.perf_counter() - wall)
        results[case["stack"]] = samples
    return results


def run_worker(argv: list[str]) -> None:
    """``--worker fixed|slope JSON``: run one measurement, print JSON, exit without teardown."""
    gc.disable()  # as the CLI and the baseline run
    kind, payload = argv[0], json.loads(argv[1])
    if kind == "fixed":
        result: Any = worker_fixed(payload["side"], payload["case"])
    else:
        result = worker_slope(payload["cases"], payload["pairs"])
    sys.stdout.write(json.dumps(result))
    sys.stdout.flush()
    os._exit(0)


def call_worker(kind: str, payload: dict[str, Any]) -> Any:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", kind, json.dumps(payload)]
    done = subprocess.run(command, cwd=PROJECT_DIR, capture_output=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"worker {kind} exited {done.returncode}:\n{done.stderr.decode()}")
    return json.loads(done.stdout)


# --- the three measurements ---------------------------------------------------------------------


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def measure_fixed(case: Case, pairs: int) -> dict[str, Any]:
    samples: dict[str, list[dict[str, float]]] = {"project": [], "baseline": []}
    load_before = load()
    for side in samples:  # warm-up (file cache)
        call_worker("fixed", {"side": side, "case": case.to_dict()})
    for i in range(pairs):
        for side in sorted(samples, reverse=i % 2 == 1):
            samples[side].append(call_worker("fixed", {"side": side, "case": case.to_dict()}))
        progress()
    first = {s: [x["first_resource_s"] for x in v] for s, v in samples.items()}
    added = [p - b for p, b in zip(first["project"], first["baseline"], strict=True)]
    return {
        "stack": case.stack,
        "resources": case.resources,
        "project_first_resource_cpu_s": rounded(spread(first["project"])),
        "baseline_first_resource_cpu_s": rounded(spread(first["baseline"])),
        "added_cpu_s": rounded(spread(added)),
        "project_total_cpu_s": rounded(spread([x["total_s"] for x in samples["project"]])),
        "baseline_total_cpu_s": rounded(spread([x["total_s"] for x in samples["baseline"]])),
        "loadavg": [load_before, load()],
        "runs": samples,
    }


def measure_slope(cases: list[Case], pairs: int) -> dict[str, Any]:
    load_before = load()
    payload = {"cases": [c.to_dict() for c in cases], "pairs": pairs}
    raw = call_worker("slope", payload)
    rows = []
    for case in cases:
        sides = raw[case.stack]
        ratios = pair_ratios(sides["project"]["cpu"], sides["baseline"]["cpu"])
        rows.append(
            {
                "stack": case.stack,
                "resources": case.resources,
                "project_cpu_s": rounded(spread(sides["project"]["cpu"])),
                "baseline_cpu_s": rounded(spread(sides["baseline"]["cpu"])),
                "cpu_ratio": rounded(spread(ratios)),
                "wall_ratio": rounded(
                    spread(pair_ratios(sides["project"]["wall"], sides["baseline"]["wall"]))
                ),
                **_independent_figures(sides),
                "runs": sides,
            }
        )
    resources = [r["resources"] for r in rows]
    fits = {}
    for side in ("project", "baseline", "independent"):
        if f"{side}_cpu_s" not in rows[0]:
            continue
        medians = [r[f"{side}_cpu_s"]["median"] for r in rows]
        slope, intercept = least_squares(resources, medians)
        fits[side] = {
            "slope_ms_per_resource": round(slope * 1000, 3),
            "intercept_s": round(intercept, 3),
            "marginal_growth": round(marginal_growth(resources, medians), 3),
            **{
                k: (round(v, 3) if isinstance(v, float) else v)
                for k, v in growth(resources, medians).items()
            },
        }
    slope_ratio = (
        fits["project"]["slope_ms_per_resource"] / fits["baseline"]["slope_ms_per_resource"]
    )
    independent = fits.get("independent", {}).get("slope_ms_per_resource")
    return {
        "sizes": rows,
        "fit": fits,
        "slope_ratio": round(slope_ratio, 3),
        "slope_ratio_independent": round(fits["project"]["slope_ms_per_resource"] / independent, 3)
        if independent
        else None,
        "loadavg": [load_before, load()],
    }


def _independent_figures(sides: dict[str, Any]) -> dict[str, Any]:
    """The in-process figures against the independent floor, when it was measured."""
    if "independent" not in sides:
        return {}
    ratios = pair_ratios(sides["project"]["cpu"], sides["independent"]["cpu"])
    return {
        "independent_cpu_s": rounded(spread(sides["independent"]["cpu"])),
        "cpu_ratio_independent": rounded(spread(ratios)),
    }


def measure_process(case: Case, pairs: int) -> dict[str, Any]:
    """The project's CLI against both floors (``process.measure``)."""
    commands = {
        "project": plan_command(case.stack, case.stacks_dir),
        "baseline": baseline_command(case),
        "independent": baseline_command(case, independent=True),
    }
    load_before = load()
    figures = process.measure(commands, pairs, lambda v: rounded(spread(v)), pair_ratios, progress)
    return {
        "stack": case.stack,
        "resources": case.resources,
        **figures,
        "loadavg": [load_before, load()],
    }


def measure_shape(shape: Any, work: Path, runs: int) -> dict[str, Any]:
    """A scaling shape (``scaling.Shape``): each size in a fresh process, ``runs`` times after
    a warm-up; the growth check on the CPU medians."""
    load_before = load()
    rows = []
    for step in shape.steps:
        prepared = shape.prepare(work, step)
        run_process(prepared.command)  # warm-up (the input in the file cache)
        samples = [run_process(prepared.command) for _ in range(runs)]
        for made in prepared.files:
            made.unlink()
        rows.append(
            {
                "size": prepared.size,
                **{
                    attr: rounded(spread([getattr(s, attr) for s in samples]))
                    for attr in ("cpu_s", "wall_s", "rss_mb")
                },
                "runs [wall_s, cpu_s, rss_mb]": [
                    [round(s.wall_s, 3), round(s.cpu_s, 3), round(s.rss_mb, 1)] for s in samples
                ],
            }
        )
        progress()
    fit = growth([r["size"] for r in rows], [r["cpu_s"]["median"] for r in rows])
    return {
        "shape": shape.name,
        "unit": shape.unit,
        "command": shape.what,
        "runs": runs,
        "max_cpu_s": shape.max_cpu_s,
        "sizes": rows,
        "growth": {k: (round(v, 3) if isinstance(v, float) else v) for k, v in fit.items()},
        "loadavg": [load_before, load()],
    }


def progress() -> None:
    print(".", end="", file=sys.stderr, flush=True)


# --- targets and report -------------------------------------------------------------------------


def check_targets(result: dict[str, Any]) -> list[dict[str, Any]]:
    checks = []

    def check(name: str, value: float, limit: float) -> None:
        checks.append(
            {"target": name, "value": round(value, 3), "limit": limit, "ok": value <= limit}
        )

    if (fixed := result.get("fixed_cost")) is not None:
        value = fixed["added_cpu_s"]["median"]
        check(
            f"project fixed cost before the first resource, CPU s ({fixed['stack']})",
            value,
            MAX_FIXED_COST_S,
        )
    if (slope := result.get("slope")) is not None:
        check("per-resource slope, project / baseline (CPU)", slope["slope_ratio"], MAX_SLOPE_RATIO)
        fit = slope["fit"]["project"]
        check(
            "project growth: quadratic term's share of the largest size's variable CPU",
            fit["quadratic_share"],
            MAX_QUADRATIC_SHARE,
        )
        check(
            "project growth: marginal CPU per resource, last size band / first",
            fit["band_growth"],
            MAX_BAND_GROWTH,
        )
    for row in result.get("process", []):
        for name, ratio, limit in process.targets(row):
            check(name, ratio["median"], limit)
            checks[-1]["spread"] = [ratio["min"], ratio["q1"], ratio["q3"], ratio["max"]]
            # the margin is wider than the measurement's own noise (interquartile range)
            checks[-1]["margin_wider_than_noise"] = (
                limit - ratio["median"] > ratio["q3"] - ratio["q1"]
            )
    from scaling import targets

    for part in result.get("scaling", []):
        for name, value, limit in targets(part, MAX_QUADRATIC_SHARE, MAX_BAND_GROWTH):
            check(name, value, limit)
    return checks


def report(result: dict[str, Any]) -> str:
    lines = []
    if (fixed := result.get("fixed_cost")) is not None:
        lines += [
            f"Fixed cost ({fixed['stack']}, CPU s to the first resource,"
            f" after the shared SDK imports; load {fixed['loadavg']}):",
            f"  project {fmt(fixed['project_first_resource_cpu_s'])}",
            f"  baseline {fmt(fixed['baseline_first_resource_cpu_s'])}",
            f"  added by the project {fmt(fixed['added_cpu_s'])}",
            "",
        ]
    if (slope := result.get("slope")) is not None:
        lines += [
            f"In-process, paired (load {slope['loadavg']}):",
            "| stack | resources | project CPU s | baseline CPU s | CPU ratio (min-max) "
            "| wall ratio |",
            "|---|--:|--:|--:|--:|--:|",
        ]
        for r in slope["sizes"]:
            c = r["cpu_ratio"]
            lines.append(
                f"| {r['stack']} | {r['resources']} | {r['project_cpu_s']['median']:.3f} "
                f"| {r['baseline_cpu_s']['median']:.3f} "
                f"| {c['median']:.2f} ({c['min']:.2f}-{c['max']:.2f}) "
                f"| {r['wall_ratio']['median']:.2f} |"
            )
        for side, fit in slope["fit"].items():
            lines.append(
                f"  {side}: {fit['slope_ms_per_resource']} ms/resource + {fit['intercept_s']} s;"
                f" quadratic share {fit['quadratic_share']}; band marginals ms/resource"
                f" {fit['band_marginals_ms']} (growth {fit['band_growth']})"
            )
        lines += [
            f"  slope ratio {slope['slope_ratio']} (typed floor), "
            f"{slope.get('slope_ratio_independent')} (independent floor)",
            "",
        ]
    if result.get("process"):
        lines += process.report_lines(result["process"])
    if result.get("scaling"):
        from scaling import report_lines

        lines.append("Scaling shapes:")
        for part in result["scaling"]:
            lines += report_lines(part)
    for c in result["targets"]:
        spread = ""
        if "spread" in c:
            lo, q1, q3, hi = c["spread"]
            noise = "wider" if c["margin_wider_than_noise"] else "NOT wider"
            spread = f"; pairs {lo}-{hi}, IQR {q1}-{q3}; margin {noise} than the IQR"
        lines.append(
            f"{'ok  ' if c['ok'] else 'MISS'} {c['target']}: {c['value']} (limit {c['limit']}"
            f"{spread})"
        )
    return "\n".join(lines)


def merge_previous(result: dict[str, Any], path: Path) -> None:
    """The parts ``result`` lacks (skipped) taken from the results file ``path``, each noted
    with the date of the run that measured it."""
    if not path.exists():
        return
    previous = json.loads(path.read_text())
    kept = [p for p in PARTS if p not in result and p in previous]
    for part in kept:
        result[part] = previous[part]
    if kept:
        dates = previous.get("measured", dict.fromkeys(kept, previous.get("date")))
        measured = dict.fromkeys([p for p in PARTS if p in result], result["date"])
        result["measured"] = {**measured, **{p: dates.get(p, previous.get("date")) for p in kept}}


def fmt(figures: dict[str, float]) -> str:
    return (
        f"median {figures['median']:.3f} (min {figures['min']:.3f}, max {figures['max']:.3f},"
        f" IQR {figures['q1']:.3f}-{figures['q3']:.3f})"
    )


def example_stacks() -> list[str]:
    from components.resolve.stack_files import STACKS_DIR, available_stacks

    return available_stacks(STACKS_DIR)


def compile_project() -> None:
    """Bytecode for every project module, as a user's first plan leaves it. A shell with
    PYTHONDONTWRITEBYTECODE set (CI images often set it) would otherwise have every measured
    project process compile ~100 modules from source (0.1 s each time), while the floor's SDK
    modules were compiled when pip installed them."""
    import compileall

    compileall.compile_dir(PROJECT_DIR / "components", quiet=1)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        run_worker(argv[1:])
    parser = argparse.ArgumentParser(description="Benchmark the offline plan (see docstring).")
    parser.add_argument("--pairs", type=int, default=PAIRS, help="paired runs per comparison")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="TPU slices")
    parser.add_argument(
        "--process-sizes",
        type=int,
        nargs="*",
        default=list(PROCESS_SIZES),
        help="TPU slices of the generated stacks measured as whole processes",
    )
    parser.add_argument("--stacks", nargs="*", default=None, help="example stacks (default: all)")
    parser.add_argument(
        "--skip", nargs="*", default=[], choices=("fixed", "slope", "process", "scaling")
    )
    parser.add_argument(
        "--scaling-runs", type=int, default=SCALING_RUNS, help="runs per size of a shape"
    )
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "results.json")
    parser.add_argument(
        "--merge", action="store_true", help="keep the parts this run skips from --out"
    )
    args = parser.parse_args(argv)
    if args.pairs < 2:
        parser.error("--pairs needs at least 2 (a spread)")
    if len(args.sizes) < 4:
        parser.error("--sizes needs at least four sizes (a quadratic fit and size bands)")
    if args.scaling_runs < 2:
        parser.error("--scaling-runs needs at least 2 (a spread)")

    compile_project()
    started = time.perf_counter()
    result: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "loadavg_before": load(),
        },
        "method": {
            "pairs": args.pairs,
            "statistic": "median of the pair ratios (project / baseline), min, max, IQR",
            "bytecode": "the project's modules compiled before measuring (compile_project)",
            "cpu_s": "time.process_time (in-process: all threads) or the child's user + system"
            " CPU time (os.wait4)",
        },
    }

    with tempfile.TemporaryDirectory(prefix="tpu-pathways-bench-") as tmp:
        work = Path(tmp)
        stacks = example_stacks() if args.stacks is None else args.stacks
        print("preparing", file=sys.stderr, flush=True)
        in_process = not {"fixed", "slope"} <= set(args.skip)
        generated = [generated_case(work, n) for n in sorted(args.sizes)] if in_process else []
        if "fixed" not in args.skip:
            print("fixed cost ", end="", file=sys.stderr, flush=True)
            result["fixed_cost"] = measure_fixed(generated[0], args.pairs)
            print(file=sys.stderr)
        if "slope" not in args.skip:
            print("slope (in-process)", file=sys.stderr, flush=True)
            result["slope"] = measure_slope(generated, args.pairs)
        if "process" not in args.skip:
            result["process"] = []
            for slices in args.process_sizes:
                print(f"bench-{slices} ", end="", file=sys.stderr, flush=True)
                case = generated_case(work, slices)
                result["process"].append({"slices": slices, **measure_process(case, args.pairs)})
                print(file=sys.stderr)
            for stack in stacks:
                print(f"{stack} ", end="", file=sys.stderr, flush=True)
                case = prepare(stack, PROJECT_DIR / "stacks", work)
                result["process"].append(measure_process(case, args.pairs))
                print(file=sys.stderr)
        if "scaling" not in args.skip:
            from scaling import SHAPES

            result["scaling"] = []
            for shape in SHAPES.values():
                print(f"{shape.name} ", end="", file=sys.stderr, flush=True)
                result["scaling"].append(measure_shape(shape, work, args.scaling_runs))
                print(file=sys.stderr)
    if args.merge:
        merge_previous(result, args.out)
    result["targets"] = check_targets(result)
    result["machine"].update(
        loadavg_after=load(), duration_s=round(time.perf_counter() - started, 1)
    )
    print(report(result))
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 0 if all(c["ok"] for c in result["targets"]) else 1


if __name__ == "__main__":
    sys.exit(main())
