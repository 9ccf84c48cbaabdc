"""The admission a team namespace's requests meet on the cluster of an example stack: the
ValidatingAdmissionPolicies and bindings its plan (or, for a team stack, its owner stack's plan)
renders, evaluated as the API server does (``kube_cel``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from components.plan.model import Plan
from tests.cluster_objects import (
    DEPLOYER,
    PATHWAYS_CONTROLLER,
    inputs,
    jobset_jobs,
    pathwaysjob_jobset,
    team_namespaces,
)
from tests.helpers import STACKS_DIR, stack_file_values
from tests.kube_cel import Request, applies, denials

MANAGER_POD_POLICY = "tpu-pathways-manager-pods"
EXAMPLE_STACKS = sorted(
    p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in STACKS_DIR.glob("Pulumi.*.yaml")
)


@dataclass(frozen=True)
class Cluster:
    """The policies of one cluster, the team namespaces a stack puts on it, and the plans of
    what is on it (the stack's, after its owner's)."""

    policies: list[tuple[dict[str, Any], dict[str, Any]]]
    namespaces: dict[str, dict[str, str]]
    plans: tuple[Plan, ...] = ()

    @property
    def runs_team_pods(self) -> bool:
        """Its team namespaces admit pods: not a fleet's manager, whose policy
        ``tpu-pathways-manager-pods`` refuses every one (tests/unit/resolve/tenancy/
        test_manager_attacks.py)."""
        return all(binding["policyName"] != MANAGER_POD_POLICY for _, binding in self.policies)

    def denials(self, request: Request) -> list[str]:
        """Every denial message of every policy that applies to ``request`` (none: admitted)."""
        labels = self.namespaces.get(request.namespace, request.namespace_labels)
        request.namespace_labels = labels
        found = []
        for policy, binding in self.policies:
            if applies(policy, binding, request):
                found += denials(policy, request)
        return found

    def denied_by(self, request: Request) -> list[str]:
        """The checks that deny ``request`` (``CHECKS``' names, sorted; a denial of no check
        named there is kept as its message): an attack test asserts which checks refuse it, so
        it cannot pass because an unrelated one did."""
        return sorted(check_of(message) for message in self.denials(request))


CHECKS = {
    "network-policy": "a team namespace's NetworkPolicies are its stack's",
    "external-ips": "spec.externalIPs is not allowed",
    "owner-reference": "a controller ownerReference is set, changed or removed by controllers",
    "system-pool": "the system pool (",
    "tolerations": "tolerating every taint, the system pool's or the nodes dedicated to another",
    "tpu-taint": "tolerating the TPU hosts' taint (google.com/tpu) is allowed only",
    "priority-class": "this PriorityClass is not one the namespace may use",
    "node-name": "spec.nodeName is not allowed",
    "tpu-pod": "a pod requesting TPU chips must be a Job's pod or wait for Kueue's admission",
    "tpu-job": "a Job requesting TPU chips must be queued by Kueue",
    "resume": "only Kueue resumes a suspended job",
    "ungate": "only Kueue removes its admission gate",
    "host-network": "hostNetwork is allowed only for the pods the Job controller creates",
    "host-network-job": "a Job with host-network pods is created by the JobSet controller only",
    "host-path": "hostPath volumes are not allowed (but /tmp for Pathways pods)",
    "host-port": "hostPort is not allowed (but the Pathways ports of Pathways pods)",
    "apparmor": "an AppArmor profile other than RuntimeDefault or Localhost is not allowed",
    "selinux": "SELinux options other than baseline's types",
    "sysctls": "sysctls beyond baseline's safe set are not allowed",
    "probe-host": "a probe or lifecycle handler naming a host is not allowed",
    "privileged": "privileged containers are not allowed",
    "capabilities": "capabilities beyond baseline's",
    "host-pid": "hostPID is not allowed",
    "host-ipc": "hostIPC is not allowed",
    "proc-mount": "an unmasked /proc (procMount)",
    "seccomp": "a seccomp profile other than RuntimeDefault or Localhost is not allowed",
    "windows-host-process": "Windows hostProcess containers are not allowed",
    "manager-pod": "no pod runs in a team namespace of the fleet's manager",
    "manager-jobset-managed-by": "a JobSet on the fleet's manager has spec.managedBy",
    "manager-jobset-queue": "a JobSet on the fleet's manager names a LocalQueue of its namespace",
}
"""Each check of the team namespaces' admission policies the attack tests meet, by a short name,
with the start of its message (components/addons/team_admission.py, namespace_admission.py,
pod_placement.py, pod_security.py; a fleet manager's: manager_admission.py)."""


def check_of(message: str) -> str:
    """The name of the check whose message ``message`` is (itself when none matches)."""
    names = [name for name, start in CHECKS.items() if message.startswith(start)]
    assert len(names) <= 1, (message, names)
    return names[0] if names else message


def cluster_policies(plan: Plan) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each ValidatingAdmissionPolicy's spec with its binding's spec."""
    bindings = {
        b["spec"]["policyName"]: b["spec"] for b in inputs(plan, "ValidatingAdmissionPolicyBinding")
    }
    return [
        (p["spec"], bindings[p["metadata"]["name"]])
        for p in inputs(plan, "ValidatingAdmissionPolicy")
        if p["metadata"]["name"] in bindings
    ]


def owner_of(stack: str) -> str | None:
    owner = stack_file_values(stack).get("owner")
    return owner.rsplit("/", 1)[-1] if isinstance(owner, str) else None


def cluster_of(example_plan: Callable[[str], Plan], stack: str) -> Cluster:
    """The cluster an example stack's team namespaces are on: its own policies, or its
    owner's."""
    owner = owner_of(stack)
    plans = (example_plan(owner), example_plan(stack)) if owner else (example_plan(stack),)
    return Cluster(cluster_policies(plans[0]), team_namespaces(plans[-1]), plans)


def research_cluster(example_plan: Callable[[str], Plan]) -> Cluster:
    """research-v5p's cluster (the owner: team namespace research on the shared pools, pools
    dedicated to nlp) with team-research's namespace nlp on it: the attack tests' cluster."""
    own = cluster_of(example_plan, "research-v5p")
    team = cluster_of(example_plan, "team-research")
    return Cluster(own.policies, {**own.namespaces, **team.namespaces}, team.plans)


# --- what the attack tests send: research-v5p's cluster, a member's pods --------------------

NAMESPACES = ("research", "nlp")
IMPERSONATED = "system:serviceaccount:{ns}:pathways"  # `edit` impersonates its namespace's SAs
SCRATCH = "tpu-pathways-research-pathways-research-pathways"
"""research-v5p's scratch bucket (``<project>-<cluster>-pathways``), the teams' prefixes in it."""
SHARED_NODES = "pathways-research-nodes@tpu-pathways-research.iam.gserviceaccount.com"
NLP_NODES = "pathways-research-nlp-nodes@tpu-pathways-research.iam.gserviceaccount.com"


def pod(spec: dict, **metadata) -> dict:
    """A pod named ``x`` with ``spec`` and more ``metadata``, as a member writes it."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", **metadata}, "spec": spec}


def container(**fields) -> dict:
    return {"name": "c", "image": "python:3.12", **fields}


def controlled_by(api_version: str, kind: str, name: str, **more) -> list[dict[str, Any]]:
    """The ``ownerReferences`` of an object whose controller is ``kind`` ``name``."""
    return [
        {"apiVersion": api_version, "kind": kind, "name": name, "uid": "u", "controller": True}
        | more
    ]


OWNED_BY_JOB = controlled_by("batch/v1", "Job", "j", blockOwnerDeletion=True)
"""A pod the Job controller creates for Job ``j`` (its ownerReferences)."""
OWNED_BY_REPLICASET = controlled_by("apps/v1", "ReplicaSet", "squat-5d8f", blockOwnerDeletion=True)
"""A Deployment's pod, as the ReplicaSet controller creates it."""


@dataclass(frozen=True)
class Rendered:
    """A JobSet a plan makes (the PathwaysJob controller's for a PathwaysJob), who creates it,
    and one of its Jobs with that Job's pod, as their controllers create them."""

    backend: str
    jobset: dict
    creator: str
    job: dict
    pod: dict


def rendered(plan: Plan, cluster: Cluster) -> list[Rendered]:
    """Everything of ``plan``'s jobs in a team namespace of ``cluster``, after Kueue admitted
    it on the namespace's flavors."""
    jobsets = [("jobset", j, DEPLOYER) for j in inputs(plan, "JobSet")]
    jobsets += [
        ("pathwaysjob", pathwaysjob_jobset(j), PATHWAYS_CONTROLLER)
        for j in inputs(plan, "PathwaysJob")
    ]
    found = []
    for backend, jobset, creator in jobsets:
        if jobset["metadata"]["namespace"] not in cluster.namespaces:
            continue  # shared services run in `default`, no team namespace
        for job, pod in jobset_jobs(jobset, cluster.plans):
            found.append(Rendered(backend, jobset, creator, job, pod))
    return found


def jobset_request(obj: dict, username: str, **more) -> Request:
    """The API server's admission request of ``username`` creating (or, with ``more``,
    updating) the JobSet ``obj`` in its namespace."""
    return Request(
        obj,
        obj["metadata"]["namespace"],
        username,
        resource="jobsets",
        group="jobset.x-k8s.io",
        version="v1alpha2",
        **more,
    )
