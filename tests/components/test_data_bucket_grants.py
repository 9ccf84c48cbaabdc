"""DataBucketGrants from its Args: one bucket-scoped IAM member per bucket for the node service
account, with the narrowest role for the access asked, and nothing on the project."""

from __future__ import annotations

import pytest

from components.addons.data_buckets import DataBucketGrant, DataBucketGrants, DataBucketGrantsArgs
from components.pathways.gcs_access import Access
from tests.components.harness import register

MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
COMPONENT = "tpu-pathways:storage:DataBucketGrants"
NODES = "nodes@acme-ml.iam.gserviceaccount.com"


@pytest.fixture(scope="module")
def created():
    args = DataBucketGrantsArgs(
        node_service_account=NODES,
        grants=(
            DataBucketGrant("acme-datasets"),
            DataBucketGrant("acme-checkpoints", Access.READ_WRITE),
        ),
    )
    return register(lambda: DataBucketGrants("data", args) and None)


@pytest.mark.parametrize(
    ("bucket", "role"),
    [
        pytest.param("acme-datasets", "roles/storage.objectViewer", id="read-is-object-viewer"),
        pytest.param(
            "acme-checkpoints", "roles/storage.objectUser", id="read-write-is-object-user"
        ),
    ],
)
def test_each_access_gets_its_role_on_that_bucket_only(created, bucket, role):
    grant = created.one(MEMBER, f"data-{bucket}")
    assert grant.inputs == {
        "bucket": bucket,
        "role": role,
        "member": f"serviceAccount:{NODES}",
    }


def test_grants_are_children_of_the_component_and_nothing_else_is_granted(created):
    (component,) = created.of_type(COMPONENT)
    assert {r.parent for r in created.of_type(MEMBER)} == {component.urn}
    assert sorted(r.type for r in created.resources if r.type != COMPONENT) == [MEMBER, MEMBER]
