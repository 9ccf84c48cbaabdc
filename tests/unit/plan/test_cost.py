"""The plan's cost estimate: node pools priced from a price table, with hand-computed answers.

Most tests use a small price table written here (so the arithmetic is checked, not the data);
the last ones pin the repo's table to the figures its sources give.
"""

from __future__ import annotations

from typing import Any

import pytest

from components.errors import ConfigError
from components.plan.cost import cost_summary, plan_cost
from components.plan.render import render_cost
from components.resolve.checks import parse_stack_config
from components.tpu.catalog import all_shapes
from components.tpu.pricing import PriceTable, PricingOverrides, price_table

TABLE = PriceTable(
    {
        "hoursPerMonth": 730,
        "taken": "test",
        "tpu": {
            "default": {
                "v5e": {"onDemand": 1.5, "spot": None, "flexStart": None},
                "v5p": {"onDemand": 4.0, "spot": 1.0},
                "v6e": {"onDemand": 3.0, "reservation": 2.0, "flexStart": None},
            },
            "regions": {"us-east5": {"v6e": {"flexStart": 1.25}}},
        },
        "cpu": {
            "default": {"n2": {"vcpuHour": 0.03, "gibHour": 0.004}, "c3": None},
            "regions": {"us-east5": {"n2": {"vcpuHour": 0.05}}},
        },
    }
)


def node_pool(name: str, machine: str, zone: str = "us-west4-a", **inputs: Any) -> dict:
    node_config = {"machineType": machine, **inputs.pop("node_config", {})}
    return {
        "urn": f"urn:pulumi:s::p::gcp:container/nodePool:NodePool::{name}",
        "type": "gcp:container/nodePool:NodePool",
        "name": name,
        "inputs": {"name": name, "nodeLocations": [zone], "nodeConfig": node_config, **inputs},
    }


def pools(*resources: dict, overrides: PricingOverrides | None = None) -> dict[str, dict]:
    summary = cost_summary(list(resources), overrides, TABLE)
    return {p["pool"]: p for p in summary["pools"]}


# --- TPU pools --------------------------------------------------------------------------------


def test_on_demand_tpu_pool_is_chips_times_chip_hour():
    # 2 hosts of ct5lp-hightpu-4t = 8 chips; 8 x $1.50 = $12.00/h; x 730 = $8,760/month
    summary = cost_summary([node_pool("v5e-0", "ct5lp-hightpu-4t", nodeCount=2)], None, TABLE)
    assert summary["pools"][0]["chips"] == 8
    assert summary["pools"][0]["generation"] == "v5e"
    assert summary["hourly"] == pytest.approx(12.0)
    assert summary["monthly"] == pytest.approx(8760.0)
    assert summary["notPriced"] == []


def test_v5p_pool_uses_its_own_generation_price():
    # ct5p-hightpu-4t: 4 chips per host; 4 hosts = 16 chips; spot $1.00 -> $16.00/h
    spot = {"spot": True}
    row = pools(node_pool("v5p-0", "ct5p-hightpu-4t", nodeCount=4, node_config=spot))["v5p-0"]
    assert (row["chips"], row["capacity"], row["hourly"]) == (16, "spot", pytest.approx(16.0))


def test_unpriced_pool_is_listed_and_left_out_of_the_totals():
    spot = {"spot": True}
    summary = cost_summary(
        [
            node_pool("v5e-0", "ct5lp-hightpu-4t", nodeCount=2, node_config=spot),
            node_pool("v5e-1", "ct5lp-hightpu-4t", nodeCount=1),  # 4 chips on demand: $6.00/h
        ],
        None,
        TABLE,
    )
    assert summary["notPriced"] == ["v5e-0"]
    assert summary["pools"][0]["hourly"] is None
    assert "not priced" in summary["pools"][0]["basis"]
    assert summary["hourly"] == pytest.approx(6.0)


def test_reservation_without_a_reservation_price_is_billed_as_on_demand():
    reserved = {
        "reservationAffinity": {
            "consumeReservationType": "SPECIFIC_RESERVATION",
            "key": "compute.googleapis.com/reservation-name",
            "values": ["r"],
        }
    }
    rows = pools(
        # v5e has no reservation price: 2 hosts x 4 chips x $1.50 = $12.00/h
        node_pool("v5e-0", "ct5lp-hightpu-4t", nodeCount=2, node_config=reserved),
        # v6e has one: 1 host x 4 chips x $2.00 = $8.00/h
        node_pool("v6e-0", "ct6e-standard-4t", "us-east5-b", nodeCount=1, node_config=reserved),
    )
    assert rows["v5e-0"]["capacity"] == "reservation"
    assert rows["v5e-0"]["hourly"] == pytest.approx(12.0)
    assert "on-demand" in rows["v5e-0"]["basis"]
    assert rows["v6e-0"]["hourly"] == pytest.approx(8.0)


def test_flex_start_pool_is_priced_at_its_autoscaling_maximum_and_by_region():
    flex = {
        "flexStart": True,
        "reservationAffinity": {"consumeReservationType": "NO_RESERVATION"},
    }
    scaling = {"totalMinNodeCount": 0, "totalMaxNodeCount": 4, "locationPolicy": "ANY"}
    east = node_pool(
        "v6e-east", "ct6e-standard-4t", "us-east5-b",
        initialNodeCount=0, autoscaling=scaling, node_config=flex,
    )  # fmt: skip
    west = node_pool(
        "v6e-west", "ct6e-standard-4t", "us-west4-a",
        initialNodeCount=0, autoscaling=scaling, node_config=flex,
    )  # fmt: skip
    rows = pools(east, west)
    # us-east5 has a flex-start price: 4 hosts x 4 chips x $1.25 = $20.00/h
    assert (rows["v6e-east"]["nodes"], rows["v6e-east"]["chips"]) == (4, 16)
    assert rows["v6e-east"]["hourly"] == pytest.approx(20.0)
    assert rows["v6e-east"]["capacity"] == "flexStart"
    # the default has none (null): not priced
    assert rows["v6e-west"]["hourly"] is None


def test_stack_overrides_win_over_the_table():
    overrides = PricingOverrides.model_validate(
        {"region": "us-east5", "tpuChipHour": {"v5e": {"spot": 0.5}}}
    )
    spot = {"spot": True}
    rows = pools(
        node_pool("v5e-0", "ct5lp-hightpu-4t", nodeCount=2, node_config=spot),  # 8 x 0.5 = 4
        node_pool("cpu-np", "n2-standard-4", nodeCount=1),  # us-east5 vCPU rate 0.05
        overrides=overrides,
    )
    assert rows["v5e-0"]["hourly"] == pytest.approx(4.0)
    assert rows["v5e-0"]["basis"].startswith("stack pricing override")
    # n2-standard-4: 4 vCPU x $0.05 + 16 GiB x $0.004 (default memory rate) = $0.264/h
    assert rows["cpu-np"]["region"] == "us-east5"
    assert rows["cpu-np"]["hourly"] == pytest.approx(0.264)


# --- the CPU pool -----------------------------------------------------------------------------


def test_cpu_pool_is_priced_per_vcpu_and_gib_at_its_autoscaling_minimum():
    # n2-standard-64 = 64 vCPU, 256 GiB: 64 x 0.03 + 256 x 0.004 = 1.92 + 1.024 = $2.944/h/node
    one_zone = node_pool(
        "cpu-np", "n2-standard-64", autoscaling={"minNodeCount": 1, "maxNodeCount": 3}
    )
    row = pools(one_zone)["cpu-np"]
    assert (row["kind"], row["nodes"]) == ("cpu", 1)
    assert row["hourly"] == pytest.approx(2.944)
    # min_node_count is per zone: two zones run two nodes
    two_zones = node_pool("cpu-np", "n2-standard-64", autoscaling={"minNodeCount": 1})
    two_zones["inputs"]["nodeLocations"] = ["us-west4-a", "us-west4-b"]
    assert pools(two_zones)["cpu-np"]["hourly"] == pytest.approx(5.888)


def test_a_node_count_unknown_before_deploy_is_not_priced():
    """An unknown count is not replaced by the next field (initialNodeCount) or a default."""
    pool = node_pool("v5e-0", "ct5lp-hightpu-4t", nodeCount="[unknown]", initialNodeCount=2)
    row = pools(pool)["v5e-0"]
    assert (row.get("nodes"), row["hourly"]) == (None, None)
    assert row["basis"] == "list price; node count not known before deploy"


def test_a_node_config_unknown_before_deploy_is_not_priced():
    pool = node_pool("p", "x", nodeCount=2)
    pool["inputs"]["nodeConfig"] = "[unknown]"
    row = pools(pool)["p"]
    assert (row["machineType"], row["nodes"], row["hourly"]) == ("[unknown]", 2, None)
    assert row["basis"] == "not priced: unknown machine type [unknown]"


def test_a_tpu_pool_is_priced_in_every_zone_and_wire_floats_count():
    # 2 hosts per zone x 2 zones x 4 chips x $1.50 = $24.00/h
    pool = node_pool("v5e-0", "ct5lp-hightpu-4t", nodeCount=2.0)
    pool["inputs"]["nodeLocations"] = ["us-west4-a", "us-west4-b"]
    row = pools(pool)["v5e-0"]
    assert (row["nodes"], row["chips"], row["hourly"]) == (4, 16, pytest.approx(24.0))


def test_cpu_family_without_a_price_is_not_priced():
    row = pools(node_pool("cpu-np", "c3-standard-8", nodeCount=1))["cpu-np"]
    assert row["hourly"] is None
    assert "c3" in row["basis"]


def test_resources_other_than_node_pools_are_not_priced_at_all():
    bucket = {"urn": "urn:b", "type": "gcp:storage/bucket:Bucket", "name": "b", "inputs": {}}
    assert cost_summary([bucket], None, TABLE)["pools"] == []


def test_saved_plan_is_priced_with_the_overrides_it_records():
    document = {
        "stack": "s",
        "resources": [node_pool("v5e-0", "ct5lp-hightpu-4t", nodeCount=2)],
        "summary": {"cost": {"overrides": {"tpuChipHour": {"v5e": {"onDemand": 2.0}}}}},
    }
    assert plan_cost(document, TABLE)["hourly"] == pytest.approx(16.0)  # 8 chips x $2.00
    del document["summary"]  # a plan from before the cost estimate: list prices
    assert plan_cost(document, TABLE)["hourly"] == pytest.approx(12.0)


# --- the stack's `pricing` key ----------------------------------------------------------------


def test_dev_plan_summary_prices_every_pool(plan_of, stack_values):
    cost = plan_of(stack_values()).summary["cost"]
    # the repo table: n2-standard-64 = 64 x 0.031611 + 256 x 0.004237 = 3.107776 $/h;
    # the system pool's e2-standard-16 = 16 x 0.021811 + 64 x 0.002923 = 0.536048 $/h;
    # the spot v5e slice: 2 hosts x 4 chips x 0.244926 = 1.959408 $/h
    assert cost["hourly"] == pytest.approx(5.603232)
    assert cost["monthly"] == pytest.approx(4090.35936)
    assert cost["notPriced"] == []
    spot = next(p for p in cost["pools"] if p["pool"] == "v5e-0")
    assert (spot["capacity"], spot["hourly"]) == ("spot", pytest.approx(1.959408))
    assert spot["basis"] == "spot price as read"


def test_plain_plan_text_shows_hourly_and_monthly_cost_per_pool_and_total(plan_of, stack_values):
    text = render_cost(plan_of(stack_values()))
    assert text.splitlines() == [
        "Cost estimate (USD list prices of components/tpu/data/prices.yaml, taken 2026-11-22; "
        "730 hours a month; not a bill):",
        "  pool       machine type      capacity  nodes  chips  per hour  per month  basis",
        "  system-np  e2-standard-16    onDemand      1      -      0.54     391.32  "
        "list price; at its autoscaling minimum",
        "  cpu-np     n2-standard-64    onDemand      1      -      3.11   2,268.68  "
        "list price; at its autoscaling minimum",
        "  v5e-0      ct5lp-hightpu-4t  spot          2      8      1.96   1,430.37  "
        "spot price as read",
        "  total                                                    5.60   4,090.36",
    ]


def test_plain_plan_text_names_unpriced_pools(plan_of, stack_values):
    values = stack_values(
        tpuPools=[
            {"name": "iw", "generation": "tpu7x", "topology": "2x2x1", "allowUnlistedZone": True}
        ]
    )
    text = render_cost(plan_of(values))
    assert "  iw-0       tpu7x-standard-4t  onDemand      1      4  not priced" in text
    assert text.splitlines()[-4:] == [
        # the totals right-aligned under "per hour" and "per month" (ending at columns 66, 78)
        "  total" + " " * 55 + "3.64    2,659.99  leaves out 4 of 4 TPU chips",
        "  not priced, left out of the total: iw-0 (4 tpu7x onDemand chips)",
        "  to price them, give USD per chip-hour in the stack (sources: "
        "components/tpu/data/prices.yaml):",
        "    tpu-pathways:pricing: {tpuChipHour: {tpu7x: {onDemand: RATE}}}",
    ]


def spot_v5p_values(stack_values) -> dict:
    """The issue's new-user stack in small: a priced v5e spot slice and an unpriced v5p one."""
    values = stack_values(gcp={"region": "us-east5", "zone": "us-east5-a"})
    values["tpuPools"].append(
        {"name": "v5p", "generation": "v5p", "topology": "2x2x2", "capacity": {"spot": True}}
    )
    return values


def test_the_total_says_how_many_chips_it_leaves_out(plan_of, stack_values):
    from components.plan.render import render_text

    text = render_text(plan_of(spot_v5p_values(stack_values)))
    lines = text.splitlines()
    assert (
        "  total                                                      5.60    4,090.36  "
        "leaves out 8 of 16 TPU chips" in lines
    )
    total = next(i for i, line in enumerate(lines) if line.startswith("Total: "))
    assert lines[total : total + 2] == [
        "Total: 16 TPU chips (v5e/v5p), 5.60 USD/hour, 4,090.36 USD/month (an estimate at list "
        "prices); the cost leaves out 8 of",
        "  16 chips (not priced)",
    ]
    assert lines[
        lines.index("  not priced, left out of the total: v5p-0 (8 v5p spot chips)") + 2
    ] == ("    tpu-pathways:pricing: {tpuChipHour: {v5p: {spot: RATE}}}")


def test_a_spot_override_closes_the_gap(plan_of, stack_values):
    from components.plan.render import render_text

    values = spot_v5p_values(stack_values)
    values["pricing"] = {"tpuChipHour": {"v5p": {"spot": 1.5}}}
    # 8 v5p chips x $1.50 = $12.00/h on top of the $5.603232/h priced before
    lines = render_text(plan_of(values)).splitlines()
    assert next(line for line in lines if line.startswith("Total: ")) == (
        "Total: 16 TPU chips (v5e/v5p), 17.60 USD/hour, 12,850.36 USD/month (an estimate at list "
        "prices)"
    )


def test_stack_pricing_override_reaches_the_plan(plan_of, stack_values):
    values = stack_values(pricing={"tpuChipHour": {"v5e": {"spot": 0.5}}})
    cost = plan_of(values).summary["cost"]
    # 8 spot v5e chips x $0.50 = $4.00/h, plus the CPU and system pools' $3.643824/h
    assert cost["hourly"] == pytest.approx(7.643824)
    assert cost["overrides"] == {"tpuChipHour": {"v5e": {"spot": 0.5}}}
    assert cost["notPriced"] == []


@pytest.mark.parametrize(
    ("pricing", "key"),
    [
        ({"tpuChipHour": {"v3": {"onDemand": 1.0}}}, "pricing.tpuChipHour"),
        ({"tpuChipHour": {"v5e": {"spot": -1}}}, "pricing.tpuChipHour.v5e.spot"),
        ({"tpuChipHour": {"v5e": {"ondemand": 1.0}}}, "pricing.tpuChipHour.v5e.ondemand"),
        ({"region": "Mars"}, "pricing.region"),
    ],
)
def test_bad_pricing_overrides_are_config_errors(stack_values, pricing, key):
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(stack_values(pricing=pricing))
    assert any(issue.key.startswith(key) for issue in caught.value.issues), caught.value


# --- the repo's price table -------------------------------------------------------------------


def test_repo_table_holds_the_sourced_figures():
    table = price_table()
    assert table.hours_per_month == 730
    assert table.tpu_chip_hour("v5e", "onDemand", "us-west4").value == 1.20
    assert table.tpu_chip_hour("v5p", "onDemand", "us-east5").value == 4.20
    assert table.tpu_chip_hour("v6e", "onDemand", "us-east5").value == 2.70
    assert table.tpu_chip_hour("v6e", "flexStart", "us-east5").value == 1.35
    assert table.tpu_chip_hour("v6e", "flexStart", "us-west4").value is None
    assert table.tpu_chip_hour("v5e", "spot", "us-west4").value == 0.244926  # one reading
    assert table.tpu_chip_hour("v6e", "spot", "us-west4").value == 0.748824
    assert table.tpu_chip_hour("v5p", "spot", "us-east5").value is None  # no public figure
    assert table.tpu_chip_hour("v4", "onDemand", "us-central2").value == 3.22
    assert table.tpu_chip_hour("v4", "spot", "us-central2").value == 0.9215
    for generation in ("tpu7x", "tpu7"):  # no public figure for Ironwood
        assert table.tpu_chip_hour(generation, "onDemand", "us-central1").value is None
    # no reservation price: the on-demand rate
    assert table.tpu_chip_hour("v5p", "reservation", "us-east5").value == 4.20
    assert table.cpu_rates("n2", "us-west4") == (0.031611, 0.004237)
    assert table.cpu_rates("c4", "us-west4") is None


def test_every_catalog_generation_has_a_row_in_the_repo_table():
    """A generation the catalog offers (any TPU shape of it) but the table does not price would
    be "not priced" without the table saying why: a new generation fails here until it has a
    row naming every capacity type, and a row of no figure at all is explained by a source."""
    table = price_table().data
    offered = {shape.generation.value for shape in all_shapes()}
    rows = table["tpu"]["default"]
    assert offered == set(rows)
    notes = " ".join(source["note"] for source in table["sources"])
    for generation in sorted(offered):
        assert set(rows[generation]) == {"onDemand", "spot", "flexStart"}, generation
        if all(price is None for price in rows[generation].values()):
            assert generation in notes, f"no source says why {generation} is not priced"
