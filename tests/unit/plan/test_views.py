"""The typed views of planned resources: one dotted-path reader, one node-count reader, and what
each makes of unknown values, zones and missing fields."""

from __future__ import annotations

from typing import Any

import pytest

from components.plan.views import (
    MISSING,
    Bound,
    ClusterView,
    NodeCount,
    NodePoolView,
    count,
    is_unknown,
    number,
    value_at,
)

U = "[unknown]"
S = "[secret]"

# --- value_at -----------------------------------------------------------------------------

INPUTS: dict[str, Any] = {
    "a": {"b": {"c": 1}},
    "x": [{"y": 1}],
    "s": "text",
    "null": None,
    "hidden": U,
    "secret": S,
    "falsy": {"zero": 0, "no": False, "empty": ""},
}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("a.b.c", 1),
        ("a.b", {"c": 1}),
        ("falsy.zero", 0),  # a falsy value is a value
        ("falsy.no", False),
        ("falsy.empty", ""),
        ("hidden", U),  # an unknown leaf is the marker
        ("hidden.deeper.still", U),  # through an unknown: unknown, not missing
        ("secret.key", S),
    ],
)
def test_value_at_finds_values_and_passes_unknowns_on(path, expected):
    assert value_at(INPUTS, path) == expected


@pytest.mark.parametrize("path", ["a.z", "z", "a.b.c.d", "x.0", "x.y", "s.t", "null", "null.z"])
def test_value_at_is_missing_for_absent_null_or_through_a_non_mapping(path):
    assert value_at(INPUTS, path) is MISSING


def test_markers_are_unknown_and_other_values_are_not():
    assert (is_unknown(U), is_unknown(S)) == (True, True)
    assert (is_unknown("unknown"), is_unknown(None), is_unknown(MISSING)) == (False, False, False)


@pytest.mark.parametrize(
    ("value", "as_number", "as_count"),
    [(2, 2, 2), (2.0, 2, 2), (2.5, 2.5, None), (0, 0, 0), (-1, -1, None), (True, None, None),
     ("2", None, None), (U, None, None), (None, None, None)],
)  # fmt: skip
def test_number_and_count(value, as_number, as_count):
    assert number(value) == as_number
    assert count(value) == as_count


# --- node counts --------------------------------------------------------------------------


def pool(**inputs: Any) -> NodePoolView:
    return NodePoolView({"nodeConfig": {"machineType": "ct5lp-hightpu-4t"}, **inputs})


@pytest.mark.parametrize(
    ("inputs", "minimum", "maximum"),
    [
        ({"nodeCount": 2, "nodeLocations": ["us-west4-a"]}, NodeCount(2), NodeCount(2)),
        # per-zone counts apply in every zone
        ({"nodeCount": 2, "nodeLocations": ["us-west4-a", "us-west4-b"]},
         NodeCount(4), NodeCount(4)),
        ({"initialNodeCount": 3, "nodeLocations": ["a", "b"]}, NodeCount(6), NodeCount(6)),
        ({"autoscaling": {"minNodeCount": 1, "maxNodeCount": 3}, "nodeLocations": ["a", "b"]},
         NodeCount(2, autoscaled=True), NodeCount(6, autoscaled=True)),
        # totals are for the whole pool, whatever its zones
        ({"autoscaling": {"totalMinNodeCount": 0, "totalMaxNodeCount": 4},
          "nodeLocations": ["a", "b"]},
         NodeCount(0, autoscaled=True), NodeCount(4, autoscaled=True)),
        # the autoscaling bound comes before the fixed count
        ({"nodeCount": 2, "autoscaling": {"minNodeCount": 1, "maxNodeCount": 3}},
         NodeCount(1, autoscaled=True), NodeCount(3, autoscaled=True)),
        # no nodeLocations: one zone (the pool's zones are then the cluster's)
        ({"nodeCount": 2}, NodeCount(2), NodeCount(2)),
        ({"nodeCount": 2, "nodeLocations": []}, NodeCount(2), NodeCount(2)),
        # wire numbers are floats
        ({"nodeCount": 2.0}, NodeCount(2), NodeCount(2)),
        # a null field is not set: the next one decides
        ({"nodeCount": None, "initialNodeCount": 1}, NodeCount(1), NodeCount(1)),
    ],
)  # fmt: skip
def test_node_count_reads_the_first_field_set_times_the_zones(inputs, minimum, maximum):
    view = pool(**inputs)
    assert view.node_count(Bound.MINIMUM) == minimum
    assert view.node_count(Bound.MAXIMUM) == maximum


@pytest.mark.parametrize(
    "inputs",
    [
        {},  # nothing set
        {"nodeCount": U, "initialNodeCount": 2},  # unknown, and never the next field's count
        {"nodeCount": S},
        {"nodeCount": 2.5},
        {"nodeCount": True},
        {"nodeCount": 2, "nodeLocations": U},  # a per-zone count in zones not known yet
        {"autoscaling": U, "nodeCount": 2},  # the whole autoscaling block is unknown
    ],
)
def test_an_unknown_node_count_is_none_not_a_default(inputs):
    assert pool(**inputs).node_count(Bound.MAXIMUM).nodes is None
    assert pool(**inputs).node_count(Bound.MINIMUM).nodes is None


def test_a_pool_total_needs_no_zones():
    inputs = {"autoscaling": {"totalMaxNodeCount": 4}, "nodeLocations": U}
    assert pool(**inputs).node_count(Bound.MAXIMUM) == NodeCount(4, autoscaled=True)


@pytest.mark.parametrize(
    ("locations", "zones"), [(["a"], 1), (["a", "b", "c"], 3), ([], 1), (MISSING, 1), (U, None)]
)
def test_zones(locations, zones):
    inputs = {} if locations is MISSING else {"nodeLocations": locations}
    assert NodePoolView(inputs).zones == zones


# --- other node pool facts ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("node_config", "expected"),
    [
        ({}, "onDemand"),
        ({"spot": True}, "spot"),
        ({"preemptible": True}, "spot"),
        ({"flexStart": True, "reservationAffinity": {"consumeReservationType": "NO_RESERVATION"}},
         "flexStart"),
        ({"reservationAffinity": {"consumeReservationType": "SPECIFIC_RESERVATION"}},
         "reservation"),
        ({"reservationAffinity": {"consumeReservationType": "ANY_RESERVATION"}}, "reservation"),
        (U, "onDemand"),  # a flag not visible counts as unset
    ],
)  # fmt: skip
def test_capacity_type_from_the_node_config(node_config, expected):
    assert NodePoolView({"nodeConfig": node_config}).capacity == expected


def test_region_from_zone_or_location():
    assert NodePoolView({"nodeLocations": ["us-east5-b"], "location": "x"}).region == "us-east5"
    assert NodePoolView({"location": "europe-west4"}).region == "europe-west4"
    assert NodePoolView({"location": "europe-west4-a"}).region == "europe-west4"
    assert NodePoolView({"nodeLocations": U, "location": "us-east5"}).region == "us-east5"
    assert NodePoolView({"location": U}).region is None
    assert NodePoolView({}).region is None


def test_machine_type_and_tpu():
    assert (pool().machine_type, pool().is_tpu) == ("ct5lp-hightpu-4t", True)
    cpu = NodePoolView({"nodeConfig": {"machineType": "n2-standard-64"}})
    assert (cpu.machine_type, cpu.is_tpu) == ("n2-standard-64", False)
    assert NodePoolView({"nodeConfig": U}).machine_type == U
    assert NodePoolView({"nodeConfig": U}).is_tpu is False
    assert NodePoolView({}).machine_type is MISSING


def test_names_only_when_known():
    assert NodePoolView({"name": "v5e-0"}).name == "v5e-0"
    assert NodePoolView({"name": U}).name is None
    assert ClusterView({"name": "pathways-dev"}).name == "pathways-dev"
    assert ClusterView({}).name is None
