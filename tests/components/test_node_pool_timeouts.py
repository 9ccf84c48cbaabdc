"""Node pools and the cluster carry create / update / delete timeouts long enough for an
operation queued behind the cluster's other node pools, never shorter than the provider's
defaults (2 h per node pool, 90 min for the cluster: components/gke/operations.py), and the plan
shows them (``options.customTimeouts``)."""

from __future__ import annotations

import pytest
import yaml

from components.gke.operations import (
    OPERATION_HIGH_S,
    Timeouts,
    cluster_timeouts,
    go_duration,
    node_pool_timeouts,
    queue_waves,
)
from components.plan.durations import DURATIONS_PATH
from components.tokens import CLUSTER, NODE_POOL


@pytest.mark.parametrize(
    ("node_pools", "waves"), [(1, 1), (3, 1), (5, 1), (6, 2), (66, 14), (258, 52)]
)
def test_queue_waves_of_five_operations(node_pools, waves):
    # the lowest sourced concurrency: 5 at once (the 2023 quota)
    assert queue_waves(node_pools) == waves


def test_timeouts_never_below_the_providers_defaults():
    # 3 pools: one wave of 15 min, under the provider's 2 h; the cluster keeps its 90 min.
    assert node_pool_timeouts(3) == Timeouts(7200, 7200, 7200)
    assert cluster_timeouts(3) == Timeouts(5400, 5400, 5400)
    # 40 pools: 8 waves of 15 min = 2 h, the default again.
    assert node_pool_timeouts(40) == Timeouts(7200, 7200, 7200)


def test_timeouts_of_a_long_queue():
    # 66 pools: 14 waves of 15 min = 3h30m; 258 pools: 52 waves = 13 h. The cluster's update
    # waits for the pools' queue (the provider's cluster write lock).
    assert node_pool_timeouts(66) == Timeouts(12600, 12600, 12600)
    assert node_pool_timeouts(258) == Timeouts(46800, 46800, 46800)
    assert cluster_timeouts(66) == Timeouts(5400, 12600, 5400)


def test_one_operations_bound_is_the_tpu_pools_high_figure():
    table = yaml.safe_load(DURATIONS_PATH.read_text())["types"][NODE_POOL]
    (tpu,) = [rule for rule in table if rule["label"] == "TPU slice node pool"]
    assert tpu["seconds"][1] == OPERATION_HIGH_S == 900


@pytest.mark.parametrize(
    ("seconds", "text"), [(1800, "30m"), (3600, "1h"), (12600, "3h30m"), (46800, "13h")]
)
def test_go_durations(seconds, text):
    assert go_duration(seconds) == text


def _timeouts(plan, type_token):
    return {r.name: r.options.get("customTimeouts") for r in plan.by_type(type_token)}


def test_every_node_pool_and_the_cluster_carry_timeouts_in_the_plan(plan_of, stack_values):
    # 1 TPU slice + the system and CPU pools: 3 node pools, the provider's defaults.
    plan = plan_of(stack_values())
    assert set(map(str, _timeouts(plan, NODE_POOL).values())) == {
        str({"create": "2h", "update": "2h", "delete": "2h"})
    }
    assert len(plan.by_type(NODE_POOL)) == 3
    assert list(_timeouts(plan, CLUSTER).values()) == [
        {"create": "1h30m", "update": "1h30m", "delete": "1h30m"}
    ]


def test_sixty_four_slices_wait_for_fourteen_waves(plan_of, stack_values):
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
        {"create": "1h30m", "update": "3h30m", "delete": "1h30m"}
    ]
