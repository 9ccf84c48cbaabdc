"""Does the Pathways head pod fit on one node of the CPU pool?

In the default deployment mode the PathwaysJob controller puts the resource manager, the proxy
and the user's main container in one pod, with exclusive placement on a CPU node. If that pod
does not fit the node's allocatable resources it stays Pending forever and the TPU slices sit
idle, so the check runs at preview time instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.tpu.machines import MachineType, machines_that_fit
from components.tpu.quantities import GIB, describe_memory


@dataclass(frozen=True)
class PodResources:
    cpu_millicores: int
    memory_bytes: int

    def __add__(self, other: PodResources) -> PodResources:
        return PodResources(
            self.cpu_millicores + other.cpu_millicores, self.memory_bytes + other.memory_bytes
        )

    def __str__(self) -> str:
        cpu = self.cpu_millicores / 1000
        return f"{cpu:g} CPU / {describe_memory(self.memory_bytes)}"


# What the PathwaysJob controller v0.1.4 gives its head containers (pathways-rm, pathways-proxy).
RESOURCE_MANAGER = PodResources(8_000, 32 * 10**9)
PROXY = PodResources(16_000, 100 * 10**9)
# GKE's own DaemonSets on every node (Dataplane V2, logging, metrics, metadata server, CSI
# drivers). A conservative allowance: their combined requests stay well under this.
SYSTEM_DAEMONSETS = PodResources(1_000, 2 * GIB)
# The user container's resources when a workload does not set them (XPK uses the same figures).
DEFAULT_USER_CONTAINER = PodResources(24_000, 100 * GIB)


def head_pod_needs(user: PodResources | None) -> PodResources:
    """Resources one CPU node must have free for the head pod and GKE's DaemonSets."""
    needs = RESOURCE_MANAGER + PROXY + SYSTEM_DAEMONSETS
    return needs + user if user is not None else needs


def node_free(machine: MachineType) -> PodResources:
    """What one node of ``machine`` has for pods beside GKE's system pods."""
    return PodResources(
        machine.allocatable_cpu_millicores - SYSTEM_DAEMONSETS.cpu_millicores,
        machine.allocatable_memory_bytes - SYSTEM_DAEMONSETS.memory_bytes,
    )


def node_holds(machine: MachineType, pod: PodResources) -> bool:
    """Whether one node of ``machine`` has room for ``pod`` beside GKE's system pods: the one
    comparison of a pod's resources with a machine (the head's sizing, the scheduler model)."""
    free = node_free(machine)
    return pod.cpu_millicores <= free.cpu_millicores and pod.memory_bytes <= free.memory_bytes


def head_fit_problem(machine: MachineType, user: PodResources | None) -> str | None:
    """A message saying why the head pod does not fit on ``machine``, or None if it fits."""
    head = RESOURCE_MANAGER + PROXY
    if node_holds(machine, head + user if user is not None else head):
        return None
    needs = head_pod_needs(user)
    allocatable = PodResources(machine.allocatable_cpu_millicores, machine.allocatable_memory_bytes)
    would_fit = ", ".join(machines_that_fit(needs.cpu_millicores, needs.memory_bytes))
    return (
        f"{machine.name!r} cannot hold the Pathways head pod: it needs {needs} "
        f"(resource manager {RESOURCE_MANAGER}, proxy {PROXY}, user container "
        f"{user if user is not None else 'none'}, GKE system pods {SYSTEM_DAEMONSETS}) but GKE "
        f"leaves {allocatable} allocatable; machine types that would: {would_fit}"
    )
