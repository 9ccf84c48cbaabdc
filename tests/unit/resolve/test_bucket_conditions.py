"""The IAM condition of the shared pools' scratch-bucket grant, held to IAM's limit of 12
logical operators per condition (https://cloud.google.com/iam/docs/conditions-overview#limits):
a stack whose condition IAM would refuse at `pulumi up` is refused at plan time."""

from __future__ import annotations

import json

import pytest

from components.errors import ConfigError
from components.pathways.bucket_conditions import (
    MAX_LOGICAL_OPERATORS,
    logical_operators,
    shared_nodes_expression,
    shared_nodes_operators,
)
from components.resolve.checks import parse_stack_config
from tests.helpers import stack_file_values

LISTED = 'api.getAttribute("storage.googleapis.com/objectListPrefix", "")'


def test_the_limit_is_iams():
    assert MAX_LOGICAL_OPERATORS == 12


def test_the_expression_for_one_team_and_its_operators():
    assert shared_nodes_expression("b", ["nlp"]) == (
        '(resource.name.startsWith("projects/_/buckets/b/objects/") && '
        '!(resource.name.startsWith("projects/_/buckets/b/objects/nlp/"))) || '
        '(!resource.name.startsWith("projects/_/buckets/b/objects/") && '
        f'{LISTED} != "" && '
        f'!({LISTED}.startsWith("nlp/") || {LISTED} == "n" || {LISTED} == "nl" || '
        f'{LISTED} == "nlp"))'
    )
    # && && &&, || || || || (one joins the halves), ! ! ! (not the one of !=)
    assert logical_operators(shared_nodes_expression("b", ["nlp"])) == 10


def test_operators_inside_string_literals_do_not_count():
    assert logical_operators('a == "x && y || !z" && !b || c != "!"') == 3


@pytest.mark.parametrize(
    ("teams", "operators"),
    [
        (["nlp"], 10),
        (["ml"], 9),
        (["vision"], 13),
        (["research"], 15),
        (["a", "b"], 11),
        (["nlp", "vision"], 18),
    ],
)
def test_each_team_costs_two_and_each_character_of_its_name_one(teams, operators):
    assert shared_nodes_operators(teams) == operators


def renamed(name: str) -> dict:
    """research-v5p with its dedicated team nlp renamed."""
    return json.loads(json.dumps(stack_file_values("research-v5p")).replace('"nlp"', f'"{name}"'))


def test_a_dedicated_team_whose_condition_iam_refuses_is_refused_at_plan_time():
    with pytest.raises(ConfigError) as refused:
        parse_stack_config(renamed("vision"), "test")
    (issue,) = [i for i in refused.value.issues if i.key == "teamCpuPools"]
    assert "needs an IAM condition of 13 logical operators, and IAM allows 12" in issue.message
    assert "dedicated pools: vision)" in issue.message
    assert "https://cloud.google.com/iam/docs/conditions-overview#limits" in issue.message


def test_the_example_within_the_limit_is_accepted():
    config = parse_stack_config(renamed("nlp"), "test")
    assert config.dedicated_teams == ["nlp"]
