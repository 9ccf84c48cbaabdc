"""PathwaysPortsFirewall from its Args: the host-network Pathways ports of one set of pools
admitted from that set's nodes and from pods only, ahead of the VPC's own allow rules."""

from __future__ import annotations

import pytest

from components.gke.network import PathwaysPortsFirewall, PathwaysPortsFirewallArgs
from tests.components.harness import register

PORTS = ["29000", "29001", "29002", "29005", "29006", "8471", "8080", "50051"]
NODES = "nodes@acme-ml.iam.gserviceaccount.com"


@pytest.fixture(scope="module")
def firewall():
    args = PathwaysPortsFirewallArgs(
        project="acme-ml",
        network="vpc",
        pods_range="10.4.0.0/14",
        node_service_account=NODES,
    )
    return register(lambda: PathwaysPortsFirewall("ports", args) and None)


def test_allow_from_the_same_pools_and_pods(firewall):
    allow = firewall.one("gcp:compute/firewall:Firewall", "ports-allow")
    assert allow.inputs["network"] == "vpc"
    assert allow.inputs["priority"] == 800
    assert allow.inputs["sourceRanges"] == ["10.4.0.0/14"]
    assert allow.inputs["sourceServiceAccounts"] == [NODES]
    assert allow.inputs["targetServiceAccounts"] == [NODES]
    assert allow.inputs["allows"] == [{"protocol": "tcp", "ports": PORTS}]


def test_deny_from_everywhere_else(firewall):
    deny = firewall.one("gcp:compute/firewall:Firewall", "ports-deny")
    assert deny.inputs["priority"] == 810
    assert deny.inputs["sourceRanges"] == ["0.0.0.0/0"]
    assert deny.inputs["targetServiceAccounts"] == [NODES]
    assert deny.inputs["denies"] == [{"protocol": "tcp", "ports": PORTS}]
