"""What a cluster makes of the objects a plan renders, for the admission and isolation tests: the
pods of a JobSet or a PathwaysJob as their controllers create them, with what Kueue adds when it
admits them, and who creates each object (``request.userInfo.username``).

Facts modelled (upstream, not this project's code):
- JobSet v0.10.1: a replicated job's Job gets the JobSet's pod template, the labels
  ``jobset.sigs.k8s.io/jobset-name`` and ``replicatedjob-name``, and a controller
  ownerReference to the JobSet; the JobSet controller creates it
  (``labelAndAnnotateObject``; ``ctrl.SetControllerReference``).
- The Job controller creates each pod with a controller ownerReference to its Job
  (``blockOwnerDeletion: true``).
- PathwaysJob v0.1.4 (internal/controller/pathwaysjob_controller.go): the head is the user's pod
  template plus the resource manager (ports 29001, 29002; CPU and memory limits) and proxy
  (29000; the same) as sidecar init containers, or those two alone (headless); workers run
  ``pathways-worker`` (ports 29005, 29006, 8471, 8080) with ``google.com/tpu`` limits, the
  host's ``/tmp`` and the accelerator and topology nodeSelector; every pod on the host
  network. Annotations: the JobSet and the head's pod template get the PathwaysJob's own
  (``mainJobSetConfig``; ``MakePathwaysHeadReplicatedJob``, which adds
  ``alpha.jobset.sigs.k8s.io/exclusive-topology: kubernetes.io/hostname`` in the default
  deployment mode); the user's template gives the head its spec only, never its metadata
  (``MakePathwaysHeadPodSpec``); the workers' pod template has the exclusive-topology
  annotation on ``cloud.google.com/gke-nodepool`` alone (``MakeWorkerJob``). So the Cloud
  Storage FUSE annotations reach the head pod from the PathwaysJob's metadata.
- Kueue v0.17.1: a Job or JobSet it manages is created suspended (its webhook), and on admission
  gets each podset's flavor ``nodeLabels`` as nodeSelector and its ``tolerations``: the flavor
  of the ClusterQueue the namespace's LocalQueue points at that covers what the podset requests.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from typing import Any

from components.plan.model import Plan
from tests.kube_cel import api_defaults

JOB_CONTROLLER = "system:serviceaccount:kube-system:job-controller"
REPLICASET_CONTROLLER = "system:serviceaccount:kube-system:replicaset-controller"
JOBSET_CONTROLLER = "system:serviceaccount:jobset-system:jobset-controller-manager"
PATHWAYS_CONTROLLER = "system:serviceaccount:pathways-job-system:pathways-job-controller-manager"
KUEUE_CONTROLLER = "system:serviceaccount:kueue-system:kueue-controller-manager"
# The value of a JobSet's spec.managedBy that its own controller runs (jobset v0.10.1
# api/jobset/v1alpha2 ``JobSetControllerName``).
JOBSET_CONTROLLER_NAME = "jobset.sigs.k8s.io/jobset-controller"
DEPLOYER = "deployer@example.com"
"""Who runs `pulumi up` (any identity allowed to create JobSets and PathwaysJobs)."""
DEPLOYER_GRANTS = frozenset({("*", "*", "*")})
"""The deployer's RBAC (``kube_cel.Request.grants``): the owner stack's creates cluster-wide
objects (namespaces, admission policies), so every right."""
MEMBER = "alice@example.com"
"""A member of a team's group: the ClusterRole edit in the team's namespace."""
TPU = "google.com/tpu"
EXCLUSIVE_TOPOLOGY = "alpha.jobset.sigs.k8s.io/exclusive-topology"
KUEUE = "kueue.x-k8s.io/v1beta2"


def inputs(plan: Plan | Sequence[Plan], kind: str) -> list[dict[str, Any]]:
    """Every registered object of a Kubernetes ``kind`` in a plan or plans (its inputs: what is
    applied): a team stack's objects are on the cluster with its owner's."""
    plans = [plan] if isinstance(plan, Plan) else list(plan)
    return [
        r.inputs
        for p in plans
        for r in p.resources
        if r.type.rsplit(":", 1)[-1] == kind and r.custom
    ]


def kueue_flavors(plan: Plan | Sequence[Plan], namespace: str) -> dict[str, dict[str, Any]]:
    """The flavor specs a job of ``namespace`` can be admitted on, by the resource they cover
    ("cpu" for heads, TPU for workers): the LocalQueue's ClusterQueue's first flavor of each."""
    local = [q for q in inputs(plan, "LocalQueue") if q["metadata"].get("namespace") == namespace]
    if not local:
        return {}
    queue_name = local[0]["spec"]["clusterQueue"]
    queue = next(q for q in inputs(plan, "ClusterQueue") if q["metadata"]["name"] == queue_name)
    flavors = {f["metadata"]["name"]: f["spec"] for f in inputs(plan, "ResourceFlavor")}
    found = {}
    for group in queue["spec"]["resourceGroups"]:
        for resource in group["coveredResources"]:
            found.setdefault(resource, flavors[group["flavors"][0]["name"]])
    return found


def admitted(pod_spec: dict[str, Any], flavor: dict[str, Any] | None) -> dict[str, Any]:
    """A podset's spec as Kueue leaves it on admission on ``flavor`` (None: not queued)."""
    spec = copy.deepcopy(pod_spec)
    if flavor:
        spec["nodeSelector"] = {**spec.get("nodeSelector", {}), **flavor.get("nodeLabels", {})}
        if flavor.get("tolerations"):
            spec["tolerations"] = [*spec.get("tolerations", []), *flavor["tolerations"]]
    return spec


def requests_tpu(pod_spec: dict[str, Any]) -> bool:
    containers = [*pod_spec.get("initContainers", []), *pod_spec.get("containers", [])]
    return any(
        TPU in c.get("resources", {}).get(key, {})
        for c in containers
        for key in ("limits", "requests")
    )


def _owner(api_version: str, kind: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": f"uid-{name}",
        "controller": True,
        "blockOwnerDeletion": True,
    }


def job_pod(
    job_name: str,
    namespace: str,
    pod_spec: dict[str, Any],
    labels: dict,
    annotations: dict[str, str] | None = None,
) -> dict:
    """The pod the Job controller creates for Job ``job_name`` (API defaults applied), with its
    template's ``annotations``."""
    metadata = {
        "name": f"{job_name}-0",
        "namespace": namespace,
        "labels": {**labels, "job-name": job_name},
        "ownerReferences": [_owner("batch/v1", "Job", job_name)],
    }
    if annotations:
        metadata["annotations"] = dict(annotations)
    return api_defaults({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": pod_spec})


def jobset_jobs(jobset: dict[str, Any], plan: Plan | Sequence[Plan]) -> Iterator[tuple[dict, dict]]:
    """Each replicated job's Job (as the JobSet controller creates it, after Kueue admitted the
    JobSet) and its pod (as the Job controller creates it). None of a JobSet another controller
    manages (``spec.managedBy``: a fleet's, MultiKueue's): the JobSet controller skips it
    (kubernetes-sigs/jobset v0.10.1 jobset_controller.go ``managedByExternalController``) and
    its pods run on the worker MultiKueue copies it to."""
    if jobset["spec"].get("managedBy", JOBSET_CONTROLLER_NAME) != JOBSET_CONTROLLER_NAME:
        return
    name, namespace = jobset["metadata"]["name"], jobset["metadata"]["namespace"]
    flavors = kueue_flavors(plan, namespace) if _queued(jobset) else {}
    for replicated in jobset["spec"]["replicatedJobs"]:
        template = replicated["template"]["spec"]["template"]
        flavor = flavors.get(TPU if requests_tpu(template["spec"]) else "cpu")
        pod_spec = admitted(template["spec"], flavor)
        labels = {
            **template.get("metadata", {}).get("labels", {}),
            "jobset.sigs.k8s.io/jobset-name": name,
            "jobset.sigs.k8s.io/replicatedjob-name": replicated["name"],
        }
        job_name = f"{name}-{replicated['name']}-0"
        job = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": job_name,
                "namespace": namespace,
                "labels": labels,
                "ownerReferences": [_owner("jobset.x-k8s.io/v1alpha2", "JobSet", name)],
            },
            "spec": {**replicated["template"]["spec"], "template": {"spec": pod_spec}},
        }
        annotations = template.get("metadata", {}).get("annotations")
        yield job, job_pod(job_name, namespace, pod_spec, labels, annotations)


def _queued(manifest: dict[str, Any]) -> bool:
    return "kueue.x-k8s.io/queue-name" in manifest["metadata"].get("labels", {})


def as_kueue_created(manifest: dict[str, Any]) -> dict[str, Any]:
    """A JobSet as the API server admits it in a namespace whose jobs Kueue manages: its
    webhook suspended it (mutating admission runs before validating)."""
    created = copy.deepcopy(manifest)
    created["spec"]["suspend"] = True
    return created


def _container(name: str, ports: list[int], **more: Any) -> dict[str, Any]:
    return {
        "name": name,
        "image": f"us-docker.pkg.dev/cloud-tpu-v2-images/pathways/{name}",
        "ports": [{"containerPort": p} for p in ports],
        **more,
    }


def pathwaysjob_jobset(job: dict[str, Any]) -> dict[str, Any]:
    """The JobSet the PathwaysJob controller creates for ``job`` (the parts admission reads)."""
    spec, meta = job["spec"], job["metadata"]
    controller = spec["controller"]
    template = copy.deepcopy(controller.get("template", {"spec": {"containers": []}}))
    head = template["spec"]
    # their limits (l.605, l.647): 8 CPU and 32G, 16 CPU and 100G
    rm_limits = {"limits": {"cpu": "8", "memory": "32000000000"}}
    proxy_limits = {"limits": {"cpu": "16", "memory": "100000000000"}}
    sidecars = [
        _container("pathways-rm", [29001, 29002], restartPolicy="Always", resources=rm_limits),
        _container("pathways-proxy", [29000], restartPolicy="Always", resources=proxy_limits),
    ]
    if head["containers"]:
        head["initContainers"] = [*head.get("initContainers", []), *sidecars]
    else:
        head["containers"] = [
            {k: v for k, v in c.items() if k != "restartPolicy"} for c in sidecars
        ]
    head.update(hostNetwork=True, dnsPolicy="ClusterFirstWithHostNet")
    worker_spec = spec["workers"][0]
    worker = {
        "hostNetwork": True,
        "dnsPolicy": "ClusterFirstWithHostNet",
        "nodeSelector": dict(worker_spec.get("nodeSelector", {})),
        "containers": [
            _container(
                "pathways-worker",
                [29005, 29006, 8471, 8080],
                resources={"limits": {TPU: 4}},
                volumeMounts=[{"name": "shared-tmp", "mountPath": "/tmp"}],
            )
        ],
        "volumes": [
            {"name": "shared-tmp", "hostPath": {"path": "/tmp", "type": "DirectoryOrCreate"}}
        ],
    }
    if worker_spec.get("priorityClassName"):
        worker["priorityClassName"] = worker_spec["priorityClassName"]

    def replicated(name: str, pod_spec: dict[str, Any], annotations: dict[str, str]) -> dict:
        pod = {"metadata": {"annotations": annotations}, "spec": pod_spec}
        return {"name": name, "template": {"spec": {"template": pod}}}

    own = dict(meta.get("annotations") or {})
    head_annotations = dict(own)
    if controller.get("deploymentMode") == "default":
        head_annotations[EXCLUSIVE_TOPOLOGY] = "kubernetes.io/hostname"
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "labels": dict(meta.get("labels", {})),
            "annotations": own,
            "ownerReferences": [
                _owner("pathways-job.pathways.domain/v1", "PathwaysJob", meta["name"])
            ],
        },
        "spec": {
            "replicatedJobs": [
                replicated("pathways-head", head, head_annotations),
                replicated("worker", worker, {EXCLUSIVE_TOPOLOGY: "cloud.google.com/gke-nodepool"}),
            ]
        },
    }


def team_namespaces(plan: Plan) -> dict[str, dict[str, str]]:
    """Every team namespace the plan creates, with its labels."""
    return {
        ns["metadata"]["name"]: ns["metadata"].get("labels", {})
        for ns in inputs(plan, "Namespace")
        if "tpu-pathways/team-namespace" in ns["metadata"].get("labels", {})
    }
