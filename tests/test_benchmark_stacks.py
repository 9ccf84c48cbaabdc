"""The benchmark's generated stacks (benchmarks/stacks.py) are valid stack configs with exactly
the requested TPU slices. Only the generator is tested here; the benchmark is not a test."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from components.stack_file import load_stack

GENERATOR = Path(__file__).resolve().parent.parent / "benchmarks" / "stacks.py"


@pytest.fixture(scope="module")
def generator():
    spec = importlib.util.spec_from_file_location("benchmark_stacks", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("slices", [1, 16, 64, 256, 7])
def test_generated_stack_is_valid_and_exact(generator, tmp_path, slices):
    config = load_stack(generator.write_stack(tmp_path, slices), tmp_path)
    assert sum(pool.slices for pool in config.tpu_pools) == slices
    assert len(config.workloads) == len(config.tpu_pools)  # one workload per pool
    for pool, workload in zip(config.tpu_pools, config.workloads, strict=True):
        assert workload.pool == pool.name and workload.slices == pool.slices
        assert len(pool.name) <= 30 and len(workload.name) <= 22
    if slices >= 16:  # several pools, mixed generations
        assert {p.shape.generation.value for p in config.tpu_pools} == {"v5e", "v5p", "v6e"}
        assert {p.topology for p in config.tpu_pools} == {"2x4", "2x2x2", "2x2"}
