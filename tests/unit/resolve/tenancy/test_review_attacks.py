"""The holes an adversarial review of issue 27's isolation found, F1 and F2 (F3-F7 and minor
ones: test_review_attacks_f3_to_f7.py), reproduced against what the plans of research-v5p and
team-research render and refused: admission evaluated as the API server does
(tests/kube_cel.py, a real CEL evaluator), quota as its ResourceQuota plugin does
(tests/quota.py), firewall, NetworkPolicy and IAM conditions as Google Cloud and Kubernetes
apply them (tests/cluster_rules.py). Each test fails without its fix."""

from __future__ import annotations

import copy

import pytest

from tests.admission import (
    EXAMPLE_STACKS,
    IMPERSONATED,
    NAMESPACES,
    NLP_NODES,
    OWNED_BY_REPLICASET,
    SHARED_NODES,
    cluster_of,
    container,
    pod,
    rendered,
)
from tests.cluster_objects import (
    DEPLOYER,
    DEPLOYER_GRANTS,
    MEMBER,
    REPLICASET_CONTROLLER,
    inputs,
)
from tests.cluster_rules import Destination, Sender, egress_allows, firewall_allows
from tests.kube_cel import Request
from tests.quota import FUSE_SIDECAR, admitted_form, best_effort, quota_denials

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
    assert cluster.denied_by(network_policy_request(opened, namespace, user)) == ["network-policy"]
    wider = copy.deepcopy(own)
    wider["spec"]["egress"].append(opened["spec"]["egress"][0])
    update = network_policy_request(wider, namespace, user, operation="UPDATE", old_object=own)
    assert cluster.denied_by(update) == ["network-policy"]
    delete = network_policy_request(None, namespace, user, operation="DELETE", old_object=own)
    assert cluster.denied_by(delete) == ["network-policy"]
    # the stack writes it (with its RBAC; the same name without it is refused), and the
    # namespace controller deletes it with its namespace
    ungranted = network_policy_request(own, namespace, DEPLOYER)
    assert cluster.denied_by(ungranted) == ["network-policy"]
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
            member = network_policy_request(policy, namespace, MEMBER)
            assert cluster.denied_by(member) == ["network-policy"], stack
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


def _pod_range_issues(values) -> list[tuple[str, str]]:
    from components.errors import ConfigError
    from components.resolve.checks import parse_stack_config

    with pytest.raises(ConfigError) as caught:
        parse_stack_config(values)
    return [(i.key, i.message) for i in caught.value.issues if "podsCidr" in i.key]


def test_f1_two_teams_ranges_may_not_overlap_and_the_second_default_is_the_next_16(
    stack_values,
):
    from components.resolve.checks import parse_stack_config
    from components.resolve.tenancy.pod_ranges import team_pods_cidrs

    pools = [{"team": t, "machineType": "n2-standard-64"} for t in ("a", "b")]
    values = stack_values(teams=[{"name": "a"}, {"name": "b"}], teamCpuPools=pools)
    assert team_pods_cidrs(parse_stack_config(values)) == {
        "a": "10.16.0.0/16",
        "b": "10.17.0.0/16",
    }
    values["teamCpuPools"][1]["podsCidr"] = "10.16.128.0/17"
    assert _pod_range_issues(values) == [
        (
            "teamCpuPools[1].podsCidr",
            # teamCpuPools[0] has no podsCidr: the message says whose default it is
            "'10.16.128.0/17' overlaps the default teamCpuPools[0].podsCidr '10.16.0.0/16'; set "
            "it to a free range",
        )
    ]


def test_f1_a_team_pod_range_holds_the_nodes_of_the_teams_pools(stack_values):
    # GKE gives each node a /24: a /22 holds 4 nodes, and the pool may scale to 20
    pools = [
        {"team": "a", "machineType": "n2-standard-64", "maxNodes": 20, "podsCidr": "10.32.0.0/22"}
    ]
    values = stack_values(teams=[{"name": "a"}], teamCpuPools=pools)
    assert _pod_range_issues(values) == [
        (
            "teamCpuPools[0].podsCidr",
            "'10.32.0.0/22' holds the Pod ranges of 4 node(s) (GKE gives each node a /24 at its "
            "default of 110 Pods per node) but the pools may scale to 20 nodes; use a /19 or "
            "larger",
        )
    ]


# --- F2: the shared controllers, preempted or crowded out by a team --------------------------

SYSTEM_TAINT = "components.gke.io/gke-managed-components"


def squatter(**spec) -> dict:
    """The review's Deployment pod: priority high, 14 CPU and 50Gi, on the system pool."""
    big = container(resources={"requests": {"cpu": "14", "memory": "50Gi"}})
    return pod(
        {"priorityClassName": "high", "containers": [big], **spec},
        ownerReferences=OWNED_BY_REPLICASET,
    )


def test_f2_the_controllers_run_on_a_tainted_system_pool_at_a_priority_above_every_team(owner):
    (system,) = [p for p in inputs(owner, "NodePool") if p["name"] == "system-np"]
    assert system["nodeConfig"]["taints"] == [
        {"key": SYSTEM_TAINT, "value": "true", "effect": "NO_SCHEDULE"}
    ]
    patches = {
        p["metadata"]["name"]: p["spec"]["template"]["spec"]
        for p in inputs(owner, "DeploymentPatch")
    }
    assert set(patches) == {
        "jobset-controller-manager",
        "pathways-job-controller-manager",
        "kueue-controller-manager",
    }
    for spec in patches.values():
        assert spec["nodeSelector"] == {"cloud.google.com/gke-nodepool": "system-np"}
        assert spec["tolerations"] == [
            {"key": SYSTEM_TAINT, "operator": "Equal", "value": "true", "effect": "NoSchedule"}
        ]
        assert spec["priorityClassName"] == "tpu-pathways-controllers"
    # what matters against eviction: the controllers' class above every class a team may use
    # (the classes themselves: tests/components/test_stack_kueue.py)
    classes = {c["metadata"]["name"]: c["value"] for c in inputs(owner, "PriorityClass")}
    controllers = classes.pop("tpu-pathways-controllers")
    assert classes and controllers > max(classes.values())


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_f2_a_team_pod_cannot_take_the_system_pool_or_the_controllers_priority(cluster, namespace):
    as_deployment = {"username": REPLICASET_CONTROLLER}
    selecting = squatter(nodeSelector={"cloud.google.com/gke-nodepool": "system-np"})
    term = {"key": "cloud.google.com/gke-nodepool", "operator": "In", "values": ["system-np"]}
    affinity = squatter(
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [term]}]
                }
            }
        }
    )
    tolerating = squatter(tolerations=[{"key": SYSTEM_TAINT, "operator": "Exists"}])
    for attack in (selecting, affinity):
        assert cluster.denied_by(Request(attack, namespace, **as_deployment)) == ["system-pool"]
    # its toleration of the system pool's taint (the tolerations check: the system pool's,
    # every taint, another namespace's dedicated nodes)
    assert cluster.denied_by(Request(tolerating, namespace, **as_deployment)) == ["tolerations"]
    # a later toleration (allowed on a running pod) too
    plain = squatter()
    assert cluster.denials(Request(plain, namespace, **as_deployment)) == []
    update = Request(tolerating, namespace, MEMBER, operation="UPDATE", old_object=plain)
    assert cluster.denied_by(update) == ["tolerations"]
    # the plain pod tolerates no taint of the system pool: the scheduler keeps it off
    assert "tolerations" not in plain["spec"]
    urgent = squatter(priorityClassName="tpu-pathways-controllers")
    assert cluster.denied_by(Request(urgent, namespace, **as_deployment)) == ["priority-class"]


def test_f2_each_team_has_pods_cpu_and_memory_quotas_of_its_pools(cluster):
    """research: the shared pools (8 n2-standard-64 nodes, four v5p hosts); nlp: its own (2
    n2-standard-64 nodes, two v5p hosts). GKE's allocatable CPU of an n2-standard-64 is 63.77
    cores, of a 208-vCPU v5p host 207.41; memory 236.x and 437.x GiB; 110 pods per node."""
    quotas = {
        (q["metadata"]["namespace"], q["metadata"]["name"].rsplit("-", 1)[-1]): q["spec"]
        for q in inputs(list(cluster.plans), "ResourceQuota")
    }
    assert quotas[("research", "quota")]["hard"]["pods"] == "200"  # its own setting
    assert quotas[("nlp", "quota")]["hard"]["pods"] == "440"
    assert quotas[("research", "compute")] == {
        "hard": {"requests.cpu": "1339", "requests.memory": "3680Gi"},
        "scopes": ["NotBestEffort"],
    }
    assert quotas[("nlp", "compute")] == {
        "hard": {"requests.cpu": "542", "requests.memory": "1352Gi"},
        "scopes": ["NotBestEffort"],
    }
    mine = [
        q
        for q in inputs(list(cluster.plans), "ResourceQuota")
        if q["metadata"]["namespace"] == "nlp"
    ]
    hungry = pod(
        {"containers": [container(resources={"requests": {"cpu": "600", "memory": "1Gi"}})]}
    )
    assert quota_denials(mine, hungry) == ["nlp-compute: exceeded quota: requests.cpu"]
    assert quota_denials(mine, squatter()) == []
    assert quota_denials(mine, squatter(), used={"pods": 440}) == [
        "nlp-quota: exceeded quota: pods"
    ]


def test_f2_the_projects_pods_meet_their_namespaces_quotas(example_plan):
    """Every pod of every job each example stack renders (both backends, Cloud Storage FUSE's
    sidecar injected), as its controllers create it: within its namespace's quotas, and the
    ones that request CPU or memory name both in every container."""
    checked, sidecars = set(), {}
    for stack in EXAMPLE_STACKS:
        cluster = cluster_of(example_plan, stack)
        if not cluster.policies:
            continue
        quotas = inputs(list(cluster.plans), "ResourceQuota")
        for made in rendered(example_plan(stack), cluster):
            namespace = made.jobset["metadata"]["namespace"]
            mine = [q for q in quotas if q["metadata"]["namespace"] == namespace]
            assert len(mine) == 2, (stack, namespace)
            assert quota_denials(mine, made.pod) == [], (stack, made.pod["metadata"]["name"])
            admitted = admitted_form(made.pod)
            checked.add((made.backend, best_effort(admitted)))
            sidecars.update(
                ((stack, made.pod["metadata"]["name"]), c["resources"]["requests"])
                for c in admitted["spec"].get("initContainers", [])
                if c["name"] == FUSE_SIDECAR
            )
    assert checked >= {("pathwaysjob", True), ("pathwaysjob", False), ("jobset", False)}
    # dev's hello-train and research-v5p's llm-pretrain mount a bucket (PathwaysJobs: the
    # annotations are on the PathwaysJob): the sidecar is in their head pods, at GKE's default
    # requests (250m CPU, 256Mi: components/pathways/volumes.py, from cmd/webhook/main.go)
    assert sidecars == {
        ("dev", "hello-train-pathways-head-0-0"): {"cpu": "250m", "memory": "256Mi"},
        ("research-v5p", "llm-pretrain-pathways-head-0-0"): {"cpu": "250m", "memory": "256Mi"},
    }
