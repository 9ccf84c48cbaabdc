"""The holes an adversarial review of issue 27's isolation found, F3-F7 and minor ones (F1 and
F2: test_review_attacks.py), reproduced against what the plans of research-v5p and
team-research render and refused: admission evaluated as the API server does
(tests/kube_cel.py, a real CEL evaluator), IAM conditions as Google Cloud applies them
(tests/cluster_rules.py). Each test fails without its fix."""

from __future__ import annotations

import copy

import pytest

from tests.admission import (
    NAMESPACES,
    OWNED_BY_JOB,
    OWNED_BY_REPLICASET,
    SCRATCH,
    SHARED_NODES,
    container,
    controlled_by,
    pod,
    rendered,
    research_cluster,
)
from tests.cluster_objects import (
    JOB_CONTROLLER,
    JOBSET_CONTROLLER,
    KUEUE_CONTROLLER,
    MEMBER,
    REPLICASET_CONTROLLER,
    inputs,
)
from tests.cluster_rules import iam_condition_admits
from tests.kube_cel import Request

# --- F3: spec.nodeName past the dedicated pools' taint ----------------------------------------

NLP_NODE = "gke-pathways-research-v5p-nlp-0-abcd-1234"


def test_f3_a_pod_bound_to_nlps_node_at_creation_is_refused(cluster):
    big = container(resources={"requests": {"cpu": "200", "memory": "400Gi"}})
    bare = pod({"nodeName": NLP_NODE, "containers": [big]})
    assert cluster.denied_by(Request(bare, "research", MEMBER)) == ["node-name"]
    # a queued TPU Job's pod, as the Job controller copies its template's nodeName
    tpu = container(resources={"limits": {"google.com/tpu": 4}})
    queued = pod(
        {"nodeName": NLP_NODE, "containers": [tpu], "tolerations": [{"key": "google.com/tpu"}]},
        ownerReferences=OWNED_BY_JOB,
    )
    assert cluster.denied_by(Request(queued, "research", JOB_CONTROLLER)) == ["node-name"]
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


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_f4_only_a_jobs_pods_or_kueues_tolerate_the_tpu_hosts(cluster, namespace):
    on_tpu_host = {
        "nodeSelector": {"cloud.google.com/gke-nodepool": "v5p-0"},
        "tolerations": [TPU_TOLERATION],
    }
    huge = container(resources={"requests": {"cpu": "200", "memory": "400Gi"}})
    squat = pod({"containers": [huge], **on_tpu_host}, ownerReferences=OWNED_BY_REPLICASET)
    assert cluster.denied_by(Request(squat, namespace, REPLICASET_CONTROLLER)) == ["tpu-taint"]
    bare = pod({"containers": [huge], **on_tpu_host})
    assert cluster.denied_by(Request(bare, namespace, MEMBER)) == ["tpu-taint"]
    # added later to a running pod
    running = pod({"containers": [huge]})
    tolerating = pod({"containers": [huge], "tolerations": [TPU_TOLERATION]})
    update = Request(tolerating, namespace, MEMBER, operation="UPDATE", old_object=running)
    assert cluster.denied_by(update) == ["tpu-taint"]
    # a Job's pod that asks for no chips (a best-effort squatter beside another team's workers)
    squatter = pod({"containers": [container()], **on_tpu_host}, ownerReferences=OWNED_BY_JOB)
    assert cluster.denied_by(Request(squatter, namespace, JOB_CONTROLLER)) == ["tpu-taint"]
    # a Job's pod that requests chips, and its later updates by any controller, keep it
    chips = container(resources={"limits": {"google.com/tpu": 4}})
    job_pod = pod({"containers": [chips], **on_tpu_host}, ownerReferences=OWNED_BY_JOB)
    assert cluster.denials(Request(job_pod, namespace, JOB_CONTROLLER)) == []
    labelled = copy.deepcopy(job_pod)
    labelled["metadata"]["labels"] = {"kueue.x-k8s.io/podset": "main"}
    relabel = Request(labelled, namespace, KUEUE_CONTROLLER, operation="UPDATE", old_object=job_pod)
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
    found = cluster.denied_by(Request(intercepting, namespace, MEMBER, **services))
    assert found == ["external-ips"]
    update = Request(
        intercepting, namespace, MEMBER, operation="UPDATE", old_object=plain, **services
    )
    assert cluster.denied_by(update) == ["external-ips"]


# --- F6: the shared pools' account listing a dedicated team's names ---------------------------


def test_f6_the_shared_pools_account_lists_no_prefix_that_shows_nlps_names(owner):
    """A list of ``p`` returns every name that starts with ``p``: nlp's prefix is ``_/nlp/``
    (it has dedicated pools), so the lists of ``""``, ``_`` and anything under ``_/`` would
    show its names."""
    (grant,) = [
        g
        for g in inputs(owner, "BucketIAMMember")
        if g["bucket"] == SCRATCH and g["member"] == f"serviceAccount:{SHARED_NODES}"
    ]
    condition = grant["condition"]["expression"]
    bucket = f"projects/_/buckets/{SCRATCH}"
    for prefix in ("", "_", "_/", "_/n", "_/nlp", "_/nlp/", "_/nlp/job/"):
        assert not iam_condition_admits(condition, bucket, prefix), prefix
    for prefix in ("research/", "research/llm-pretrain", "r", "nlp", "nlpx/", "__", "other"):
        assert iam_condition_admits(condition, bucket, prefix), prefix
    assert not iam_condition_admits(condition, f"{bucket}/objects/_/nlp/ckpt/0")
    assert iam_condition_admits(condition, f"{bucket}/objects/research/ckpt/0")


# --- F7: a controller ownerReference added after creation -------------------------------------

OWNED_BY_JOBSET = controlled_by(
    "jobset.x-k8s.io/v1alpha2", "JobSet", "llm-pretrain", uid="real-uid"
)
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
    assert cluster.denied_by(update) == ["owner-reference"]
    # the JobSet's own Job, orphaned by a member, would leave its JobSet's admission behind too
    orphan = Request(job, namespace, MEMBER, operation="UPDATE", old_object=adopted, **jobs)
    assert cluster.denied_by(orphan) == ["owner-reference"]
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
    assert cluster.denied_by(update) == ["owner-reference"]


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
    assert cluster.denied_by(request) == ["host-path"]
