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
  sources); component resources take no time unless the table lists their type (remote
  components such as ``kubernetes:yaml/v2:ConfigFile`` stand in for the objects they apply).

The engine runs at most ``--parallel`` operations at once (pulumi/pulumi
pkg/cmd/pulumi/operations/up.go ``defaultParallel``: 4 x GOMAXPROCS since v3.100.0, unless
PULUMI_PARALLEL is set; the ``engine`` section of durations.yaml names the runner assumed), and
GKE runs a bounded number of node pool operations per cluster
(``components.gke.operations``); the terraform provider keeps a queued pool's operation, and so
its engine slot, retrying until GKE takes it. ``Schedule`` simulates both limits; the totals
without them (the graph's longest chain) and the sequential total (the sum of all durations)
show what each costs.
"""

from __future__ import annotations

import heapq
import textwrap
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from components.gke.operations import NODE_POOL_OPERATIONS
from components.plan import json_text
from components.plan.model import PlannedResource
from components.plan.views import NodePoolView, value_at
from components.tokens import CLUSTER, CONFIG_FILE, NODE_POOL, WORKLOAD_TYPES

DURATIONS_PATH = Path(__file__).resolve().parent / "data" / "durations.yaml"


ESTIMATES = ("low", "typical", "high")
PARENT, PROVIDER, DEPENDENCY = "parent", "provider", "dependency"
QUEUE = "queue"  # a start delayed by a slot: the cause is the resource that freed it
# On equal finish times, the chain goes through an explicit dependency before a provider
# before a parent, then by URN: deterministic, and it names the resource that really gates.
_EDGE_RANK = {DEPENDENCY: 0, PROVIDER: 1, PARENT: 2}


@dataclass(frozen=True)
class Duration:
    low: float
    high: float
    label: str
    source: str

    def at(self, estimate: str) -> float:
        if estimate == "typical":
            return (self.low + self.high) / 2
        return self.low if estimate == "low" else self.high


NO_TIME = Duration(0, 0, "component", "does no work of its own")


def _matches(when: Mapping[str, Any] | None, inputs: Mapping[str, Any]) -> bool:
    if not when:
        return True
    value = value_at(inputs, when["input"])
    if "equals" in when:
        return value == when["equals"]
    prefixes = when.get("prefix", ())
    prefixes = (prefixes,) if isinstance(prefixes, str) else tuple(prefixes)
    return isinstance(value, str) and value.startswith(prefixes)


@dataclass(frozen=True)
class DurationTable:
    """Per-type creation times: the parsed ``durations.yaml`` (or any dict of that shape)."""

    types: Mapping[str, list[dict[str, Any]]]
    default_custom: Duration
    default_parallel: int | None = None
    """`pulumi up`'s default ``--parallel`` on the runner the table assumes (its ``engine``
    section); None: unbounded."""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DurationTable:
        low, high = data["defaultCustom"]["seconds"]
        default = Duration(low, high, "default", data["defaultCustom"]["source"])
        engine = data.get("engine")
        parallel = engine["parallelPerCpu"] * engine["runnerCpus"] if engine else None
        return cls(dict(data.get("types", {})), default, parallel)

    @classmethod
    def load(cls, path: Path = DURATIONS_PATH) -> DurationTable:
        return cls.from_dict(yaml.safe_load(path.read_text()))

    def duration(self, resource: PlannedResource) -> Duration:
        for rule in self.types.get(resource.type, ()):
            if _matches(rule.get("when"), resource.inputs):
                low, high = rule["seconds"]
                return Duration(low, high, rule.get("label", resource.type), rule["source"])
        return self.default_custom if resource.custom else NO_TIME


@cache
def default_table() -> DurationTable:
    return DurationTable.load()


def is_tpu_node_pool(resource: PlannedResource) -> bool:
    return resource.type == NODE_POOL and NodePoolView(resource.inputs).is_tpu


def as_resource(value: PlannedResource | Mapping[str, Any]) -> PlannedResource:
    """A plan resource from the model or from a plan JSON document's ``resources`` list."""
    if isinstance(value, PlannedResource):
        return value
    return PlannedResource(
        urn=value["urn"],
        type=value["type"],
        name=value["name"],
        parent=value.get("parent"),
        custom=bool(value.get("custom", True)),
        provider=value.get("provider"),
        inputs=value.get("inputs", {}),
        dependencies=list(value.get("dependencies", ())),
        options=value.get("options", {}),
    )


class Graph:
    """What each resource waits for, and each component's children."""

    def __init__(self, resources: Iterable[PlannedResource | Mapping[str, Any]]) -> None:
        self.resources = {r.urn: r for r in map(as_resource, resources)}
        self.order = list(self.resources)
        self.waits: dict[str, list[tuple[str, str]]] = {}
        self.children: dict[str, list[str]] = {urn: [] for urn in self.resources}
        for urn, r in self.resources.items():
            edges = {(d, DEPENDENCY) for d in r.dependencies}
            if r.provider:
                edges.add((r.provider, PROVIDER))
            if r.parent:
                edges.add((r.parent, PARENT))
            # Edges to resources outside the plan (the root stack) cost nothing.
            known = [(u, kind) for u, kind in edges if u in self.resources and u != urn]
            self.waits[urn] = sorted(known, key=lambda e: (_EDGE_RANK[e[1]], e[0]))
            if r.parent in self.children:
                self.children[r.parent].append(urn)

    def ancestors(self, urn: str) -> set[str]:
        """Every resource ``urn`` waits for, directly or transitively (same rules as timing)."""
        seen: set[str] = set()
        stack = [urn]
        while stack:
            current = stack.pop()
            for dep, kind in self.waits[current]:
                reached = [dep] if kind == PARENT else self._with_descendants(dep)
                for r in reached:
                    if r not in seen and r != urn:
                        seen.add(r)
                        stack.append(r)
        return seen

    def _with_descendants(self, urn: str) -> list[str]:
        found, stack = [], [urn]
        while stack:
            current = stack.pop()
            found.append(current)
            if not self.resources[current].custom:  # a component is done when its children are
                stack.extend(self.children[current])
        return found


@dataclass(frozen=True)
class Limits:
    """How many operations run at once: ``parallel`` in the whole engine (``pulumi up
    --parallel``), ``node_pool_operations`` on node pools of the cluster (GKE); None: no limit."""

    parallel: int | None
    node_pool_operations: int | None

    def describe(self) -> str:
        engine = "unbounded" if self.parallel is None else str(self.parallel)
        gke = self.node_pool_operations
        return (
            f"pulumi up --parallel {engine}; GKE node pool operations at once per cluster: "
            f"{'unbounded' if gke is None else gke}"
        )


UNBOUNDED = Limits(None, None)


@dataclass
class Schedule:
    """Start and finish of every resource for one estimate (low, typical or high durations),
    as the engine runs them within ``limits``.

    An event simulation: a resource is ready once what it waits for is done; a resource that
    takes time then waits for one of the engine's ``parallel`` slots (first ready, first
    served; ties in plan order), and a node pool, holding its slot, also for one of GKE's
    ``node_pool_operations`` (the provider retries FAILED_PRECONDITION meanwhile). A start
    delayed by a slot names the resource whose completion freed it (``QUEUE``), so the chain
    shows the queue."""

    graph: Graph
    durations: dict[str, Duration]
    estimate: str
    limits: Limits = UNBOUNDED
    start: dict[str, float] = field(default_factory=dict)
    finish: dict[str, float] = field(default_factory=dict)
    done: dict[str, float] = field(default_factory=dict)
    start_cause: dict[str, tuple[str, str] | None] = field(default_factory=dict)
    done_cause: dict[str, str | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        graph = self.graph
        self._index = {urn: i for i, urn in enumerate(graph.order)}
        self._waiting = {urn: len(graph.waits[urn]) for urn in graph.order}
        self._children_left = {
            urn: len(graph.children[urn]) for urn in graph.order if not graph.resources[urn].custom
        }
        self._on_finish: dict[str, list[str]] = {urn: [] for urn in graph.order}
        self._on_done: dict[str, list[str]] = {urn: [] for urn in graph.order}
        for urn in graph.order:
            for dep, kind in graph.waits[urn]:
                (self._on_finish if kind == PARENT else self._on_done)[dep].append(urn)
        self._ready: dict[str, float] = {}
        self._queue: list[tuple[float, int, str]] = []  # ready for an engine slot
        self._gke_queue: deque[str] = deque()  # holding an engine slot, waiting for GKE
        self._running: list[tuple[float, int, str]] = []
        self._engine_free = self.limits.parallel
        self._gke_free = self.limits.node_pool_operations
        self._simulate()

    def _takes(self, urn: str) -> float:
        return self.durations[urn].at(self.estimate)

    def _simulate(self) -> None:
        self._settle([u for u in self.graph.order if not self._waiting[u]], 0.0, None)
        while self._running:
            end, _, urn = heapq.heappop(self._running)
            self._release(urn)
            self._finished(urn, end)
            self._settle([], end, urn)
        if len(self.done) < len(self.graph.order):
            stuck = next(u for u in self.graph.order if u not in self.done)
            raise ValueError(f"dependency cycle through {stuck}")

    def _settle(self, ready: list[str], now: float, freed_by: str | None) -> None:
        for urn in ready:
            self._became_ready(urn, now)
        self._dispatch(now, freed_by)

    def _became_ready(self, urn: str, now: float) -> None:
        self._ready[urn] = now
        best, cause = 0.0, None
        for dep, kind in self.graph.waits[urn]:
            t = self.finish[dep] if kind == PARENT else self.done[dep]
            if t > best:
                best, cause = t, (dep, kind)
        self.start_cause[urn] = cause
        if self._takes(urn) > 0 and self._engine_free is not None:
            heapq.heappush(self._queue, (now, self._index[urn], urn))
        elif self._takes(urn) > 0 and self._is_queued_at_gke(urn):
            self._gke_queue.append(urn)
        else:
            self._begin(urn, now, None)

    def _is_queued_at_gke(self, urn: str) -> bool:
        return self._gke_free is not None and self.graph.resources[urn].type == NODE_POOL

    def _dispatch(self, now: float, freed_by: str | None) -> None:
        while self._gke_queue and self._gke_free:
            self._begin(self._gke_queue.popleft(), now, freed_by)
        while self._queue and self._engine_free:
            _, _, urn = heapq.heappop(self._queue)
            self._engine_free -= 1
            if not self._is_queued_at_gke(urn) or self._gke_free:
                self._begin(urn, now, freed_by)
            else:
                self._gke_queue.append(urn)

    def _begin(self, urn: str, now: float, freed_by: str | None) -> None:
        if self._is_queued_at_gke(urn):
            self._gke_free -= 1
        if now > self._ready[urn] and freed_by is not None:
            self.start_cause[urn] = (freed_by, QUEUE)
        self.start[urn] = now
        takes = self._takes(urn)
        if takes > 0:
            heapq.heappush(self._running, (now + takes, self._index[urn], urn))
        else:
            self._finished(urn, now)

    def _release(self, urn: str) -> None:
        if self._is_queued_at_gke(urn):
            self._gke_free += 1
        if self._engine_free is not None:
            self._engine_free += 1

    def _finished(self, urn: str, now: float) -> None:
        """``urn`` finished at ``now``: resolve what waited for it."""
        pending = [("finish", urn)]
        while pending:
            what, current = pending.pop()
            if what == "finish":
                self.finish[current] = now
                for waiter in self._on_finish[current]:
                    pending += self._one_less(waiter, now)
                if self.graph.resources[current].custom:
                    pending.append(("done", current))
                else:
                    pending += self._child_done(current, current, now)
            else:
                self.done[current] = now
                self.done_cause[current] = self._last_child(current)
                for waiter in self._on_done[current]:
                    pending += self._one_less(waiter, now)
                # A resource is among its parent's children (``Graph``) whenever the parent is
                # in the plan: no scan of the siblings (a pool of 10,000 slices has 10,000).
                parent = self.graph.resources[current].parent
                if parent in self._children_left:
                    pending += self._child_done(parent, current, now)

    def _one_less(self, urn: str, now: float) -> list[tuple[str, str]]:
        self._waiting[urn] -= 1
        if self._waiting[urn] == 0:
            self._became_ready(urn, now)
        return []

    def _child_done(self, component: str, by: str, now: float) -> list[tuple[str, str]]:
        """One more of ``component``'s prerequisites of being done (its own finish, or a
        child's done, ``by``); done with the last one."""
        self._children_left[component] -= 1
        if self._children_left[component] == -1:  # its children and its own finish
            return [("done", component)]
        return []

    def _last_child(self, urn: str) -> str | None:
        """The child a component's done waited for last (the first of equals), if any."""
        if self.graph.resources[urn].custom:
            return None
        best, cause = self.finish[urn], None
        for child in self.graph.children[urn]:
            if self.done[child] > best:
                best, cause = self.done[child], child
        return cause

    @property
    def makespan(self) -> float:
        return max(self.done.values(), default=0.0)

    def chain(self) -> list[str]:
        """The resources of the longest chain, first to last (components that take no time are
        left out: they only pass the wait on)."""
        if not self.done:
            return []
        # The resource that finishes last; on a tie, the first in plan order.
        end = max(self.graph.order, key=lambda u: self.done[u])
        walked: list[str] = []
        state, urn = "done", end
        while True:
            if state == "done" and self.done_cause[urn] is not None:
                urn = self.done_cause[urn]
                continue
            walked.append(urn)
            cause = self.start_cause[urn]
            if cause is None:
                break
            urn, kind = cause
            state = "finish" if kind == PARENT else "done"
        walked.reverse()
        return [u for u in walked if self.graph.resources[u].custom or self.durations[u].high > 0]


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
    # The `pulumi up --parallel` the deploy workflow passes (``deploy_parallel``).
    deploy_parallel: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def default_limits(table: DurationTable, parallel: int | None = None) -> Limits:
    """``parallel`` (default: the table's, Pulumi's default on its runner) and GKE's node pool
    operations per cluster (``components.gke.operations``)."""
    return Limits(parallel or table.default_parallel, NODE_POOL_OPERATIONS)


def critical_path(
    resources: Iterable[PlannedResource | Mapping[str, Any]],
    table: DurationTable | None = None,
    limits: Limits | None = None,
    estimates: Sequence[str] = ESTIMATES,
) -> CriticalPath:
    """The longest chain (typical durations), the modeled totals within ``limits`` (default:
    ``default_limits``), the totals without them, and the structure check. The totals are of
    ``estimates`` (a plan diff draws only the typical chain and total, and schedules only that
    one: each schedule is a simulation over the whole plan)."""
    if "typical" not in estimates:
        raise ValueError(f"the chain is the typical estimate's; estimates {tuple(estimates)}")
    graph = Graph(resources)
    table = table or default_table()
    limits = limits or default_limits(table)
    durations = {urn: table.duration(r) for urn, r in graph.resources.items()}
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
        milestones=_milestones(graph, typical),
        violations=structure_violations(graph),
        limits={"parallel": limits.parallel, "nodePoolOperations": limits.node_pool_operations},
        unbounded=unbounded,
        deploy_parallel=deploy_parallel(graph, table),
    )


def deploy_parallel(graph: Graph, table: DurationTable) -> int:
    """`pulumi up --parallel` for the deploy workflow: every node pool and every install in
    flight at once (GKE then queues the pools; their timeouts allow for it), never below
    Pulumi's own default."""
    slow = sum(1 for r in graph.resources.values() if r.type in (NODE_POOL, CONFIG_FILE))
    return max(slow, table.default_parallel or 1)


def _milestones(graph: Graph, schedule: Schedule) -> dict[str, float]:
    stages = {
        "cluster": lambda r: r.type == CLUSTER,
        "cpu node pools": lambda r: r.type == NODE_POOL and not is_tpu_node_pool(r),
        "tpu node pools": is_tpu_node_pool,
        "installs": lambda r: r.type == CONFIG_FILE,
        "workloads submitted": lambda r: r.type in WORKLOAD_TYPES,
    }
    found = {}
    for stage, member in stages.items():
        times = [schedule.finish[u] for u, r in graph.resources.items() if member(r)]
        if times:
            found[stage] = max(times)
    return found


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


def minutes(seconds: float) -> str:
    """A duration as 12m05s (or 3h02m05s)."""
    hours, rest = divmod(round(seconds), 3600)
    text = f"{rest // 60:02d}m{rest % 60:02d}s" if hours else f"{rest // 60}m{rest % 60:02d}s"
    return f"{hours}h{text}" if hours else text


def render_text(path: CriticalPath, stack: str = "") -> str:
    title = f"Modeled critical path of `pulumi up`{f' for stack {stack!r}' if stack else ''}"
    lines = [
        title,
        "(typical = midpoint of each low-high range in components/plan/data/durations.yaml)",
    ]
    lines.append("")
    took = [
        f"{minutes(step.finish - step.start)} ({minutes(step.low)}-{minutes(step.high)})"
        for step in path.chain
    ]
    width = max([len("takes (low-high)"), *map(len, took)])  # the column fits its longest cell
    lines.append(f"  {'start':>8} {'finish':>8}  {'takes (low-high)':<{width}} resource")
    for step, taken in zip(path.chain, took, strict=True):
        lines.append(
            f"  {minutes(step.start):>8} {minutes(step.finish):>8}  {taken:<{width}} "
            f"{step.label}: {step.type} {step.name}"
        )
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
    lines.append("")
    lines += [wrapped for text in prose for wrapped in textwrap.wrap(text, 96)]
    if path.violations:
        lines.append("")
        lines.append(f"STRUCTURE VIOLATIONS ({len(path.violations)}):")
        lines += [f"  - {v}" for v in path.violations]
    return "\n".join(lines)


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
    return json_text.dumps({"stack": stack, **path.to_dict()}) + "\n"
