"""The six ways a team member with `edit` could reach past their team (issue 27), reproduced
against what the plans of research-v5p (the owner: team namespace research on the shared pools,
pools dedicated to nlp) and team-research (nlp) render, and refused. Admission is evaluated as
the API server does (tests/kube_cel.py), firewall, NetworkPolicy and IAM conditions as Google
Cloud and Kubernetes apply them (tests/cluster_rules.py). What still does not hold is in
docs/security.md, not here."""

from __future__ import annotations

import copy

import pytest
import yaml

from components.errors import ConfigError
from tests.admission import (
    IMPERSONATED,
    NAMESPACES,
    NLP_NODES,
    SCRATCH,
    SHARED_NODES,
    container,
    controlled_by,
    pod,
)
from tests.cluster_objects import (
    JOB_CONTROLLER,
    JOBSET_CONTROLLER,
    KUEUE_CONTROLLER,
    MEMBER,
    inputs,
)
from tests.cluster_rules import (
    Destination,
    Sender,
    egress_allows,
    firewall_allows,
    iam_condition_admits,
)
from tests.kube_cel import Request, _selector_matches, api_defaults

CHECKPOINTS = "tpu-pathways-research-checkpoints"
TPU = {"resources": {"limits": {"google.com/tpu": 4}}}


# --- 1. Forging the Pathways shape to get the host network ----------------------------------


def forged_pathways_pod(namespace: str) -> dict:
    """A bare pod shaped like a JobSet's Job's pod: the label, a controller reference to a Job
    without blockOwnerDeletion, the host network, the host's /tmp and port 22 on the host."""
    return api_defaults(
        pod(
            {
                "hostNetwork": True,
                "containers": [
                    container(
                        ports=[{"containerPort": 22}],
                        volumeMounts=[{"name": "t", "mountPath": "/tmp"}],
                    )
                ],
                "volumes": [{"name": "t", "hostPath": {"path": "/tmp"}}],
                "nodeSelector": {"tpu-pathways/dedicated-to": namespace},
                "tolerations": [
                    {
                        "key": "tpu-pathways/dedicated-to",
                        "operator": "Equal",
                        "value": namespace,
                        "effect": "NoSchedule",
                    }
                ],
            },
            labels={"jobset.sigs.k8s.io/jobset-name": "train"},
            ownerReferences=controlled_by("batch/v1", "Job", "train-worker-0"),
        )
    )


@pytest.mark.parametrize("namespace", NAMESPACES)
@pytest.mark.parametrize("member", [MEMBER, IMPERSONATED])
def test_1_a_forged_pathways_pod_is_refused(cluster, namespace, member):
    forged = Request(forged_pathways_pod(namespace), namespace, member.format(ns=namespace))
    assert cluster.denied_by(forged) == [
        "host-network",
        "host-path",
        "host-port",
        "owner-reference",
    ]


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_1_a_job_with_the_jobset_label_and_the_host_network_is_refused(cluster, namespace):
    template = {
        "metadata": {"labels": {"jobset.sigs.k8s.io/jobset-name": "train"}},
        "spec": {"hostNetwork": True, "containers": [container()]},
    }
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {"template": template},
    }
    found = cluster.denials(Request(job, namespace, MEMBER, resource="jobs", group="batch"))
    assert found == ["a Job with host-network pods is created by the JobSet controller only"]


def test_1_a_job_controller_pod_off_its_teams_nodes_is_refused(cluster):
    """Even a pod the Job controller creates may use the host network in a dedicated namespace
    only on the nodes dedicated to it (where it acts as the namespace's own node account)."""
    worker = forged_pathways_pod("nlp")
    worker["spec"]["containers"][0]["ports"] = [{"containerPort": 29005, "hostPort": 29005}]
    worker["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] = True
    assert cluster.denials(Request(worker, "nlp", JOB_CONTROLLER)) == []
    # off its nodes the host network is refused, and with it the Pathways pods' /tmp and ports
    refused = ["host-network", "host-path", "host-port"]
    elsewhere = copy.deepcopy(worker)
    elsewhere["spec"]["nodeSelector"] = {"tpu-pathways/dedicated-to": "research"}
    assert cluster.denied_by(Request(elsewhere, "nlp", JOB_CONTROLLER)) == refused
    del elsewhere["spec"]["nodeSelector"]
    assert cluster.denied_by(Request(elsewhere, "nlp", JOB_CONTROLLER)) == refused


# --- 2. Reading and writing another team's data ----------------------------------------------


def node_grants(owner, bucket: str) -> dict[str, dict]:
    return {
        g["member"].removeprefix("serviceAccount:"): g
        for g in inputs(owner, "BucketIAMMember")
        if g["bucket"] == bucket and g["member"].startswith("serviceAccount:")
    }


def test_2_each_node_account_reaches_its_own_teams_data_only(owner):
    grants = node_grants(owner, SCRATCH)
    assert set(grants) == {SHARED_NODES, NLP_NODES}
    nlp = grants[NLP_NODES]["condition"]["expression"]
    shared = grants[SHARED_NODES]["condition"]["expression"]

    def obj(path: str) -> str:
        return f"projects/_/buckets/{SCRATCH}/objects/{path}"

    bucket = f"projects/_/buckets/{SCRATCH}"
    # nlp's pods (its pools' account): its prefix _/nlp/ (nlp has dedicated pools), not
    # research's, no listing of the bucket
    assert iam_condition_admits(nlp, obj("_/nlp/job/ckpt"))
    assert not iam_condition_admits(nlp, obj("nlp/job/ckpt"))
    assert not iam_condition_admits(nlp, obj("research/llm-pretrain/ckpt"))
    assert iam_condition_admits(nlp, bucket, "_/nlp/")
    assert not iam_condition_admits(nlp, bucket, "")
    assert not iam_condition_admits(nlp, bucket, "_/")
    assert not iam_condition_admits(nlp, bucket, "research/")
    # research's pods (the shared pools' account): everything but _/, where nlp's prefix is
    assert iam_condition_admits(shared, obj("research/llm-pretrain/ckpt"))
    assert not iam_condition_admits(shared, obj("_/nlp/job/ckpt"))
    assert not iam_condition_admits(shared, bucket, "_/nlp/")
    assert not iam_condition_admits(shared, bucket, "")  # a list of the bucket names nlp's objects
    assert iam_condition_admits(shared, bucket, "research/")
    # the owner's checkpoints bucket: no node account at all; research's Kubernetes service
    # account (its Cloud Storage FUSE mount, through Workload Identity) under llm-pretrain/ only
    assert node_grants(owner, CHECKPOINTS) == {}
    (grant,) = [g for g in inputs(owner, "BucketIAMMember") if g["bucket"] == CHECKPOINTS]
    assert grant["member"].endswith("/subject/ns/research/sa/pathways")
    checkpoints = f"projects/_/buckets/{CHECKPOINTS}/objects/"
    assert iam_condition_admits(grant["condition"]["expression"], checkpoints + "llm-pretrain/x")
    assert not iam_condition_admits(grant["condition"]["expression"], checkpoints + "other/x")


def test_2_a_team_stack_job_naming_the_owners_bucket_is_refused():
    from components.resolve.checks import parse_stack_config
    from components.resolve.loader import load_stack
    from components.resolve.stack_files import STACKS_DIR

    contract = load_stack("team-research", STACKS_DIR).shared_cluster
    values = yaml.safe_load((STACKS_DIR / "Pulumi.team-research.yaml").read_text())["config"]
    values = {k.removeprefix("tpu-pathways:"): v for k, v in values.items()}
    values["workloads"][0].update(
        mode="training",
        image="python:3.12",
        command=["gsutil", "cp", "-r", f"gs://{CHECKPOINTS}/", "/tmp"],
    )
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(values, owner=contract)
    assert CHECKPOINTS in str(caught.value) and NLP_NODES in str(caught.value)


def test_2_research_pods_cannot_land_on_nlps_nodes(cluster):
    """Only nlp's pods tolerate its nodes' taint (and the taint keeps everyone else off)."""
    toleration = {
        "key": "tpu-pathways/dedicated-to",
        "operator": "Equal",
        "value": "nlp",
        "effect": "NoSchedule",
    }
    sneaking = pod({"containers": [container()], "tolerations": [toleration]})
    assert cluster.denied_by(Request(sneaking, "research", MEMBER)) == ["tolerations"]
    everything = pod({"containers": [container()], "tolerations": [{"operator": "Exists"}]})
    assert cluster.denied_by(Request(everything, "research", MEMBER)) == ["tolerations"]
    assert cluster.denials(Request(sneaking, "nlp", MEMBER)) == []


# --- 3. Reaching another team's Pathways head -------------------------------------------------


def test_3_host_network_pods_reach_only_their_own_pools_pathways_ports(owner):
    rules = inputs(owner, "Firewall")
    research_node, nlp_node = Sender("10.0.0.5", SHARED_NODES), Sender("10.0.0.9", NLP_NODES)
    for port in (29000, 29001, 29005, 8471):
        assert not firewall_allows(rules, research_node, NLP_NODES, port)
        assert not firewall_allows(rules, nlp_node, SHARED_NODES, port)
        assert firewall_allows(rules, nlp_node, NLP_NODES, port)
        assert firewall_allows(rules, research_node, SHARED_NODES, port)
        assert not firewall_allows(rules, Sender("203.0.113.7"), NLP_NODES, port)
    # pods off the host network reach the Pathways ports of their own pools' set only (the
    # shared pools' Pods have the cluster's range, nlp's pools' a range of their own)
    assert firewall_allows(rules, Sender("10.16.3.2"), NLP_NODES, 29000)
    assert not firewall_allows(rules, Sender("10.4.3.2"), NLP_NODES, 29000)


def test_3_pods_off_the_host_network_reach_their_own_namespace_only(cluster):
    policies = inputs(list(cluster.plans), "NetworkPolicy")
    assert egress_allows(policies, "research", Destination(29000, pod_namespace="research"))
    assert not egress_allows(policies, "research", Destination(29000, pod_namespace="nlp"))
    assert not egress_allows(policies, "research", Destination(29000, address="10.0.0.9"))


# --- 4. Going around Kueue and preempting other teams ----------------------------------------


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_4_tpus_only_through_kueue(cluster, namespace):
    bare = pod({"containers": [container(**TPU)]})
    assert cluster.denied_by(Request(bare, namespace, MEMBER)) == ["tpu-pod"]
    # a forged controller reference to the team's own admitted Job (Kueue trusts it by name)
    forged = pod(
        {"containers": [container(**TPU)]},
        ownerReferences=controlled_by("batch/v1", "Job", "admitted"),
    )
    assert cluster.denied_by(Request(forged, namespace, MEMBER)) == ["owner-reference", "tpu-pod"]
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {"template": {"spec": {"containers": [container(**TPU)]}}},
    }
    jobs = {"resource": "jobs", "group": "batch"}
    assert cluster.denied_by(Request(job, namespace, MEMBER, **jobs)) == ["tpu-job"]
    suspended = copy.deepcopy(job)
    suspended["spec"]["suspend"] = True
    assert cluster.denials(Request(suspended, namespace, MEMBER, **jobs)) == []
    # only Kueue (or JobSet, for its own Jobs) lifts the suspension: it admitted the job
    resume = Request(job, namespace, MEMBER, operation="UPDATE", old_object=suspended, **jobs)
    assert cluster.denied_by(resume) == ["resume"]
    for controller in (KUEUE_CONTROLLER, JOBSET_CONTROLLER):
        resume = Request(
            job, namespace, controller, operation="UPDATE", old_object=suspended, **jobs
        )
        assert cluster.denials(resume) == []
    gated = pod(
        {"containers": [container()], "schedulingGates": [{"name": "kueue.x-k8s.io/admission"}]}
    )
    ungated = pod({"containers": [container()]})
    ungate = Request(ungated, namespace, MEMBER, operation="UPDATE", old_object=gated)
    assert cluster.denied_by(ungate) == ["ungate"]
    ungate = Request(ungated, namespace, KUEUE_CONTROLLER, operation="UPDATE", old_object=gated)
    assert cluster.denials(ungate) == []


def test_4_kueue_manages_every_job_of_every_team_namespace(owner, cluster):
    (patch,) = inputs(owner, "ConfigMapPatch")
    configuration = yaml.safe_load(patch["data"]["controller_manager_config.yaml"])
    assert configuration["manageJobsWithoutQueueName"] is True
    assert configuration["integrations"]["frameworks"] == ["batch/job", "jobset.x-k8s.io/jobset"]
    selector = configuration["managedJobsNamespaceSelector"]
    for namespace, labels in cluster.namespaces.items():
        assert _selector_matches(selector, labels), namespace
    assert not _selector_matches(selector, {"kubernetes.io/metadata.name": "kube-system"})


def test_4_every_team_has_a_tpu_quota(cluster):
    quotas = {
        q["metadata"]["namespace"]: q["spec"]["hard"]
        for q in inputs(list(cluster.plans), "ResourceQuota")
    }
    # research sets 64; nlp's share is its dedicated slice: one v5p-16, 8 chips
    assert {ns: quotas[ns]["requests.google.com/tpu"] for ns in NAMESPACES} == {
        "research": "64",
        "nlp": "8",
    }


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_4_very_high_priority_is_refused(cluster, namespace):
    urgent = pod({"containers": [container()], "priorityClassName": "very-high"})
    assert cluster.denied_by(Request(urgent, namespace, MEMBER)) == ["priority-class"]
    high = pod({"containers": [container()], "priorityClassName": "high"})
    assert cluster.denials(Request(high, namespace, MEMBER)) == []
    labelled = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j", "labels": {"kueue.x-k8s.io/priority-class": "very-high"}},
        "spec": {"suspend": True, "template": {"spec": {"containers": [container()]}}},
    }
    jobs = {"resource": "jobs", "group": "batch"}
    assert cluster.denied_by(Request(labelled, namespace, MEMBER, **jobs)) == ["priority-class"]


# --- 5. What Pod Security baseline forbids, and /tmp -----------------------------------------


UNCONFINED = {"appArmorProfile": {"type": "Unconfined"}}


@pytest.mark.parametrize(
    ("spec", "check"),
    [
        ({"securityContext": UNCONFINED, "containers": [container()]}, "apparmor"),
        ({"containers": [container(securityContext=UNCONFINED)]}, "apparmor"),
        (
            {"securityContext": {"seLinuxOptions": {"type": "spc_t"}}, "containers": [container()]},
            "selinux",
        ),
        (
            {
                "securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "1"}]},
                "containers": [container()],
            },
            "sysctls",
        ),
        (
            {"containers": [container()], "volumes": [{"name": "t", "hostPath": {"path": "/tmp"}}]},
            "host-path",
        ),
        (
            {
                "containers": [
                    container(startupProbe={"tcpSocket": {"host": "10.0.0.1", "port": 1}})
                ]
            },
            "probe-host",
        ),
        (
            {
                "containers": [
                    container(lifecycle={"preStop": {"httpGet": {"host": "x", "port": 1}}})
                ]
            },
            "probe-host",
        ),
    ],
)
@pytest.mark.parametrize("namespace", NAMESPACES)
def test_5_baseline_holds_beyond_the_fixtures(cluster, namespace, spec, check):
    assert cluster.denied_by(Request(pod(spec), namespace, MEMBER)) == [check]


def test_5_the_apparmor_annotation_and_an_ephemeral_container_are_checked(cluster):
    unconfined = pod(
        {"containers": [container()]},
        annotations={"container.apparmor.security.beta.kubernetes.io/c": "unconfined"},
    )
    assert cluster.denied_by(Request(unconfined, "research", MEMBER)) == ["apparmor"]
    running = pod({"containers": [container()]})
    debug = copy.deepcopy(running)
    debug["spec"]["ephemeralContainers"] = [
        container(name="d", securityContext={"privileged": True})
    ]
    request = Request(
        debug,
        "research",
        MEMBER,
        operation="UPDATE",
        old_object=running,
        sub_resource="ephemeralcontainers",
    )
    assert cluster.denied_by(request) == ["privileged"]


def test_5_namespaces_without_host_network_pods_enforce_baseline(plan_of, stack_values):
    """Two teams that declared nothing share no node identity: neither gets the host network,
    and Pod Security enforces baseline in both."""
    plan = plan_of(stack_values(teams=[{"name": "a"}, {"name": "b"}]))
    for namespace in inputs(plan, "Namespace"):
        labels = namespace["metadata"]["labels"]
        assert labels["pod-security.kubernetes.io/enforce"] == "baseline"
        assert labels["tpu-pathways/host-network"] == "none"


# --- 6. Sending data anywhere -----------------------------------------------------------------


def test_6_team_pods_send_https_to_google_apis_only(cluster, owner):
    policies = inputs(list(cluster.plans), "NetworkPolicy")
    for namespace in NAMESPACES:
        assert egress_allows(policies, namespace, Destination(443, address="199.36.153.9"))
        assert not egress_allows(policies, namespace, Destination(443, address="8.8.8.8"))
        assert not egress_allows(policies, namespace, Destination(443, address="142.250.1.1"))
    zones = {z["dnsName"]: z for z in inputs(owner, "ManagedZone")}
    assert set(zones) == {"googleapis.com.", "pkg.dev.", "gcr.io."}
    assert all(z["visibility"] == "private" for z in zones.values())
    records = {(r["name"], r["type"]): r["rrdatas"] for r in inputs(owner, "RecordSet")}
    assert records[("private.googleapis.com.", "A")] == [f"199.36.153.{i}" for i in (8, 9, 10, 11)]
    assert records[("*.googleapis.com.", "CNAME")] == ["private.googleapis.com."]


def test_6_dns_goes_to_the_provider_the_cluster_sets(cluster, owner, plan_of, stack_values):
    (gke,) = inputs(owner, "Cluster")
    assert gke["dnsConfig"] == {"clusterDns": "CLOUD_DNS", "clusterDnsScope": "CLUSTER_SCOPE"}
    policies = inputs(list(cluster.plans), "NetworkPolicy")
    for namespace in NAMESPACES:
        assert egress_allows(policies, namespace, Destination(53, "UDP", address="169.254.169.254"))
        kube_dns = Destination(
            53, "UDP", pod_namespace="kube-system", pod_labels={"k8s-app": "kube-dns"}
        )
        assert not egress_allows(policies, namespace, kube_dns)
    kube = plan_of(stack_values(cluster={"dns": "kubeDns"}))
    (gke,) = inputs(kube, "Cluster")
    assert gke["dnsConfig"] == {"clusterDns": "KUBE_DNS"}
    assert gke["addonsConfig"]["dnsCacheConfig"] == {"enabled": False}
    policies = inputs(kube, "NetworkPolicy")
    assert egress_allows(policies, "pathways", kube_dns)
    assert not egress_allows(
        policies, "pathways", Destination(53, "UDP", address="169.254.169.254")
    )
