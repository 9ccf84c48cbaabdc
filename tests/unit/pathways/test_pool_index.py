"""The preflight's pool index (components/pathways/scheduler_model.py, ``PoolIndex``): pools
indexed by what pods select on, one verdict per kind of pod, so a stack's preflight is linear in
its jobs and node pools. The counts below are of ``why_not`` calls (each one scheduling check of
a pod against a node pool), written out for stacks whose shape is known."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from components.labels import NODE_POOL_LABEL
from components.pathways import scheduler_model
from components.pathways.controller_model import PodModel, expand
from components.pathways.head_sizing import PodResources
from components.pathways.scheduler_model import TPU_TAINT, NodePoolModel, PoolIndex
from components.pathways.spec import PathwaysJobSpec
from components.resolve.loader import load_stack
from components.resolve.preflight import bucket_grants, planned_pools, preflight
from components.tpu.machines import tpu_host

ACCELERATOR = "cloud.google.com/gke-tpu-accelerator"
TOPOLOGY = "cloud.google.com/gke-tpu-topology"
BENCH_STACKS = Path(__file__).resolve().parents[3] / "benchmarks" / "stacks.py"


def _tpu_pool(name: str, group: str, accelerator: str = "tpu-v5-lite-podslice") -> NodePoolModel:
    labels = {NODE_POOL_LABEL: name, ACCELERATOR: accelerator, TOPOLOGY: "2x4", "pool": group}
    host = tpu_host("ct5lp-hightpu-4t")
    return NodePoolModel(name, group, host, labels, (TPU_TAINT,), 2, 4, "nodes@p")


def _workers(node_selector: dict[str, str] | None = None) -> PodModel:
    worker = {"type": "ct5lp-hightpu-4t", "topology": "2x4", "numSlices": 1}
    spec = PathwaysJobSpec.parse(
        {
            "workers": [{**worker, "nodeSelector": node_selector or {}}],
            "controller": {"deploymentMode": "default"},
        }
    )
    return expand("j", "ns", spec).workers


@pytest.fixture
def checks(monkeypatch) -> list[tuple[str, str]]:
    """Every (pod role, node pool) the scheduler model checks."""
    seen: list[tuple[str, str]] = []
    real = scheduler_model.why_not

    def counting(pod, pool):
        seen.append((pod.role, pool.name))
        return real(pod, pool)

    monkeypatch.setattr(scheduler_model, "why_not", counting)
    return seen


def test_pods_of_one_kind_share_one_verdict_per_group(checks):
    pools = [_tpu_pool(f"a-{i}", "a") for i in range(4)]
    pools += [_tpu_pool(f"b-{i}", "b", "tpu-v6e-slice") for i in range(4)]
    index = PoolIndex(pools)
    fits = [index.fit(_workers()) for _ in range(50)]  # 50 jobs of one shape
    assert [p.name for p in fits[0].pools] == ["a-0", "a-1", "a-2", "a-3"]
    assert fits[0].groups == ("a",)
    # One check of group a's first pool; group b does not carry the accelerator label asked for.
    assert checks == [("worker", "a-0")]


def test_a_pod_selecting_a_node_pool_by_name_is_checked_against_that_pool_only(checks):
    index = PoolIndex([_tpu_pool(f"a-{i}", "a") for i in range(4)])
    assert [p.name for p in index.fit(_workers({NODE_POOL_LABEL: "a-2"})).pools] == ["a-2"]
    assert index.fit(_workers({NODE_POOL_LABEL: "a-9"})).pools == ()
    assert checks == [("worker", "a-2")]


def test_fitting_pools_keep_the_order_they_were_given_in():
    pools = [_tpu_pool("a-0", "a"), _tpu_pool("b-0", "b"), _tpu_pool("a-1", "a")]
    fit = PoolIndex(pools).fit(_workers())
    assert [p.name for p in fit.pools] == ["a-0", "b-0", "a-1"]
    assert [p.name for p in fit.in_group("a")] == ["a-0", "a-1"]
    assert fit.identities == frozenset({"nodes@p"})


def test_a_selector_no_group_carries_fits_nothing_and_checks_nothing(checks):
    index = PoolIndex([_tpu_pool("a-0", "a")])
    assert index.fit(_workers({"team": "nobody"})).pools == ()
    assert checks == []


def test_a_pod_with_no_selector_is_checked_once_per_group(checks):
    pools = [_tpu_pool("a-0", "a"), _tpu_pool("a-1", "a"), _tpu_pool("b-0", "b")]
    pod = PodModel(
        role="client",
        groups=1,
        per_group=1,
        node_selector={},
        tolerations=(),
        resources=PodResources(1000, 2**30),
        tpu_chips=0,
        host_network=True,
        service_account=None,
        exclusive_topology=None,
        images=(),
    )
    assert PoolIndex(pools).fit(pod).pools == ()  # the TPU taint keeps it out
    assert checks == [("client", "a-0"), ("client", "b-0")]


def _bench_stack(tmp_path: Path, slices: int):
    spec = importlib.util.spec_from_file_location("bench_stacks_for_index", BENCH_STACKS)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return load_stack(module.write_stack(tmp_path, slices), tmp_path)


@pytest.mark.parametrize(
    ("slices", "expected"),
    # pools of 4 slices, one 4-slice job each: 16 and 64 TPU pools. Every head is pinned to the
    # CPU pool by name (1 check, shared); each shape's workers are checked once against each
    # pool of that shape (16 and 64 in all). Before the index: 64 x 66 + ... (quadratic).
    [(64, 17), (256, 65)],
)
def test_a_stacks_preflight_checks_each_pool_once_per_kind_of_pod(
    tmp_path, checks, slices, expected
):
    config = _bench_stack(tmp_path, slices)  # its parse runs the preflight once
    checks.clear()
    report = preflight(config, planned_pools(config), bucket_grants(config))
    assert report.issues == []
    assert len(checks) == expected
    assert len(report.jobs) == slices // 4


def test_single_host_slices_cannot_share_one_node_pool():
    """Why each single-host slice keeps a node pool of its own (components/gke/operations.py):
    two v5e 2x4 slices (one host each) against one pool of 2 such nodes. The workers' exclusive
    placement per node pool (alpha.jobset.sigs.k8s.io/exclusive-topology) gives the first slice
    the whole pool; the second would stay Pending."""
    from components.pathways.preflight import preflight_job

    spec = PathwaysJobSpec.parse(
        {
            "workers": [{"type": "ct5lp-hightpu-8t", "topology": "2x4", "numSlices": 2}],
            "controller": {"deploymentMode": "default"},
        }
    )
    workers = expand("j", "ns", spec).workers
    assert (workers.per_group, workers.exclusive_topology) == (1, "cloud.google.com/gke-nodepool")
    shared = _tpu_pool("shared", "shared")
    shared = NodePoolModel(
        "shared", "shared", tpu_host("ct5lp-hightpu-8t"), shared.labels, (TPU_TAINT,), 2, 8, None
    )
    cpu = NodePoolModel(
        "cpu-np",
        "cpu-np",
        None,
        {NODE_POOL_LABEL: "cpu-np"},
        (),
        4,
        0,
        None,
    )
    issues = [str(i) for i in preflight_job("j", "ns", spec, [shared, cpu]).issues]
    assert any(
        "asks for 2 slices but only 1 node pool(s) can hold one (shared); each slice needs a "
        "whole node pool" in issue
        for issue in issues
    ), issues
