"""Storage in the plan's cost estimate: file system instances priced per GiB-month of their
capacity (a Lustre tier's rate includes its provisioned throughput), added to the monthly
total, unpriced ones named with the override that prices them. Hand-computed answers against a
small table written here; the last test pins the repo's table to its source."""

from __future__ import annotations

from components.plan.cost import cost_summary
from components.plan.render import storage_lines
from components.tpu.pricing import PriceTable, PricingOverrides, price_table

TABLE = PriceTable(
    {
        "hoursPerMonth": 730,
        "storage": {
            "default": {"filestore": {"BASIC_HDD": 0.2, "ZONAL": None}, "lustre": {"1000": None}},
            "regions": {"us-east5": {"filestore": {"BASIC_HDD": 0.25}}},
        },
    }
)


def lustre(gib: str = "9000", tier: str = "1000") -> dict:
    return {
        "urn": "urn:lustre",
        "type": "gcp:lustre/instance:Instance",
        "name": "c-lustre-ckpt",
        "inputs": {
            "instanceId": "c-ckpt",
            "capacityGib": gib,
            "perUnitStorageThroughput": tier,
            "location": "us-east5-a",
        },
    }


def filestore(tier: str = "BASIC_HDD", location: str = "us-west4-a") -> dict:
    return {
        "urn": "urn:filestore",
        "type": "gcp:filestore/instance:Instance",
        "name": "c-homes-nlp",
        "inputs": {
            "name": "c-home-nlp",
            "tier": tier,
            "location": location,
            "fileShares": {"name": "home", "capacityGb": 1024},
        },
    }


def test_a_priced_share_adds_its_month_to_the_total():
    cost = cost_summary([filestore()], table=TABLE)
    assert cost["storage"] == [
        {
            "urn": "urn:filestore",
            "name": "c-home-nlp",
            "kind": "filestore",
            "tier": "BASIC_HDD",
            "gib": 1024,
            "region": "us-west4",
            "monthly": 204.8,  # 1024 GiB x $0.20
            "basis": "list price",
        }
    ]
    assert (cost["hourly"], cost["storageMonthly"], cost["monthly"]) == (0, 204.8, 204.8)


def test_a_regional_price_wins():
    (row,) = cost_summary([filestore(location="us-east5-b")], table=TABLE)["storage"]
    assert row["monthly"] == 256.0  # 1024 GiB x $0.25


def test_lustre_without_a_price_is_named_and_left_out():
    cost = cost_summary([lustre()], table=TABLE)
    (row,) = cost["storage"]
    assert row["monthly"] is None
    assert row["basis"] == "not priced: no public lustre 1000 price in the table"
    assert cost["storageNotPriced"] == ["c-ckpt"]
    assert cost["monthly"] == 0
    assert storage_lines(cost)[-1] == (
        "    to price c-ckpt: tpu-pathways:pricing: {lustreGibMonth: {1000: RATE}}"
    )


def test_an_override_prices_lustre_by_tier():
    overrides = PricingOverrides.model_validate({"lustreGibMonth": {1000: 0.5}})
    (row,) = cost_summary([lustre()], overrides, TABLE)["storage"]
    assert (row["monthly"], row["basis"]) == (4500.0, "stack pricing override")  # 9000 x 0.5
    other_tier = cost_summary([lustre(gib="18000", tier="500")], overrides, TABLE)["storage"]
    assert other_tier[0]["monthly"] is None


def test_plans_without_file_systems_keep_their_cost_shape():
    assert "storage" not in cost_summary([], table=TABLE)


def test_the_repo_table_prices_basic_hdd_from_filestores_worked_example():
    # cloud.google.com/filestore/pricing, us-west1: $0.000274 per GiB-hour, 730 hours
    price = price_table().storage_gib_month("filestore", "BASIC_HDD", "us-west1").value
    assert price == 0.20
    assert round(0.000274 * 730, 2) == price
    assert price_table().storage_gib_month("lustre", "125", "us-east5").value is None
