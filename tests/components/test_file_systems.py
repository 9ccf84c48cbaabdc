"""ManagedLustre and FilestoreHomes from their Args: the instance in the stack's VPC and, per team
given it, a PersistentVolume bound (claimRef) to one claim of that team's namespace."""

from __future__ import annotations

import pytest

from components.addons.file_systems import (
    FilestoreHomes,
    FilestoreHomesArgs,
    HomeShare,
    LustreSystem,
    ManagedLustre,
    ManagedLustreArgs,
)
from components.plan.render import manifest
from components.vocabulary import FilestoreTier
from tests.components.harness import k8s_provider, register

LUSTRE = "gcp:lustre/instance:Instance"
FILESTORE = "gcp:filestore/instance:Instance"
PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
ADDRESS = "gcp:compute/globalAddress:GlobalAddress"
PEERING = "gcp:servicenetworking/connection:Connection"
FIREWALL = "gcp:compute/firewall:Firewall"


@pytest.fixture(scope="module")
def lustre():
    def build():
        ManagedLustre(
            "c-lustre",
            ManagedLustreArgs(
                project="acme-ml",
                zone="us-east5-a",
                network="c-net",
                node_service_account="nodes@acme-ml.iam.gserviceaccount.com",
                systems=(
                    LustreSystem(
                        "ckpt", "c-ckpt", "ckpt", 18000, 500, {"nlp": "nlp"}, "10.64.0.0/20"
                    ),
                ),
                provider=k8s_provider(),
                protect=True,
            ),
        )

    return register(build)


def test_the_instance_is_in_the_vpc_at_its_tier(lustre):
    (instance,) = lustre.of_type(LUSTRE)
    assert {k: instance.inputs[k] for k in instance.inputs if k != "labels"} == {
        "project": "acme-ml",
        "location": "us-east5-a",
        "instanceId": "c-ckpt",
        "filesystem": "ckpt",
        "capacityGib": "18000",
        "perUnitStorageThroughput": "500",
        "network": "projects/acme-ml/global/networks/c-net",
        "deletionPolicy": "PREVENT",
    }
    assert instance.options["protect"] is True


def test_private_services_access_and_the_lustre_port_to_the_nodes(lustre):
    (address,) = lustre.of_type(ADDRESS)
    assert (address.inputs["address"], address.inputs["prefixLength"]) == ("10.64.0.0", 20)
    assert address.inputs["purpose"] == "VPC_PEERING"
    (peering,) = lustre.of_type(PEERING)
    assert peering.inputs["service"] == "servicenetworking.googleapis.com"
    (instance,) = lustre.of_type(LUSTRE)
    assert peering.urn in instance.dependencies
    (rule,) = lustre.of_type(FIREWALL)
    assert rule.inputs["allows"] == [{"protocol": "tcp", "ports": ["988"]}]
    assert rule.inputs["sourceRanges"] == ["10.64.0.0/20"]
    assert rule.inputs["targetServiceAccounts"] == ["nodes@acme-ml.iam.gserviceaccount.com"]


def test_the_team_gets_a_volume_bound_to_its_claim_only(lustre):
    (pv,) = lustre.of_type(PV)
    spec = manifest(pv)["spec"]
    assert spec["claimRef"] == {"namespace": "nlp", "name": "lustre-ckpt"}
    assert spec["storageClassName"] == ""
    assert spec["persistentVolumeReclaimPolicy"] == "Retain"
    assert spec["csi"]["driver"] == "lustre.csi.storage.gke.io"
    assert spec["csi"]["volumeHandle"] == "acme-ml/us-east5-a/c-ckpt"
    assert spec["csi"]["volumeAttributes"]["filesystem"] == "ckpt"
    (pvc,) = lustre.of_type(PVC)
    assert manifest(pvc)["metadata"] == {"name": "lustre-ckpt", "namespace": "nlp"}
    assert manifest(pvc)["spec"]["resources"] == {"requests": {"storage": "18000Gi"}}


@pytest.fixture(scope="module")
def homes():
    def build():
        FilestoreHomes(
            "c-homes",
            FilestoreHomesArgs(
                project="acme-ml",
                region="us-east5",
                zone="us-east5-a",
                network="c-net",
                nodes_range="10.0.0.0/20",
                shares=(HomeShare("nlp", "c-home-nlp", "nlp"), HomeShare("cv", "c-home-cv", "cv")),
                provider=k8s_provider(),
                tier=FilestoreTier.ZONAL,
                capacity_gib=2048,
            ),
        )

    return register(build)


def test_each_team_gets_its_own_filestore_instance_and_claim(homes):
    instances = {r.inputs["name"]: r.inputs for r in homes.of_type(FILESTORE)}
    assert sorted(instances) == ["c-home-cv", "c-home-nlp"]
    nlp = instances["c-home-nlp"]
    assert (nlp["tier"], nlp["location"]) == ("ZONAL", "us-east5-a")
    assert nlp["fileShares"] == {
        "name": "home",
        "capacityGb": 2048,
        "nfsExportOptions": [
            {
                "ipRanges": ["10.0.0.0/20"],
                "accessMode": "READ_WRITE",
                "squashMode": "NO_ROOT_SQUASH",
            }
        ],
    }
    claims = {
        (manifest(r)["spec"]["claimRef"]["namespace"], manifest(r)["spec"]["csi"]["volumeHandle"])
        for r in homes.of_type(PV)
    }
    assert claims == {
        ("nlp", "modeInstance/us-east5-a/c-home-nlp/home"),
        ("cv", "modeInstance/us-east5-a/c-home-cv/home"),
    }
