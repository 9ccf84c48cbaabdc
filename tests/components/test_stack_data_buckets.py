"""A stack's dataBuckets: bucket-scoped grants for the node service account (the identity every
Pathways pod acts as), which the jobs wait for; none without dataBuckets."""

from __future__ import annotations

import pytest

MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
PROJECT_MEMBER = "gcp:projects/iAMMember:IAMMember"
COMPONENT = "tpu-pathways:storage:DataBucketGrants"
PATHWAYS_JOB = "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob"
DEV_NODES = "serviceAccount:pathways-dev-nodes@tpu-pathways-dev.iam.gserviceaccount.com"
TRAIN = {
    "name": "train",
    "pool": "v5e",
    "image": "us-docker.pkg.dev/cloud-tpu-images/maxtext-images/tpu_pre_training:0.2.3",
    "command": ["python3", "train.py", "--data=gs://acme-datasets/c4"],
    "resources": {"cpu": "8", "memory": "32Gi"},
}


@pytest.fixture(scope="module")
def granted(plan_of, stack_values):
    buckets = [{"name": "acme-datasets"}, {"name": "acme-ckpt", "access": "readWrite"}]
    return plan_of(stack_values(workloads=[TRAIN], dataBuckets=buckets))


def test_each_bucket_gets_one_bucket_scoped_member(granted):
    assert granted.get(MEMBER, "pathways-dev-data-buckets-acme-datasets").inputs == {
        "bucket": "acme-datasets",
        "role": "roles/storage.objectViewer",
        "member": DEV_NODES,
    }
    assert granted.get(MEMBER, "pathways-dev-data-buckets-acme-ckpt").inputs == {
        "bucket": "acme-ckpt",
        "role": "roles/storage.objectUser",
        "member": DEV_NODES,
    }


def test_no_project_wide_storage_role(granted):
    roles = [r.inputs["role"] for r in granted.by_type(PROJECT_MEMBER)]
    assert [r for r in roles if "storage" in r] == []


def test_jobs_wait_for_the_grants(granted):
    job = granted.get(PATHWAYS_JOB, "pathways-dev-pathways-train")
    grants = [r.urn for r in granted.by_type(MEMBER) if "data-buckets" in r.name]
    assert len(grants) == 2
    assert set(grants) <= set(job.dependencies)


def test_no_data_buckets_no_component(plan_of, stack_values):
    assert plan_of(stack_values()).by_type(COMPONENT) == []
