"""ClusterNetwork from its Args: the VPC, subnetwork with pod/service ranges, internal firewall,
and a router + NAT only for private nodes."""

from __future__ import annotations

import pytest

from components.gke.network import ClusterNetwork, ClusterNetworkArgs
from tests.components.harness import register, urn


def network(**overrides):
    args = ClusterNetworkArgs(project="acme-ml", region="us-east5", **overrides)

    def build():
        net = ClusterNetwork("net", args)
        return {"network": net.network_name, "subnetwork": net.subnetwork_name}

    return register(build)


@pytest.fixture(scope="module")
def private():
    return network(private_nodes=True, nodes_cidr="10.10.0.0/20", mtu=1460)


def test_the_vpc(private):
    vpc = private.one("gcp:compute/network:Network", "net")
    assert vpc.inputs == {
        "name": "net",
        "project": "acme-ml",
        "autoCreateSubnetworks": False,
        "routingMode": "REGIONAL",
        "mtu": 1460,
    }
    assert vpc.parent == urn("tpu-pathways:network:ClusterNetwork", "net")


def test_the_subnetwork_and_its_ranges(private):
    subnet = private.one("gcp:compute/subnetwork:Subnetwork", "net-subnet")
    assert subnet.inputs["region"] == "us-east5"
    assert subnet.inputs["ipCidrRange"] == "10.10.0.0/20"
    assert subnet.inputs["privateIpGoogleAccess"] is True
    assert subnet.inputs["secondaryIpRanges"] == [
        {"rangeName": "pods", "ipCidrRange": "10.4.0.0/14"},
        {"rangeName": "services", "ipCidrRange": "10.8.0.0/20"},
    ]


def test_internal_traffic_between_nodes_and_pods(private):
    rule = private.one("gcp:compute/firewall:Firewall", "net-allow-internal")
    assert rule.inputs["sourceRanges"] == ["10.10.0.0/20", "10.4.0.0/14"]
    assert [a["protocol"] for a in rule.inputs["allows"]] == ["tcp", "udp", "icmp"]


def test_private_nodes_get_a_nat(private):
    nat = private.one("gcp:compute/routerNat:RouterNat", "net-nat")
    assert nat.inputs["router"] == "net-router"
    assert nat.inputs["natIpAllocateOption"] == "AUTO_ONLY"
    assert private.names("gcp:compute/router:Router") == ["net-router"]


def test_public_nodes_get_none():
    public = network()
    assert public.of_type("gcp:compute/router:Router") == []
    assert public.of_type("gcp:compute/routerNat:RouterNat") == []
    assert public.one("gcp:compute/network:Network", "net").inputs["mtu"] == 8896


def test_outputs(private):
    assert private.outputs == {"network": "net", "subnetwork": "net-subnet"}
