"""The modeled critical path of `pulumi up` for a plan: which chain of resources sets how long a
deployment takes, and whether the dependency graph keeps that chain short.

The model follows how the Pulumi engine schedules a program's registrations:

- A resource starts once everything it waits for is done: its ``dependencies`` (what the SDK
  sent: outputs it consumed and ``depends_on``), its explicit ``provider``, and its ``parent``.
- Waiting for a parent means waiting for the parent's own registration. A component resource
  (this project's ``tpu-pathways:*`` groupings) does no work, so its children are not held
  back by it, only by whatever its registration itself waited for.
- Waiting for a resource through ``dependencies`` or ``provider`` means waiting until it is
  done. A custom resource is done when it is created; a component is done when its children
  are (the SDK turns ``depends_on=[component]`` into its children; the plan already holds those
  expanded edges, the rule is here for completeness).
- How long a resource takes comes from ``components/plan/data/durations.yaml`` (per type, with
  sources; read by ``durations``); component resources take no time unless the table lists
  their type (remote components such as ``kubernetes:yaml/v2:ConfigFile`` stand in for the
  objects they apply).

The engine runs at most ``--parallel`` operations at once (pulumi/pulumi
pkg/cmd/pulumi/operations/up.go ``defaultParallel``: 4 x GOMAXPROCS since v3.100.0, unless
PULUMI_PARALLEL is set; the ``engine`` section of durations.yaml names the runner assumed), and
GKE runs a bounded number of node pool operations per cluster
(``components.gke.operations``); the terraform provider keeps a queued pool's operation, and so
its engine slot, retrying until GKE takes it. ``Schedule`` (``schedule``) simulates both
limits; the totals without them (the graph's longest chain) and the sequential total (the sum
of all durations) show what each costs.

By default the model runs at the deploy parallelism (``deploy_time.deploy_parallel``: what the
deploy workflow passes and the plan prints as `pulumi up --parallel N`), at GKE's assumed
concurrency; with ``sensitivity`` it adds the deployment at each sourced concurrency, at
Pulumi's bare default too, and the options where GKE is the limit (``deploy_time``).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from components.gke.operations import NODE_POOL_OPERATIONS
from components.plan import json_text
from components.plan.deploy_time import (
    deploy_parallel,
    is_tpu_node_pool,
    milestones,
    sensitivity,
)
from components.plan.deploy_time_text import render_deploy
from components.plan.durations import ESTIMATES, DurationTable, default_table, minutes
from components.plan.model import PlannedResource
from components.plan.schedule import UNBOUNDED, Graph, Limits, Schedule
from components.tokens import CLUSTER, CONFIG_FILE, NODE_POOL

__all__ = [  # re-exported: callers import them from here
    "CONFIG_FILE",
    "NODE_POOL",
    "DurationTable",
    "Limits",
    "default_table",
    "deploy_parallel",
    "is_tpu_node_pool",
    "minutes",
]


@dataclass(frozen=True)
class Step:
    urn: str
    type: str
    name: str
    label: str
    start: float
    finish: float
    low: float
    high: float
    source: str


@dataclass
class CriticalPath:
    chain: list[Step]
    parallel: dict[str, float]  # modeled `pulumi up` time per estimate, seconds
    sequential: dict[str, float]  # the same resources one after another, seconds
    milestones: dict[str, float]  # typical finish of each stage, seconds
    violations: list[str]
    # The parallelism assumed (None: unbounded), and the totals without any limit.
    limits: dict[str, int | None] = field(default_factory=dict)
    unbounded: dict[str, float] = field(default_factory=dict)
    # The `pulumi up --parallel` the deploy workflow passes (``deploy_parallel``; None when not
    # asked for: a plan diff's chain without limits).
    deploy_parallel: int | None = None
    # The deployment at each sourced GKE concurrency (``deploy_time.SensitivityRow``), when asked.
    sensitivity: list[dict[str, Any]] = field(default_factory=list)
    # Resources that waited for an engine slot once ready: how many, and the longest wait (s).
    slot_waits: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def default_limits(table: DurationTable, parallel: int | None = None) -> Limits:
    """``parallel`` (default: the table's, Pulumi's bare default on its runner) and GKE's node
    pool operations per cluster (``components.gke.operations``)."""
    return Limits(parallel or table.default_parallel, NODE_POOL_OPERATIONS)


def critical_path(
    resources: Iterable[PlannedResource | Mapping[str, Any]],
    table: DurationTable | None = None,
    limits: Limits | None = None,
    estimates: Sequence[str] = ESTIMATES,
    *,
    with_sensitivity: bool = False,
) -> CriticalPath:
    """The longest chain (typical durations), the modeled totals within ``limits`` (default: the
    deploy parallelism and GKE's assumed concurrency), the totals without them, and the
    structure check; ``with_sensitivity`` adds the deployment at each sourced GKE concurrency.
    The totals are of ``estimates`` (a plan diff draws only the typical chain and total, and
    schedules only that one: each schedule is a simulation over the whole plan)."""
    if "typical" not in estimates:
        raise ValueError(f"the chain is the typical estimate's; estimates {tuple(estimates)}")
    graph = Graph(resources)
    table = table or default_table()
    durations = {urn: table.duration(r) for urn, r in graph.resources.items()}
    deploy = (
        deploy_parallel(graph, table, durations) if limits is None or with_sensitivity else None
    )
    limits = limits or Limits(deploy, NODE_POOL_OPERATIONS)
    schedules = {e: Schedule(graph, durations, e, limits) for e in estimates}
    # Without limits, the totals within them are the totals without them: simulated once.
    unbounded = {
        e: (s if limits == UNBOUNDED else Schedule(graph, durations, e)).makespan
        for e, s in schedules.items()
    }
    typical = schedules["typical"]
    chain = [
        Step(
            urn=urn,
            type=graph.resources[urn].type,
            name=graph.resources[urn].name,
            label=durations[urn].label,
            start=typical.start[urn],
            finish=typical.finish[urn],
            low=durations[urn].low,
            high=durations[urn].high,
            source=durations[urn].source,
        )
        for urn in typical.chain()
    ]
    return CriticalPath(
        chain=chain,
        parallel={e: s.makespan for e, s in schedules.items()},
        sequential={e: sum(d.at(e) for d in durations.values()) for e in estimates},
        milestones=milestones(graph, typical),
        violations=structure_violations(graph),
        limits={"parallel": limits.parallel, "nodePoolOperations": limits.node_pool_operations},
        unbounded=unbounded,
        deploy_parallel=deploy,
        sensitivity=[]
        if deploy is None or not with_sensitivity
        else [asdict(row) for row in sensitivity(graph, durations, table, deploy)],
        slot_waits=_slot_waits(typical),
    )


def _slot_waits(schedule: Schedule) -> dict[str, float]:
    """How many resources waited for an engine slot once ready, and the longest wait."""
    waits = [w for w in map(schedule.slot_wait, schedule.slot) if w > 0]
    return {"resources": len(waits), "longest": max(waits, default=0.0)}


def structure_violations(
    resources: Graph | Iterable[PlannedResource | Mapping[str, Any]],
) -> list[str]:
    """What breaks the intended shape: cluster, then node pools in parallel with the installs,
    then workloads. Each wait is checked directly or transitively.

    - no node pool waits for another node pool (slices are created side by side);
    - no install (ConfigFile) waits for a TPU node pool (installs need only the control plane);
    - every node pool and every install waits for the cluster, when the plan creates one.
    """
    graph = resources if isinstance(resources, Graph) else Graph(resources)
    by_urn = graph.resources
    clusters = {u for u, r in by_urn.items() if r.type == CLUSTER}
    problems = []
    for urn, r in by_urn.items():
        if r.type not in (NODE_POOL, CONFIG_FILE):
            continue
        upstream = graph.ancestors(urn)
        if r.type == NODE_POOL:
            pools = sorted(by_urn[u].name for u in upstream if by_urn[u].type == NODE_POOL)
            if pools:
                problems.append(f"node pool {r.name} waits for node pool(s) {', '.join(pools)}")
        else:
            tpu = sorted(by_urn[u].name for u in upstream if is_tpu_node_pool(by_urn[u]))
            if tpu:
                problems.append(f"install {r.name} waits for TPU node pool(s) {', '.join(tpu)}")
        if clusters and not clusters & upstream:
            what = "node pool" if r.type == NODE_POOL else "install"
            problems.append(f"{what} {r.name} does not wait for the cluster")
    return problems


def render_text(path: CriticalPath, stack: str = "") -> str:
    title = f"Modeled critical path of `pulumi up`{f' for stack {stack!r}' if stack else ''}"
    lines = [
        title,
        "(typical = midpoint of each low-high range in components/plan/data/durations.yaml)",
        "",
        *_chain_table(path.chain),
        "",
    ]
    lines += [wrapped for text in _prose(path) for wrapped in textwrap.wrap(text, 96)]
    lines += render_deploy(path)
    if path.violations:
        lines.append("")
        lines.append(f"STRUCTURE VIOLATIONS ({len(path.violations)}):")
        lines += [f"  - {v}" for v in path.violations]
    return "\n".join(lines)


def _chain_table(chain: list[Step]) -> list[str]:
    took = [
        f"{minutes(step.finish - step.start)} ({minutes(step.low)}-{minutes(step.high)})"
        for step in chain
    ]
    width = max([len("takes (low-high)"), *map(len, took)])  # the column fits its longest cell
    lines = [f"  {'start':>8} {'finish':>8}  {'takes (low-high)':<{width}} resource"]
    for step, taken in zip(chain, took, strict=True):
        lines.append(
            f"  {minutes(step.start):>8} {minutes(step.finish):>8}  {taken:<{width}} "
            f"{step.label}: {step.type} {step.name}"
        )
    return lines


def _prose(path: CriticalPath) -> list[str]:
    stages = path.milestones
    prose = [
        "Stages finish at (typical): "  # in the order they finish
        + ", ".join(
            f"{stage} {minutes(t)}" for stage, t in sorted(stages.items(), key=lambda kv: kv[1])
        )
        + "."
    ]
    if "workloads submitted" in stages and "tpu node pools" in stages:
        prose.append(
            "PathwaysJobs do not wait for node pools in `pulumi up`: the API server accepts them "
            f"at {minutes(stages['workloads submitted'])}, their pods are scheduled as their TPU "
            f"slices become ready (the last at {minutes(stages['tpu node pools'])})."
        )
    p, s = path.parallel, path.sequential
    prose.append(f"Assumed: {_describe_limits(path.limits)}.")
    prose.append(
        f"Parallel total (as the engine runs it, within those limits): {minutes(p['typical'])} "
        f"(low {minutes(p['low'])}, high {minutes(p['high'])})."
    )
    prose += _slot_text(path)
    if path.unbounded and path.unbounded != p:
        u = path.unbounded
        prose.append(
            f"Without any limit (the graph's longest chain): {minutes(u['typical'])} "
            f"(low {minutes(u['low'])}, high {minutes(u['high'])})."
        )
    prose.append(
        f"Sequential total (one resource at a time): {minutes(s['typical'])} "
        f"(low {minutes(s['low'])}, high {minutes(s['high'])})."
    )
    if not path.violations:
        prose.append(
            "Structure: ok (cluster -> node pools in parallel with installs -> workloads; "
            "no node pool waits for another, no install waits for a TPU node pool)."
        )
    return prose


def _slot_text(path: CriticalPath) -> list[str]:
    """Whether anything that could start waited for one of the engine's slots (typical)."""
    waits, stages = path.slot_waits, path.milestones
    if not waits or path.limits.get("parallel") is None:
        return []
    if not waits["resources"]:
        text = "Nothing that could start waited for an engine slot"
        if "installs" in stages and "cpu node pools" in stages:
            text += (
                f": installs done at {minutes(stages['installs'])}, their own chain after the "
                "cluster and the CPU node pools, the system pool among them "
                f"({minutes(stages['cpu node pools'])})"
            )
        return [text + "."]
    return [
        f"{int(waits['resources'])} resource(s) waited for an engine slot once ready (the longest "
        f"{minutes(waits['longest'])}): a larger --parallel starts them at once."
    ]


def _describe_limits(limits: dict[str, int | None]) -> str:
    parallel, gke = limits.get("parallel"), limits.get("nodePoolOperations")
    engine = (
        "no limit on the engine's operations"
        if parallel is None
        else f"`pulumi up --parallel {parallel}` (at most {parallel} operations at once)"
    )
    pools = "no limit" if gke is None else f"{gke} at once (estimate), the rest queued"
    return f"{engine}; GKE node pool operations per cluster: {pools}"


def render_json(path: CriticalPath, stack: str = "") -> str:
    """The critical path as one JSON document (``plan --critical-path --json``)."""
    return json_text.dumps({"stack": stack, **path.to_dict()}, end="\n")
