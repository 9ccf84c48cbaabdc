"""How long `pulumi up` of a plan takes at each of GKE's plausible concurrencies, the parallelism
the deploy path passes, and what the design can do where GKE is the limit.

**The deploy parallelism** (``deploy_parallel``). Pulumi's engine hands its ``--parallel`` slots
first come, first served: its step executor takes one registration at a time and blocks until a
worker is free, and a worker runs a step until Create returns (pulumi/pulumi
pkg/resource/deploy/step_executor.go, deployment_executor.go). A resource whose dependencies
are not done has not been sent yet and holds no slot; a node pool GKE has not taken holds its
slot while the provider retries (``components.gke.operations``). In this graph the TPU pools
are ready when the cluster is (10 min), the installs only once the system pool is too (14 min):
at any ``--parallel`` below what is ready at once, the installs queue behind pools that got
there first, in whatever order the program registers them (order only breaks ties between
resources ready at the same instant). So the lever is the parallelism: the most resources
ready or in flight at once in the schedule without an engine limit (``Schedule.
peak_in_flight``, the largest over the low, typical and high estimates, at the GKE concurrency
assumed), never below Pulumi's own default, at most ``MAX_DEPLOY_PARALLEL``. With it nothing that
can start waits for a slot, and the schedule is the one without an engine limit. It is not capped
at GKE's concurrency: the pools beyond it would still hold slots ahead of the installs.

**Sensitivity** (``sensitivity``): the modeled totals at each of ``operations.SENSITIVITY``, at
the deploy parallelism and at Pulumi's bare default, whether a node pool's wait and create pass
its ``customTimeouts`` (high estimate), whether the high total passes the CI job's limit, and
option B below.

**Where GKE limits concurrency** (``render_options``), with the modeled gain of each:
- A. the deploy parallelism (applied by the deploy workflow and the printed command);
- B. TPU pools created empty and grown by the cluster autoscaler, as flex-start pools are
  (``autoscaling`` from 0 to the slice's hosts, per zone: GKE checks a multi-host slice against
  the per-zone maximum, vllm-project/ci-infra PR #545). A resize by the autoscaler is a change of
  the pool's managed instance group, not a node pool operation (GKE docs, "Cluster autoscaler";
  that it escapes GKE's operation limit is unverified); an explicit create-at-0-then-resize would
  be a second operation and gain nothing. The slices then arrive after `pulumi up`, as capacity
  is granted;
- C. fewer operations per slice: none (one node pool per slice, ``components.gke.operations``).
The model lets component registrations skip the engine's slots; they take one for an instant,
at registration, when slots are free.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from components.gke.operations import (
    NODE_POOL_OPERATIONS,
    PROVIDER_NODE_POOL_TIMEOUT_S,
    SENSITIVITY,
    Concurrency,
)
from components.plan.durations import ESTIMATES, Duration, DurationTable
from components.plan.model import PlannedResource
from components.plan.schedule import Graph, Limits, Schedule
from components.plan.views import NodePoolView, is_workload
from components.tokens import CLUSTER, CONFIG_FILE, NODE_POOL

MAX_DEPLOY_PARALLEL = 512
"""The most `--parallel` the deploy path passes: the engine's memory grows with the operations in
flight (pulumi/pulumi#14989: about 8 MB each, 8 GB for 1,000 at once), and a GitHub-hosted runner
has 7 GB. A stack that needs more is warned."""


def is_tpu_node_pool(resource: PlannedResource) -> bool:
    return resource.type == NODE_POOL and NodePoolView(resource.inputs).is_tpu


STAGES: dict[str, Callable[[PlannedResource], bool]] = {
    "cluster": lambda r: r.type == CLUSTER,
    "cpu node pools": lambda r: r.type == NODE_POOL and not is_tpu_node_pool(r),
    "tpu node pools": is_tpu_node_pool,
    "installs": lambda r: r.type == CONFIG_FILE,
    "workloads submitted": lambda r: is_workload(r.type),
}


def milestones(graph: Graph, schedule: Schedule) -> dict[str, float]:
    """When the last resource of each stage the plan has is done."""
    found = {}
    for stage, member in STAGES.items():
        times = [schedule.finish[u] for u, r in graph.resources.items() if member(r)]
        if times:
            found[stage] = max(times)
    return found


def peak_in_flight(graph: Graph, durations: Mapping[str, Duration]) -> int:
    """The most resources ready or in flight at once without an engine limit, at the GKE
    concurrency assumed, over every estimate."""
    limits = Limits(None, NODE_POOL_OPERATIONS)
    return max(Schedule(graph, dict(durations), e, limits).peak_in_flight() for e in ESTIMATES)


def deploy_parallel(
    graph: Graph, table: DurationTable, durations: Mapping[str, Duration] | None = None
) -> int:
    """`pulumi up --parallel` for the deploy path (module docstring): the peak in flight, at
    least Pulumi's own default, at most ``MAX_DEPLOY_PARALLEL``."""
    durations = durations or {urn: table.duration(r) for urn, r in graph.resources.items()}
    peak = peak_in_flight(graph, durations)
    return min(MAX_DEPLOY_PARALLEL, max(peak, table.default_parallel or 1))


@dataclass(frozen=True)
class SensitivityRow:
    """`pulumi up` modeled at one GKE concurrency (seconds; typical unless a dict by estimate)."""

    node_pool_operations: int
    source: str
    parallel: int
    total: dict[str, float]
    installs: float
    tpu_pools: float
    default_parallel: int | None
    default_total: float
    default_installs: float
    empty_pools_total: dict[str, float] | None
    """Option B: every TPU pool created empty (None: the plan has no TPU pool to change)."""
    late_node_pools: list[str]
    """Node pools whose wait and create (high estimate) pass their create timeout."""
    over_job_limit: bool
    """The high total passes the CI job's limit (durations.yaml ``engine.jobLimitMinutes``)."""


def sensitivity(
    graph: Graph,
    durations: Mapping[str, Duration],
    table: DurationTable,
    parallel: int,
    concurrencies: Sequence[Concurrency] = SENSITIVITY,
) -> list[SensitivityRow]:
    """One row per GKE concurrency: the deployment at ``parallel`` and at Pulumi's default."""
    durations = dict(durations)
    empty = empty_pool_durations(graph, durations, table)
    rows = []
    for level in concurrencies:
        gke = level.operations
        at = {e: Schedule(graph, durations, e, Limits(parallel, gke)) for e in ESTIMATES}
        bare = Schedule(graph, durations, "typical", Limits(table.default_parallel, gke))
        stages, bare_stages = milestones(graph, at["typical"]), milestones(graph, bare)
        rows.append(
            SensitivityRow(
                node_pool_operations=gke,
                source=level.source,
                parallel=parallel,
                total={e: s.makespan for e, s in at.items()},
                installs=stages.get("installs", 0.0),
                tpu_pools=stages.get("tpu node pools", 0.0),
                default_parallel=table.default_parallel,
                default_total=bare.makespan,
                default_installs=bare_stages.get("installs", 0.0),
                empty_pools_total=None
                if empty is None
                else {
                    e: Schedule(graph, empty, e, Limits(parallel, gke)).makespan for e in ESTIMATES
                },
                late_node_pools=late_node_pools(graph, at["high"]),
                over_job_limit=table.job_limit_s is not None
                and at["high"].makespan > table.job_limit_s,
            )
        )
    return rows


def empty_pool_durations(
    graph: Graph, durations: dict[str, Duration], table: DurationTable
) -> dict[str, Duration] | None:
    """``durations`` with every TPU pool created empty (the table's flex-start rule); None when
    no pool would change."""
    changed = {}
    for urn, resource in graph.resources.items():
        if is_tpu_node_pool(resource) and not NodePoolView(resource.inputs).flex_start:
            node_config = {**(resource.inputs.get("nodeConfig") or {}), "flexStart": True}
            inputs = {**resource.inputs, "nodeConfig": node_config}
            changed[urn] = table.duration(dataclasses.replace(resource, inputs=inputs))
    return {**durations, **changed} if changed else None


_GO_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


def go_seconds(text: str) -> int | None:
    """A Go duration of hours, minutes and seconds (``3h30m``) in seconds; None if not one."""
    match = _GO_DURATION.match(text or "")
    if not text or match is None:
        return None
    hours, minutes, seconds = (int(g or 0) for g in match.groups())
    return hours * 3600 + minutes * 60 + seconds


def late_node_pools(graph: Graph, schedule: Schedule) -> list[str]:
    """Node pools whose time from their engine slot (the provider's first create call) to done
    passes their ``customTimeouts.create`` (or the provider's default without one)."""
    late = []
    for urn, resource in graph.resources.items():
        if resource.type != NODE_POOL or urn not in schedule.slot:
            continue
        timeouts = resource.options.get("customTimeouts") or {}
        limit = go_seconds(timeouts.get("create", "")) or PROVIDER_NODE_POOL_TIMEOUT_S
        if schedule.finish[urn] - schedule.slot[urn] > limit:
            late.append(resource.name)
    return late
