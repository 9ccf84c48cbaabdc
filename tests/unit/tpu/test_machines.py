"""CPU machine types and GKE's allocatable resources, against numbers worked out by hand.

GKE Standard reserves CPU: 6% of the first core, 1% of the next, 0.5% of the next two and
0.25% of every core above four; memory: 255 MiB below 1 GiB, else 25% of the first 4 GiB, 20%
of the next 4, 10% of the next 8, 6% of the next 112 and 2% above 128 GiB; plus a 100 MiB
eviction threshold.
"""

from __future__ import annotations

import pytest

from components.tpu.machines import MachineType, machine_type, machines_that_fit

GIB = 1_073_741_824
MIB = 1_048_576


# name, vCPUs, memory bytes, allocatable millicores, allocatable memory bytes
KNOWN = [
    # 64 cores: 60 + 10 + 2*5 + 60*2.5 = 230m reserved.
    # 256 GiB: 1 + 0.8 + 0.8 + 6.72 + 2.56 = 11.88 GiB = 12_756_052_869.12 B reserved, - 100 MiB.
    ("n2-standard-64", 64, 274_877_906_944, 63_770, 262_016_996_474.88),
    # 2 cores: 60 + 10 = 70m. 8 GiB: 1 + 0.8 = 1.8 GiB = 1_932_735_283.2 B.
    ("n2-standard-2", 2, 8_589_934_592, 1_930, 6_552_341_708.8),
    # 4 cores: 60 + 10 + 10 = 80m. 16 GiB: 1 + 0.8 + 0.8 = 2.6 GiB = 2_791_728_742.4 B.
    ("e2-standard-4", 4, 17_179_869_184, 3_920, 14_283_282_841.6),
    # 7.5 GiB (3.75 GiB per vCPU): 1 + 3.5*0.2 = 1.7 GiB = 1_825_361_100.8 B.
    ("c4-standard-2", 2, 8_053_063_680, 1_930, 6_122_844_979.2),
    # 128 cores: 60 + 10 + 10 + 124*2.5 = 390m.
    # 1024 GiB: 1 + 0.8 + 0.8 + 6.72 + 896*0.02 = 27.24 GiB = 29_248_727_285.76 B.
    ("n2-highmem-128", 128, 1_099_511_627_776, 127_610, 1_070_158_042_890.24),
]


@pytest.mark.parametrize(("name", "vcpus", "memory", "cpu", "allocatable"), KNOWN)
def test_allocatable_known_answers(name, vcpus, memory, cpu, allocatable):
    machine = machine_type(name)
    assert machine.name == name
    assert machine.vcpus == vcpus
    assert machine.memory_bytes == memory
    assert machine.allocatable_cpu_millicores == cpu
    assert abs(machine.allocatable_memory_bytes - allocatable) <= 1  # whole bytes


def test_custom_machine_type():
    machine = machine_type("n2-custom-8-32768")
    assert (machine.vcpus, machine.memory_bytes) == (8, 32 * GIB)
    # 8 cores: 60 + 10 + 10 + 4*2.5 = 90m. 32 GiB: 1 + 0.8 + 0.8 + 16*0.06 = 3.56 GiB.
    assert machine.allocatable_cpu_millicores == 7_910
    assert abs(machine.allocatable_memory_bytes - 30_432_359_874.56) <= 1


def test_custom_machine_below_one_gib_reserves_255_mib():
    machine = machine_type("e2-custom-2-512")
    assert machine.memory_bytes == 512 * MIB
    assert machine.allocatable_memory_bytes == (512 - 255 - 100) * MIB


def test_allocatable_formula_is_not_linear():
    # Twice the machine keeps more than twice the allocatable memory (bands shrink).
    small, big = machine_type("n2-standard-8"), machine_type("n2-standard-16")
    assert big.allocatable_memory_bytes > 2 * small.allocatable_memory_bytes


@pytest.mark.parametrize("name", ["n9-standard-8", "n2-standard-7", "c3-custom-8-32768", ""])
def test_unknown_machine_type_message(name):
    with pytest.raises(ValueError) as caught:
        machine_type(name)
    message = str(caught.value)
    assert f"{name!r} is not a known CPU machine type" in message
    for family in ("n2-standard", "n2d-highmem", "c3-standard", "c4-standard", "e2-standard"):
        assert family in message
    assert "e.g. n2-standard-64" in message
    assert "<n2|n2d|e2>-custom-<vCPUs>-<MiB>" in message


def test_machines_that_fit_the_default_head_pod():
    # 49 cores / 241_521_666_048 B: 48-vCPU machines leave < 48000m, so 64 vCPUs is the floor;
    # n2-highcpu-64 (64 GiB) is too small. Ordered by vCPUs, memory, then name.
    fits = machines_that_fit(49_000, 241_521_666_048)
    assert fits == [
        "n2-standard-64",
        "n2d-standard-64",
        "n2-highmem-64",
        "n2d-highmem-64",
        "n2-standard-80",
    ]


def test_machines_that_fit_small_request_and_limit():
    assert machines_that_fit(1_000, GIB, limit=2) == ["n2-highcpu-2", "c4-standard-2"]
    assert machines_that_fit(10**9, 10**18) == []


def test_machine_type_is_a_value():
    assert machine_type("n2-standard-64") == MachineType("n2-standard-64", 64, 256 * GIB)
