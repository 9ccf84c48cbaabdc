"""Cloud Storage FUSE and claim volumes of a Pathways head pod (components.pathways.volumes): the
mount options Google recommends per purpose, the inline CSI volume, the sidecar annotations, and
both backends modelling the injected sidecar alike. Expected values are literals read from the
sources the module cites, not recomputed."""

from __future__ import annotations

import pytest

from components.gke_versions import CHANNEL_FLOOR, GCS_FUSE_HOST_NETWORK, GkeVersion
from components.pathways.controller_model import expand
from components.pathways.head_sizing import PROXY, RESOURCE_MANAGER, PodResources
from components.pathways.jobset import render_jobset
from components.pathways.jobset_pods import expand_jobset
from components.pathways.spec import Controller, DeploymentMode, PathwaysJobSpec, Worker
from components.pathways.user_container import UserContainer
from components.pathways.volumes import (
    CacheMedium,
    ClaimMount,
    GcsVolume,
    Purpose,
    option_problem,
    sidecar_annotations,
    sidecar_ephemeral_bytes,
    sidecar_requests,
)
from components.tpu.machines import ephemeral_allocatable_bytes

DATA = GcsVolume(
    "gcs-data",
    "my-dataset",
    "/data",
    prefix="imagenet/",
    purpose=Purpose.TRAINING_DATA,
    cache_mib=102400,
)
CHECKPOINTS = GcsVolume(
    "gcs-ckpt", "my-ckpts", "/checkpoints", read_only=False, purpose=Purpose.CHECKPOINTS
)


def test_training_data_mounts_with_googles_read_heavy_options_and_only_its_directory():
    assert DATA.mount_options() == [
        "implicit-dirs",
        "metadata-cache:ttl-secs:-1",
        "metadata-cache:stat-cache-max-size-mb:-1",
        "metadata-cache:negative-ttl-secs:0",
        "metadata-cache:type-cache-max-size-mb:-1",
        "file-system:kernel-list-cache-ttl-secs:-1",
        "file-cache:max-size-mb:102400",
        "file-cache:cache-file-for-range-read:true",
        "file-cache:enable-parallel-downloads:true",
        "only-dir=imagenet",
    ]


def test_checkpoints_keep_the_metadata_cache_but_no_kernel_list_cache_nor_rename_limit():
    assert CHECKPOINTS.mount_options() == [
        "implicit-dirs",
        "metadata-cache:ttl-secs:-1",
        "metadata-cache:stat-cache-max-size-mb:-1",
        "metadata-cache:negative-ttl-secs:0",
    ]


def test_the_inline_volume_acts_as_the_pods_service_account_on_the_host_network():
    assert CHECKPOINTS.pod_volume() == {
        "name": "gcs-ckpt",
        "csi": {
            "driver": "gcsfuse.csi.storage.gke.io",
            "readOnly": False,
            "volumeAttributes": {
                "bucketName": "my-ckpts",
                "mountOptions": "implicit-dirs,metadata-cache:ttl-secs:-1,"
                "metadata-cache:stat-cache-max-size-mb:-1,metadata-cache:negative-ttl-secs:0",
                "disableMetrics": "false",
                "hostNetworkPodKSA": "true",
            },
        },
    }
    off_host = GcsVolume("v", "b", "/v", host_network=False, metrics=False)
    attributes = off_host.pod_volume()["csi"]["volumeAttributes"]
    assert "hostNetworkPodKSA" not in attributes
    assert attributes["disableMetrics"] == "true"


def test_sidecar_annotations_reserve_the_disk_cache_and_leave_cpu_and_memory_unlimited():
    assert sidecar_annotations([DATA, CHECKPOINTS]) == {
        "gke-gcsfuse/volumes": "true",
        "gke-gcsfuse/cpu-request": "250m",
        "gke-gcsfuse/cpu-limit": "0",
        "gke-gcsfuse/memory-request": "256Mi",
        "gke-gcsfuse/memory-limit": "0",
        # 5Gi the sidecar's own default, 100Gi the cache
        "gke-gcsfuse/ephemeral-storage-request": "107520Mi",
        "gke-gcsfuse/ephemeral-storage-limit": "107520Mi",
    }
    assert sidecar_annotations([]) == {}


def test_a_memory_cache_is_the_pods_own_cache_volume_and_counts_as_sidecar_memory():
    in_memory = GcsVolume("d", "b", "/d", cache_mib=2048, cache_medium=CacheMedium.MEMORY)
    template = UserContainer("img", ["python"], volumes=[in_memory]).pod_template(
        DeploymentMode.DEFAULT
    )
    assert template["spec"]["volumes"][-1] == {
        "name": "gke-gcsfuse-cache",
        "emptyDir": {"medium": "Memory", "sizeLimit": "2048Mi"},
    }
    annotations = sidecar_annotations([in_memory])
    assert annotations["gke-gcsfuse/memory-request"] == "2304Mi"
    assert annotations["gke-gcsfuse/ephemeral-storage-request"] == "5120Mi"
    assert sidecar_requests(annotations) == PodResources(250, 2304 * 2**20)
    assert sidecar_ephemeral_bytes(annotations) == 5 * 2**30


def test_volumes_go_on_the_user_container_only():
    claim = ClaimMount("home", "home", "/home/shared")
    container = UserContainer("img", ["python"], volumes=[DATA], claims=[claim])
    spec = container.pod_template(DeploymentMode.DEFAULT, "cpu-np")["spec"]
    assert [m["mountPath"] for m in spec["containers"][0]["volumeMounts"]] == [
        "/tmp",
        "/data",
        "/home/shared",
    ]
    assert spec["volumes"][2] == {"name": "home", "persistentVolumeClaim": {"claimName": "home"}}
    # The PathwaysJob controller ignores the template's annotations: none are put there.
    assert "metadata" not in container.pod_template(DeploymentMode.DEFAULT)


def test_a_mount_path_used_twice_in_the_pod_is_refused_with_its_key():
    with pytest.raises(Exception, match=r"volumes\[0\]\.mountPath: '/tmp' is used twice"):
        UserContainer("img", ["python"], volumes=[GcsVolume("a", "b", "/tmp")])


@pytest.mark.parametrize(
    ("option", "refused"),
    [
        ("file-system:rename-dir-limit:200000", False),
        ("app-name=mine", True),
        ("temp-dir=/x", True),
        ("only-dir=other", True),
        ("file-cache:max-size-mb:10", True),
        ("file-cache:enable-parallel-downloads:true", False),
    ],
)
def test_options_gke_refuses_or_the_stack_sets_are_refused(option, refused):
    assert (option_problem(option) is not None) is refused


def _spec() -> PathwaysJobSpec:
    template = UserContainer("img", ["python"], volumes=[DATA]).pod_template(
        DeploymentMode.DEFAULT, "cpu-np"
    )
    return PathwaysJobSpec(
        workers=[Worker(type="ct5lp-hightpu-4t", topology="2x4", num_slices=1)],
        controller=Controller(
            deployment_mode=DeploymentMode.DEFAULT, main_container_name="main", template=template
        ),
    )


def test_both_backends_model_the_injected_sidecar_beside_the_head_alike():
    spec, annotations = _spec(), sidecar_annotations([DATA])
    jobset = render_jobset("job", "team", spec, head_annotations=annotations)
    head_template = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert head_template["metadata"]["annotations"] == annotations
    worker_template = jobset["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]
    assert "metadata" not in worker_template
    from_jobset = expand_jobset(jobset).head.resources
    from_controller = expand("job", "team", spec, annotations).head.resources
    user = PodResources(24_000, 100 * 2**30)
    expected = RESOURCE_MANAGER + PROXY + user + PodResources(250, 256 * 2**20)
    assert from_jobset == from_controller == expected
    assert expand("job", "team", spec).head.resources == RESOURCE_MANAGER + PROXY + user


def test_a_100_gib_boot_disk_leaves_what_gke_nodes_report_allocatable():
    # `kubectl describe node` of a GKE node with a 100 GiB COS boot disk: capacity 98831908Ki,
    # allocatable ephemeral-storage 47060071478 (plan-node-sizes' reservation formula).
    assert ephemeral_allocatable_bytes(100) == 47060071478
    # Other sizes err towards refusing: below what the disk less 10% and the reservation leaves.
    assert ephemeral_allocatable_bytes(200) < 200 * 2**30 * 0.9 - (6 * 2**30 + 0.35 * 200 * 2**30)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1.34", (34, 0, 0)), ("1.33.3-gke.1226000", (33, 3, 1226000))],
)
def test_gke_versions_read(text, expected):
    assert GkeVersion.parse(text) == GkeVersion(*expected)


def test_gke_versions_compare_numerically_not_as_text():
    assert GkeVersion.parse("1.33.10-gke.1") > GkeVersion.parse("1.33.3-gke.1226000")
    assert GCS_FUSE_HOST_NETWORK.supported_by(GkeVersion.parse("1.34"))
    assert not GCS_FUSE_HOST_NETWORK.supported_by(GkeVersion.parse("1.33.3-gke.1225999"))
    assert not GCS_FUSE_HOST_NETWORK.supported_by(None)
    assert GCS_FUSE_HOST_NETWORK.supported_by(CHANNEL_FLOOR)


@pytest.mark.parametrize("text", ["1.34.1", "v1.34", "2.0", "1.34.1-gke", ""])
def test_what_is_no_gke_version_is_refused(text):
    with pytest.raises(ValueError, match="is not a GKE version"):
        GkeVersion.parse(text)


def test_a_hand_written_fuse_volume_the_driver_would_not_mount_is_refused_with_its_key():
    """Through the Python API: a template's FUSE volume without hostNetworkPodKSA on the host
    network, and a PathwaysJob without the injection annotation."""
    from components.pathways.preflight import preflight_job

    spec = _spec()
    template = spec.controller.template
    del template["spec"]["volumes"][1]["csi"]["volumeAttributes"]["hostNetworkPodKSA"]
    report = preflight_job("job", "team", spec, [])
    keys = {i.key: i.message for i in report.issues}
    assert keys["spec.controller.template.spec.volumes[1]"].startswith(
        "PathwaysJob 'team/job': a Cloud Storage FUSE volume without the annotation "
        'gke-gcsfuse/volumes: "true" on the head pod'
    )
    assert keys["spec.controller.template.spec.volumes[1].csi.volumeAttributes.hostNetworkPodKSA"]
    good = preflight_job("job", "team", _spec(), [], annotations=sidecar_annotations([DATA]))
    assert not [i for i in good.issues if "volumes[" in i.key]
