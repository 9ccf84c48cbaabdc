"""The offline plan's resource monitor: Pulumi's mock engine, recording every registration.

The recording keeps what the SDK actually sent to the engine for each resource: its inputs,
parent, provider, options and the dependencies Pulumi computed from the outputs it consumed and
from ``depends_on``. Nothing here guesses an edge.

A registration the project's mocks answer with its inputs alone (``PlanMocks.echoes``), and
whose inputs are plain values, is answered with a copy of them, not through the SDK monitor's
round trip through Python values: the same answer (``sdk.EchoingMockMonitor`` says why), about
a sixth of a plan's CPU less (a 2,048-slice plan 6.5 -> 5.5 CPU-s in-process).
"""

from __future__ import annotations

import threading
from typing import Any

from components.plan.mocks import PlanMocks
from components.plan.model import PlannedResource
from components.plan.wire import readable_struct
from components.sdk import pulumi_private as sdk
from components.tokens import STACK


class RecordingMonitor(sdk.EchoingMockMonitor):
    """A mock monitor that also keeps each RegisterResource and ReadResource request, for the
    program of ``stack`` of ``project``."""

    def __init__(self, resource_mocks: Any, stack: str, project: str) -> None:
        echoes = resource_mocks.echoes if type(resource_mocks) is PlanMocks else _never
        super().__init__(resource_mocks, echoes)
        self.registrations: list[PlannedResource] = []
        self._lock = threading.Lock()
        self._stack, self._project = stack, project

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """A resource's URN as the SDK's monitor makes it (the parent's type qualifies the
        type: ``<parent type>$<type>``), with this run's stack and project. The SDK's reads
        them from context variables, which the executor threads its monitor calls run on see
        only where the SDK copies the program's context there (3.261.0 and 3.272.0 do, in
        ``runtime/resource.py`` ``wrap_with_context``; 3.237.0 did not, and every URN of a
        plan read ``stack::project``): the plan's URNs do not hang on that."""
        if parent:
            type_ = f"{parent.split('::')[2].split('$')[-1]}${type_}"
        return f"urn:pulumi:{self._stack}::{self._project}::{type_}::{name}"

    def RegisterResource(self, request):
        response = super().RegisterResource(request)
        if request.type != STACK:
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


def _never(type_token: str) -> bool:
    """Other mocks (a test's own) answer each registration as they will: the SDK's path."""
    return False


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
            "aliases": _aliases(request),
            "customTimeouts": _timeouts(request),
        }
        inputs = request.object
    return PlannedResource(
        urn=urn,
        type=request.type,
        name=request.name,
        parent=request.parent or None,
        custom=True if read else bool(request.custom),
        provider=request.provider.rsplit("::", 1)[0] if request.provider else None,
        inputs=readable_struct(inputs),
        dependencies=sorted(set(request.dependencies)),
        options={k: v for k, v in options.items() if v},
    )


def _timeouts(request) -> dict[str, str]:
    """The create / update / delete timeouts the resource asked for (``custom_timeouts``)."""
    if not request.HasField("customTimeouts"):
        return {}
    timeouts = request.customTimeouts
    return {k: v for k in ("create", "update", "delete") if (v := getattr(timeouts, k))}


def _aliases(request) -> list[dict[str, str]]:
    """The names (and types) a renamed resource was known by (its alias specs that name one),
    or the whole URN a moved one had: it keeps its state instead of being replaced. The
    providers' own aliases of a type's older API versions are left out."""
    specs = [a.spec for a in request.aliases if a.HasField("spec") and a.spec.name]
    urns = [{"urn": a.urn} for a in request.aliases if a.WhichOneof("alias") == "urn"]
    return [{k: v for k, v in (("name", s.name), ("type", s.type)) if v} for s in specs] + urns
