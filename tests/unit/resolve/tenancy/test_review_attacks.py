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
from tests.cluster_rules import Destination, egress_allows
from tests.kube_cel import Request

NAMESPACES = ("research", "nlp")
IMPERSONATED = "system:serviceaccount:{ns}:pathways"  # `edit` impersonates its namespace's SAs
NAMESPACE_CONTROLLER = "system:serviceaccount:kube-system:namespace-controller"
NLP_HEAD = Destination(29000, address="10.0.0.9")  # host network: the head's node address


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
