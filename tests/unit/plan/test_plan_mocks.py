"""What the offline plan's mocks answer for a registration (components/plan/mocks.py), and which
types they answer with the inputs alone, so the engine may echo them (``PlanMocks.echoes``)."""

from __future__ import annotations

import pytest
from pulumi.runtime.mocks import MockResourceArgs

from components.plan.mocks import PlanMocks

# The types whose outputs the mocks derive from the inputs, or read from another stack: literal
# tokens, written from what a provider gives back (an account's email, a bucket's URL, a
# cluster's endpoint, a Filestore instance's addresses) and from how a StackReference reads.
DERIVED = [
    "gcp:container/cluster:Cluster",
    "gcp:filestore/instance:Instance",
    "gcp:serviceaccount/account:Account",
    "gcp:storage/bucket:Bucket",
    "pulumi:pulumi:StackReference",
]
ECHOED = [
    "gcp:container/nodePool:NodePool",
    "kubernetes:core/v1:Namespace",
    "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob",
    "tpu-pathways:nodepool:TpuNodePool",
]
INPUTS = {
    "name": "n",
    "accountId": "a",
    "project": "p",
    "location": "l",
    "labels": {"team": "t"},
}


def _answer(type_token: str):
    mocks = PlanMocks({"n": {"out": 1}})
    args = MockResourceArgs(type_token, "n", dict(INPUTS), "", "", custom=True)
    return mocks.new_resource(args)


@pytest.mark.parametrize("type_token", ECHOED)
def test_an_echoed_type_is_answered_with_its_inputs_alone_and_no_id(type_token):
    assert PlanMocks().echoes(type_token)
    assert _answer(type_token) == ("", INPUTS)


@pytest.mark.parametrize("type_token", DERIVED)
def test_a_type_with_derived_outputs_is_not_echoed(type_token):
    assert not PlanMocks().echoes(type_token)
    assert _answer(type_token) != ("", INPUTS)
