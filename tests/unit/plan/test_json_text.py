"""The plan's JSON text (components/plan/json_text.py): the bytes of
``json.dumps(value, indent=2, allow_nan=False)``, which saved plans and diff bases are compared
by, from a faster encoder."""

from __future__ import annotations

import enum
import json

import pytest

from components.plan import json_text


class Colour(enum.StrEnum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


def test_nested_values_are_written_with_an_indent_of_two():
    value = {"a": [1, 2.5, True, None], "b": {}, "c": [], "d": {"é": "x\n"}}
    assert json_text.dumps(value) == (
        "{\n"
        '  "a": [\n'
        "    1,\n"
        "    2.5,\n"
        "    true,\n"
        "    null\n"
        "  ],\n"
        '  "b": {},\n'
        '  "c": [],\n'
        '  "d": {\n'
        '    "\\u00e9": "x\\n"\n'
        "  }\n"
        "}"
    )


@pytest.mark.parametrize(
    "value",
    [
        "plain",
        7,
        -0.0,
        1e100,
        None,
        [],
        {},
        (1, (2, 3)),
        {7: "int key", 2.5: "float key", True: "bool key", None: "none key"},
        {"colour": Colour.RED, "level": Level.HIGH, Colour.RED: [Level.HIGH]},
        {"deep": [[[{"x": [{}]}]]], "unicode": "\u2603 \U0001f600 \x00"},
    ],
)
def test_same_bytes_as_the_standard_encoder(value):
    assert json_text.dumps(value) == json.dumps(value, indent=2, allow_nan=False)


def test_the_dev_plan_document_is_written_as_before(example_plan):
    document = example_plan("dev").to_dict()
    assert json_text.dumps(document) == json.dumps(document, indent=2, allow_nan=False)


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_numbers_json_has_no_form_for_are_refused(number):
    with pytest.raises(ValueError, match="not JSON compliant"):
        json_text.dumps({"cost": [number]})


def test_values_json_has_no_form_for_are_refused():
    with pytest.raises(TypeError, match="Object of type set is not JSON serializable"):
        json_text.dumps({"x": {1}})
    with pytest.raises(TypeError, match="keys must be str, int, float, bool or None, not tuple"):
        json_text.dumps({(1, 2): 0})
