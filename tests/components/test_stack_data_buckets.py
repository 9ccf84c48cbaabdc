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


def test_a_dotted_bucket_name_is_granted_like_any_other(plan_of, stack_values):
    workload = {**TRAIN, "command": ["python3", "train.py", "--data=gs://data.example.com/c4"]}
    plan = plan_of(stack_values(workloads=[workload], dataBuckets=[{"name": "data.example.com"}]))
    assert plan.get(MEMBER, "pathways-dev-data-buckets-data.example.com").inputs == {
        "bucket": "data.example.com",
        "role": "roles/storage.objectViewer",
        "member": DEV_NODES,
    }


RULES = (
    "bucket names are 3-63 lowercase letters, digits, '-', '_' or '.' (up to 222 with dots, 63 "
    "per dot-separated part), start and end with a letter or digit, are not an IP address and "
    "neither start with 'goog' nor contain 'google' or a close misspelling of it such as "
    "'g00gle'"
)


@pytest.mark.parametrize("name", ["Data-Bucket", "a..b", "ab", "google-data", "a" * 64])
def test_data_and_scratch_bucket_names_share_the_gcs_naming_rule(stack_values, config_error, name):
    shown = repr(name)
    data = config_error(stack_values(dataBuckets=[{"name": name}])).issues
    assert [(i.key, i.message) for i in data] == [
        ("dataBuckets[0].name", f"{shown} is not a bucket name; {RULES}")
    ]
    scratch = config_error(stack_values(scratchBucket={"create": False, "name": name})).issues
    assert [(i.key, i.message) for i in scratch] == [
        ("scratchBucket.name", f"{shown} is not a bucket name; {RULES}")
    ]
