"""ScratchBucket from its Args: the bucket, the node identity's grant and each team's
prefix-only Workload Identity grant."""

from __future__ import annotations

import pytest

from components.addons.scratch_bucket import (
    ScratchBucket,
    ScratchBucketArgs,
    TeamNodeAccount,
    WorkloadAccount,
)
from components.pathways.bucket_conditions import MAX_LOGICAL_OPERATORS
from tests.components.harness import register
from tests.helpers import logical_operators

BUCKET = "gcp:storage/bucket:Bucket"
MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
NODES = "nodes@acme-ml.iam.gserviceaccount.com"
LISTED = 'api.getAttribute("storage.googleapis.com/objectListPrefix", "")'
# The shared pools' condition, written out: every object but those under _/ (the dedicated
# teams' prefixes), every list but those of "", "_" and under "_/".
SHARED_NODES = {
    "title": "shared pools: not the dedicated teams' _/",
    "description": "Objects of gs://acme-scratch outside _/, where the teams with dedicated "
    "pools keep their prefixes, and lists that show no name under it",
    "expression": (
        '(resource.name.startsWith("projects/_/buckets/acme-scratch/objects/") && '
        '!resource.name.startsWith("projects/_/buckets/acme-scratch/objects/_/")) || '
        '(!resource.name.startsWith("projects/_/buckets/acme-scratch/objects/") && '
        f'{LISTED} != "" && {LISTED} != "_" && !{LISTED}.startsWith("_/"))'
    ),
}


def bucket(**overrides):
    values = {
        "project": "acme-ml",
        "region": "us-east5",
        "bucket_name": "acme-scratch",
        "workload_accounts": [WorkloadAccount("research", "pathways", "research/")],
        "node_service_account": NODES,
        **overrides,
    }
    args = ScratchBucketArgs(**values)

    def build():
        created = ScratchBucket("s", args)
        return {"name": created.bucket_name, "url": created.url}

    return register(build)


@pytest.fixture(scope="module")
def created():
    return bucket(team="ml", retention_days=7, protect=True)


def test_the_bucket(created):
    scratch = created.one(BUCKET, "s")
    assert scratch.inputs["name"] == "acme-scratch"
    assert scratch.inputs["location"] == "US-EAST5"
    assert scratch.inputs["uniformBucketLevelAccess"] is True
    assert scratch.inputs["publicAccessPrevention"] == "enforced"
    assert scratch.inputs["lifecycleRules"] == [
        {"action": {"type": "Delete"}, "condition": {"age": 7}}
    ]
    assert scratch.inputs["labels"] == {
        "managed-by": "tpu-pathways",
        "purpose": "pathways-scratch",
        "team": "ml",
    }
    assert scratch.options == {
        "protect": True,
        "retainOnDelete": True,
        "ignoreChanges": ["location"],
    }
    assert created.outputs == {"name": "acme-scratch", "url": "gs://acme-scratch"}


def test_the_node_identity_gets_the_bucket_but_the_dedicated_root(created):
    """Also with no dedicated team here: another stack's may keep its data in this bucket."""
    grant = created.one(MEMBER, "s-nodes")
    assert grant.inputs == {
        "bucket": "acme-scratch",
        "role": "roles/storage.objectUser",
        "member": f"serviceAccount:{NODES}",
        "condition": SHARED_NODES,
    }


def dedicated(count: int) -> list[TeamNodeAccount]:
    """``count`` dedicated teams with long names (each would have cost one operator a letter)."""
    return [
        TeamNodeAccount(f"speech-team-{i}", f"_/speech-team-{i}/", f"t{i}@acme-ml.iam.x")
        for i in range(count)
    ]


@pytest.mark.parametrize("count", [0, 1, 5, 50])
def test_the_shared_nodes_condition_is_the_same_for_any_number_of_dedicated_teams(count):
    planned = bucket(team_node_accounts=dedicated(count))
    condition = planned.one(MEMBER, "s-nodes").inputs["condition"]
    assert condition == SHARED_NODES
    assert logical_operators(condition["expression"]) == 8 <= MAX_LOGICAL_OPERATORS
    assert len(planned.of_type(MEMBER)) == 2 + count  # the shared nodes, research, each team


def test_a_dedicated_teams_nodes_get_its_prefix_under_the_root():
    planned = bucket(team_node_accounts=dedicated(1))
    grant = planned.one(MEMBER, "s-speech-team-0-nodes")
    assert grant.inputs["member"] == "serviceAccount:t0@acme-ml.iam.x"
    assert grant.inputs["condition"] == {
        "title": "team speech-team-0 prefix only",
        "description": "Objects under gs://acme-scratch/_/speech-team-0/ and lists of that prefix",
        "expression": (
            'resource.name.startsWith("projects/_/buckets/acme-scratch/objects/_/speech-team-0/")'
            f' || {LISTED}.startsWith("_/speech-team-0/")'
        ),
    }


def test_a_workload_account_gets_the_prefix_it_is_given():
    accounts = [WorkloadAccount("nlp", "pathways", "_/nlp/")]
    grant = bucket(workload_accounts=accounts).one(MEMBER, "s-nlp-pathways")
    assert grant.inputs["condition"]["expression"] == (
        'resource.name.startsWith("projects/_/buckets/acme-scratch/objects/_/nlp/") || '
        f'{LISTED}.startsWith("_/nlp/")'
    )


def test_a_team_account_gets_its_prefix_only(created):
    grant = created.one(MEMBER, "s-research-pathways")
    assert grant.inputs["role"] == "roles/storage.objectUser"
    condition = grant.inputs["condition"]
    assert condition["title"] == "team research prefix only"
    assert condition["expression"] == (
        'resource.name.startsWith("projects/_/buckets/acme-scratch/objects/research/") || '
        'api.getAttribute("storage.googleapis.com/objectListPrefix", "")'
        '.startsWith("research/")'
    )


def test_an_existing_bucket_is_only_granted():
    existing = bucket(create=False)
    assert existing.of_type(BUCKET) == []
    assert existing.names(MEMBER) == ["s-nodes", "s-research-pathways"]
    assert existing.outputs == {"name": "acme-scratch", "url": "gs://acme-scratch"}
