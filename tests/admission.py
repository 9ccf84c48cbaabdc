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

    def denials(self, request: Request) -> list[str]:
        """Every denial message of every policy that applies to ``request`` (none: admitted)."""
        labels = self.namespaces.get(request.namespace, request.namespace_labels)
        request.namespace_labels = labels
        found = []
        for policy, binding in self.policies:
            if applies(policy, binding, request):
                found += denials(policy, request)
        return found


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
