"""The deploy-time part of `plan --critical-path` as text: the `pulumi up --parallel` to use, the
deployment at each sourced GKE concurrency, the timeouts and the CI job's limit against it, and
the options where GKE is the limit, with their modeled gains (``deploy_time`` computes them)."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from components.gke.operations import (
    PROVIDER_NODE_POOL_TIMEOUT_S,
    QUEUE_OPERATIONS,
    go_duration,
)
from components.plan.deploy_time import MAX_DEPLOY_PARALLEL
from components.plan.durations import minutes

if TYPE_CHECKING:
    from components.plan.critical_path import CriticalPath

WIDTH = 96


def _wrap(text: str, bullet: str = "") -> list[str]:
    """``text`` wrapped at ``WIDTH``; after a bullet ("  - "), its lines under the text."""
    return textwrap.wrap(text, WIDTH, initial_indent=bullet, subsequent_indent=" " * len(bullet))


def render_deploy(path: CriticalPath) -> list[str]:
    """Lines for the deploy parallelism, and with the sensitivity rows their table, the
    timeouts, the job limit and the options; nothing when the plan was modeled without them."""
    if path.deploy_parallel is None:
        return []
    lines = ["", *_wrap(_deploy_command(path))]
    rows = path.sensitivity
    if rows:
        lines += ["", *_table(rows, path.deploy_parallel)]
        lines += [line for text in _checks(rows) for line in _wrap(text)]
        lines += _options(rows, path.limits.get("nodePoolOperations"))
    return lines


def _deploy_command(path: CriticalPath) -> str:
    n = path.deploy_parallel
    text = (
        f"Deploy with `pulumi up --parallel {n}` (`plan --deploy-parallelism` prints it; the "
        "deploy workflow passes it): the most operations ready or in flight at once in this "
        "plan, so nothing that can start waits for one of the engine's slots. The engine hands "
        "slots out first come, first served and a queued node pool keeps its slot while GKE "
        "makes it wait, so the order the program registers resources in cannot put the installs "
        "ahead of pools that were ready first; only enough slots can."
    )
    if n == MAX_DEPLOY_PARALLEL:
        text += (
            f" Capped at {MAX_DEPLOY_PARALLEL} for the engine's memory (about 8 MB per operation "
            "in flight, pulumi/pulumi#14989): this plan needs more, so some resources queue; "
            "create the TPU pools empty (below) or deploy the installs first (`pulumi up "
            "--target`)."
        )
    return text


def _table(rows: Sequence[Mapping[str, Any]], parallel: int) -> list[str]:
    bare = rows[0]["default_parallel"]
    header = [
        "GKE at once",
        f"--parallel {parallel}: total (low-high)",
        "installs",
        f"--parallel {bare}: total",
        "installs",
        "TPU pools empty",
    ]
    body = [
        [
            str(r["node_pool_operations"]),
            _range(r["total"]),
            minutes(r["installs"]),
            minutes(r["default_total"]),
            minutes(r["default_installs"]),
            minutes(r["empty_pools_total"]["typical"]) if r["empty_pools_total"] else "-",
        ]
        for r in rows
    ]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    lines = [
        "Modeled `pulumi up` by GKE's concurrent node pool operations per cluster (typical):",
        *(
            "  " + "  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True))
            for row in [header, *body]
        ),
    ]
    lines += [f"  {r['node_pool_operations']}: {r['source']}" for r in rows]
    return lines


def _range(total: Mapping[str, float]) -> str:
    return f"{minutes(total['typical'])} ({minutes(total['low'])}-{minutes(total['high'])})"


def _checks(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The node pools' timeouts and the CI job's limit against the high estimate."""
    late = [r for r in rows if r["late_node_pools"]]
    texts = []
    if late:
        texts += [
            f"At {r['node_pool_operations']} at once, {len(r['late_node_pools'])} node pool(s) "
            f"would pass their create timeout (high estimate): {_some(r['late_node_pools'])}."
            for r in late
        ]
    else:
        texts.append(
            "Timeouts: every node pool's create timeout (the provider's default "
            f"{go_duration(PROVIDER_NODE_POOL_TIMEOUT_S)}, or its whole queue at "
            f"{QUEUE_OPERATIONS} at once) covers its modeled wait and create at the high "
            "estimate, at every figure above; the provider retries a busy cluster's answer "
            "(FAILED_PRECONDITION, 429) meanwhile (components/gke/operations.py)."
        )
    over = [r for r in rows if r["over_job_limit"]]
    if over:
        figures = ", ".join(str(r["node_pool_operations"]) for r in over)
        texts.append(
            f"At {figures} at once the high total passes a CI job's limit (6 h on GitHub-hosted "
            "runners, the deploy workflow's timeout-minutes): create the TPU pools empty (below) "
            "or deploy from a self-hosted runner."
        )
    return texts


def _some(names: Sequence[str], shown: int = 5) -> str:
    return ", ".join(names[:shown]) + (
        f" and {len(names) - shown} more" if len(names) > shown else ""
    )


def _options(rows: Sequence[Mapping[str, Any]], assumed: int | None) -> list[str]:
    row = next((r for r in rows if r["node_pool_operations"] == assumed), rows[0])
    gke = row["node_pool_operations"]
    total = row["total"]["typical"]
    options = [
        f"the deploy parallelism (what the deploy workflow and the command above use): installs "
        f"done at {minutes(row['installs'])} instead of {minutes(row['default_installs'])} at "
        f"the bare --parallel {row['default_parallel']}, the total {minutes(total)} instead of "
        f"{minutes(row['default_total'])};"
    ]
    if row["empty_pools_total"]:
        options.append(
            "TPU pools created empty and grown by the cluster autoscaler, as flex-start pools "
            f"are: `pulumi up` {minutes(row['empty_pools_total']['typical'])} instead of "
            f"{minutes(total)}; each slice then arrives as its capacity is granted (its VMs' "
            "bring-up after `pulumi up`), and a stockout shows as Pending pods, not a failed "
            "`pulumi up`;"
        )
    options.append(
        "fewer operations per slice: none (one node pool per slice: GKE's rule for multi-host "
        "slices, JobSet's exclusive placement for single-host ones)."
    )
    lines = ["", f"Where GKE limits concurrency (modeled at {gke} at once):"]
    return lines + [line for text in options for line in _wrap(text, "  - ")]
