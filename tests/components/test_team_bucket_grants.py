"""TeamBucketGrants from its Args: each team's own Workload Identity principal gets the bucket's
narrowest role for the access asked, on the prefix it names (the scratch bucket's condition),
and nobody else anything."""

from __future__ import annotations

import pytest

from components.addons.storage import TeamBucket, TeamBucketGrants, TeamBucketGrantsArgs
from components.pathways.gcs_access import Access
from tests.components.harness import register

MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
COMPONENT = "tpu-pathways:storage:TeamBucketGrants"
PRINCIPAL = (
    "principal://iam.googleapis.com/projects/<looked up at deploy time>/locations/global/"
    "workloadIdentityPools/acme-ml.svc.id.goog/subject/ns/{team}/sa/pathways"
)


@pytest.fixture(scope="module")
def created():
    args = TeamBucketGrantsArgs(
        project="acme-ml",
        grants=(
            TeamBucket("nlp", "pathways", "acme-datasets"),
            TeamBucket("vision", "pathways", "acme-ckpt", Access.READ_WRITE, "vision/"),
        ),
    )
    return register(lambda: TeamBucketGrants("teams", args) and None)


def test_a_whole_bucket_read_grant_names_the_teams_principal(created):
    grant = created.one(MEMBER, "teams-nlp-acme-datasets")
    assert grant.inputs == {
        "bucket": "acme-datasets",
        "role": "roles/storage.objectViewer",
        "member": PRINCIPAL.format(team="nlp"),
    }


def test_a_prefix_grant_reaches_that_prefix_only(created):
    grant = created.one(MEMBER, "teams-vision-acme-ckpt-vision")
    assert grant.inputs["role"] == "roles/storage.objectUser"
    assert grant.inputs["member"] == PRINCIPAL.format(team="vision")
    assert grant.inputs["condition"] == {
        "title": "team vision prefix vision/",
        "description": "Objects under gs://acme-ckpt/vision/ and lists of that prefix",
        "expression": (
            'resource.name.startsWith("projects/_/buckets/acme-ckpt/objects/vision/") || '
            'api.getAttribute("storage.googleapis.com/objectListPrefix", "").startsWith("vision/")'
        ),
    }


def test_nothing_but_the_grants_is_created(created):
    (component,) = created.of_type(COMPONENT)
    assert {r.parent for r in created.of_type(MEMBER)} == {component.urn}
    assert sorted(r.type for r in created.resources if r.custom) == [MEMBER, MEMBER]
