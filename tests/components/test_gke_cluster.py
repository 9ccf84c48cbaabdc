"""GkeCluster from its Args: the cluster, its own network (or an existing one), the node
identity and the Pathways ports firewall; ``pool_target()`` for its node pools."""

from __future__ import annotations

from dataclasses import replace

import pulumi
import pulumi_gcp as gcp
import pytest

from components.errors import ConfigError
from components.gke.cluster import AuthorizedNetwork, GkeCluster, GkeClusterArgs
from components.gke.cpu_pool import CpuNodePool, CpuNodePoolArgs
from components.gke.maintenance import MaintenanceExclusion, MaintenanceWindow
from components.gke.network import TeamPodRange
from components.gke.node_identity import ImageRepository
from components.tokens import GET_SUBNETWORK
from components.vocabulary import Environment, ExclusionScope, ReleaseChannel
from tests.components.harness import SubnetworkWithRanges, register, urn

# What the offline plan's mock engine answers for the lookup: no primary range (a placeholder)
# and no secondary ranges; it looks nothing up (components.plan.mocks).
OFFLINE = "<looked up at deploy time>"

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


# --- a dedicated team's Pod range on an existing subnetwork, checked against GCP's ----------

NODE_POOL = "gcp:container/nodePool:NodePool"
FIREWALL = "gcp:compute/firewall:Firewall"
NLP_RANGE = TeamPodRange(
    "10.64.0.0/16", "nlp-pods", ("teamCpuPools[0].podsRange", "teamCpuPools[0].podsCidr")
)


# A cluster in the existing subnetwork shared-subnet of the VPC shared-vpc (of its own project).
ON_SHARED_SUBNET = GkeClusterArgs(
    project="acme-ml",
    region="us-east5",
    zone="us-east5-a",
    name="pathways",
    existing_network="shared-vpc",
    existing_subnetwork="shared-subnet",
)


def on_shared_subnet(mocks: SubnetworkWithRanges, team_range: TeamPodRange = NLP_RANGE):
    args = replace(ON_SHARED_SUBNET, dedicated_teams=("nlp",), team_pod_ranges={"nlp": team_range})

    def build():
        gke = GkeCluster("pc", args)
        CpuNodePool("pc-cpu", CpuNodePoolArgs("cpu-np", "n2-standard-64", gke.pool_target()))
        nlp = CpuNodePoolArgs("nlp-cpu", "n2-standard-64", gke.pool_target("nlp"))
        CpuNodePool("pc-nlp-cpu", nlp)
        return {"name": gke.cluster_name, "nodes_range": gke.nodes_range}

    return register(build, mocks)


def test_a_team_range_the_subnetwork_has_is_taken_by_name():
    mocks = SubnetworkWithRanges({"gke-pods": "10.4.0.0/14", "nlp-pods": "10.64.0.0/16"})
    registered = on_shared_subnet(mocks)
    gke = registered.one(CLUSTER, "pc")
    assert (gke.inputs["network"], gke.inputs["subnetwork"]) == ("shared-vpc", "shared-subnet")
    nlp = registered.one(NODE_POOL, "pc-nlp-cpu")
    assert nlp.inputs["networkConfig"] == {"podRange": "nlp-pods"}
    assert "networkConfig" not in registered.one(NODE_POOL, "pc-cpu").inputs
    allow = registered.one(FIREWALL, "pc-nlp-pathways-ports-allow")
    assert allow.inputs["sourceRanges"] == ["10.64.0.0/16"]
    assert registered.names(FIREWALL) == [
        "pc-nlp-pathways-ports-allow",
        "pc-nlp-pathways-ports-deny",
        "pc-pathways-ports-allow",
        "pc-pathways-ports-deny",
    ]
    # the nodes' range is the subnetwork's primary range, as GCP answered it (awaited): the
    # mock's 10.128.0.0/20, not the default nodes_cidr 10.0.0.0/20 of a created subnetwork
    assert registered.outputs["nodes_range"] == "10.128.0.0/20"
    assert mocks.invoked == [GET_SUBNETWORK]


def test_a_checked_range_registers_every_resource():
    """A check that passes takes nothing away: every resource is registered, the node service
    accounts and their roles too, as in the preview that skips the check (no ranges)."""
    checked = SubnetworkWithRanges({"nlp-pods": "10.64.0.0/16"})
    on_shared_subnet(checked)
    assert sorted(checked.created) == [
        (FIREWALL, "pc-nlp-pathways-ports-allow"),
        (FIREWALL, "pc-nlp-pathways-ports-deny"),
        (FIREWALL, "pc-pathways-ports-allow"),
        (FIREWALL, "pc-pathways-ports-deny"),
        (CLUSTER, "pc"),
        (NODE_POOL, "pc-cpu"),
        (NODE_POOL, "pc-nlp-cpu"),
        ("gcp:projects/iAMMember:IAMMember", "pc-nlp-nodes-default-node-sa"),
        ("gcp:projects/iAMMember:IAMMember", "pc-nodes-default-node-sa"),
        ("gcp:serviceaccount/account:Account", "pc-nlp-nodes"),
        ("gcp:serviceaccount/account:Account", "pc-nodes"),
        ("pulumi:providers:kubernetes", "pc-k8s"),
        ("tpu-pathways:cluster:GkeCluster", "pc"),
        ("tpu-pathways:iam:NodeServiceAccount", "pc-nlp-nodes"),
        ("tpu-pathways:iam:NodeServiceAccount", "pc-nodes"),
        ("tpu-pathways:network:PathwaysPortsFirewall", "pc-nlp-pathways-ports"),
        ("tpu-pathways:network:PathwaysPortsFirewall", "pc-pathways-ports"),
        ("tpu-pathways:nodepool:CpuNodePool", "pc-cpu"),
        ("tpu-pathways:nodepool:CpuNodePool", "pc-nlp-cpu"),
    ]
    skipped = SubnetworkWithRanges(None, OFFLINE)
    on_shared_subnet(skipped)
    assert sorted(skipped.created) == sorted(checked.created)


def failed_run(mocks: SubnetworkWithRanges) -> str:
    """The message the program fails with, once it is known that the engine was sent no
    registration at all: not the cluster's component, nor a service account, nor a rule."""
    with pytest.raises(ConfigError) as caught:
        on_shared_subnet(mocks)
    assert mocks.created == []
    assert mocks.invoked == [GET_SUBNETWORK]
    return str(caught.value)


def test_a_team_range_with_other_addresses_registers_nothing():
    mocks = SubnetworkWithRanges({"gke-pods": "10.4.0.0/14", "nlp-pods": "10.65.0.0/16"})
    assert failed_run(mocks) == (
        "the secondary ranges of subnetwork 'shared-subnet': 1 problem\n"
        "  - teamCpuPools[0].podsCidr: secondary range 'nlp-pods' of subnetwork 'shared-subnet' "
        "has 10.65.0.0/16, but teamCpuPools[0].podsCidr says 10.64.0.0/16: the team's Pathways "
        "ports would admit the wrong Pods; set it to 10.65.0.0/16"
    )


def test_a_team_range_the_subnetwork_lacks_registers_nothing_and_names_what_it_has():
    mocks = SubnetworkWithRanges({"gke-pods": "10.4.0.0/14", "cv-pods": "10.70.0.0/16"})
    assert failed_run(mocks) == (
        "the secondary ranges of subnetwork 'shared-subnet': 1 problem\n"
        "  - teamCpuPools[0].podsRange: 'nlp-pods' is not a secondary range of subnetwork "
        "'shared-subnet' (it has: gke-pods=10.4.0.0/14, cv-pods=10.70.0.0/16); add it there "
        "first, or name one of those"
    )


def test_the_offline_plans_answer_is_checked_at_deploy_time():
    registered = on_shared_subnet(SubnetworkWithRanges(None, OFFLINE))
    nlp = registered.one(NODE_POOL, "pc-nlp-cpu")
    assert nlp.inputs["networkConfig"] == {"podRange": "nlp-pods"}


@pytest.mark.parametrize("update", [False, True], ids=["preview", "update"])
@pytest.mark.parametrize("ranges", [None, {}], ids=["no answer", "none"])
def test_gcps_answer_without_ranges_is_a_subnetwork_without_any(monkeypatch, ranges, update):
    """GCP's answer (a primary range) without secondary ranges means the subnetwork has none,
    in a preview as in `pulumi up` (the bridge may send an empty list as null): only the
    offline plan's answer defers the check."""
    monkeypatch.setattr(pulumi.runtime, "is_dry_run", lambda: not update)
    mocks = SubnetworkWithRanges(ranges)
    assert failed_run(mocks) == (
        "the secondary ranges of subnetwork 'shared-subnet': 1 problem\n"
        "  - teamCpuPools[0].podsRange: 'nlp-pods' is not a secondary range of subnetwork "
        "'shared-subnet' (it has none); add it there first, or name one of those"
    )


@pytest.mark.parametrize("update", [False, True], ids=["preview", "update"])
@pytest.mark.parametrize("primary", ["", "not a range"], ids=["none", "unreadable"])
def test_gcps_answer_without_a_readable_primary_range_is_still_checked(
    monkeypatch, primary, update
):
    """Only the offline plan's own placeholder defers the check: an answer from GCP whose
    primary range is missing or unreadable (an IPv6-only subnetwork has none) is checked like
    any other, in a preview as in `pulumi up`, and its missing Pods range refused."""
    monkeypatch.setattr(pulumi.runtime, "is_dry_run", lambda: not update)
    assert failed_run(SubnetworkWithRanges({}, primary=primary)) == (
        "the secondary ranges of subnetwork 'shared-subnet': 1 problem\n"
        "  - teamCpuPools[0].podsRange: 'nlp-pods' is not a secondary range of subnetwork "
        "'shared-subnet' (it has none); add it there first, or name one of those"
    )


# The reference the engine gets for an explicit provider named "other" of this test stack (the
# mock engine gives it no ID: an unknown one, pulumi runtime/rpc.py UNKNOWN).
OTHER_GCP_URN = "urn:pulumi:test::tpu-pathways::pulumi:pulumi:Stack$pulumi:providers:gcp::other"
OTHER_GCP = f"{OTHER_GCP_URN}::04da6b54-80e4-46f7-96ec-b56ff0331ba9"


def _with_provider(place: str):
    """GkeCluster given the gcp provider "other" in ``place``; its lookup's mock."""
    mocks = SubnetworkWithRanges({"nlp-pods": "10.64.0.0/16"})
    args = ON_SHARED_SUBNET

    def build():
        other = gcp.Provider("other", project="other-project")
        options = {
            "providers map": pulumi.ResourceOptions(providers={"gcp": other}),
            "providers list": pulumi.ResourceOptions(providers=[other]),
            "provider": pulumi.ResourceOptions(provider=other),
            "parent's providers": pulumi.ResourceOptions(
                parent=pulumi.ComponentResource(
                    "test:index:Outer",
                    "outer",
                    None,
                    pulumi.ResourceOptions(providers={"gcp": other}),
                )
            ),
        }[place]
        gke = GkeCluster("pc", args, options)
        return {"name": gke.cluster_name}

    return register(build, mocks), mocks


@pytest.mark.parametrize(
    "place", ["providers map", "providers list", "provider", "parent's providers"]
)
def test_the_lookup_uses_the_gcp_provider_the_clusters_resources_get(place):
    """The caller's gcp provider (its credentials, its default project) reads the subnetwork,
    as it creates the cluster: not the engine's default provider."""
    registered, mocks = _with_provider(place)
    assert mocks.lookups == [
        ({"name": "shared-subnet", "project": "acme-ml", "region": "us-east5"}, OTHER_GCP)
    ]
    assert registered.one(CLUSTER, "pc").provider == OTHER_GCP_URN


def test_without_a_provider_the_lookup_uses_the_default_one():
    mocks = SubnetworkWithRanges({"nlp-pods": "10.64.0.0/16"})
    on_shared_subnet(mocks)
    assert [provider for _, provider in mocks.lookups] == [""]


def test_a_shared_vpc_hosts_network_is_refused_by_the_component():
    """A program that builds the Args itself gets an error before anything registers or is
    looked up, not a cluster half in the host's network."""
    mocks = SubnetworkWithRanges({})
    args = replace(
        ON_SHARED_SUBNET, existing_network="projects/net-host/global/networks/shared-vpc"
    )
    with pytest.raises(ConfigError) as caught:
        register(lambda: {"name": GkeCluster("pc", args).cluster_name}, mocks)
    assert [(i.key, i.message) for i in caught.value.issues] == [
        (
            "existing_network",
            "'projects/net-host/global/networks/shared-vpc' is in project 'net-host', not the "
            "cluster's 'acme-ml': a Shared VPC host's network is not supported; name a network "
            "of project 'acme-ml'",
        )
    ]
    assert (mocks.created, mocks.invoked) == ([], [])


def test_the_clusters_own_network_looks_nothing_up():
    """No existing subnetwork, no lookup: the check costs such a cluster nothing."""
    mocks = SubnetworkWithRanges({})

    def build():
        gke = GkeCluster("pc", GkeClusterArgs("acme-ml", "us-east5", "us-east5-a", "pathways"))
        return {"name": gke.cluster_name}

    register(build, mocks)
    assert mocks.invoked == []
    assert ("gcp:compute/subnetwork:Subnetwork", "pc-net-subnet") in mocks.created
