"""The engine's scheduling of a plan's registrations, simulated: what each resource waits for
(``Graph``: its dependencies, its provider, its parent), how many operations run at once
(``Limits``: `pulumi up --parallel`, GKE's node pool operations per cluster) and when each
starts and is done (``Schedule``). ``critical_path`` (its module doc has the rules) reads the
longest chain from it."""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from components.plan.durations import Duration
from components.plan.model import PlannedResource
from components.tokens import NODE_POOL

PARENT, PROVIDER, DEPENDENCY = "parent", "provider", "dependency"
QUEUE = "queue"  # a start delayed by a slot: the cause is the resource that freed it
# On equal finish times, the chain goes through an explicit dependency before a provider
# before a parent, then by URN: deterministic, and it names the resource that really gates.
_EDGE_RANK = {DEPENDENCY: 0, PROVIDER: 1, PARENT: 2}


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
    slot: dict[str, float] = field(default_factory=dict)
    """When each resource that takes time got its engine slot: for a node pool, when the
    provider starts asking GKE (``start`` is when GKE takes it)."""
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
            return
        if self._takes(urn) > 0:
            self.slot[urn] = now
        if self._takes(urn) > 0 and self._is_queued_at_gke(urn):
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
            self.slot[urn] = now
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

    def peak_in_flight(self) -> int:
        """The most resources that held, or were ready for, an engine slot at one time: with
        ``--parallel`` at least this, no resource waits for a slot (each holds one from ready
        to finish; a finish frees its slot for a resource ready at the same instant)."""
        events = sorted(
            [(self._ready[urn], 1) for urn in self.slot]
            + [(self.finish[urn], -1) for urn in self.slot]
        )
        peak = held = 0
        for _, step in events:
            held += step
            peak = max(peak, held)
        return peak

    def slot_wait(self, urn: str) -> float:
        """How long ``urn`` waited for an engine slot once it was ready (0: none)."""
        return self.slot[urn] - self._ready[urn] if urn in self.slot else 0.0

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
