"""Does the Pathways head pod fit a CPU node? Known answers from the controller's figures."""

from __future__ import annotations

import re

from components.pathways.head_sizing import (
    DEFAULT_USER_CONTAINER,
    PodResources,
    head_fit_problem,
    head_pod_needs,
)
from components.tpu.machines import machine_type

GIB = 1_073_741_824
# 47810 millicores, however the message spells it
ALLOCATABLE_N2_48_CPU = re.compile(r"\b(47810m|47\.81) CPU\b")


def test_head_needs_without_user_container():
    # resource manager 8 CPU / 32e9 B + proxy 16 CPU / 100e9 B + GKE daemonsets 1 CPU / 2 GiB
    assert head_pod_needs(None) == PodResources(25_000, 132_000_000_000 + 2 * GIB)


def test_head_needs_with_default_user_container():
    # ... + user container 24 CPU / 100 GiB: 49 cores, like XPK's 49-vCPU floor
    assert PodResources(24_000, 100 * GIB) == DEFAULT_USER_CONTAINER
    assert head_pod_needs(DEFAULT_USER_CONTAINER) == PodResources(49_000, 241_521_666_048)


def test_n2_standard_64_holds_the_head_pod():
    assert head_fit_problem(machine_type("n2-standard-64"), DEFAULT_USER_CONTAINER) is None


def test_n2_standard_48_is_too_small():
    # 48 cores: 48000 - (60 + 10 + 10 + 44*2.5) = 47810m allocatable < 49000m
    problem = head_fit_problem(machine_type("n2-standard-48"), DEFAULT_USER_CONTAINER)
    assert problem is not None
    assert problem.startswith("'n2-standard-48' cannot hold the Pathways head pod")
    assert ALLOCATABLE_N2_48_CPU.search(problem)
    assert "49 CPU" in problem
    assert "n2-standard-64" in problem


def test_memory_alone_can_be_too_small():
    # n2-highcpu-96: plenty of CPU, 96 GiB of memory (< 241.5e9 B)
    problem = head_fit_problem(machine_type("n2-highcpu-96"), DEFAULT_USER_CONTAINER)
    assert problem is not None
    assert "'n2-highcpu-96'" in problem


def test_cpu_alone_can_be_too_small():
    # n2-highmem-48: 384 GiB of memory but only 47810m CPU
    problem = head_fit_problem(machine_type("n2-highmem-48"), DEFAULT_USER_CONTAINER)
    assert problem is not None
    assert ALLOCATABLE_N2_48_CPU.search(problem)


def test_smaller_machine_fits_without_user_container():
    # 25 cores / 134.1e9 B: n2-highmem-32 leaves 31850m and ~244 GiB; n2-standard-32 has
    # only 128 - 9.32 - 0.1 = 118.58 GiB (127.3e9 B); n2-standard-16 has 15870m.
    assert head_fit_problem(machine_type("n2-highmem-32"), None) is None
    assert head_fit_problem(machine_type("n2-standard-32"), None) is not None
    problem = head_fit_problem(machine_type("n2-standard-16"), None)
    assert problem is not None
    assert "user container none" in problem


def test_pod_resources_add_and_print():
    total = PodResources(500, GIB) + PodResources(1_500, 512 * 1_048_576)
    assert total == PodResources(2_000, 1_610_612_736)
    assert str(total).startswith("2 CPU / ")
