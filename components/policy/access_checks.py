"""The guardrail checks of state and access: what production protects, buckets (retained, never
public), IAM without basic roles, and the team namespaces' Pod Security labels, admission
policies, RBAC and service-account tokens (``rules.RULES`` names them)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from components.labels import HOST_NETWORK_LABEL, TEAM_LABEL, TPU_RESOURCE
from components.plan.views import MISSING, is_unknown, value_at
from components.policy.model import (
    BASIC_ROLES,
    IAM_POLICY,
    PROJECT_IAM_TYPES,
    PUBLIC_MEMBERS,
    PUBLIC_PREDEFINED_ACLS,
    Resource,
    StackContext,
    as_list,
    grantees,
    policy_bindings,
    show,
)
from components.tokens import (
    ADMISSION_POLICY,
)
from components.vocabulary import HostNetworkPlacement

PLACEMENTS = tuple(p.value for p in HostNetworkPlacement)
TPU_QUOTA = f"requests.{TPU_RESOURCE}"


def protected(resource: Resource, _: StackContext) -> Iterator[str]:
    if resource.options.get("protect") is not True:
        yield (
            "production stacks must set the protect resource option (a `pulumi destroy` or an "
            "accidental replacement would delete it)"
        )


def bucket_retained(resource: Resource, _: StackContext) -> Iterator[str]:
    protect = resource.options.get("protect")
    retain = resource.options.get("retainOnDelete")
    if protect is True or retain is True or is_unknown(retain):
        return
    yield (
        "production stacks must keep the bucket: set the retainOnDelete or protect resource option"
    )


def no_public_access(resource: Resource, _: StackContext) -> Iterator[str]:
    public = [m for m in grantees(resource) if m in PUBLIC_MEMBERS]
    for member in dict.fromkeys(public):
        yield f"grants access to {member!r}: the bucket's data would be public"
    predefined = resource.inputs.get("predefinedAcl")
    if predefined in PUBLIC_PREDEFINED_ACLS:
        yield f"predefinedAcl {predefined!r} makes the data public"


def no_basic_roles(resource: Resource, _: StackContext) -> Iterator[str]:
    where = PROJECT_IAM_TYPES[resource.type]
    if where == IAM_POLICY:
        roles = [b.get("role") for b in policy_bindings(resource.inputs.get(where))]
    else:
        roles = as_list(value_at(resource.inputs, where))
    for role in dict.fromkeys(r for r in roles if r in BASIC_ROLES):
        yield (
            f"grants the basic role {role!r}: project-wide access far beyond what node service "
            "accounts need; grant the specific predefined roles instead"
        )


def _is_team_namespace(resource: Resource) -> bool:
    labels = value_at(resource.inputs, "metadata.labels")
    return isinstance(labels, Mapping) and TEAM_LABEL in labels


def pod_security_labels(resource: Resource, _: StackContext) -> Iterator[str]:
    if not _is_team_namespace(resource):
        return
    labels = value_at(resource.inputs, "metadata.labels")
    for mode in ("enforce", "warn", "audit"):
        key = f"pod-security.kubernetes.io/{mode}"
        if key not in labels:
            yield f"metadata.labels has no {key!r} (Pod Security admission's {mode} level)"


def admission_denies(resource: Resource, _: StackContext) -> Iterator[str]:
    if resource.type == ADMISSION_POLICY:
        failure = value_at(resource.inputs, "spec.failurePolicy")
        if failure == "Ignore":
            yield "spec.failurePolicy is 'Ignore': a pod the policy cannot evaluate is admitted"
        return
    actions = value_at(resource.inputs, "spec.validationActions")
    if not is_unknown(actions) and "Deny" not in as_list(actions):
        yield f"spec.validationActions is {show(actions)}: without 'Deny' nothing is refused"


def no_cluster_admin(resource: Resource, _: StackContext) -> Iterator[str]:
    role = value_at(resource.inputs, "roleRef.name")
    if role in ("cluster-admin", "admin"):
        yield (
            f"roleRef.name is {role!r}: it may change RBAC, quotas and policies of the "
            "namespace (or cluster); teams get 'edit'"
        )


def team_token_not_mounted(resource: Resource, _: StackContext) -> Iterator[str]:
    namespace = value_at(resource.inputs, "metadata.namespace")
    if namespace in ("default", "kube-system") or is_unknown(namespace):
        return
    mounted = value_at(resource.inputs, "automountServiceAccountToken")
    if mounted is not False and not is_unknown(mounted):
        yield (
            f"automountServiceAccountToken is {show(mounted)}, must be false: every pod of the "
            "account would carry a Kubernetes API token it does not need"
        )


def _team_labels(resource: Resource) -> Mapping[str, str] | None:
    labels = value_at(resource.inputs, "metadata.labels")
    return labels if isinstance(labels, Mapping) and TEAM_LABEL in labels else None


def team_host_network_declared(resource: Resource, _: StackContext) -> Iterator[str]:
    """A team namespace says where its host-network pods may run: teams on the shared pools
    share a node identity, which must be a declared choice (shared) or the one team (alone)."""
    labels = _team_labels(resource)
    if labels is None or is_unknown(value := labels.get(HOST_NETWORK_LABEL)):
        return
    if value not in PLACEMENTS:
        yield (
            f"metadata.labels[{HOST_NETWORK_LABEL!r}] is {show(value)}: where the namespace's "
            f"host-network pods may run must be one of {', '.join(PLACEMENTS)} (teams on the "
            "shared pools act as one node identity: declared with teams[].isolation: shared)"
        )


def team_namespace_baseline(resource: Resource, _: StackContext) -> Iterator[str]:
    """Only a namespace given host-network Pathways pods enforces less than baseline."""
    labels = _team_labels(resource)
    if labels is None:
        return
    enforce = labels.get("pod-security.kubernetes.io/enforce")
    placement = labels.get(HOST_NETWORK_LABEL, HostNetworkPlacement.NONE.value)
    if enforce == "privileged" and placement == HostNetworkPlacement.NONE.value:
        yield (
            "enforces Pod Security privileged, but no host-network Pathways pod may run in it "
            f"({HOST_NETWORK_LABEL}: none): enforce baseline"
        )


SCOPES = ("scopes", "scopeSelector")


def team_tpu_quota(resource: Resource, _: StackContext) -> Iterator[str]:
    """A team namespace's ResourceQuota over every pod (no scope: ``<team>-compute`` counts the
    pods that request CPU or memory only) bounds its TPU chips (pods that went around Kueue)."""
    if _team_labels(resource) is None:
        return
    if any(value_at(resource.inputs, f"spec.{key}") is not MISSING for key in SCOPES):
        return
    hard = value_at(resource.inputs, "spec.hard")
    if isinstance(hard, Mapping) and TPU_QUOTA not in hard:
        yield (
            f"spec.hard has no {TPU_QUOTA!r}: a pod of the team that went around Kueue could "
            "hold every TPU chip of the cluster; give it the team's share "
            "(teams[].resourceQuota.tpuChips)"
        )
