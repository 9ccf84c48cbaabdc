"""What isolates a team namespace (``isolate``, inside its TeamNamespace): the group's
RoleBinding, one NetworkPolicy and the ResourceQuota (the admission policies are shared by every
team namespace: team_policies)."""

from __future__ import annotations

import pytest

from components.addons.team_isolation import TeamQuota
from components.addons.teams import TeamNamespace, TeamNamespaceArgs
from components.vocabulary import DnsProvider, GoogleApiEgress
from tests.components.harness import k8s_provider, register, urn

ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
QUOTA = "kubernetes:core/v1:ResourceQuota"
LABELS = {"tpu-pathways/team": "research"}
PARENT = "tpu-pathways:teams:TeamNamespace"
METADATA_SERVER = [
    {
        "to": [{"ipBlock": {"cidr": "169.254.169.254/32"}}],
        "ports": [{"protocol": "TCP", "port": 80}],
    },
    {
        "to": [{"ipBlock": {"cidr": "169.254.169.252/32"}}],
        "ports": [{"protocol": "TCP", "port": 988}],
    },
]
DNS_PORTS = [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]


def isolation(**more):
    """A TeamNamespace named ``iso`` (its isolation's objects are named ``iso-isolation-*``)."""

    def build():
        TeamNamespace("iso", TeamNamespaceArgs("research", k8s_provider(), **more))

    return register(build)


@pytest.fixture(scope="module")
def team():
    return isolation(
        group="ml-research@example.com",
        quota=TeamQuota(pods=40, cpu=512, memory_gib=4096, tpu_chips=64),
    )


def test_the_groups_edit_binding(team):
    binding = team.one(ROLE_BINDING, "iso-isolation-edit")
    assert binding.inputs == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "research-edit", "namespace": "research", "labels": LABELS},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
        "subjects": [
            {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Group",
                "name": "ml-research@example.com",
            }
        ],
    }


def test_one_network_policy_default_deny_but_the_namespace_dns_and_google_apis(team):
    """Cloud DNS (the default): DNS at the metadata server's address; HTTPS only to
    private.googleapis.com, where the cluster's private zones resolve Google APIs."""
    (policy,) = team.of_type(NETWORK_POLICY)
    assert policy.name == "iso-isolation-network"
    assert policy.inputs["metadata"] == {
        "name": "team-network",
        "namespace": "research",
        "labels": LABELS,
    }
    assert policy.inputs["spec"] == {
        "podSelector": {},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [{"from": [{"podSelector": {}}]}],
        "egress": [
            {"to": [{"podSelector": {}}]},
            {"to": [{"ipBlock": {"cidr": "169.254.169.254/32"}}], "ports": DNS_PORTS},
            *METADATA_SERVER,
            {
                "to": [{"ipBlock": {"cidr": "199.36.153.8/30"}}],
                "ports": [{"protocol": "TCP", "port": 443}],
            },
        ],
    }


def test_kube_dns_and_a_vpc_of_unknown_dns():
    """kube-dns: its pods in kube-system; a VPC this project did not create: any public HTTPS
    address (its DNS is not known to resolve Google APIs privately)."""
    other = isolation(dns=DnsProvider.KUBE_DNS, google_apis=GoogleApiEgress.ANY_HTTPS)
    (policy,) = other.of_type(NETWORK_POLICY)
    _, dns, *_, apis = policy.inputs["spec"]["egress"]
    assert dns == {
        "to": [
            {
                "namespaceSelector": {
                    "matchLabels": {"kubernetes.io/metadata.name": "kube-system"}
                },
                "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
            }
        ],
        "ports": DNS_PORTS,
    }
    assert apis == {
        "to": [
            {
                "ipBlock": {
                    "cidr": "0.0.0.0/0",
                    "except": ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"],
                }
            }
        ],
        "ports": [{"protocol": "TCP", "port": 443}],
    }


def test_the_quota(team):
    quota = team.one(QUOTA, "iso-isolation-quota")
    assert quota.inputs["metadata"] == {
        "name": "research-quota",
        "namespace": "research",
        "labels": LABELS,
    }
    assert quota.inputs["spec"] == {
        "hard": {
            "pods": "40",
            "requests.google.com/tpu": "64",
            "services.loadbalancers": "0",
            "services.nodeports": "0",
            "count/ingresses.networking.k8s.io": "0",
        }
    }
    # CPU and memory over the pods that request them only (a TPU worker names neither)
    compute = team.one(QUOTA, "iso-isolation-compute")
    assert compute.inputs["metadata"] == {
        "name": "research-compute",
        "namespace": "research",
        "labels": LABELS,
    }
    assert compute.inputs["spec"] == {
        "hard": {"requests.cpu": "512", "requests.memory": "4096Gi"},
        "scopes": ["NotBestEffort"],
    }


def test_everything_is_a_child_on_the_explicit_provider(team):
    for resource in team.resources:
        if resource.type.startswith("kubernetes:"):
            assert resource.parent == urn(PARENT, "iso")
            assert resource.provider == urn("pulumi:providers:kubernetes", "k8s")


def test_no_group_no_binding_and_only_the_service_limits():
    bare = isolation()
    assert bare.of_type(ROLE_BINDING) == []
    assert bare.one(QUOTA, "iso-isolation-quota").inputs["spec"] == {
        "hard": {
            "services.loadbalancers": "0",
            "services.nodeports": "0",
            "count/ingresses.networking.k8s.io": "0",
        }
    }
    assert [q.name for q in bare.of_type(QUOTA)] == ["iso-isolation-quota"]  # no CPU, memory
