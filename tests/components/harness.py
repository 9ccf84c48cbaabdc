"""Component tests' harness: a component built from its ``*Args`` alone, registered under the
mock engine; the test reads what was registered and the component's resolved outputs.

``register(build)`` runs ``build`` (which creates the component and returns the outputs to
resolve) and returns a ``Registered``; ``k8s_provider()`` is the explicit Kubernetes provider
an in-cluster component needs (create it inside ``build``); ``SubnetworkWithRanges`` answers an
existing subnetwork's lookup as GCP would and counts what the engine was sent;
``SubnetworkLookupFails`` fails the lookup with a ``ProviderError``, as the engine does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
import pulumi_kubernetes as k8s

from components.plan.engine import run_program
from components.plan.mocks import PlanMocks
from components.plan.model import PlannedResource
from components.tokens import GET_SUBNETWORK

STACK = "test"
URN_PREFIX = f"urn:pulumi:{STACK}::tpu-pathways::pulumi:pulumi:Stack$"


def team_namespace_labels(
    team: str, *, enforce: str, host_network: str, priority_classes: str
) -> dict[str, str]:
    """A team namespace's labels: the team; Pod Security admission's levels (``enforce``:
    baseline where no host-network pod may run, else privileged; restricted warned and
    audited), each at the minor the shared admission policies follow; the shared policies'
    selector and this namespace's parameters (where its host-network pods may run, the
    PriorityClasses it may name)."""
    labels = {"tpu-pathways/team": team}
    for mode, level in {"enforce": enforce, "warn": "restricted", "audit": "restricted"}.items():
        labels[f"pod-security.kubernetes.io/{mode}"] = level
        labels[f"pod-security.kubernetes.io/{mode}-version"] = "v1.36"
    labels["tpu-pathways/team-namespace"] = "true"
    labels["tpu-pathways/host-network"] = host_network
    labels["tpu-pathways/priority-classes"] = priority_classes
    return labels


@dataclass
class Registered:
    resources: list[PlannedResource]
    outputs: dict[str, Any]

    def of_type(self, type_: str) -> list[PlannedResource]:
        return [r for r in self.resources if r.type == type_]

    def one(self, type_: str, name: str) -> PlannedResource:
        found = [r for r in self.resources if r.type == type_ and r.name == name]
        assert len(found) == 1, f"{len(found)} resources {type_}::{name}"
        return found[0]

    def names(self, type_: str) -> list[str]:
        return sorted(r.name for r in self.of_type(type_))


def register(
    build: Callable[[], dict[str, Any] | None], mocks: PlanMocks | None = None
) -> Registered:
    """``mocks``: other answers than the offline plan's (an invoke's, say)."""
    resources, outputs = run_program(lambda: build() or {}, stack=STACK, mocks=mocks)
    return Registered(resources, outputs)


def k8s_provider() -> k8s.Provider:
    return k8s.Provider("k8s", kubeconfig="{}", enable_server_side_apply=True)


def urn(type_path: str, name: str) -> str:
    """The URN of a resource of this test stack: ``type_path`` is its parents' types (below the
    stack) and its own, joined by ``$``."""
    return f"{URN_PREFIX}{type_path}::{name}"


SUBNETWORK_PRIMARY_RANGE = "10.128.0.0/20"
"""The primary range of the mock's subnetwork: not ``ClusterNetworkArgs.nodes_cidr``'s default
(10.0.0.0/20), so a test sees that GCP's answer, not the stack's default, is used."""


class SubnetworkWithRanges(PlanMocks):
    """The mock engine answering the subnetwork's lookup as GCP would, with its primary range
    (``SUBNETWORK_PRIMARY_RANGE``) and its secondary ranges (the offline plan's answers none),
    and keeping what it was asked to register
    (every resource, components too), which invokes it answered and what each lookup was sent
    (its arguments and the provider reference, "" for the default provider)."""

    def __init__(self, ranges: dict[str, str] | None, primary: str = SUBNETWORK_PRIMARY_RANGE):
        super().__init__()
        self.ranges = ranges
        self.primary = primary
        self.created: list[tuple[str, str]] = []
        self.invoked: list[str] = []
        self.lookups: list[tuple[dict[str, Any], str]] = []

    def call(self, args):
        self.invoked.append(args.token)
        if args.token != GET_SUBNETWORK:
            return super().call(args)
        self.lookups.append((dict(args.args), args.provider))
        return self.answer(args.args), []

    def answer(self, args: dict[str, Any]) -> dict[str, Any]:
        answer = {"name": args["name"], "ipCidrRange": self.primary}
        if self.ranges is not None:  # None: an answer without the key, as the plan's
            ranges = self.ranges.items()
            answer["secondaryIpRanges"] = [{"rangeName": n, "ipCidrRange": c} for n, c in ranges]
        return answer

    def new_resource(self, args):
        self.created.append((args.typ, args.name))
        return super().new_resource(args)


class ProviderError(grpc.RpcError):
    """A failed invoke as the engine's resource monitor reports it: a gRPC error with a status
    code and the provider's message (what ``grpc`` raises from the monitor's stub: an RpcError
    that is also a ``grpc.Call``; pulumi runtime/settings.py ``grpc_error_to_exception`` reads
    ``code()`` and ``details()``)."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self._code, self._details = code, details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


class SubnetworkLookupFails(SubnetworkWithRanges):
    """The lookup fails as it does under the real engine: the monitor's Invoke raises the gRPC
    error (the engine answers a provider's error so: pulumi pkg/resource/deploy/source_eval.go
    ``Invoke``, "invocation of <token> returned an error: ..."), which MockMonitor passes on
    from ``call``."""

    def __init__(self, error: ProviderError) -> None:
        super().__init__(None)
        self.error = error

    def answer(self, args: dict[str, Any]) -> dict[str, Any]:
        raise self.error
