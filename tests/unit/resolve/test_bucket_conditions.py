"""The IAM conditions of the scratch bucket's grants, held to IAM's limit of 12 logical operators
per condition (https://cloud.google.com/iam/docs/conditions-overview#limits), and what they admit
(a real CEL evaluator: ``tests.cluster_rules.iam_condition_admits``). The teams with dedicated
pools keep their prefixes under ``_/``, so the shared pools' condition is one constant
expression whatever their number and names."""

from __future__ import annotations

import json

import pytest

from components.pathways.bucket_conditions import (
    MAX_LOGICAL_OPERATORS,
    object_prefix_expression,
    shared_nodes_expression,
)
from components.resolve.checks import parse_stack_config
from components.vocabulary import team_prefix
from tests.cluster_rules import iam_condition_admits
from tests.helpers import logical_operators, stack_file_values

LISTED = 'api.getAttribute("storage.googleapis.com/objectListPrefix", "")'
BUCKET = "projects/_/buckets/b"


def test_the_limit_is_iams():
    assert MAX_LOGICAL_OPERATORS == 12


def test_the_shared_nodes_expression_and_its_operators():
    assert shared_nodes_expression("b") == (
        '(resource.name.startsWith("projects/_/buckets/b/objects/") && '
        '!resource.name.startsWith("projects/_/buckets/b/objects/_/")) || '
        '(!resource.name.startsWith("projects/_/buckets/b/objects/") && '
        f'{LISTED} != "" && {LISTED} != "_" && !{LISTED}.startsWith("_/"))'
    )
    # && && && &&, || (joins the halves), ! ! ! (not the ones of !=)
    assert logical_operators(shared_nodes_expression("b")) == 8 <= MAX_LOGICAL_OPERATORS


def test_a_team_prefix_expression_has_one_operator():
    assert logical_operators(object_prefix_expression("b", "_/nlp/")) == 1


def test_operators_inside_string_literals_do_not_count():
    assert logical_operators('a == "x && y || !z" && !b || c != "!"') == 3


def test_a_teams_prefix_is_its_own_or_under_the_dedicated_root():
    assert team_prefix("nlp", dedicated=False) == "nlp/"
    assert team_prefix("nlp", dedicated=True) == "_/nlp/"


@pytest.mark.parametrize(
    "name", ["projects/_/buckets/b/objects/research/ckpt/0", f"{BUCKET}/objects/nlp/x"]
)
def test_the_shared_nodes_reach_every_object_outside_the_dedicated_root(name):
    assert iam_condition_admits(shared_nodes_expression("b"), name)


@pytest.mark.parametrize("path", ["_/nlp/ckpt/0", "_/vision/x", "_/"])
def test_the_shared_nodes_reach_no_object_under_the_dedicated_root(path):
    assert not iam_condition_admits(shared_nodes_expression("b"), f"{BUCKET}/objects/{path}")


@pytest.mark.parametrize(
    ("prefix", "admitted"),
    [
        ("", False),  # the whole bucket names every dedicated team's objects
        ("_", False),
        ("_/", False),
        ("_/n", False),
        ("_/nlp/", False),
        ("_/nlp/job/", False),
        ("research/", True),
        ("r", True),
        ("nlp", True),  # a shared prefix now: no dedicated data is there
        ("__", True),
        ("_x/", True),
    ],
)
def test_the_shared_nodes_list_no_prefix_that_shows_a_dedicated_name(prefix, admitted):
    assert iam_condition_admits(shared_nodes_expression("b"), BUCKET, prefix) is admitted


def test_another_bucket_is_not_reached():
    assert not iam_condition_admits(shared_nodes_expression("b"), "projects/_/buckets/c/objects/x")


def renamed(name: str) -> dict:
    """research-v5p with its dedicated team nlp renamed."""
    return json.loads(json.dumps(stack_file_values("research-v5p")).replace('"nlp"', f'"{name}"'))


@pytest.mark.parametrize("name", ["vision", "speech-recognition-team"])
def test_a_dedicated_team_with_a_long_name_is_accepted(name):
    config = parse_stack_config(renamed(name), "test")
    assert config.dedicated_teams == [name]
    assert config.scratch_prefix(name) == f"_/{name}/"
    assert config.scratch_prefix("research") == "research/"
