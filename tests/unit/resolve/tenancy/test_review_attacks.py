"""The holes an adversarial review of issue 27's isolation found (F1-F7 and minor ones),
reproduced against what the plans of research-v5p and team-research render and refused:
admission evaluated as the API server does (tests/kube_cel.py, a real CEL evaluator),
firewall, NetworkPolicy and IAM conditions as Google Cloud and Kubernetes apply them
(tests/cluster_rules.py). Each test fails without its fix."""

from __future__ import annotations

import copy

import pytest

from tests.admission import EXAMPLE_STACKS, cluster_of
from tests.cluster_objects import DEPLOYER, DEPLOYER_GRANTS, MEMBER, inputs
from tests.cluster_rules import Destination, Sender, egress_allows, firewall_allows
from tests.kube_cel import Request

NAMESPACES = ("research", "nlp")
IMPERSONATED = "system:serviceaccount:{ns}:pathways"  # `edit` impersonates its namespace's SAs
NAMESPACE_CONTROLLER = "system:serviceaccount:kube-system:namespace-controller"
NLP_HEAD = Destination(29000, address="10.0.0.9")  # host network: the head's node address
SHARED_NODES = "pathways-research-nodes@tpu-pathways-research.iam.gserviceaccount.com"
NLP_NODES = "pathways-research-nlp-nodes@tpu-pathways-research.iam.gserviceaccount.com"


# --- F1: a member's own NetworkPolicy, and the whole pod range on the Pathways ports ----------


def allow_everything_out(namespace: str) -> dict:
    """The review's NetworkPolicy: every pod of the namespace may send anywhere."""
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "allow-out", "namespace": namespace},
        "spec": {
            "podSelector": {},
            "policyTypes": ["Egress"],
            "egress": [{"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}]}],
        },
    }


def network_policy_request(policy, namespace, user, **more) -> Request:
    return Request(
        policy, namespace, user, resource="networkpolicies", group="networking.k8s.io", **more
    )


@pytest.mark.parametrize("namespace", NAMESPACES)
@pytest.mark.parametrize("member", [MEMBER, IMPERSONATED])
def test_f1_a_member_cannot_add_change_or_delete_a_network_policy(cluster, namespace, member):
    user = member.format(ns=namespace)
    rendered = inputs(list(cluster.plans), "NetworkPolicy")
    (own,) = [p for p in rendered if p["metadata"]["namespace"] == namespace]
    opened = allow_everything_out(namespace)
    # the attack: policies add up, so the member's would open the head of nlp to research
    assert not egress_allows(rendered, namespace, NLP_HEAD)
    assert egress_allows([*rendered, opened], namespace, NLP_HEAD)
    assert cluster.denials(network_policy_request(opened, namespace, user))
    wider = copy.deepcopy(own)
    wider["spec"]["egress"].append(opened["spec"]["egress"][0])
    update = network_policy_request(wider, namespace, user, operation="UPDATE", old_object=own)
    assert cluster.denials(update)
    delete = network_policy_request(None, namespace, user, operation="DELETE", old_object=own)
    assert cluster.denials(delete)
    # the stack writes it, and the namespace controller deletes it with its namespace
    assert cluster.denials(network_policy_request(own, namespace, DEPLOYER)) != []
    deployer = network_policy_request(own, namespace, DEPLOYER, grants=DEPLOYER_GRANTS)
    assert cluster.denials(deployer) == []
    cleanup = network_policy_request(
        None, namespace, NAMESPACE_CONTROLLER, operation="DELETE", old_object=own
    )
    assert cluster.denials(cleanup) == []


def test_f1_every_rendered_network_policy_is_the_deployers_to_write(example_plan):
    """Each example stack's deployer creates its namespaces' NetworkPolicy, the policy
    admits it (and the policy binds every team namespace)."""
    checked = 0
    for stack in EXAMPLE_STACKS:
        cluster = cluster_of(example_plan, stack)
        if not cluster.policies:
            continue
        for policy in inputs(cluster.plans[-1], "NetworkPolicy"):
            namespace = policy["metadata"]["namespace"]
            deployer = network_policy_request(policy, namespace, DEPLOYER, grants=DEPLOYER_GRANTS)
            assert cluster.denials(deployer) == [], (stack, namespace)
            assert cluster.denials(network_policy_request(policy, namespace, MEMBER)), stack
            checked += 1
    assert checked >= 5


def test_f1_the_pathways_ports_of_nlps_pools_admit_nlps_pods_only(owner):
    """nlp's pools give their Pods addresses from a range of their own, and the firewall of
    their Pathways ports admits that range, not the cluster's: a research pod under any
    NetworkPolicy does not reach nlp's head, nlp's own pods do."""
    (subnet,) = inputs(owner, "Subnetwork")
    ranges = {r["rangeName"]: r["ipCidrRange"] for r in subnet["secondaryIpRanges"]}
    assert ranges == {"pods": "10.4.0.0/14", "services": "10.8.0.0/20", "pods-nlp": "10.16.0.0/16"}
    pod_ranges = {
        p["name"]: p.get("networkConfig", {}).get("podRange") for p in inputs(owner, "NodePool")
    }
    assert pod_ranges == {
        "system-np": None,
        "cpu-np": None,
        "v5p-0": None,
        "v5p-1": None,
        "nlp-cpu": "pods-nlp",
        "v5p-nlp-0": "pods-nlp",
    }
    (gke,) = inputs(owner, "Cluster")
    assert gke["ipAllocationPolicy"]["additionalPodRangesConfig"] == {"podRangeNames": ["pods-nlp"]}
    rules = inputs(owner, "Firewall")
    research_pod, nlp_pod = Sender("10.4.3.2"), Sender("10.16.3.2")
    for port in (29000, 29001, 29005, 8471):
        assert not firewall_allows(rules, research_pod, NLP_NODES, port)
        assert firewall_allows(rules, nlp_pod, NLP_NODES, port)
        assert firewall_allows(rules, research_pod, SHARED_NODES, port)
        assert not firewall_allows(rules, nlp_pod, SHARED_NODES, port)


def test_f1_a_dedicated_pod_range_overlapping_the_network_is_refused(stack_values):
    from components.errors import ConfigError
    from components.resolve.checks import parse_stack_config

    values = stack_values(
        cluster={"network": {"podsCidr": "10.16.0.0/14"}},
        teams=[{"name": "a"}, {"name": "b"}],
        teamCpuPools=[{"team": "a", "machineType": "n2-standard-64"}],
    )
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(values)
    assert [(i.key, i.message) for i in caught.value.issues if "podsCidr" in i.key] == [
        (
            "teamCpuPools[0].podsCidr",
            "its default '10.16.0.0/16' overlaps cluster.network.podsCidr '10.16.0.0/14'; set "
            "it to a free range",
        )
    ]
    values["teamCpuPools"][0]["podsCidr"] = "10.32.0.0/16"
    assert parse_stack_config(values).team_cpu_pools[0].pods_cidr == "10.32.0.0/16"
