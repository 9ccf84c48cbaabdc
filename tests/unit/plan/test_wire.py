"""A registration's inputs, a protobuf Struct, read straight into plan values (``readable_struct``):
the same values ``readable(json_format.MessageToDict(struct))`` gives, known answers written out."""

from __future__ import annotations

import math

import pytest
from google.protobuf import struct_pb2

from components.plan.wire import readable_struct

# The SDK's wire markers (pulumi/runtime/rpc.py), written out: secret, resource reference, unknown.
SIG = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


def struct(value: dict) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    message.update(value)
    return message


def test_inputs_are_sorted_with_secrets_hidden_unknowns_marked_and_whole_numbers_ints():
    inputs = struct(
        {
            "zone": "us-east5-a",
            "nodeCount": 2.0,
            "ratio": 1.5,
            "spot": True,
            "taint": None,
            "kubeconfig": {SIG: SECRET_SIG, "value": "apiVersion: v1"},
            "endpoint": UNKNOWN,
            "nodeConfig": {"labels": {"b": "2", "a": "1"}, "oauthScopes": ["x", UNKNOWN, 3.0]},
            "cluster": {SIG: RESOURCE_SIG, "urn": "urn:pulumi:s::p::gcp:c::c", "id": ""},
        }
    )
    read = readable_struct(inputs)
    assert read == {
        "cluster": "urn:pulumi:s::p::gcp:c::c",
        "endpoint": "[unknown]",
        "kubeconfig": "[secret]",
        "nodeConfig": {"labels": {"a": "1", "b": "2"}, "oauthScopes": ["x", "[unknown]", 3]},
        "nodeCount": 2,
        "ratio": 1.5,
        "spot": True,
        "taint": None,
        "zone": "us-east5-a",
    }
    assert list(read) == sorted(read)
    assert list(read["nodeConfig"]["labels"]) == ["a", "b"]
    assert type(read["nodeCount"]) is int and type(read["ratio"]) is float


def test_a_whole_struct_marked_secret_is_one_secret():
    assert readable_struct(struct({SIG: SECRET_SIG, "value": {"password": "x"}})) == "[secret]"


def test_a_reference_gives_its_urn_as_sent_and_a_marker_of_another_kind_is_data():
    assert readable_struct(struct({SIG: RESOURCE_SIG, "urn": "urn:x"})) == "urn:x"
    assert readable_struct(struct({SIG: RESOURCE_SIG})) is None
    assert readable_struct(struct({SIG: "other", "b": 1.0})) == {SIG: "other", "b": 1}


@pytest.mark.parametrize("number", [math.inf, -math.inf, math.nan])
def test_a_number_json_has_no_form_for_is_refused(number):
    with pytest.raises(ValueError, match=r"Value\.number_value"):
        readable_struct(struct({"a": [{"b": number}]}))
