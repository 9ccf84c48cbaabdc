"""Run the stack's Pulumi program under Pulumi's mock engine and record every registration.

The recording monitor keeps what the SDK actually sent to the engine for each resource: its
inputs, parent, provider, options and the dependencies Pulumi computed from the outputs it
consumed and from ``depends_on``. Nothing here guesses an edge.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pulumi
from google.protobuf import json_format
from pulumi.runtime import mocks, rpc, settings
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from components.errors import ConfigError, ConfigIssue
from components.plan.mocks import PlanMocks
from components.plan.model import SECRET, UNKNOWN, Plan, PlannedResource
from components.stack.schema import StackConfig

PROJECT = "tpu-pathways"


class RecordingMonitor(mocks.MockMonitor):
    """A mock monitor that also keeps each RegisterResource request."""

    def __init__(self, resource_mocks: mocks.Mocks) -> None:
        super().__init__(resource_mocks)
        self.registrations: list[PlannedResource] = []
        self._lock = threading.Lock()

    def RegisterResource(self, request):
        response = super().RegisterResource(request)
        if request.type != "pulumi:pulumi:Stack":
            record = _record(response.urn, request)
            with self._lock:
                self.registrations.append(record)
        return response

    def ReadResource(self, request):
        """A read (a team stack's StackReference): shown in the plan, marked `read`."""
        response = super().ReadResource(request)
        record = _record(response.urn, request, read=True)
        with self._lock:
            self.registrations.append(record)
        return response


def _record(urn: str, request, read: bool = False) -> PlannedResource:
    if read:
        options: dict[str, Any] = {"read": True}
        inputs = request.properties
    else:
        options = {
            "protect": request.protect,
            "retainOnDelete": request.retainOnDelete,
            "deleteBeforeReplace": request.deleteBeforeReplace,
            "replaceOnChanges": sorted(request.replaceOnChanges),
            "ignoreChanges": sorted(request.ignoreChanges),
        }
        inputs = request.object
    return PlannedResource(
        urn=urn,
        type=request.type,
        name=request.name,
        parent=request.parent or None,
        custom=True if read else bool(request.custom),
        provider=request.provider.rsplit("::", 1)[0] if request.provider else None,
        inputs=readable(json_format.MessageToDict(inputs)),
        dependencies=sorted(set(request.dependencies)),
        options={k: v for k, v in options.items() if v},
    )


def readable(value: Any) -> Any:
    """Wire values -> plan values: secrets hidden, unknowns marked, whole floats as ints."""
    if isinstance(value, dict):
        sig = value.get(rpc._special_sig_key)
        if sig == rpc._special_secret_sig:
            return SECRET
        if sig == rpc._special_resource_sig:
            return value.get("urn")
        return {k: readable(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [readable(v) for v in value]
    if value == rpc.UNKNOWN:
        return UNKNOWN
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def run_program(
    program: Callable[[], dict[str, Any]],
    stack: str,
    project: str = PROJECT,
    stack_outputs: dict[str, dict[str, Any]] | None = None,
) -> tuple[list[PlannedResource], dict[str, Any]]:
    """Run ``program`` under the mock engine (as a preview); return registrations and outputs.
    ``stack_outputs`` answers StackReferences: {stack reference name: its outputs}."""
    resource_mocks = PlanMocks(stack_outputs)
    monitor = RecordingMonitor(resource_mocks)
    # A fresh runtime for every run: a new root stack, and nothing left over from an earlier
    # (possibly failed) run, as pulumi.runtime.test does.
    settings.ROOT.set(None)
    settings.SETTINGS.rpc_manager.clear()
    settings.SETTINGS.outputs.clear()
    pulumi.runtime.set_mocks(
        resource_mocks, project=project, stack=stack, preview=True, monitor=monitor
    )
    returned: dict[str, Any] = {}

    def run() -> None:
        returned.update(program())

    _sync_await(run_pulumi_func(run))
    outputs = {key: _sync_await(resolve(value)) for key, value in sorted(returned.items())}
    _refuse_duplicate_urns(monitor.registrations)
    return order_resources(monitor.registrations), outputs


def _refuse_duplicate_urns(resources: list[PlannedResource]) -> None:
    """Two registrations with one URN: `pulumi up` fails on it, and a plan keyed by URN would
    keep one silently. The config checks refuse the name collisions that cause it; this is the
    net under them."""
    counts = Counter(r.urn for r in resources)
    duplicates = sorted(urn for urn, n in counts.items() if n > 1)
    if duplicates:
        raise ConfigError(
            [
                ConfigIssue("", f"two resources would have the same name: {urn}")
                for urn in duplicates
            ],
            "plan",
        )


async def resolve(value: Any) -> Any:
    """A stack output as the plan shows it: secret, unknown, or its plain value."""
    output = pulumi.Output.from_input(value)
    if await output.is_secret():
        return SECRET
    if not await output.is_known():
        return UNKNOWN
    return readable(await output.future())


def order_resources(resources: list[PlannedResource]) -> list[PlannedResource]:
    """A stable order: parents and dependencies before dependents, ties broken by URN."""
    by_urn = {r.urn: r for r in resources}
    ordered: list[PlannedResource] = []
    placed: set[str] = set()

    def place(resource: PlannedResource, visiting: frozenset[str]) -> None:
        if resource.urn in placed or resource.urn in visiting:
            return
        before = [resource.parent, resource.provider, *resource.dependencies]
        for urn in sorted({u for u in before if u in by_urn}):
            place(by_urn[urn], visiting | {resource.urn})
        placed.add(resource.urn)
        ordered.append(resource)

    for resource in sorted(resources, key=lambda r: r.urn):
        place(resource, frozenset())
    return ordered


def plan_stack(config: StackConfig, stack: str) -> Plan:
    """The offline plan of one validated stack config."""
    from components.plan.cost import cost_summary
    from components.stack.preflight import bucket_writers, planned_pools, preflight
    from components.stack.program import build_stack, tpu_summary
    from components.stack.shared_cluster import OUTPUT

    references = {}
    if config.owner is not None and config.shared_cluster is not None:
        # What the owner's offline plan exported (load_stack validated the team config with it).
        references[config.owner] = {OUTPUT: config.shared_cluster.model_dump(mode="json")}
    resources, outputs = run_program(lambda: build_stack(config), stack, stack_outputs=references)
    summary = {"tpu": tpu_summary(config), "resources": len(resources)}
    summary["cost"] = cost_summary([r.to_dict() for r in resources], config.pricing)
    # build_stack refused the stack if the preflight found a problem; here it is the report of
    # what would run: the pods per workload, where they land and as which identity.
    report = preflight(config, planned_pools(config), bucket_writers(config))
    if report.jobs:
        summary["workloads"] = report.jobs
    return Plan(stack, PROJECT, resources, outputs, summary)
