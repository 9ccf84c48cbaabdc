"""Compute Engine machine types for CPU node pools and what GKE leaves allocatable on them.

The Pathways head pod (resource manager, proxy and the user's container) must fit on one CPU
node, so sizing checks need each machine's allocatable CPU and memory. Machine shapes are
generated from per-family rules (vCPU counts and memory per vCPU), and allocatable resources
follow GKE's documented reservation formula for Standard clusters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from components.tpu.quantities import GIB, MIB, format_cpu, format_memory

# family -> (memory GiB per vCPU, offered vCPU counts). Source: Compute Engine machine families
# (general-purpose N2, N2D, C3, C4, E2) documentation.
_FAMILIES: dict[str, tuple[float, tuple[int, ...]]] = {
    "n2-standard": (4, (2, 4, 8, 16, 32, 48, 64, 80, 96, 128)),
    "n2-highmem": (8, (2, 4, 8, 16, 32, 48, 64, 80, 96, 128)),
    "n2-highcpu": (1, (2, 4, 8, 16, 32, 48, 64, 80, 96)),
    "n2d-standard": (4, (2, 4, 8, 16, 32, 48, 64, 80, 96, 128, 224)),
    "n2d-highmem": (8, (2, 4, 8, 16, 32, 48, 64, 80, 96)),
    "c3-standard": (4, (4, 8, 22, 44, 88, 176)),
    "c3-highmem": (8, (4, 8, 22, 44, 88, 176)),
    "c3-highcpu": (2, (4, 8, 22, 44, 88, 176)),
    "c4-standard": (3.75, (2, 4, 8, 16, 24, 32, 48, 96, 144, 192, 288)),
    "c4-highmem": (7.75, (2, 4, 8, 16, 24, 32, 48, 96, 144, 192, 288)),
    "e2-standard": (4, (2, 4, 8, 16, 32)),
}
# TPU VM hosts (vCPUs, memory GiB), for heads colocated with workers. v5e figures match the
# Compute Engine machine type list (seen 2026-11 in a public copy of machinetypes data); v5p,
# v6e and tpu7x 4-chip figures are the Cloud TPU TPU7x page's comparison table
# (docs.cloud.google.com/tpu/docs/tpu7x: 208/448, 180/720, 224/960); the other v6e figures are
# GKE's TPU documentation tables as recalled. v4 and the 1-chip tpu7x/tpu7 hosts: no figure
# found, so a colocated head on them is not size-checked.
_TPU_HOSTS: dict[str, tuple[int, int]] = {
    "ct5lp-hightpu-1t": (24, 48),
    "ct5lp-hightpu-4t": (112, 192),
    "ct5lp-hightpu-8t": (224, 384),
    "ct5p-hightpu-4t": (208, 448),
    "ct6e-standard-1t": (44, 176),
    "ct6e-standard-4t": (180, 720),
    "ct6e-standard-8t": (180, 1440),
    "tpu7x-standard-4t": (224, 960),
}
_CUSTOM = re.compile(r"^(n2|n2d|e2)-custom-(\d+)-(\d+)$")

# GKE memory reservation: (size of the band in GiB, fraction reserved); the last band is open.
_MEMORY_BANDS: tuple[tuple[float, float], ...] = ((4, 0.25), (4, 0.20), (8, 0.10), (112, 0.06))
_MEMORY_REST_FRACTION = 0.02
_EVICTION_THRESHOLD = 100 * MIB
# GKE CPU reservation: (cores in the band, fraction reserved); the last band is open.
_CPU_BANDS: tuple[tuple[int, float], ...] = ((1, 0.06), (1, 0.01), (2, 0.005))
_CPU_REST_FRACTION = 0.0025


@dataclass(frozen=True)
class MachineType:
    name: str
    vcpus: int
    memory_bytes: int

    @property
    def allocatable_cpu_millicores(self) -> int:
        return self.vcpus * 1000 - _cpu_reserved_millicores(self.vcpus)

    @property
    def allocatable_memory_bytes(self) -> int:
        return self.memory_bytes - _memory_reserved_bytes(self.memory_bytes) - _EVICTION_THRESHOLD


def _cpu_reserved_millicores(vcpus: int) -> int:
    reserved, remaining = 0.0, float(vcpus)
    for cores, fraction in _CPU_BANDS:
        used = min(remaining, cores)
        reserved += used * fraction
        remaining -= used
    reserved += max(remaining, 0) * _CPU_REST_FRACTION
    return round(reserved * 1000)


def _memory_reserved_bytes(memory_bytes: int) -> int:
    if memory_bytes < GIB:
        return 255 * MIB
    reserved, remaining = 0.0, memory_bytes / GIB
    for size, fraction in _MEMORY_BANDS:
        used = min(remaining, size)
        reserved += used * fraction
        remaining -= used
    reserved += max(remaining, 0) * _MEMORY_REST_FRACTION
    return round(reserved * GIB)


def known_machine_types() -> list[MachineType]:
    return [
        MachineType(f"{family}-{vcpus}", vcpus, int(vcpus * per_vcpu * GIB))
        for family, (per_vcpu, sizes) in _FAMILIES.items()
        for vcpus in sizes
    ]


_BY_NAME = {m.name: m for m in known_machine_types()}
_BY_NAME.update(
    {name: MachineType(name, cpus, memory * GIB) for name, (cpus, memory) in _TPU_HOSTS.items()}
)


def machine_type(name: str) -> MachineType:
    """Look up a CPU machine type (or parse a custom one). Raises ValueError with the choices."""
    if name in _BY_NAME:
        return _BY_NAME[name]
    custom = _CUSTOM.match(name)
    if custom:
        _, vcpus, memory_mib = custom.groups()
        return MachineType(name, int(vcpus), int(memory_mib) * MIB)
    families = ", ".join(_FAMILIES)
    shown = repr(name) if len(name) <= 60 else f"{name[:40]!r}...({len(name)} characters)"
    raise ValueError(
        f"{shown} is not a known CPU machine type; use <family>-<vCPUs> with family one of "
        f"{families} (e.g. n2-standard-64), or <n2|n2d|e2>-custom-<vCPUs>-<MiB>"
    )


def machines_that_fit(cpu_millicores: int, memory_bytes: int, limit: int = 5) -> list[str]:
    """The smallest known CPU machine types whose allocatable resources hold the request."""
    fits = [
        m
        for m in known_machine_types()
        if m.allocatable_cpu_millicores >= cpu_millicores
        and m.allocatable_memory_bytes >= memory_bytes
    ]
    fits.sort(key=lambda m: (m.vcpus, m.memory_bytes, m.name))
    return [m.name for m in fits[:limit]]


def tpu_host(name: str) -> MachineType | None:
    """A TPU VM host's size, or None when no figure is recorded for it."""
    return _BY_NAME.get(name) if name in _TPU_HOSTS else None


# --- the boot disk: local ephemeral storage ----------------------------------------------------
# GKE "Plan GKE Standard node sizes", "Local ephemeral storage reservation"
# (cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes, read 2026-11): GKE keeps an
# eviction threshold of 10% of the node's ephemeral-storage capacity and reserves
# min(50% x boot disk, 6 GiB + 35% x boot disk, 100 GiB) for the system. The capacity is the
# boot disk's stateful file system, smaller than the disk: a 100 GiB COS boot disk reports
# ephemeral-storage capacity 98831908Ki and allocatable 47060071478 (`kubectl describe node` of
# many public GKE clusters, kubelets 1.27 to 1.36), so 6170308608 bytes go to the image's other
# partitions and the file system. Larger disks lose a smaller share of their size, so the
# capacity is modelled as the disk less the larger of that many bytes and the same share of the
# disk (exact at 100 GiB, an underestimate elsewhere: the check errs towards refusing). The
# kubelet takes the 10% as a float32 percentage (0.1 rounds to 0.10000000149011612).
_FILE_SYSTEM_OVERHEAD = 6_170_308_608
# A node pool that names no boot disk size gets 100 GB (pulumi-gcp 10.2
# container.NodePoolNodeConfigArgs.disk_size_gb: "Defaults to 100GB"); TPU pools name none.
DEFAULT_BOOT_DISK_GIB = 100
_OVERHEAD_SHARE = _FILE_SYSTEM_OVERHEAD / (100 * GIB)
_EVICTION_SHARE = 0.10000000149011612


def ephemeral_allocatable_bytes(disk_gib: int) -> int:
    """What pods may request of local ephemeral storage on a node of ``disk_gib`` boot disk."""
    disk = disk_gib * GIB
    capacity = disk - max(_FILE_SYSTEM_OVERHEAD, round(disk * _OVERHEAD_SHARE))
    system = min(disk // 2, 6 * GIB + round(disk * 0.35), 100 * GIB)
    return capacity - int(capacity * _EVICTION_SHARE) - system


def pods_capacity(pools: Iterable[tuple[str, int]]) -> tuple[str, str]:
    """The CPU and memory (Kubernetes quantities: ``format_cpu``, ``format_memory``) that
    ``pools`` (machine type name, nodes) give pods: their nodes' allocatable, summed."""
    cpu = memory = 0
    for name, nodes in pools:
        machine = machine_type(name)
        cpu += machine.allocatable_cpu_millicores * nodes
        memory += machine.allocatable_memory_bytes * nodes
    return format_cpu(cpu), format_memory(memory)
