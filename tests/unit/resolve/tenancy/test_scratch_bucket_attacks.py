"""The scratch bucket's prefixes through a stack file (the review of 2026-11-27): a team's
``buckets`` and its volumes never reach another team's prefix of the scratch bucket, the
dedicated teams' ``_/`` least of all. Each test fails without its check."""

from __future__ import annotations

import pytest
import yaml

from components.errors import ConfigError
from tests.admission import SCRATCH


def _values(stack: str) -> dict:
    from components.resolve.stack_files import STACKS_DIR

    document = yaml.safe_load((STACKS_DIR / f"Pulumi.{stack}.yaml").read_text())
    return {k.removeprefix("tpu-pathways:"): v for k, v in document["config"].items()}


@pytest.fixture(scope="module")
def contract():
    """What team-research reads of its owner research-v5p (from the owner's stack file)."""
    from components.resolve.loader import load_stack
    from components.resolve.stack_files import STACKS_DIR

    return load_stack("team-research", STACKS_DIR).shared_cluster


def _refusal(values: dict, **owner) -> str:
    from components.resolve.checks import parse_stack_config

    with pytest.raises(ConfigError) as caught:
        parse_stack_config(values, **owner)
    return str(caught.value)


@pytest.mark.parametrize("prefix", ["_/", "research/", ""])
def test_f8_a_team_stack_grants_itself_no_prefix_of_the_owners_scratch_bucket(prefix, contract):
    """nlp's own stack naming the owner's scratch bucket in its team's ``buckets``: all of
    ``_/`` (every dedicated team's data), research's prefix, or the whole bucket."""
    values = _values("team-research")
    values["teams"][0]["buckets"] = [{"name": SCRATCH, "access": "readWrite", "prefix": prefix}]
    message = _refusal(values, owner=contract)
    assert (
        f"teams[0].buckets[0].name: '{SCRATCH}' is the scratch bucket: the service account of "
        f"team 'nlp' already has read-write access to its own prefix there "
        f"(gs://{SCRATCH}/_/nlp/)"
    ) in message


def test_f8_a_shared_teams_volume_under_a_dedicated_prefix_is_refused_without_a_way_around():
    """research (shared pools) mounting nlp's scratch data: refused, and the message no longer
    suggests the grant in ``teams[].buckets`` that would have opened it."""
    values = _values("research-v5p")
    values["workloads"][0]["volumes"] = [
        {"name": "peek", "bucket": SCRATCH, "prefix": "_/nlp", "mountPath": "/peek"}
    ]
    message = _refusal(values)
    assert (
        f"volumes[0].prefix: gs://{SCRATCH}/_/nlp/ is the scratch bucket outside the prefix of "
        f"team 'research', gs://{SCRATCH}/research/"
    ) in message
    assert "buckets (grants" not in message
