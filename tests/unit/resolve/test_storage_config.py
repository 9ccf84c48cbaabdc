"""Storage in the stack file: bucket volumes, team bucket grants, Lustre and home shares; each
misconfigured mount refused before anything is created, with its key and what to do. One case
that passes next to each refusal, so every check can be seen to fail and to pass."""

from __future__ import annotations

import pytest

from components.resolve.storage import claim_mounts, gcs_volumes, gcsfuse_annotations
from components.resolve.workload_specs import workload_jobset, workload_spec

TRAIN = {
    "name": "train",
    "pool": "v5e",
    "image": "us-docker.pkg.dev/acme/train:1",
    "command": ["python3", "train.py"],
    "resources": {"cpu": "8", "memory": "32Gi"},
}
DATA = {"name": "data", "bucket": "acme-datasets", "mountPath": "/data", "prefix": "imagenet"}
GRANT = {"name": "acme-datasets", "prefix": "imagenet/"}


def values_with(stack_values, volume=DATA, grants=(GRANT,), **workload):
    return stack_values(
        teams=[{"name": "pathways", "buckets": list(grants)}],
        workloads=[{**TRAIN, "volumes": [volume], **workload}],
    )


def messages(error) -> dict[str, str]:
    return {i.key: i.message for i in error.issues}


def test_a_granted_volume_passes_and_mounts_as_the_teams_account(config_of, stack_values):
    config = config_of(values_with(stack_values))
    (volume,) = gcs_volumes(config, config.workloads[0])
    assert (volume.name, volume.bucket, volume.read_only, volume.host_network) == (
        "gcs-data",
        "acme-datasets",
        True,
        True,
    )
    assert gcsfuse_annotations(config, config.workloads[0])["gke-gcsfuse/volumes"] == "true"


def test_a_bucket_the_team_has_no_grant_on_is_refused_naming_the_grant_to_add(
    config_error, stack_values
):
    error = config_error(values_with(stack_values, grants=()))
    assert messages(error)["workloads[0].volumes[0].bucket"] == (
        "the mount acts as the service account of team 'pathways', ns/pathways/sa/pathways "
        "(Workload Identity), which has no grant on gs://acme-datasets/imagenet/, and needs read "
        "(roles/storage.objectViewer); add {name: acme-datasets, access: read, prefix: "
        "imagenet/} to teams[0].buckets (grants to the node service account, dataBuckets, do not "
        "reach a mount)"
    )


def test_a_read_grant_does_not_cover_a_read_write_volume(config_error, stack_values):
    volume = {**DATA, "access": "readWrite", "purpose": "checkpoints"}
    error = config_error(values_with(stack_values, volume=volume))
    assert (
        "has only read access to gs://acme-datasets/imagenet/"
        in messages(error)["workloads[0].volumes[0].bucket"]
    )


def test_a_grant_on_another_prefix_does_not_reach_the_mount(config_error, stack_values):
    grant = {"name": "acme-datasets", "prefix": "other/"}
    error = config_error(values_with(stack_values, grants=(grant,)))
    assert "workloads[0].volumes[0].bucket" in messages(error)


def test_a_node_service_account_grant_does_not_reach_a_mount(config_error, stack_values):
    values = values_with(stack_values, grants=())
    values["dataBuckets"] = [{"name": "acme-datasets"}]
    assert "workloads[0].volumes[0].bucket" in messages(config_error(values))


def test_a_disk_cache_larger_than_the_boot_disk_leaves_is_refused(
    config_error, config_of, stack_values
):
    small = {**DATA, "fileCache": {"size": "100Gi"}}
    # n2-standard-64 with the CPU pool's default 200 GB boot disk: 93.7Gi allocatable
    error = config_error(values_with(stack_values, volume=small))
    assert messages(error)["workloads[0].volumes[0].fileCache.size"] == (
        "the head's Cloud Storage FUSE sidecar needs 105.0Gi of the node's boot disk (5Gi of "
        "its own and the file caches) but cpuPool.diskSizeGb 200 leaves 93.7Gi allocatable "
        "(GKE keeps 10% and up to 100Gi for the system); make the caches smaller, use medium: "
        "memory, or a larger boot disk"
    )
    fits = {**DATA, "fileCache": {"size": "80Gi"}}
    config_of(values_with(stack_values, volume=fits))  # a smaller cache passes


def test_a_memory_cache_the_head_node_cannot_hold_is_refused(config_error, stack_values):
    # n2-standard-64: 256 GB; the head's 32 + 100 GB sidecars and a 32Gi user container leave
    # well under 150Gi more.
    huge = {**DATA, "fileCache": {"size": "150Gi", "medium": "memory"}}
    error = config_error(values_with(stack_values, volume=huge))
    assert messages(error)["workloads[0].volumes[0].fileCache.size"].startswith(
        "an in-memory file cache no longer fits the head's node:"
    )


def test_host_network_volumes_on_a_cluster_of_unknown_version_are_refused(
    config_error, config_of, stack_values
):
    values = values_with(stack_values)
    values["cluster"] = {"name": "pathways-dev", "existing": {"name": "c", "location": "us-west4"}}
    values["scratchBucket"] = {"name": "acme-pathways-scratch"}
    error = config_error(values)
    assert messages(error)["workloads[0].volumes"].startswith(
        "the head runs on the host network, where the Cloud Storage FUSE driver mounts a bucket "
        "as the pod's service account (hostNetworkPodKSA) only from GKE 1.33.3-gke.1226000"
    )
    values["cluster"]["existing"]["gkeVersion"] = "1.33.2-gke.4655000"
    assert "workloads[0].volumes" in messages(config_error(values))
    values["cluster"]["existing"]["gkeVersion"] = "1.33.3-gke.1226000"
    config_of(values)


def test_off_the_host_network_no_version_is_needed_and_the_volume_names_no_ksa(
    config_of, stack_values
):
    values = values_with(stack_values, backend="jobset", hostNetwork=False)
    values["cluster"] = {"name": "pathways-dev", "existing": {"name": "c", "location": "us-west4"}}
    values["scratchBucket"] = {"name": "acme-pathways-scratch"}
    config = config_of(values)
    (volume,) = gcs_volumes(config, config.workloads[0])
    assert not volume.host_network


@pytest.mark.parametrize(
    ("volume", "key", "start"),
    [
        ({**DATA, "mountPath": "/tmp/data"}, "workloads[0].volumes[0].mountPath", "'/tmp/data'"),
        ({**DATA, "mountPath": "/data/../x"}, "workloads[0].volumes[0].mountPath", "'/data/../x'"),
        ({**DATA, "prefix": "../other"}, "workloads[0].volumes[0].prefix", "'../other'"),
        (
            {**DATA, "mountOptions": ["temp-dir=/x"]},
            "workloads[0].volumes[0].mountOptions[0]",
            "'temp-dir=/x' cannot be set here",
        ),
        (
            {**DATA, "purpose": "trainingData", "access": "readWrite"},
            "workloads[0].volumes[0].access",
            "trainingData mounts are read-only",
        ),
        ({**DATA, "fileCache": {"size": "lots"}}, "workloads[0].volumes[0].fileCache.size", ""),
    ],
)
def test_a_misconfigured_mount_is_refused_naming_its_key(
    config_error, stack_values, volume, key, start
):
    assert messages(config_error(values_with(stack_values, volume=volume)))[key].startswith(start)


def test_volumes_on_a_headless_workload_are_refused(config_error, stack_values):
    values = stack_values(workloads=[{"name": "nb", "pool": "v5e", "mode": "headless"}])
    values["workloads"][0]["volumes"] = [DATA]
    assert messages(config_error(values))["workloads[0].volumes"] == (
        "headless workloads have no user container to mount into"
    )


def test_both_backends_carry_the_sidecar_annotations_where_the_head_gets_them(
    config_of, stack_values
):
    config = config_of(values_with(stack_values))
    workload = config.workloads[0]
    spec = workload_spec(config, workload, {})
    assert "metadata" not in spec.controller.template  # the controller ignores the template's
    jobset = workload_jobset(config, workload, {})
    head = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert head["metadata"]["annotations"]["gke-gcsfuse/volumes"] == "true"
    volumes = spec.controller.template["spec"]["volumes"]
    assert [v["name"] for v in volumes] == ["shared-tmp", "gcs-data"]


LUSTRE = {"name": "ckpt", "teams": ["pathways"], "capacityGib": 18000}


def test_lustre_and_home_shares_mount_as_the_teams_claims(config_of, stack_values):
    values = stack_values(
        lustre=[LUSTRE],
        homeDirs={},
        workloads=[{**TRAIN, "lustre": ["ckpt"], "homeDir": True}],
    )
    config = config_of(values)
    assert [(c.claim, c.mount_path) for c in claim_mounts(config, config.workloads[0])] == [
        ("lustre-ckpt", "/lustre/ckpt"),
        ("home", "/home/shared"),
    ]


@pytest.mark.parametrize(
    ("lustre", "key", "message"),
    [
        (
            {**LUSTRE, "capacityGib": 10000},
            "lustre[0].capacityGib",
            "10000 does not fit throughput 1000: at least 9000 GiB, in steps of 9000",
        ),
        ({**LUSTRE, "teams": ["nlp"]}, "lustre[0].teams[0]", "'nlp' is not a team of this stack"),
        (
            {**LUSTRE, "peeringRange": "10.4.0.0/20"},
            "lustre[0].peeringRange",
            "'10.4.0.0/20' overlaps cluster.network.podsCidr '10.4.0.0/14'",
        ),
    ],
)
def test_a_misconfigured_lustre_is_refused_naming_its_key(
    config_error, stack_values, lustre, key, message
):
    assert messages(config_error(stack_values(lustre=[lustre])))[key] == message


def test_a_workload_naming_a_lustre_its_team_is_not_given_is_refused(config_error, stack_values):
    values = stack_values(
        teams=[{"name": "pathways"}, {"name": "nlp"}],
        lustre=[{**LUSTRE, "teams": ["nlp"]}],
        workloads=[{**TRAIN, "lustre": ["ckpt"]}],
    )
    assert messages(config_error(values))["workloads[0].lustre[0]"] == (
        "'ckpt' is not given to team 'pathways' (its teams: nlp); add the team to lustre[].teams"
    )


def test_filestore_capacity_outside_the_tier_is_refused(config_error, stack_values):
    error = config_error(stack_values(homeDirs={"tier": "BASIC_SSD", "capacityGib": 2048}))
    assert messages(error)["homeDirs.capacityGib"] == (
        "2048 is outside what tier BASIC_SSD takes: 2560-65433 GiB"
    )
