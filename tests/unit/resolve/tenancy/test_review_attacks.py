"""The holes an adversarial review of issue 27's isolation found (F1-F7 and minor ones),
reproduced against what the plans of research-v5p and team-research render and refused:
admission evaluated as the API server does (tests/kube_cel.py, a real CEL evaluator),
firewall, NetworkPolicy and IAM conditions as Google Cloud and Kubernetes apply them
(tests/cluster_rules.py). Each test fails without its fix."""

from __future__ import annotations

import copy

import pytest

from tests.admission import EXAMPLE_STACKS, cluster_of, rendered, research_cluster
from tests.cluster_objects import DEPLOYER, DEPLOYER_GRANTS, MEMBER, inputs
from tests.cluster_rules import (
    Destination,
    Sender,
    egress_allows,
    firewall_allows,
    iam_condition_admits,
)
from tests.kube_cel import Request
from tests.quota import FUSE_SIDECAR, admitted_form, best_effort, quota_denials

NAMESPACES = ("research", "nlp")
IMPERSONATED = "system:serviceaccount:{ns}:pathways"  # `edit` impersonates its namespace's SAs
NAMESPACE_CONTROLLER = "system:serviceaccount:kube-system:namespace-controller"
NLP_HEAD = Destination(29000, address="10.0.0.9")  # host network: the head's node address
SHARED_NODES = "pathways-research-nodes@tpu-pathways-research.iam.gserviceaccount.com"
NLP_NODES = "pathways-research-nlp-nodes@tpu-pathways-research.iam.gserviceaccount.com"


def pod(spec: dict, **metadata) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", **metadata}, "spec": spec}


def container(**fields) -> dict:
    return {"name": "c", "image": "python:3.12", **fields}


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
            "'10.16.128.0/17' overlaps teamCpuPools[0].podsCidr '10.16.0.0/16'; set it to a "
            "free range",
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
REPLICASET_CONTROLLER = "system:serviceaccount:kube-system:replicaset-controller"
OWNED_BY_REPLICASET = [
    {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "name": "squat-5d8f",
        "uid": "u",
        "controller": True,
        "blockOwnerDeletion": True,
    }
]


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
    for attack in (selecting, affinity, tolerating):
        found = cluster.denials(Request(attack, namespace, **as_deployment))
        assert any("system pool" in m for m in found), found
    # a later toleration (allowed on a running pod) too
    plain = squatter()
    assert cluster.denials(Request(plain, namespace, **as_deployment)) == []
    assert cluster.denials(
        Request(tolerating, namespace, MEMBER, operation="UPDATE", old_object=plain)
    )
    # the plain pod tolerates no taint of the system pool: the scheduler keeps it off
    assert "tolerations" not in plain["spec"]
    urgent = squatter(priorityClassName="tpu-pathways-controllers")
    found = cluster.denials(Request(urgent, namespace, **as_deployment))
    assert any("PriorityClass" in m for m in found), found


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


# --- F3: spec.nodeName past the dedicated pools' taint ----------------------------------------

NLP_NODE = "gke-pathways-research-v5p-nlp-0-abcd-1234"
JOB_CONTROLLER = "system:serviceaccount:kube-system:job-controller"
OWNED_BY_JOB = [
    {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "name": "j",
        "uid": "u",
        "controller": True,
        "blockOwnerDeletion": True,
    }
]


def test_f3_a_pod_bound_to_nlps_node_at_creation_is_refused(cluster):
    big = container(resources={"requests": {"cpu": "200", "memory": "400Gi"}})
    bare = pod({"nodeName": NLP_NODE, "containers": [big]})
    found = cluster.denials(Request(bare, "research", MEMBER))
    assert any("nodeName" in m for m in found), found
    # a queued TPU Job's pod, as the Job controller copies its template's nodeName
    tpu = container(resources={"limits": {"google.com/tpu": 4}})
    queued = pod(
        {"nodeName": NLP_NODE, "containers": [tpu], "tolerations": [{"key": "google.com/tpu"}]},
        ownerReferences=OWNED_BY_JOB,
    )
    found = cluster.denials(Request(queued, "research", JOB_CONTROLLER))
    assert any("nodeName" in m for m in found), found
    del queued["spec"]["nodeName"]
    assert cluster.denials(Request(queued, "research", JOB_CONTROLLER)) == []


def test_f3_nlps_taint_is_no_execute_and_its_own_pods_tolerate_it(owner):
    """The kubelet refuses a pod bound to the node that does not tolerate a NoExecute taint;
    nlp's pods get the toleration from their flavor, with no effect (it tolerates any)."""
    pools = {p["name"]: p["nodeConfig"] for p in inputs(owner, "NodePool")}
    for name in ("nlp-cpu", "v5p-nlp-0"):
        assert pools[name]["taints"] == [
            {"key": "tpu-pathways/dedicated-to", "value": "nlp", "effect": "NO_EXECUTE"}
        ]
    flavors = {f["metadata"]["name"]: f["spec"] for f in inputs(owner, "ResourceFlavor")}
    for name in ("cpu-nlp-cpu", "tpu-v5p-slice-2x2x2-4t-nlp"):
        assert flavors[name]["tolerations"] == [
            {"key": "tpu-pathways/dedicated-to", "operator": "Equal", "value": "nlp"}
        ]


def test_f3_a_shared_flavor_selects_only_the_shared_pools(owner, example_plan):
    """nlp's v5p nodes carry the same TPU labels as the shared v5p pool: the shared flavors
    select the shared pools' own label, which nlp's nodes lack, so research's jobs admitted on
    them never land on nlp's nodes."""
    pools = {p["name"]: p["nodeConfig"]["labels"] for p in inputs(owner, "NodePool")}
    shared = "tpu-pathways/shared-pool"
    assert {name for name, labels in pools.items() if labels.get(shared) == "true"} == {
        "cpu-np",
        "v5p-0",
        "v5p-1",
    }
    flavors = {f["metadata"]["name"]: f["spec"] for f in inputs(owner, "ResourceFlavor")}
    assert flavors["tpu-v5p-slice-2x2x2-4t"]["nodeLabels"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5p-slice",
        "cloud.google.com/gke-tpu-topology": "2x2x2",
        "node.kubernetes.io/instance-type": "ct5p-hightpu-4t",
        shared: "true",
    }
    assert flavors["cpu-cpu-np"]["nodeLabels"] == {
        "cloud.google.com/gke-nodepool": "cpu-np",
        shared: "true",
    }
    research = research_cluster(example_plan)
    pods = [made.pod for made in rendered(example_plan("research-v5p"), research)]
    assert pods
    for made in pods:
        assert made["spec"]["nodeSelector"][shared] == "true", made["metadata"]["name"]


# --- F4: squatting the shared TPU hosts outside Kueue -----------------------------------------

TPU_TOLERATION = {"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"}
KUEUE = "system:serviceaccount:kueue-system:kueue-controller-manager"


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_f4_only_a_jobs_pods_or_kueues_tolerate_the_tpu_hosts(cluster, namespace):
    on_tpu_host = {
        "nodeSelector": {"cloud.google.com/gke-nodepool": "v5p-0"},
        "tolerations": [TPU_TOLERATION],
    }
    huge = container(resources={"requests": {"cpu": "200", "memory": "400Gi"}})
    squat = pod({"containers": [huge], **on_tpu_host}, ownerReferences=OWNED_BY_REPLICASET)
    found = cluster.denials(Request(squat, namespace, REPLICASET_CONTROLLER))
    assert any("google.com/tpu" in m for m in found), found
    found = cluster.denials(Request(pod({"containers": [huge], **on_tpu_host}), namespace, MEMBER))
    assert any("google.com/tpu" in m for m in found), found
    # added later to a running pod
    running = pod({"containers": [huge]})
    tolerating = pod({"containers": [huge], "tolerations": [TPU_TOLERATION]})
    update = Request(tolerating, namespace, MEMBER, operation="UPDATE", old_object=running)
    assert any("google.com/tpu" in m for m in cluster.denials(update))
    # a Job's pod that asks for no chips (a best-effort squatter beside another team's workers)
    squatter = pod({"containers": [container()], **on_tpu_host}, ownerReferences=OWNED_BY_JOB)
    found = cluster.denials(Request(squatter, namespace, JOB_CONTROLLER))
    assert any("google.com/tpu" in m for m in found), found
    # a Job's pod that requests chips, and its later updates by any controller, keep it
    chips = container(resources={"limits": {"google.com/tpu": 4}})
    job_pod = pod({"containers": [chips], **on_tpu_host}, ownerReferences=OWNED_BY_JOB)
    assert cluster.denials(Request(job_pod, namespace, JOB_CONTROLLER)) == []
    labelled = copy.deepcopy(job_pod)
    labelled["metadata"]["labels"] = {"kueue.x-k8s.io/podset": "main"}
    relabel = Request(labelled, namespace, KUEUE, operation="UPDATE", old_object=job_pod)
    assert cluster.denials(relabel) == []
    # a pod behind Kueue's gate may carry it (Kueue admits it against the quota)
    gated = pod(
        {
            "containers": [container(resources={"limits": {"google.com/tpu": 4}})],
            "tolerations": [TPU_TOLERATION],
            "schedulingGates": [{"name": "kueue.x-k8s.io/admission"}],
        }
    )
    assert cluster.denials(Request(gated, namespace, MEMBER)) == []


# --- F5: a Service's external IPs (CVE-2020-8554) ---------------------------------------------


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_f5_no_service_of_a_team_claims_an_external_ip(cluster, owner, namespace):
    (gke,) = inputs(owner, "Cluster")
    assert gke["serviceExternalIpsConfig"] == {"enabled": False}
    plain = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "mitm"},
        "spec": {"ports": [{"port": 29001}], "selector": {"app": "mitm"}},
    }
    intercepting = copy.deepcopy(plain)
    intercepting["spec"]["externalIPs"] = ["10.0.0.9"]
    services = {"resource": "services"}
    assert cluster.denials(Request(plain, namespace, MEMBER, **services)) == []
    found = cluster.denials(Request(intercepting, namespace, MEMBER, **services))
    assert any("externalIPs" in m for m in found), found
    update = Request(
        intercepting, namespace, MEMBER, operation="UPDATE", old_object=plain, **services
    )
    assert cluster.denials(update)


# --- F6: the shared pools' account listing a dedicated team's names ---------------------------

SCRATCH = "tpu-pathways-research-pathways-research-pathways"


def test_f6_the_shared_pools_account_lists_no_prefix_that_shows_nlps_names(owner):
    """A list of ``n``, ``nl`` or ``nlp`` returns every name under ``nlp/`` too."""
    (grant,) = [
        g
        for g in inputs(owner, "BucketIAMMember")
        if g["bucket"] == SCRATCH and g["member"] == f"serviceAccount:{SHARED_NODES}"
    ]
    condition = grant["condition"]["expression"]
    bucket = f"projects/_/buckets/{SCRATCH}"
    for prefix in ("", "n", "nl", "nlp", "nlp/", "nlp/job/"):
        assert not iam_condition_admits(condition, bucket, prefix), prefix
    for prefix in ("research/", "research/llm-pretrain", "r", "nlpx/", "other"):
        assert iam_condition_admits(condition, bucket, prefix), prefix
    assert not iam_condition_admits(condition, f"{bucket}/objects/nlp/ckpt/0")
    assert iam_condition_admits(condition, f"{bucket}/objects/research/ckpt/0")


# --- F7: a controller ownerReference added after creation -------------------------------------

JOBSET_CONTROLLER = "system:serviceaccount:jobset-system:jobset-controller-manager"
OWNED_BY_JOBSET = [
    {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "name": "llm-pretrain",
        "uid": "real-uid",
        "controller": True,
    }
]
KINDS = {
    "pods": {},
    "jobs": {"resource": "jobs", "group": "batch"},
    "jobsets": {"resource": "jobsets", "group": "jobset.x-k8s.io", "version": "v1alpha2"},
}


def suspended_tpu_job() -> dict:
    """The review's Job: suspended, asking for chips, labelled like a JobSet's child."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": "j",
            "labels": {
                "jobset.sigs.k8s.io/replicatedjob-name": "worker",
                "jobset.sigs.k8s.io/restart-attempt": "0",
            },
        },
        "spec": {
            "suspend": True,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [container(resources={"limits": {"google.com/tpu": 4}})],
                }
            },
        },
    }


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_f7_a_member_cannot_patch_in_a_jobsets_controller_reference(cluster, namespace):
    jobs = KINDS["jobs"]
    job = suspended_tpu_job()
    assert cluster.denials(Request(job, namespace, MEMBER, **jobs)) == []
    adopted = copy.deepcopy(job)
    adopted["metadata"]["ownerReferences"] = OWNED_BY_JOBSET
    update = Request(adopted, namespace, MEMBER, operation="UPDATE", old_object=job, **jobs)
    found = cluster.denials(update)
    assert any("controller ownerReference" in m for m in found), found
    # the JobSet's own Job, orphaned by a member, would leave its JobSet's admission behind too
    orphan = Request(job, namespace, MEMBER, operation="UPDATE", old_object=adopted, **jobs)
    assert cluster.denials(orphan)
    # an update that keeps the references, and a controller's change, are admitted
    relabelled = copy.deepcopy(adopted)
    relabelled["metadata"]["labels"]["team"] = "x"
    keep = Request(relabelled, namespace, MEMBER, operation="UPDATE", old_object=adopted, **jobs)
    assert cluster.denials(keep) == []
    by_jobset = Request(
        adopted, namespace, JOBSET_CONTROLLER, operation="UPDATE", old_object=job, **jobs
    )
    assert cluster.denials(by_jobset) == []


@pytest.mark.parametrize("kind", ["pods", "jobsets"])
def test_f7_the_same_holds_for_pods_and_jobsets(cluster, kind):
    objects = {
        "pods": pod({"containers": [container()]}),
        "jobsets": {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {"name": "js"},
            "spec": {"replicatedJobs": []},
        },
    }
    before = objects[kind]
    after = copy.deepcopy(before)
    after["metadata"]["ownerReferences"] = OWNED_BY_JOB if kind == "pods" else OWNED_BY_JOBSET
    update = Request(
        after, "research", MEMBER, operation="UPDATE", old_object=before, **KINDS[kind]
    )
    found = cluster.denials(update)
    assert any("controller ownerReference" in m for m in found), found


# --- minor: Ingresses, and the exception of ephemeral containers ------------------------------


def test_an_ingress_is_counted_and_refused_by_default(cluster):
    """On GKE an Ingress is an external HTTP(S) load balancer: the quota over every object of
    each team namespace allows none (an object count quota of 0 refuses the first one)."""
    quotas = inputs(list(cluster.plans), "ResourceQuota")
    for namespace in NAMESPACES:
        (quota,) = [
            q
            for q in quotas
            if q["metadata"]["namespace"] == namespace and "scopes" not in q["spec"]
        ]
        assert quota["spec"]["hard"]["count/ingresses.networking.k8s.io"] == "0"


def test_an_ephemeral_container_meets_baseline_in_full_off_the_host_network(cluster):
    """The Pathways exception (the host's /tmp, host ports) stays with the host-network pods
    the policy admitted as Pathways pods; any other pod's ephemeral container update is checked
    without it."""
    volume = {"name": "t", "hostPath": {"path": "/tmp"}}
    running = pod({"containers": [container()], "volumes": [volume]})
    debugged = copy.deepcopy(running)
    debugged["spec"]["ephemeralContainers"] = [container(name="d")]
    request = Request(
        debugged,
        "research",
        MEMBER,
        operation="UPDATE",
        old_object=running,
        sub_resource="ephemeralcontainers",
    )
    assert any("hostPath" in m for m in cluster.denials(request))
