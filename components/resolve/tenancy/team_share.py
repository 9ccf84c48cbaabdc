"""A team namespace's default share of the cluster's pods, CPU and memory: what the pools its
pods may land on hold at their largest, so no team, Kueue or not, requests more than its pools
could ever run (its ResourceQuota, ``addons.team_isolation``; the keys
``teams[].resourceQuota.pods``, ``cpu``, ``memoryGib`` override each).

The pools: a team with dedicated pools, its own (its CPU pool and TPU pools); any other, the
cluster's shared ones (the CPU pool and the TPU pools of no team). Never the system pool (its
taint keeps team pods off). CPU and memory are the pools' allocatable at their maximum size
(``tpu.machines``: GKE's reservations; a TPU host without a recorded size adds nothing), pods
``PODS_PER_NODE`` per node. Pure: the config in, the share out.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.config.schema import StackConfig, TeamConfig
from components.tpu.machines import machine_type, tpu_host
from components.tpu.quantities import GIB

PODS_PER_NODE = 110
"""GKE Standard's default maximum Pods per node (GKE "Configure maximum Pods per node"), which
this project's pools keep."""


@dataclass(frozen=True)
class ComputeShare:
    """Most pods, CPU cores and memory (GiB) a team's pools hold."""

    pods: int
    cpu: int
    memory_gib: int


def compute_share(config: StackConfig, team: TeamConfig) -> ComputeShare:
    """The default pods, CPU and memory of ``team``'s ResourceQuota (a team stack's config
    carries its owner's pools)."""
    dedicated = team.name in config.dedicated_teams
    owner = team.name if dedicated else None
    cpu_pool = config.team_cpu_pool(team.name) if dedicated else config.cpu_pool
    machines = []
    if cpu_pool is not None:
        machines.append((machine_type(cpu_pool.machine_type), cpu_pool.max_nodes))
    for pool in config.tpu_pools:
        if pool.team == owner:
            host = tpu_host(pool.shape.machine_type)
            machines.append((host, pool.slices * pool.shape.hosts))
    millicores = sum(m.allocatable_cpu_millicores * n for m, n in machines if m is not None)
    memory = sum(m.allocatable_memory_bytes * n for m, n in machines if m is not None)
    nodes = sum(n for _, n in machines)
    return ComputeShare(nodes * PODS_PER_NODE, millicores // 1000, memory // GIB)
