"""The GKE cluster, its network, node service account and Kubernetes provider, as registered."""

from __future__ import annotations

import json

import grpc
import pulumi
import pytest

from components.errors import ConfigError, ConfigIssue
from components.gke.kubeconfig import gke_kubeconfig
from components.plan.engine import run_program
from components.stack.program import build_stack
from components.tokens import GET_PROJECT, GET_SUBNETWORK
from tests.components.harness import (
    ProviderError,
    SubnetworkLookupFails,
    SubnetworkWithRanges,
)

CLUSTER = "gcp:container/cluster:Cluster"
NETWORK = "gcp:compute/network:Network"
SUBNETWORK = "gcp:compute/subnetwork:Subnetwork"
FIREWALL = "gcp:compute/firewall:Firewall"
ROUTER = "gcp:compute/router:Router"
NAT = "gcp:compute/routerNat:RouterNat"
ACCOUNT = "gcp:serviceaccount/account:Account"
IAM_MEMBER = "gcp:projects/iAMMember:IAMMember"
K8S_PROVIDER = "pulumi:providers:kubernetes"
NODE_POOL = "gcp:container/nodePool:NodePool"
BUCKET = "gcp:storage/bucket:Bucket"
NODE_SA = "pathways-dev-nodes@tpu-pathways-dev.iam.gserviceaccount.com"


@pytest.fixture(scope="module")
def dev(plan_of, stack_values):
    """Regional, public nodes, dedicated VPC, deletion protection off (the dev stack)."""
    return plan_of(stack_values())


@pytest.fixture(scope="module")
def private(plan_of, stack_values):
    return plan_of(stack_values(cluster={"privateNodes": True}))


@pytest.fixture(scope="module")
def zonal(plan_of, stack_values):
    """Zonal, existing VPC, STABLE channel, authorized networks, default deletion protection."""
    values = stack_values(
        cluster={
            "regional": False,
            "releaseChannel": "STABLE",
            "authorizedNetworks": [{"cidr": "203.0.113.0/24", "displayName": "office"}],
            "network": {"existingNetwork": "shared-vpc", "existingSubnetwork": "shared-subnet"},
        }
    )
    del values["cluster"]["deletionProtection"]
    return plan_of(values)


def cluster_of(plan):
    (cluster,) = plan.by_type(CLUSTER)
    return cluster


# --- the cluster resource -------------------------------------------------------------------


def test_default_node_pool_is_removed(dev):
    inputs = cluster_of(dev).inputs
    assert inputs["removeDefaultNodePool"] is True
    assert inputs["initialNodeCount"] == 1
    assert cluster_of(dev).options["ignoreChanges"] == ["initialNodeCount", "nodeConfig"]


def test_temporary_default_pool_uses_the_dedicated_service_account(dev):
    node_config = cluster_of(dev).inputs["nodeConfig"]
    assert node_config["serviceAccount"] == NODE_SA
    assert node_config["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}


def test_regional_cluster_keeps_nodes_in_the_zone(dev):
    inputs = cluster_of(dev).inputs
    assert inputs["name"] == "pathways-dev"
    assert inputs["project"] == "tpu-pathways-dev"
    assert inputs["location"] == "us-west4"
    assert inputs["nodeLocations"] == ["us-west4-a"]


def test_zonal_cluster(zonal):
    inputs = cluster_of(zonal).inputs
    assert inputs["location"] == "us-west4-a"
    assert "nodeLocations" not in inputs


def test_release_channel(dev, zonal):
    assert cluster_of(dev).inputs["releaseChannel"] == {"channel": "RAPID"}
    assert cluster_of(zonal).inputs["releaseChannel"] == {"channel": "STABLE"}


def test_security_and_networking_settings(dev):
    inputs = cluster_of(dev).inputs
    assert inputs["workloadIdentityConfig"] == {"workloadPool": "tpu-pathways-dev.svc.id.goog"}
    assert inputs["datapathProvider"] == "ADVANCED_DATAPATH"
    assert inputs["networkingMode"] == "VPC_NATIVE"
    assert inputs["addonsConfig"]["gcsFuseCsiDriverConfig"] == {"enabled": True}
    assert inputs["controlPlaneEndpointsConfig"] == {
        "dnsEndpointConfig": {"allowExternalTraffic": True},
        "ipEndpointsConfig": {"enabled": False},
    }
    assert inputs["enableShieldedNodes"] is True
    assert inputs["enableLegacyAbac"] is False
    assert inputs["resourceLabels"] == {
        "managed-by": "tpu-pathways",
        "environment": "dev",
        "team": "ml-platform",
    }


def test_deletion_protection(dev, zonal):
    assert cluster_of(dev).inputs["deletionProtection"] is False  # the stack says so
    assert cluster_of(zonal).inputs["deletionProtection"] is True  # the default


def test_production_protects_the_cluster(plan_of, stack_values, dev):
    assert "protect" not in cluster_of(dev).options
    production = plan_of(stack_values(environment="production"))
    assert cluster_of(production).options["protect"] is True


def test_authorized_networks(dev, zonal):
    # none listed: no CIDR may reach the IP endpoint (the IAM-gated DNS endpoint is the way in)
    assert "masterAuthorizedNetworksConfig" not in cluster_of(dev).inputs
    # listed: only they reach it, not every Google Cloud address
    assert cluster_of(zonal).inputs["masterAuthorizedNetworksConfig"] == {
        "cidrBlocks": [{"cidrBlock": "203.0.113.0/24", "displayName": "office"}],
        "gcpPublicCidrsAccessEnabled": False,
    }
    endpoints = cluster_of(zonal).inputs["controlPlaneEndpointsConfig"]
    assert endpoints["ipEndpointsConfig"] == {"enabled": True}


def test_cluster_depends_on_its_network_and_service_account(dev):
    deps = cluster_of(dev).dependencies
    assert dev.get(ACCOUNT, "pathways-dev-nodes").urn in deps
    assert dev.get(NETWORK, "pathways-dev-net").urn in deps
    assert dev.get(SUBNETWORK, "pathways-dev-net-subnet").urn in deps


# --- network --------------------------------------------------------------------------------


def test_dedicated_vpc(dev):
    network = dev.get(NETWORK, "pathways-dev-net")
    assert network.inputs["mtu"] == 8896
    assert network.inputs["autoCreateSubnetworks"] is False
    subnet = dev.get(SUBNETWORK, "pathways-dev-net-subnet")
    assert subnet.inputs["region"] == "us-west4"
    assert subnet.inputs["ipCidrRange"] == "10.0.0.0/20"
    assert subnet.inputs["privateIpGoogleAccess"] is True
    assert subnet.inputs["secondaryIpRanges"] == [
        {"rangeName": "pods", "ipCidrRange": "10.4.0.0/14"},
        {"rangeName": "services", "ipCidrRange": "10.8.0.0/20"},
    ]
    assert network.urn in subnet.dependencies
    # the cluster allocates pod and service IPs from the subnet's named ranges
    assert cluster_of(dev).inputs["ipAllocationPolicy"] == {
        "clusterSecondaryRangeName": "pods",
        "servicesSecondaryRangeName": "services",
    }
    assert cluster_of(dev).inputs["network"] == "pathways-dev-net"
    assert cluster_of(dev).inputs["subnetwork"] == "pathways-dev-net-subnet"


def test_internal_firewall(dev):
    firewall = dev.get(FIREWALL, "pathways-dev-net-allow-internal")
    assert firewall.inputs["direction"] == "INGRESS"
    assert firewall.inputs["sourceRanges"] == ["10.0.0.0/20", "10.4.0.0/14"]
    assert {a["protocol"] for a in firewall.inputs["allows"]} == {"tcp", "udp", "icmp"}


def test_custom_mtu(plan_of, stack_values):
    plan = plan_of(stack_values(cluster={"network": {"mtu": 1460}}))
    assert plan.get(NETWORK, "pathways-dev-net").inputs["mtu"] == 1460


def test_public_nodes_have_no_nat(dev):
    assert "privateClusterConfig" not in cluster_of(dev).inputs
    assert dev.by_type(ROUTER) == []
    assert dev.by_type(NAT) == []


def test_private_nodes_get_router_and_nat(private):
    assert cluster_of(private).inputs["privateClusterConfig"] == {"enablePrivateNodes": True}
    (router,) = private.by_type(ROUTER)
    (nat,) = private.by_type(NAT)
    assert router.inputs["region"] == "us-west4"
    assert router.inputs["network"] == "pathways-dev-net"
    assert router.inputs["name"] == nat.inputs["router"] == "pathways-dev-net-router"
    assert nat.inputs["region"] == "us-west4"
    assert nat.inputs["natIpAllocateOption"] == "AUTO_ONLY"
    assert nat.inputs["sourceSubnetworkIpRangesToNat"] == "ALL_SUBNETWORKS_ALL_IP_RANGES"
    assert router.urn in nat.dependencies


def test_existing_network_creates_no_vpc(zonal):
    for token in (NETWORK, SUBNETWORK, ROUTER, NAT):
        assert zonal.by_type(token) == []
    # only the stack's own rules for the Pathways ports are added to the existing VPC
    assert [f.name for f in zonal.by_type(FIREWALL)] == [
        "pathways-dev-pathways-ports-allow",
        "pathways-dev-pathways-ports-deny",
    ]
    inputs = cluster_of(zonal).inputs
    assert inputs["network"] == "shared-vpc"
    assert inputs["subnetwork"] == "shared-subnet"
    assert inputs["ipAllocationPolicy"] == {
        "clusterIpv4CidrBlock": "10.4.0.0/14",
        "servicesIpv4CidrBlock": "10.8.0.0/20",
    }


# A dedicated team nlp on an existing subnetwork, its pools on the secondary range the stack file
# names there (teamCpuPools[0].podsRange, with its addresses: podsCidr).
ON_SHARED_SUBNET = {
    "cluster": {
        "network": {"existingNetwork": "shared-vpc", "existingSubnetwork": "shared-subnet"}
    },
    "teams": [{"name": "pathways"}, {"name": "nlp"}],
    "tpuPools": [{"name": "v5e-nlp", "accelerator": "v5litepod-8", "team": "nlp"}],
    "teamCpuPools": [
        {
            "team": "nlp",
            "machineType": "n2-standard-64",
            "podsRange": "tenant-nlp-pods",
            "podsCidr": "10.64.0.0/16",
        }
    ],
    "addons": {"kueue": {"enabled": True}},
}


def test_a_dedicated_team_on_an_existing_subnetwork_takes_the_range_it_names(plan_of, stack_values):
    """The stack adds no range to a subnetwork it does not own: nlp's pools take the secondary
    range the stack file names (no createPodRange: GKE uses an existing range of that name),
    the cluster records it, and nlp's Pathways ports admit its addresses."""
    plan = plan_of(stack_values(**ON_SHARED_SUBNET))
    assert plan.by_type(SUBNETWORK) == []
    pod_ranges = {p.inputs["name"]: p.inputs.get("networkConfig") for p in plan.by_type(NODE_POOL)}
    assert pod_ranges == {
        "system-np": None,
        "cpu-np": None,
        "nlp-cpu": {"podRange": "tenant-nlp-pods"},
        "v5e-nlp-0": {"podRange": "tenant-nlp-pods"},
    }
    assert cluster_of(plan).inputs["ipAllocationPolicy"] == {
        "clusterIpv4CidrBlock": "10.4.0.0/14",
        "servicesIpv4CidrBlock": "10.8.0.0/20",
        "additionalPodRangesConfig": {"podRangeNames": ["tenant-nlp-pods"]},
    }
    allow = plan.get(FIREWALL, "pathways-dev-nlp-pathways-ports-allow")
    assert allow.inputs["sourceRanges"] == ["10.64.0.0/16"]


def test_the_plan_says_a_team_range_on_an_existing_subnetwork_is_checked_at_deploy_time(
    cli_plan, stack_values
):
    """The offline plan looks nothing up: it plans the pools on the named range and warns
    that the range and its addresses are compared with the subnetwork's at deploy time."""
    code, out, err, _ = cli_plan(stack_values(**ON_SHARED_SUBNET), "shared")
    assert code == 0, err
    assert err == (
        "warning: Pulumi.shared.yaml: checked at deploy time, not in this preview (no "
        "secondary ranges of subnetwork 'shared-subnet' here: the offline plan looks nothing up "
        "in GCP): teamCpuPools[0].podsRange 'tenant-nlp-pods' with 10.64.0.0/16. `pulumi "
        "preview` and `pulumi up` compare them with the subnetwork's; on a mismatch `pulumi up` "
        "stops before it creates anything\n"
    )
    assert "NodePool pathways-dev-nlp-cpu" in out


def test_an_unnamed_team_range_on_an_existing_subnetwork_is_refused_by_the_component():
    """A program that builds the Args itself gets an error, not a pool naming a range the
    subnetwork lacks (and before the subnetwork is looked up)."""
    from components.gke.network import ClusterNetworkArgs, TeamPodRange, existing_subnetwork

    args = ClusterNetworkArgs(
        project="p", region="us-west4", team_pod_ranges={"nlp": TeamPodRange("10.64.0.0/16")}
    )
    with pytest.raises(ConfigError) as caught:
        existing_subnetwork(args, "shared-vpc", "shared-subnet")
    assert [(i.key, i.message) for i in caught.value.issues] == [
        (
            "team_pod_ranges['nlp'].name",
            "none: on the existing subnetwork 'shared-subnet' a team's Pod range is one of its "
            "secondary ranges, by name",
        )
    ]


# --- the deploy-time range check stops the whole stack --------------------------------------


@pytest.fixture(scope="module")
def on_shared_subnet(stack_values):
    """A stack of every kind of resource (node service accounts and their roles, the scratch
    bucket and its grants, data bucket grants, team namespaces, installs, pools, firewall) on
    an existing subnetwork, nlp's pools on the range it names there."""
    buckets = [{"name": "corpus"}, {"name": "nlp-corpus", "team": "nlp"}]
    return stack_values(**ON_SHARED_SUBNET, dataBuckets=buckets)


def deploy(config, mocks, monkeypatch):
    """``build_stack`` as `pulumi up` runs it, the subnetwork's lookup answered by ``mocks``."""
    monkeypatch.setattr(pulumi.runtime, "is_dry_run", lambda: False)
    return run_program(lambda: build_stack(config), "shared", mocks=mocks)


@pytest.mark.parametrize(
    "ranges",
    [{"tenant-nlp-pods": "10.65.0.0/16"}, {"gke-pods": "10.4.0.0/14"}, {}],
    ids=["other addresses", "missing", "none"],
)
def test_a_failed_range_check_registers_nothing_of_the_stack(
    config_of, on_shared_subnet, monkeypatch, ranges
):
    """Not a service account, an IAM binding, a bucket grant or a component: the engine gets
    no registration at all, and the update fails with the check's report."""
    mocks = SubnetworkWithRanges(ranges)
    with pytest.raises(ConfigError) as caught:
        deploy(config_of(on_shared_subnet), mocks, monkeypatch)
    assert mocks.created == []
    assert mocks.invoked == [GET_SUBNETWORK]
    assert str(caught.value).startswith(
        "the secondary ranges of subnetwork 'shared-subnet': 1 problem\n"
    )


# A failed lookup as the engine reports it (pulumi pkg/resource/deploy/source_eval.go
# ``Invoke``, around pulumi-terraform-bridge pkg/tfbridge/provider.go ``Invoke``, around
# terraform-provider-google's error, in Terraform's "1 error occurred" list).
PROVIDER_FAILED = (
    "invocation of gcp:compute/getSubnetwork:getSubnetwork returned an error: invoking "
    "gcp:compute/getSubnetwork:getSubnetwork: 1 error occurred:\n\t* {}\n\n"
)
SUBNET_PATH = "projects/tpu-pathways-dev/regions/us-west4/subnetworks/shared-subnet"


def failed_lookup(config, error, monkeypatch, expected=ConfigError) -> str:
    """The message of the update whose lookup failed with ``error``, once it is known that
    nothing was registered."""
    mocks = SubnetworkLookupFails(error)
    with pytest.raises(expected) as caught:
        deploy(config, mocks, monkeypatch)
    assert mocks.created == []
    assert mocks.invoked == [GET_SUBNETWORK]
    return str(caught.value)


@pytest.mark.parametrize(
    "answer",
    [
        f"{SUBNET_PATH} not found",
        "Error when reading or editing Subnetwork Not Found : shared-subnet: googleapi: Error 403: "
        f"Required 'compute.subnetworks.get' permission for '{SUBNET_PATH}', forbidden",
    ],
    ids=["404", "403 forbidden"],
)
def test_a_subnetwork_gcp_does_not_give_is_the_stack_files_mistake(
    config_of, on_shared_subnet, monkeypatch, answer
):
    """Named at the key that gave it, with GCP's answer on the report's one line, and nothing
    registered."""
    error = ProviderError(grpc.StatusCode.UNKNOWN, PROVIDER_FAILED.format(answer))
    assert failed_lookup(config_of(on_shared_subnet), error, monkeypatch) == (
        "the existing subnetwork 'shared-subnet': 1 problem\n"
        "  - cluster.network.existingSubnetwork: subnetwork 'shared-subnet' could not be read "
        "in region 'us-west4' of project 'tpu-pathways-dev' (invocation of "
        "gcp:compute/getSubnetwork:getSubnetwork returned an error: invoking "
        f"gcp:compute/getSubnetwork:getSubnetwork: 1 error occurred: * {answer}); name a "
        "subnetwork of that region the deploying credentials can read (compute.subnetworks.get)"
    )


LOOKUP_FAILED = (
    "the lookup of subnetwork 'shared-subnet' in region 'us-west4' of project "
    "'tpu-pathways-dev' failed: "
)


@pytest.mark.parametrize(
    "code,details,message",
    [
        (
            grpc.StatusCode.UNAVAILABLE,
            "transport is closing",
            "Resource monitor has terminated, shutting down",
        ),
        (
            grpc.StatusCode.UNKNOWN,
            "Invoke: Default provider for 'gcp' disabled. 'gcp:compute/getSubnetwork:"
            "getSubnetwork' must use an explicit provider.",
            "Invoke: Default provider for 'gcp' disabled. 'gcp:compute/getSubnetwork:"
            "getSubnetwork' must use an explicit provider.",
        ),
        (
            grpc.StatusCode.UNKNOWN,
            PROVIDER_FAILED.format(
                "google: could not find default credentials. See\n"
                "https://cloud.google.com/docs/authentication/external/set-up-adc for more "
                "information"
            ),
            "invocation of gcp:compute/getSubnetwork:getSubnetwork returned an error: invoking "
            "gcp:compute/getSubnetwork:getSubnetwork: 1 error occurred: * google: could not "
            "find default credentials. See https://cloud.google.com/docs/authentication/"
            "external/set-up-adc for more information",
        ),
        (
            grpc.StatusCode.UNKNOWN,
            PROVIDER_FAILED.format(
                "Error when reading or editing Subnetwork Not Found : shared-subnet: googleapi: "
                "Error 503: The service is currently unavailable., backendError"
            ),
            "invocation of gcp:compute/getSubnetwork:getSubnetwork returned an error: invoking "
            "gcp:compute/getSubnetwork:getSubnetwork: 1 error occurred: * Error when reading or "
            "editing Subnetwork Not Found : shared-subnet: googleapi: Error 503: The service is "
            "currently unavailable., backendError",
        ),
        (
            grpc.StatusCode.UNKNOWN,
            PROVIDER_FAILED.format(
                "Error when reading or editing Subnetwork Not Found : shared-subnet: googleapi: "
                "Error 403: Compute Engine API has not been used in project 123 before or it is "
                "disabled., accessNotConfigured"
            ),
            "invocation of gcp:compute/getSubnetwork:getSubnetwork returned an error: invoking "
            "gcp:compute/getSubnetwork:getSubnetwork: 1 error occurred: * Error when reading or "
            "editing Subnetwork Not Found : shared-subnet: googleapi: Error 403: Compute Engine "
            "API has not been used in project 123 before or it is disabled., accessNotConfigured",
        ),
    ],
    ids=["engine shutting down", "default provider disabled", "no credentials", "5xx", "403 API"],
)
def test_any_other_failed_lookup_is_one_line_and_names_no_key(
    config_of, on_shared_subnet, monkeypatch, code, details, message
):
    """Not the stack file's mistake: a ``pulumi.RunError`` (its message alone, no traceback)
    with the provider's answer, blaming no key and advising nothing; nothing registered."""
    error = ProviderError(code, details)
    found = failed_lookup(config_of(on_shared_subnet), error, monkeypatch, pulumi.RunError)
    assert found == LOOKUP_FAILED + message


def test_a_passed_range_check_registers_the_whole_stack(
    config_of, plan_of, on_shared_subnet, monkeypatch
):
    """Every resource the offline plan shows (which skips the check), and nothing but the
    one lookup."""
    planned = plan_of(on_shared_subnet).resources
    mocks = SubnetworkWithRanges({"gke-pods": "10.4.0.0/14", "tenant-nlp-pods": "10.64.0.0/16"})
    _, outputs = deploy(config_of(on_shared_subnet), mocks, monkeypatch)
    assert sorted(mocks.created) == sorted((r.type, r.name) for r in planned)
    assert mocks.invoked == [GET_SUBNETWORK, GET_PROJECT]
    for kind, name in [
        (ACCOUNT, "pathways-dev-nodes"),
        (ACCOUNT, "pathways-dev-nlp-nodes"),
        (IAM_MEMBER, "pathways-dev-nlp-nodes-default-node-sa"),
        (BUCKET, "pathways-dev-scratch"),
        ("gcp:storage/bucketIAMMember:BucketIAMMember", "pathways-dev-nlp-data-buckets-nlp-corpus"),
        ("gcp:monitoring/dashboard:Dashboard", "pathways-dev-monitoring-dashboard"),
        (CLUSTER, "pathways-dev"),
        (NODE_POOL, "pathways-dev-nlp-cpu"),
    ]:
        assert (kind, name) in mocks.created
    assert outputs["node_service_account"] == NODE_SA
    assert outputs["scratch_bucket"] == "gs://tpu-pathways-dev-pathways-dev-pathways"


def test_the_home_shares_admit_the_nodes_range_gcp_answered(
    config_of, on_shared_subnet, monkeypatch
):
    """On an existing subnetwork the nodes' addresses are its primary range as GCP has it (the
    mock's 10.128.0.0/20), not the stack's nodesCidr (default 10.0.0.0/20, for a subnetwork
    it creates): the Filestore export admits exactly them."""
    values = {**on_shared_subnet, "homeDirs": {"teams": ["nlp"]}}
    mocks = SubnetworkWithRanges({"tenant-nlp-pods": "10.64.0.0/16"})
    resources, _ = deploy(config_of(values), mocks, monkeypatch)
    (share,) = [r for r in resources if r.type == "gcp:filestore/instance:Instance"]
    assert share.inputs["fileShares"]["nfsExportOptions"][0]["ipRanges"] == ["10.128.0.0/20"]
    assert share.inputs["networks"] == [{"network": "shared-vpc", "modes": ["MODE_IPV4"]}]


# --- a network of the stack's project by its path; a Shared VPC host's is refused -------------


def test_a_network_path_of_the_stacks_project_is_looked_up_and_used_there(
    config_of, on_shared_subnet, monkeypatch
):
    """The subnetwork is read in the network's project (the stack's), the cluster and the
    Pathways ports rules go on that network, the rules in that project."""
    network = "projects/tpu-pathways-dev/global/networks/shared-vpc"
    values = {**on_shared_subnet, "cluster": {**on_shared_subnet["cluster"]}}
    values["cluster"]["network"] = {
        "existingNetwork": network,
        "existingSubnetwork": "shared-subnet",
    }
    mocks = SubnetworkWithRanges({"tenant-nlp-pods": "10.64.0.0/16"})
    resources, _ = deploy(config_of(values), mocks, monkeypatch)
    assert mocks.lookups == [
        ({"name": "shared-subnet", "project": "tpu-pathways-dev", "region": "us-west4"}, "")
    ]
    (cluster,) = [r for r in resources if r.type == CLUSTER]
    assert (cluster.inputs["network"], cluster.inputs["subnetwork"]) == (network, "shared-subnet")
    rules = {r.name: r.inputs for r in resources if r.type == FIREWALL}
    assert sorted(rules) == [
        "pathways-dev-nlp-pathways-ports-allow",
        "pathways-dev-nlp-pathways-ports-deny",
        "pathways-dev-pathways-ports-allow",
        "pathways-dev-pathways-ports-deny",
    ]
    for rule in rules.values():
        assert (rule["project"], rule["network"]) == ("tpu-pathways-dev", network)


def test_a_shared_vpc_hosts_network_is_refused_before_anything(config_of, stack_values):
    """Refused while the stack file is read (no lookup, no resource), naming the key, the
    value and what is allowed."""
    network = "projects/host-proj-1/global/networks/shared-vpc"
    values = stack_values(
        cluster={"network": {"existingNetwork": network, "existingSubnetwork": "shared-subnet"}}
    )
    with pytest.raises(ConfigError) as caught:
        config_of(values)
    assert caught.value.issues == [
        ConfigIssue(
            "cluster.network.existingNetwork",
            "'projects/host-proj-1/global/networks/shared-vpc' is a network of project "
            "'host-proj-1' (a Shared VPC host), not of gcp.project 'tpu-pathways-dev'; the stack "
            "cannot create a cluster there yet (GKE takes only the host's named secondary ranges "
            "for the cluster's Pods and Services, and the Pathways ports firewall rules would "
            "belong to the host project): name a network of 'tpu-pathways-dev', by name or as "
            "projects/tpu-pathways-dev/global/networks/<name>",
        )
    ]


# Ports the PathwaysJob controller v0.1.4 binds on the node IPs (host network); literals from
# google/pathways-job internal/controller/pathwaysjob_controller.go, not from the code under test.
PATHWAYS_PORTS = ["29000", "29001", "29002", "29005", "29006", "8471", "8080", "50051"]


def test_pathways_ports_admit_only_the_cluster_ranges(dev):
    allow = dev.get(FIREWALL, "pathways-dev-pathways-ports-allow")
    deny = dev.get(FIREWALL, "pathways-dev-pathways-ports-deny")
    for rule in (allow, deny):
        assert rule.inputs["network"] == "pathways-dev-net"
        assert rule.inputs["direction"] == "INGRESS"
        # on the cluster's nodes only: every node runs as the node service account
        assert rule.inputs["targetServiceAccounts"] == [NODE_SA]
    # the nodes of the same pools (their account: a node's primary address, where host-network
    # pods send from), and pods off the host network (their NetworkPolicy bounds their egress)
    assert allow.inputs["sourceServiceAccounts"] == [NODE_SA]
    assert allow.inputs["sourceRanges"] == ["10.4.0.0/14"]
    assert allow.inputs["allows"] == [{"protocol": "tcp", "ports": PATHWAYS_PORTS}]
    assert deny.inputs["sourceRanges"] == ["0.0.0.0/0"]
    assert deny.inputs["denies"] == [{"protocol": "tcp", "ports": PATHWAYS_PORTS}]
    # the allow rule wins over the deny, and both over any allow rule at the default 1000
    assert allow.inputs["priority"] < deny.inputs["priority"] < 1000


def test_pathways_ports_on_an_existing_network_name_the_nodes_by_account(zonal):
    allow = zonal.get(FIREWALL, "pathways-dev-pathways-ports-allow")
    assert allow.inputs["network"] == "shared-vpc"
    # no lookup of the subnetwork's range: the nodes are known by their account
    assert allow.inputs["sourceServiceAccounts"] == [NODE_SA]
    assert allow.inputs["sourceRanges"] == ["10.4.0.0/14"]
    assert zonal.get(FIREWALL, "pathways-dev-pathways-ports-deny").inputs["sourceRanges"] == [
        "0.0.0.0/0"
    ]


def test_private_nodes_by_default_in_production(plan_of, stack_values, dev):
    assert "privateClusterConfig" not in cluster_of(dev).inputs  # dev: public unless asked
    production = plan_of(stack_values(environment="production"))  # privateNodes not given
    assert cluster_of(production).inputs["privateClusterConfig"] == {"enablePrivateNodes": True}
    assert len(production.by_type(NAT)) == 1
    # an explicit choice still holds
    public = plan_of(stack_values(environment="production", cluster={"privateNodes": False}))
    assert "privateClusterConfig" not in cluster_of(public).inputs


def test_production_protects_network_and_node_identity(plan_of, stack_values, dev):
    production = plan_of(stack_values(environment="production", cluster={"privateNodes": True}))
    tokens = (NETWORK, SUBNETWORK, FIREWALL, ROUTER, NAT, ACCOUNT, IAM_MEMBER)
    stateful = [r for r in production.resources if r.type in tokens]
    assert len(stateful) == 9  # VPC, subnet, 3 firewalls, router, NAT, account, its grant
    assert {r.name: r.options.get("protect") for r in stateful} == {r.name: True for r in stateful}
    assert not any(r.options.get("protect") for r in dev.resources if r.type in tokens)


# --- node service account -------------------------------------------------------------------


def test_node_service_account(dev):
    account = dev.get(ACCOUNT, "pathways-dev-nodes")
    assert account.inputs["accountId"] == "pathways-dev-nodes"
    assert account.inputs["project"] == "tpu-pathways-dev"


def test_node_service_account_has_only_gkes_default_node_role(dev):
    component = next(r for r in dev.resources if r.type == "tpu-pathways:iam:NodeServiceAccount")
    members = [r for r in dev.by_type(IAM_MEMBER) if r.parent == component.urn]
    assert [m.inputs["role"] for m in members] == ["roles/container.defaultNodeServiceAccount"]
    assert dev.by_type("gcp:artifactregistry/repositoryIamMember:RepositoryIamMember") == []
    account = dev.get(ACCOUNT, "pathways-dev-nodes")
    for member in members:
        assert member.inputs["member"] == f"serviceAccount:{NODE_SA}"
        assert member.inputs["project"] == "tpu-pathways-dev"
        assert account.urn in member.dependencies


def test_no_primitive_roles_anywhere(dev, private, zonal):
    for plan in (dev, private, zonal):
        for resource in plan.resources:
            role = resource.inputs.get("role")
            assert role not in ("roles/owner", "roles/editor"), resource.urn


def test_long_cluster_name_gives_a_valid_account_id(plan_of, stack_values):
    # 40 characters (GKE's limit); service account IDs allow 6-30
    plan = plan_of(stack_values(cluster={"name": "pathways-cluster-with-a-long-name-abcdef"}))
    (account,) = plan.by_type(ACCOUNT)
    # its first 17 characters (less the trailing '-') and a hash of the whole name
    assert account.inputs["accountId"] == "pathways-cluster-052541-nodes"


# --- Kubernetes provider and kubeconfig -----------------------------------------------------


def test_kubernetes_provider(dev):
    provider = dev.get(K8S_PROVIDER, "pathways-dev-k8s")
    assert provider.inputs["kubeconfig"] == "[secret]"
    assert provider.inputs["enableServerSideApply"] == "true"  # provider inputs are strings
    assert cluster_of(dev).urn in provider.dependencies


def test_gke_kubeconfig_uses_the_auth_plugin():
    document = json.loads(gke_kubeconfig("gke_p_us-west4_c", "gke-abc.us-west4.gke.goog"))
    assert document["kind"] == "Config"
    assert document["current-context"] == "gke_p_us-west4_c"
    (cluster,) = document["clusters"]
    assert cluster == {
        "name": "gke_p_us-west4_c",
        "cluster": {"server": "https://gke-abc.us-west4.gke.goog"},
    }
    (context,) = document["contexts"]
    assert context["context"] == {"cluster": "gke_p_us-west4_c", "user": "gke_p_us-west4_c"}
    (user,) = document["users"]
    assert user["name"] == "gke_p_us-west4_c"
    exec_config = user["user"]["exec"]
    assert exec_config["command"] == "gke-gcloud-auth-plugin"
    assert exec_config["apiVersion"] == "client.authentication.k8s.io/v1beta1"
    assert exec_config["provideClusterInfo"] is True
    assert "token" not in json.dumps(document)  # no credentials of its own


def test_outputs_resolved_by_the_engine(config_of, stack_values):
    # run_program awaits each stack output through Pulumi (no .apply in the test).
    _, outputs = run_program(lambda: build_stack(config_of(stack_values())), "dev")
    assert outputs["node_service_account"] == NODE_SA
    assert outputs["kubeconfig"] == "[secret]"
    assert outputs["cluster_endpoint"] == "[unknown]"  # known only once GKE made the cluster
    assert outputs["cluster_name"] == "pathways-dev"
    assert outputs["cluster_location"] == "us-west4"


# --- existing clusters ----------------------------------------------------------------------


def _onto_existing(values: dict) -> dict:
    """Settings of a created cluster (dev's deletionProtection) are refused with existing."""
    del values["cluster"]["deletionProtection"]
    return values


def test_existing_cluster_by_kubeconfig_context(plan_of, stack_values):
    plan = plan_of(
        _onto_existing(
            stack_values(
                cluster={"existing": {"kubeconfigContext": "my-ctx"}},
                scratchBucket={"name": "team-scratch"},
            )
        )
    )
    assert plan.by_type(CLUSTER) == []
    assert plan.by_type(NODE_POOL) == []
    assert plan.by_type(NETWORK) == []
    (provider,) = plan.by_type(K8S_PROVIDER)
    assert provider.inputs["context"] == "my-ctx"
    assert "kubeconfig" not in provider.inputs


def test_existing_cluster_by_name(plan_of, stack_values):
    # the endpoint is looked up with an invoke (getCluster) at deploy time
    values = stack_values(
        cluster={"existing": {"name": "xpk-cluster", "location": "us-west4"}},
        scratchBucket={"name": "team-scratch"},
    )
    plan = plan_of(_onto_existing(values))
    assert plan.by_type(CLUSTER) == []
    assert plan.by_type(NODE_POOL) == []
    assert plan.by_type(ACCOUNT) == []
    (provider,) = plan.by_type(K8S_PROVIDER)
    assert provider.inputs["kubeconfig"] == "[secret]"
    assert plan.outputs["cluster_name"] == "xpk-cluster"
    assert plan.outputs["kubeconfig"] == "[secret]"


def test_on_an_existing_cluster_a_teams_quota_guesses_no_pods_cpu_or_memory(plan_of, stack_values):
    """The stack does not know an existing cluster's pools (its cpuPool is the schema's
    default): no share of them is made up; the keys a team sets still apply."""
    values = stack_values(
        cluster={"existing": {"name": "xpk-cluster", "location": "us-west4"}},
        scratchBucket={"name": "team-scratch"},
        teams=[{"name": "a"}, {"name": "b", "resourceQuota": {"pods": 50, "cpu": 64}}],
    )
    plan = plan_of(_onto_existing(values))
    hard = {
        r.inputs["metadata"]["name"]: r.inputs["spec"]["hard"]
        for r in plan.by_type("kubernetes:core/v1:ResourceQuota")
    }
    assert "requests.cpu" not in hard.get("a-compute", {})
    assert "pods" not in hard["a-quota"]
    assert hard["b-quota"]["pods"] == "50"
    assert hard["b-compute"]["requests.cpu"] == "64"


def test_on_an_existing_cluster_the_shared_flavors_require_no_label_of_ours(plan_of, stack_values):
    """Kueue adds a flavor's node labels to the pods it admits: on nodes another tool made, a
    label only this project's pools carry would leave every admitted pod Pending."""
    values = stack_values(
        cluster={"existing": {"name": "xpk-cluster", "location": "us-west4"}},
        scratchBucket={"name": "team-scratch"},
        addons={"kueue": {"enabled": True}},
    )
    plan = plan_of(_onto_existing(values))
    flavors = plan.by_type("kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor")
    assert flavors
    for flavor in flavors:
        assert "tpu-pathways/shared-pool" not in flavor.inputs["spec"].get("nodeLabels", {})
