"""GkeCluster from its Args: the cluster, its own network (or an existing one), the node
identity and the Pathways ports firewall; ``pool_target()`` for its node pools."""

from __future__ import annotations

import gc
import logging

import pulumi
import pytest

from components.gke.cluster import AuthorizedNetwork, GkeCluster, GkeClusterArgs
from components.gke.cpu_pool import CpuNodePool, CpuNodePoolArgs
from components.gke.maintenance import MaintenanceExclusion, MaintenanceWindow
from components.gke.network import TeamPodRange
from components.gke.node_identity import ImageRepository
from components.plan.mocks import PlanMocks
from components.sdk.pulumi_private import fresh_runtime
from components.tokens import GET_SUBNETWORK
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


# --- a dedicated team's Pod range on an existing subnetwork, checked against GCP's ----------

NODE_POOL = "gcp:container/nodePool:NodePool"
FIREWALL = "gcp:compute/firewall:Firewall"
NLP_RANGE = TeamPodRange(
    "10.64.0.0/16", "nlp-pods", ("teamCpuPools[0].podsRange", "teamCpuPools[0].podsCidr")
)


class SubnetworkWithRanges(PlanMocks):
    """The mock engine answering the subnetwork's lookup as GCP would, with its secondary
    ranges (the offline plan's answers none), and keeping what it was asked to create."""

    def __init__(self, ranges: dict[str, str] | None) -> None:
        super().__init__()
        self.ranges = ranges
        self.created: list[tuple[str, str]] = []

    def call(self, args):
        if args.token != GET_SUBNETWORK:
            return super().call(args)
        answer = {"name": args.args["name"], "ipCidrRange": "10.0.0.0/20"}
        if self.ranges is not None:  # None: an answer without the key, as the plan's
            ranges = self.ranges.items()
            answer["secondaryIpRanges"] = [{"rangeName": n, "ipCidrRange": c} for n, c in ranges]
        return answer, []

    def new_resource(self, args):
        self.created.append((args.typ, args.name))
        return super().new_resource(args)


def on_shared_subnet(mocks: SubnetworkWithRanges, team_range: TeamPodRange = NLP_RANGE):
    args = GkeClusterArgs(
        project="acme-ml",
        region="us-east5",
        zone="us-east5-a",
        name="pathways",
        existing_network="shared-vpc",
        existing_subnetwork="shared-subnet",
        dedicated_teams=("nlp",),
        team_pod_ranges={"nlp": team_range},
    )

    def build():
        gke = GkeCluster("pc", args)
        CpuNodePool("pc-cpu", CpuNodePoolArgs("cpu-np", "n2-standard-64", gke.pool_target()))
        nlp = CpuNodePoolArgs("nlp-cpu", "n2-standard-64", gke.pool_target("nlp"))
        CpuNodePool("pc-nlp-cpu", nlp)
        return {"name": gke.cluster_name}

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


def failed_run(mocks: SubnetworkWithRanges) -> str:
    """The message the program fails with, once no cluster, node pool or firewall rule was
    sent to the engine (what does not wait for the check, a service account, may have been:
    the program fails at the first failed registration it awaits)."""
    with pytest.raises(pulumi.RunError) as caught:
        on_shared_subnet(mocks)
    message = str(caught.value)
    del caught
    forget_failed_outputs()
    created = {token for token, _ in mocks.created}
    assert created.isdisjoint({CLUSTER, NODE_POOL, FIREWALL})
    return message


def forget_failed_outputs() -> None:
    """Drop the failed run's Outputs (the SDK keeps the failed ones for the program's end)
    without asyncio's "exception was never retrieved" for each, as the Python language host
    does (it silences the asyncio logger)."""
    asyncio_log = logging.getLogger("asyncio")
    level = asyncio_log.level
    asyncio_log.setLevel(logging.CRITICAL)
    try:
        fresh_runtime()
        gc.collect()
    finally:
        asyncio_log.setLevel(level)


def test_a_team_range_with_other_addresses_fails_before_its_pools_and_firewall():
    mocks = SubnetworkWithRanges({"gke-pods": "10.4.0.0/14", "nlp-pods": "10.65.0.0/16"})
    assert failed_run(mocks) == (
        "the secondary ranges of subnetwork 'shared-subnet': 1 problem\n"
        "  - teamCpuPools[0].podsCidr: secondary range 'nlp-pods' of subnetwork 'shared-subnet' "
        "has 10.65.0.0/16, but teamCpuPools[0].podsCidr says 10.64.0.0/16: the team's Pathways "
        "ports would admit the wrong Pods; set it to 10.65.0.0/16"
    )


def test_a_team_range_the_subnetwork_lacks_fails_naming_what_it_has():
    mocks = SubnetworkWithRanges({"gke-pods": "10.4.0.0/14", "cv-pods": "10.70.0.0/16"})
    assert failed_run(mocks) == (
        "the secondary ranges of subnetwork 'shared-subnet': 1 problem\n"
        "  - teamCpuPools[0].podsRange: 'nlp-pods' is not a secondary range of subnetwork "
        "'shared-subnet' (it has: gke-pods=10.4.0.0/14, cv-pods=10.70.0.0/16); add it there "
        "first, or name one of those"
    )


def test_an_answer_without_ranges_is_checked_at_deploy_time_in_a_preview():
    registered = on_shared_subnet(SubnetworkWithRanges(None))
    nlp = registered.one(NODE_POOL, "pc-nlp-cpu")
    assert nlp.inputs["networkConfig"] == {"podRange": "nlp-pods"}


@pytest.mark.parametrize("ranges", [None, {}], ids=["no answer", "none"])
def test_no_ranges_in_an_update_is_none_there(monkeypatch, ranges):
    """A lookup without secondary ranges defers the check in a preview only: in `pulumi up`
    it means the subnetwork has none (the bridge may send an empty list as null)."""
    monkeypatch.setattr(pulumi.runtime, "is_dry_run", lambda: False)
    mocks = SubnetworkWithRanges(ranges)
    assert failed_run(mocks) == (
        "the secondary ranges of subnetwork 'shared-subnet': 1 problem\n"
        "  - teamCpuPools[0].podsRange: 'nlp-pods' is not a secondary range of subnetwork "
        "'shared-subnet' (it has none); add it there first, or name one of those"
    )
