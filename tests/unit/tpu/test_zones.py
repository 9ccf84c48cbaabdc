"""The TPU zone catalog (components/tpu/data/zones.json) and the plan's zone check: a pool whose
generation the stack's zone does not offer is refused, naming the zones that have it; the
override warns instead. Known answers are literals from Google's published table."""

from __future__ import annotations

import json

import pytest

from components.cli.main import main
from components.errors import ConfigError
from components.tpu.generations import TpuGeneration
from components.tpu.zones import ZONE_TABLE, zone_problem, zone_table
from tests.examples import EXAMPLES_DIR

# The issue's three pools that planned cleanly in us-west1-b (no v5e, v5p or v6e there).
WEST_POOLS = [
    {"name": "v5p", "generation": "v5p", "topology": "2x2x2"},
    {"name": "v6e", "generation": "v6e", "topology": "4x4"},
    {"name": "v5e", "generation": "v5e", "topology": "2x4"},
]
WEST = {"project": "tpu-pathways-dev", "region": "us-west1", "zone": "us-west1-b"}


def test_the_data_file_names_its_source_and_the_date_it_was_read():
    document = json.loads(ZONE_TABLE.read_text())
    assert document["source"]["zones"] == "https://cloud.google.com/tpu/docs/regions-zones"
    assert document["source"]["seen"] == "2026-11-26"


@pytest.mark.parametrize(
    ("generation", "zone", "capacity"),
    [
        (TpuGeneration.V5P, "us-east5-a", ("onDemand", "spot", "reservation")),
        (TpuGeneration.V5P, "us-south1-a", ("reservation",)),  # single-tenant
        (TpuGeneration.V6E, "us-west1-c", ("spot", "reservation")),
        (TpuGeneration.V6E, "asia-northeast1-b", ("onDemand", "spot", "reservation", "flexStart")),
        (TpuGeneration.V5E, "us-west4-a", ("onDemand", "spot", "reservation", "flexStart")),
        (TpuGeneration.V4, "us-central2-b", ("onDemand", "spot", "reservation")),
        (TpuGeneration.TPU7X, "us-central1-c", ("onDemand", "spot", "reservation")),
        (TpuGeneration.V5P, "us-west1-b", None),
    ],
)
def test_capacity_types_per_zone(generation, zone, capacity):
    assert zone_table().capacity_in(generation, zone) == capacity


def test_a_zone_lists_its_generations():
    assert zone_table().generations_in("us-east5-a") == ["v5e", "v5p", "v6e"]
    assert zone_table().generations_in("us-west1-b") == []


def test_the_problem_lists_the_zones_that_have_the_generation():
    assert zone_problem(TpuGeneration.V5P, "us-west1-b") == (
        "v5p is not offered in zone 'us-west1-b' (zones that have it: us-central1-a, us-east5-a, "
        "us-east5-b, us-east5-c, us-south1-a; Google's TPU regions and zones table as of "
        "2026-11-26); move the stack's gcp.zone, or set allowUnlistedZone: true on this pool if "
        "the zone is newer than the table"
    )
    assert zone_problem(TpuGeneration.V5P, "us-east5-a") is None


def test_pools_in_a_zone_without_their_generation_are_refused_all_at_once(
    config_error, stack_values
):
    error = config_error(stack_values(gcp=WEST, tpuPools=WEST_POOLS))
    assert [(i.key, i.message.split(" (")[0]) for i in error.issues] == [
        ("tpuPools[0].generation", "v5p is not offered in zone 'us-west1-b'"),
        ("tpuPools[1].generation", "v6e is not offered in zone 'us-west1-b'"),
        ("tpuPools[2].generation", "v5e is not offered in zone 'us-west1-b'"),
    ]
    assert "zones that have it: europe-west4-b, us-central1-a" in error.issues[2].message


def test_allow_unlisted_zone_plans_with_a_warning(cli_plan):
    from tests.conftest import DEV_VALUES
    from tests.helpers import deep_merge

    pool = {**WEST_POOLS[0], "allowUnlistedZone": True}
    values = deep_merge(DEV_VALUES, {"gcp": WEST, "tpuPools": [pool]})
    code, out, err, _ = cli_plan(values, "west")
    assert code == 0, err
    assert (
        "warning: Pulumi.west.yaml: tpuPools 'v5p': v5p is not listed in zone 'us-west1-b'; "
        "created anyway (allowUnlistedZone: true)"
    ) in err
    assert "NodePool pathways-dev-v5p-0" in out


def test_a_capacity_type_the_zone_does_not_list_is_a_warning(cli_plan):
    from tests.conftest import DEV_VALUES
    from tests.helpers import deep_merge

    east = {"project": "tpu-pathways-dev", "region": "us-east5", "zone": "us-east5-b"}
    pool = {"name": "v5p", "accelerator": "v5p-8", "capacity": {"spot": True}}
    code, _, err, _ = cli_plan(deep_merge(DEV_VALUES, {"gcp": east, "tpuPools": [pool]}), "east")
    assert code == 0, err
    assert (
        "tpuPools 'v5p': v5p in us-east5-b lists capacity reservation, not spot (Google's "
        "tables as of 2026-11-26); creating the pool may fail"
    ) in err


def test_every_example_stack_places_its_pools_in_listed_zones():
    for path in EXAMPLES_DIR.glob("Pulumi.*.yaml"):
        assert "allowUnlistedZone" not in path.read_text(), path.name


def test_shapes_lists_a_zones_generations_and_a_zones_column(capsys):
    assert main(["shapes", "--zone", "us-east5-a", "--chips", "8"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:2] == ["accelerator", "topology"]
    assert "zones" in out[0]
    generations = {line.split()[0].split("-")[0] for line in out[1:]}
    assert generations == {"v5litepod", "v5p", "v6e"}
    assert all("us-east5-a" in line for line in out[1:])


def test_shapes_refuses_an_unknown_zone_naming_the_known_ones(capsys):
    assert main(["shapes", "--zone", "mars-north1-a"]) == 2
    err = capsys.readouterr().err
    assert "'mars-north1-a' offers no TPU generation in the zone catalog" in err
    assert "us-east5-a" in err


def test_config_error_is_raised_for_a_team_stacks_owner_not_the_team(config_of, stack_values):
    # A stack that owns its cluster in us-west4-a with a v5e pool: v5e is offered there.
    assert config_of(stack_values()).tpu_pools[0].name == "v5e"
    with pytest.raises(ConfigError):
        config_of(stack_values(gcp=WEST))
