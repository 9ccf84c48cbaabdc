"""Node pools and the cluster carry create / update / delete timeouts long enough for an
operation queued behind the cluster's other node pools (components/gke/operations.py), and the
plan shows them (``options.customTimeouts``)."""

from __future__ import annotations

import pytest

from components.gke.operations import (
    Timeouts,
    cluster_timeouts,
    go_duration,
    node_pool_timeouts,
    queue_waves,
)
from components.tokens import CLUSTER, NODE_POOL


@pytest.mark.parametrize(
    ("node_pools", "waves"), [(1, 1), (3, 1), (10, 1), (11, 2), (66, 7), (258, 26)]
)
def test_queue_waves_of_ten_operations(node_pools, waves):
    assert queue_waves(node_pools) == waves


def test_timeouts_per_wave_of_thirty_minutes():
    assert node_pool_timeouts(3) == Timeouts(1800, 1800, 1800)
    assert node_pool_timeouts(66) == Timeouts(12600, 12600, 12600)
    assert cluster_timeouts(3) == Timeouts(3600, 3600, 3600)
    assert cluster_timeouts(66) == Timeouts(3600, 12600, 3600)


@pytest.mark.parametrize(
    ("seconds", "text"), [(1800, "30m"), (3600, "1h"), (12600, "3h30m"), (46800, "13h")]
)
def test_go_durations(seconds, text):
    assert go_duration(seconds) == text


def _timeouts(plan, type_token):
    return {r.name: r.options.get("customTimeouts") for r in plan.by_type(type_token)}


def test_every_node_pool_and_the_cluster_carry_timeouts_in_the_plan(plan_of, stack_values):
    # 1 TPU slice + the system and CPU pools: 3 node pools, one wave.
    plan = plan_of(stack_values())
    assert set(map(str, _timeouts(plan, NODE_POOL).values())) == {
        str({"create": "30m", "update": "30m", "delete": "30m"})
    }
    assert len(plan.by_type(NODE_POOL)) == 3
    assert list(_timeouts(plan, CLUSTER).values()) == [
        {"create": "1h", "update": "1h", "delete": "1h"}
    ]


def test_sixty_four_slices_wait_for_seven_waves(plan_of, stack_values):
    values = stack_values(
        tpuPools=[{"name": "v5e", "generation": "v5e", "topology": "2x4", "slices": 64}]
    )
    plan = plan_of(values)
    pools = _timeouts(plan, NODE_POOL)
    assert len(pools) == 66
    assert {str(t) for t in pools.values()} == {
        str({"create": "3h30m", "update": "3h30m", "delete": "3h30m"})
    }
    assert list(_timeouts(plan, CLUSTER).values()) == [
        {"create": "1h", "update": "3h30m", "delete": "1h"}
    ]
