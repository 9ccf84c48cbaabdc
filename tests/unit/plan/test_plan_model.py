"""The plan document: ``Plan.to_dict`` writes it, ``Plan.load`` validates and reads it back."""

from __future__ import annotations

import copy
import json

import pytest
from pydantic import ValidationError

from components.plan.model import Plan, PlannedResource

DOCUMENT = {
    "stack": "s",
    "project": "tpu-pathways",
    "resources": [
        {
            "urn": "urn:pulumi:s::tpu-pathways::gcp:compute/network:Network::net",
            "type": "gcp:compute/network:Network",
            "name": "net",
            "parent": None,
            "custom": True,
            "provider": None,
            "inputs": {"name": "net", "autoCreateSubnetworks": False},
            "dependencies": [],
            "options": {"protect": True},
        }
    ],
    "outputs": {"network": "net"},
    "summary": {"tpu": {}, "resources": 1},
}


def test_load_reads_every_field():
    plan = Plan.load(copy.deepcopy(DOCUMENT))
    assert plan.stack == "s"
    assert plan.outputs == {"network": "net"}
    assert plan.resources == [
        PlannedResource(
            urn="urn:pulumi:s::tpu-pathways::gcp:compute/network:Network::net",
            type="gcp:compute/network:Network",
            name="net",
            parent=None,
            custom=True,
            provider=None,
            inputs={"name": "net", "autoCreateSubnetworks": False},
            dependencies=[],
            options={"protect": True},
        )
    ]


def test_to_dict_writes_the_document_load_read():
    assert Plan.load(copy.deepcopy(DOCUMENT)).to_dict() == DOCUMENT


def test_an_example_plan_survives_json_and_load(example_plan):
    plan = example_plan("dev")
    assert Plan.load(json.loads(json.dumps(plan.to_dict()))) == plan


@pytest.mark.parametrize(
    "broken",
    [
        {k: v for k, v in DOCUMENT.items() if k != "resources"},
        {**DOCUMENT, "stack": 7},
        {**DOCUMENT, "resources": [{**DOCUMENT["resources"][0], "custom": "yes"}]},
        {**DOCUMENT, "extra": 1},
        [DOCUMENT],
    ],
)
def test_load_refuses_what_is_not_a_plan_document(broken):
    with pytest.raises(ValidationError):
        Plan.load(broken)
