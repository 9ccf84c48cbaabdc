"""The offline plan's monitor (components/plan/monitor.py) names resources with the stack and
project of its own run, on whatever thread the SDK asks it from."""

from __future__ import annotations

import threading

from components.plan.mocks import PlanMocks
from components.plan.monitor import RecordingMonitor

PARENT = "urn:pulumi:dev::tpu-pathways::pulumi:pulumi:Stack$tpu-pathways:cluster:GkeCluster::c"


def _urns_on_a_fresh_thread(monitor: RecordingMonitor) -> list[str]:
    """URNs made on a thread that has none of the program's context (the SDK's context
    variables hold their defaults there, stack 'stack' and project 'project')."""
    found: list[str] = []

    def ask() -> None:
        found.append(monitor.make_urn("", "gcp:compute/network:Network", "net"))
        found.append(monitor.make_urn(PARENT, "gcp:container/nodePool:NodePool", "pool-0"))

    thread = threading.Thread(target=ask)
    thread.start()
    thread.join(10)
    return found


def test_a_urn_names_the_runs_stack_and_project_on_any_thread():
    assert _urns_on_a_fresh_thread(RecordingMonitor(PlanMocks(), "dev", "tpu-pathways")) == [
        "urn:pulumi:dev::tpu-pathways::gcp:compute/network:Network::net",
        "urn:pulumi:dev::tpu-pathways::tpu-pathways:cluster:GkeCluster"
        "$gcp:container/nodePool:NodePool::pool-0",
    ]
