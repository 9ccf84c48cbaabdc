"""GkeCluster from its Args: the cluster, its own network (or an existing one), the node
identity and the Pathways ports firewall; ``pool_target()`` for its node pools."""

from __future__ import annotations

import pytest

from components.gke.cluster import AuthorizedNetwork, GkeCluster, GkeClusterArgs
from components.gke.cpu_pool import CpuNodePool, CpuNodePoolArgs
from components.gke.maintenance import MaintenanceExclusion, MaintenanceWindow
from components.gke.node_identity import ImageRepository
from components.vocabulary import Environment, ExclusionScope, ReleaseChannel
from tests.components.harness import register, urn

CLUSTER = "gcp:container/cluster:Cluster"
NETWORK_COMPONENT = "tpu-pathways:network:ClusterNetwork"
NODES = "pathways-nodes@acme-ml.iam.gserviceaccount.com"


def cluster(**overrides):
    args = GkeClusterArgs(
        project="acme-ml", region="us-east5", zone="us-east5-a", name="pathways", **overrides
    )

    def build():
        gke = GkeCluster("pc", args)
        CpuNodePool("pc-cpu", CpuNodePoolArgs("cpu-np", "n2-standard-64", gke.pool_target()))
        return {
            "name": gke.cluster_name,
            "location": gke.location,
            "nodes": gke.node_service_account,
        }

    return register(build)


@pytest.fixture(scope="module")
def default():
    return cluster()


@pytest.fixture(scope="module")
def production():
    return cluster(
        regional=False,
        release_channel=ReleaseChannel.STABLE,
        private_nodes=True,
        authorized_networks=[AuthorizedNetwork("192.0.2.0/24", "office")],
        maintenance_window=MaintenanceWindow(
            "2025-03-03T22:00:00Z", "2025-03-04T04:00:00Z", "FREQ=WEEKLY;BYDAY=MO,TU,WE"
        ),
        maintenance_exclusions=[
            MaintenanceExclusion(
                "hold-nodes", ExclusionScope.NO_MINOR_OR_NODE_UPGRADES, "2025-03-01T00:00:00Z"
            ),
            MaintenanceExclusion(
                "launch",
                ExclusionScope.NO_UPGRADES,
                "2025-06-01T00:00:00Z",
                "2025-06-20T00:00:00Z",
            ),
        ],
        environment=Environment.PRODUCTION,
        team="research",
        protect=True,
        security_group="gke-security-groups@example.com",
        secrets_kms_key="projects/p/locations/us-east5/keyRings/gke/cryptoKeys/secrets",
        binary_authorization=True,
        image_repositories=(ImageRepository("p", "us-east5", "trainers"),),
    )


def test_a_regional_cluster_with_nodes_in_the_zone(default):
    gke = default.one(CLUSTER, "pc")
    assert gke.inputs["name"] == "pathways"
    assert gke.inputs["location"] == "us-east5"
    assert gke.inputs["nodeLocations"] == ["us-east5-a"]
    assert gke.inputs["releaseChannel"] == {"channel": "RAPID"}
    assert gke.inputs["deletionProtection"] is True
    assert gke.inputs["resourceLabels"] == {"managed-by": "tpu-pathways", "environment": "dev"}
    # no authorized network: the IP endpoint is off, the IAM-gated DNS endpoint the way in
    assert "masterAuthorizedNetworksConfig" not in gke.inputs
    assert gke.inputs["controlPlaneEndpointsConfig"] == {
        "dnsEndpointConfig": {"allowExternalTraffic": True},
        "ipEndpointsConfig": {"enabled": False},
    }
    assert "privateClusterConfig" not in gke.inputs
    for optional in ("authenticatorGroupsConfig", "databaseEncryption", "binaryAuthorization"):
        assert optional not in gke.inputs
    assert default.outputs == {"name": "pathways", "location": "us-east5", "nodes": NODES}


def test_a_fleet_workers_dns_endpoint_takes_kubernetes_tokens():
    gke = cluster(kubernetes_tokens_via_dns=True).one(CLUSTER, "pc")
    assert gke.inputs["controlPlaneEndpointsConfig"] == {
        "dnsEndpointConfig": {"allowExternalTraffic": True, "enableK8sTokensViaDns": True},
        "ipEndpointsConfig": {"enabled": False},
    }


def test_its_own_network_and_identity(default):
    gke = default.one(CLUSTER, "pc")
    assert gke.inputs["network"] == "pc-net"
    assert gke.inputs["subnetwork"] == "pc-net-subnet"
    assert gke.inputs["ipAllocationPolicy"] == {
        "clusterSecondaryRangeName": "pods",
        "servicesSecondaryRangeName": "services",
    }
    assert gke.inputs["nodeConfig"]["serviceAccount"] == NODES
    net = default.one(NETWORK_COMPONENT, "pc-net")
    assert net.parent == urn("tpu-pathways:cluster:GkeCluster", "pc")
    allow = default.one("gcp:compute/firewall:Firewall", "pc-pathways-ports-allow")
    assert allow.inputs["sourceRanges"] == ["10.4.0.0/14"]
    assert allow.inputs["sourceServiceAccounts"] == [NODES]


def test_a_zonal_private_production_cluster(production):
    gke = production.one(CLUSTER, "pc")
    assert gke.inputs["location"] == "us-east5-a"
    assert "nodeLocations" not in gke.inputs
    assert gke.inputs["releaseChannel"] == {"channel": "STABLE"}
    assert gke.inputs["privateClusterConfig"] == {"enablePrivateNodes": True}
    assert gke.inputs["masterAuthorizedNetworksConfig"] == {
        "cidrBlocks": [{"cidrBlock": "192.0.2.0/24", "displayName": "office"}],
        "gcpPublicCidrsAccessEnabled": False,
    }
    assert gke.inputs["controlPlaneEndpointsConfig"] == {
        "dnsEndpointConfig": {"allowExternalTraffic": True},
        "ipEndpointsConfig": {"enabled": True},
    }
    assert gke.inputs["authenticatorGroupsConfig"] == {
        "securityGroup": "gke-security-groups@example.com"
    }
    assert gke.inputs["databaseEncryption"] == {
        "state": "ENCRYPTED",
        "keyName": "projects/p/locations/us-east5/keyRings/gke/cryptoKeys/secrets",
    }
    assert gke.inputs["binaryAuthorization"] == {
        "evaluationMode": "PROJECT_SINGLETON_POLICY_ENFORCE"
    }
    assert gke.inputs["resourceLabels"] == {
        "managed-by": "tpu-pathways",
        "environment": "production",
        "team": "research",
    }
    assert production.names("gcp:compute/routerNat:RouterNat") == ["pc-net-nat"]


def test_protect_covers_the_cluster_and_what_it_stands_on(production, default):
    protected = [
        (CLUSTER, "pc"),
        ("gcp:compute/network:Network", "pc-net"),
        ("gcp:serviceaccount/account:Account", "pc-nodes"),
        ("gcp:compute/firewall:Firewall", "pc-pathways-ports-deny"),
    ]
    for type_, name in protected:
        assert production.one(type_, name).options["protect"] is True
    assert default.one(CLUSTER, "pc").options.get("protect") is None


def test_an_existing_network():
    existing = cluster(existing_network="shared-vpc", existing_subnetwork="shared-subnet")
    assert existing.of_type(NETWORK_COMPONENT) == []
    gke = existing.one(CLUSTER, "pc")
    assert gke.inputs["network"] == "shared-vpc"
    assert gke.inputs["subnetwork"] == "shared-subnet"
    assert gke.inputs["ipAllocationPolicy"] == {
        "clusterIpv4CidrBlock": "10.4.0.0/14",
        "servicesIpv4CidrBlock": "10.8.0.0/20",
    }
    allow = existing.one("gcp:compute/firewall:Firewall", "pc-pathways-ports-allow")
    assert allow.inputs["network"] == "shared-vpc"
    # The nodes are known by their account, whatever the existing subnetwork's range.
    assert allow.inputs["sourceRanges"] == ["10.4.0.0/14"]
    assert allow.inputs["sourceServiceAccounts"] == [NODES]


def test_pool_target_places_pools_on_this_cluster(production):
    pool = production.one("gcp:container/nodePool:NodePool", "pc-cpu")
    assert pool.inputs["cluster"] == "pathways"
    assert pool.inputs["location"] == "us-east5-a"
    assert pool.inputs["nodeLocations"] == ["us-east5-a"]
    assert pool.inputs["project"] == "acme-ml"
    assert pool.inputs["nodeConfig"]["serviceAccount"] == NODES
    assert pool.inputs["nodeConfig"]["labels"] == {
        "tpu-pathways/pool": "cpu-np",
        "tpu-pathways/team": "research",
        "tpu-pathways/shared-pool": "true",
    }
    assert pool.options["protect"] is True


def test_every_cluster_is_multi_networking(default, production):
    # a create-time setting: a cluster without it is replaced when a v6e pool is added
    assert default.one(CLUSTER, "pc").inputs["enableMultiNetworking"] is True
    assert production.one(CLUSTER, "pc").inputs["enableMultiNetworking"] is True


def test_the_default_maintenance_window_and_no_exclusion(default):
    assert default.one(CLUSTER, "pc").inputs["maintenancePolicy"] == {
        "recurringWindow": {
            "startTime": "2025-01-04T00:00:00Z",
            "endTime": "2025-01-04T08:00:00Z",
            "recurrence": "FREQ=WEEKLY;BYDAY=SA,SU",
        }
    }


def test_a_window_and_exclusions_until_end_of_support_or_a_fixed_end(production):
    assert production.one(CLUSTER, "pc").inputs["maintenancePolicy"] == {
        "recurringWindow": {
            "startTime": "2025-03-03T22:00:00Z",
            "endTime": "2025-03-04T04:00:00Z",
            "recurrence": "FREQ=WEEKLY;BYDAY=MO,TU,WE",
        },
        "maintenanceExclusions": [
            {
                "exclusionName": "hold-nodes",
                "startTime": "2025-03-01T00:00:00Z",
                "exclusionOptions": {
                    "scope": "NO_MINOR_OR_NODE_UPGRADES",
                    "endTimeBehavior": "UNTIL_END_OF_SUPPORT",
                },
            },
            {
                "exclusionName": "launch",
                "startTime": "2025-06-01T00:00:00Z",
                "endTime": "2025-06-20T00:00:00Z",
                "exclusionOptions": {"scope": "NO_UPGRADES"},
            },
        ],
    }
