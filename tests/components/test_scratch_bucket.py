"""ScratchBucket from its Args: the bucket, the node identity's grant and each team's
prefix-only Workload Identity grant."""

from __future__ import annotations

import pytest

from components.addons.scratch_bucket import ScratchBucket, ScratchBucketArgs, WorkloadAccount
from tests.components.harness import register

BUCKET = "gcp:storage/bucket:Bucket"
MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
NODES = "nodes@acme-ml.iam.gserviceaccount.com"


def bucket(**overrides):
    args = ScratchBucketArgs(
        project="acme-ml",
        region="us-east5",
        bucket_name="acme-scratch",
        workload_accounts=[WorkloadAccount("research", "pathways")],
        node_service_account=NODES,
        **overrides,
    )

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


def test_the_node_identity_gets_the_bucket(created):
    grant = created.one(MEMBER, "s-nodes")
    assert grant.inputs == {
        "bucket": "acme-scratch",
        "role": "roles/storage.objectUser",
        "member": f"serviceAccount:{NODES}",
    }


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
