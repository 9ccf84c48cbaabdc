"""What keeps one team's namespace from another's: an admission policy on its pods, RBAC for its
group, default-deny NetworkPolicies and a ResourceQuota.

Pathways pods run on the host network with a ``/tmp`` hostPath (google/pathways-job v0.1.4
internal/controller/pathwaysjob_controller.go: ``HostNetwork: true`` on the workers, l.775, and
the head, l.862/873; the ``shared-tmp`` hostPath ``/tmp``, l.768; no securityContext anywhere, so
nothing privileged; this project's pods mount the host's ``/tmp`` too). Pod Security
``baseline`` forbids both, so a team namespace can only *enforce* ``privileged``
(``TeamNamespace`` labels it, and warns and audits at stricter levels); the
ValidatingAdmissionPolicy here enforces what ``baseline`` would, except the host network for
Pathways' pods and the ``/tmp`` hostPath.
ValidatingAdmissionPolicy is GA in admissionregistration.k8s.io/v1 since Kubernetes 1.30.

NetworkPolicy does not govern pods on the host network (they use the node's network
namespace): the policies here cover the team's other pods only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from components.labels import NAMESPACE_NAME_LABEL, standard_labels

# The Pathways pod shape the policy lets onto the host network: a pod of a JobSet's Job (the
# JobSet controller labels each pod with its JobSet; the Job controller owns it).
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
# The one host path Pathways mounts (its workers' and head's shared scratch directory).
ALLOWED_HOST_PATH = "/tmp"
# Every container list of a pod spec (ephemeral containers arrive through their subresource).
CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")
# The ClusterRole a team's group gets in its namespace (Kubernetes' user-facing "edit" role:
# workloads, Services, Secrets; no Roles, RoleBindings or ResourceQuotas).
TEAM_ROLE = "edit"
# kube-dns on GKE: pods labelled k8s-app=kube-dns in kube-system, port 53.
DNS_NAMESPACE = "kube-system"
DNS_POD_LABELS = {"k8s-app": "kube-dns"}
# Workload Identity pods reach the GKE metadata server (169.254.169.254:80, served on Dataplane V2
# at 169.254.169.252:988; GKE "Workload Identity Federation for GKE": allow both where network
# policies apply) and Google APIs on 443 (public addresses; Private Google Access too). Private
# ranges, where nodes, pods and services live, stay denied.
METADATA_SERVERS = (("169.254.169.254/32", 80), ("169.254.169.252/32", 988))
PRIVATE_RANGES = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]


@dataclass(frozen=True)
class TeamQuota:
    """The hard limits of a team's ResourceQuota (None: unbounded)."""

    pods: int | None = None
    cpu: int | None = None
    memory_gib: int | None = None
    tpu_chips: int | None = None
    load_balancers: int = 0
    node_ports: int = 0


@dataclass(frozen=True)
class TeamIsolationArgs:
    """Inputs of a ``TeamIsolation``."""

    team: str
    """The team and its namespace's name."""
    namespace: pulumi.Input[str]
    """The namespace (an output of the namespace, so everything waits for it)."""
    provider: k8s.Provider
    group: str | None = None
    """The Google group bound to ``edit`` in the namespace (None: no binding)."""
    quota: TeamQuota = field(default_factory=TeamQuota)


def _unset_or_false(field: str) -> str:
    return f"!has({field}) || !{field}"


def _each_container(condition: str) -> str:
    """``condition`` (over ``c``) for every container of every list of the pod."""
    return " && ".join(
        f"(!has(object.spec.{lst}) || object.spec.{lst}.all(c, {condition}))"
        for lst in CONTAINER_LISTS
    )


PATHWAYS_SHAPE = (
    f"has(object.metadata.labels) && '{JOBSET_NAME_LABEL}' in object.metadata.labels && "
    "has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(r, "
    "r.apiVersion == 'batch/v1' && r.kind == 'Job' && has(r.controller) && r.controller)"
)
HOST_NETWORK = "has(object.spec.hostNetwork) && object.spec.hostNetwork"


def pod_validations() -> list[tuple[str, str]]:
    """(CEL expression, message) of each rule the team's pods must pass. Every expression reads
    only ``object`` and is true when the pod is allowed."""
    return [
        (
            f"!({HOST_NETWORK}) || ({PATHWAYS_SHAPE})",
            "hostNetwork is allowed only for Pathways pods (pods of a JobSet's Job)",
        ),
        (_unset_or_false("object.spec.hostPID"), "hostPID is not allowed"),
        (_unset_or_false("object.spec.hostIPC"), "hostIPC is not allowed"),
        (
            "!has(object.spec.volumes) || object.spec.volumes.all(v, !has(v.hostPath) || "
            f"v.hostPath.path == '{ALLOWED_HOST_PATH}')",
            f"hostPath volumes other than {ALLOWED_HOST_PATH} are not allowed",
        ),
        (
            _each_container(
                "!has(c.securityContext) || !has(c.securityContext.privileged) || "
                "!c.securityContext.privileged"
            ),
            "privileged containers are not allowed",
        ),
        (
            _each_container(
                "!has(c.securityContext) || !has(c.securityContext.capabilities) || "
                "!has(c.securityContext.capabilities.add) || "
                "size(c.securityContext.capabilities.add) == 0"
            ),
            "adding Linux capabilities is not allowed",
        ),
        (
            _each_container(
                "!has(c.securityContext) || !has(c.securityContext.procMount) || "
                "c.securityContext.procMount == 'Default'"
            ),
            "an unmasked /proc (procMount) is not allowed",
        ),
        (
            _each_container(
                "!has(c.securityContext) || !has(c.securityContext.seccompProfile) || "
                "c.securityContext.seccompProfile.type != 'Unconfined'"
            )
            + " && (!has(object.spec.securityContext) || "
            "!has(object.spec.securityContext.seccompProfile) || "
            "object.spec.securityContext.seccompProfile.type != 'Unconfined')",
            "an Unconfined seccomp profile is not allowed",
        ),
        (
            f"({HOST_NETWORK}) || "
            + _each_container(
                "!has(c.ports) || c.ports.all(p, !has(p.hostPort) || p.hostPort == 0)"
            ),
            "hostPort is allowed only with the host network of a Pathways pod",
        ),
    ]


class TeamIsolation(pulumi.ComponentResource):
    """A team namespace's admission policy, RBAC, NetworkPolicies and ResourceQuota."""

    policy_name: pulumi.Output[str]

    def __init__(
        self, name: str, args: TeamIsolationArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:teams:TeamIsolation", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        labels = standard_labels(args.team)
        policy = self._admission_policy(name, args, labels, child)
        if args.group is not None:
            k8s.rbac.v1.RoleBinding(
                f"{name}-edit",
                metadata=_meta(f"{args.team}-edit", args, labels),
                role_ref=k8s.rbac.v1.RoleRefArgs(
                    api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=TEAM_ROLE
                ),
                subjects=[
                    k8s.rbac.v1.SubjectArgs(
                        api_group="rbac.authorization.k8s.io", kind="Group", name=args.group
                    )
                ],
                opts=child,
            )
        self._network_policies(name, args, labels, child)
        k8s.core.v1.ResourceQuota(
            f"{name}-quota",
            metadata=_meta(f"{args.team}-quota", args, labels),
            spec=k8s.core.v1.ResourceQuotaSpecArgs(hard=quota_limits(args.quota)),
            opts=child,
        )
        self.policy_name = policy.metadata.name
        self.register_outputs({"policy_name": self.policy_name})

    @staticmethod
    def _admission_policy(
        name: str, args: TeamIsolationArgs, labels: dict[str, str], child: pulumi.ResourceOptions
    ) -> k8s.admissionregistration.v1.ValidatingAdmissionPolicy:
        """The policy (cluster-scoped, one per team so no two stacks share one) and its binding
        to the team's namespace, denying what fails."""
        admission = k8s.admissionregistration.v1
        policy_name = f"tpu-pathways-pods-{args.team}"
        policy = admission.ValidatingAdmissionPolicy(
            f"{name}-pod-policy",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=policy_name, labels=labels),
            spec=admission.ValidatingAdmissionPolicySpecArgs(
                failure_policy="Fail",
                match_constraints=admission.MatchResourcesArgs(
                    # A pod's spec is immutable but for its ephemeral containers, which are
                    # added through their subresource.
                    resource_rules=[
                        admission.NamedRuleWithOperationsArgs(
                            api_groups=[""],
                            api_versions=["v1"],
                            operations=[operation],
                            resources=[resource],
                        )
                        for operation, resource in (
                            ("CREATE", "pods"),
                            ("UPDATE", "pods/ephemeralcontainers"),
                        )
                    ]
                ),
                validations=[
                    admission.ValidationArgs(expression=expression, message=message)
                    for expression, message in pod_validations()
                ],
            ),
            opts=child,
        )
        admission.ValidatingAdmissionPolicyBinding(
            f"{name}-pod-policy-binding",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=policy_name, labels=labels),
            spec=admission.ValidatingAdmissionPolicyBindingSpecArgs(
                policy_name=policy.metadata.name,
                validation_actions=["Deny"],
                match_resources=admission.MatchResourcesArgs(
                    namespace_selector=k8s.meta.v1.LabelSelectorArgs(
                        match_labels={NAMESPACE_NAME_LABEL: args.namespace}
                    )
                ),
            ),
            opts=child,
        )
        return policy

    @staticmethod
    def _network_policies(
        name: str, args: TeamIsolationArgs, labels: dict[str, str], child: pulumi.ResourceOptions
    ) -> None:
        """Deny all ingress and egress of the team's pods (those not on the host network), then
        allow traffic within the namespace, DNS lookups, the metadata server and HTTPS outside
        the private ranges (Google APIs)."""
        net = k8s.networking.v1
        every_pod = k8s.meta.v1.LabelSelectorArgs()
        same_namespace = net.NetworkPolicyPeerArgs(pod_selector=every_pod)
        net.NetworkPolicy(
            f"{name}-default-deny",
            metadata=_meta("default-deny", args, labels),
            spec=net.NetworkPolicySpecArgs(
                pod_selector=every_pod, policy_types=["Ingress", "Egress"]
            ),
            opts=child,
        )
        net.NetworkPolicy(
            f"{name}-same-namespace",
            metadata=_meta("allow-same-namespace", args, labels),
            spec=net.NetworkPolicySpecArgs(
                pod_selector=every_pod,
                policy_types=["Ingress", "Egress"],
                ingress=[net.NetworkPolicyIngressRuleArgs(from_=[same_namespace])],
                egress=[net.NetworkPolicyEgressRuleArgs(to=[same_namespace])],
            ),
            opts=child,
        )
        net.NetworkPolicy(
            f"{name}-google-apis",
            metadata=_meta("allow-google-apis", args, labels),
            spec=net.NetworkPolicySpecArgs(
                pod_selector=every_pod,
                policy_types=["Egress"],
                egress=_google_api_egress(),
            ),
            opts=child,
        )
        net.NetworkPolicy(
            f"{name}-dns",
            metadata=_meta("allow-dns", args, labels),
            spec=net.NetworkPolicySpecArgs(
                pod_selector=every_pod, policy_types=["Egress"], egress=[_dns_egress()]
            ),
            opts=child,
        )


def _google_api_egress() -> list[k8s.networking.v1.NetworkPolicyEgressRuleArgs]:
    """The metadata server, and HTTPS outside the private ranges (Google APIs)."""
    net = k8s.networking.v1
    return [
        *(
            net.NetworkPolicyEgressRuleArgs(
                to=[net.NetworkPolicyPeerArgs(ip_block=net.IPBlockArgs(cidr=cidr))],
                ports=[net.NetworkPolicyPortArgs(protocol="TCP", port=port)],
            )
            for cidr, port in METADATA_SERVERS
        ),
        net.NetworkPolicyEgressRuleArgs(
            to=[
                net.NetworkPolicyPeerArgs(
                    ip_block=net.IPBlockArgs(cidr="0.0.0.0/0", except_=PRIVATE_RANGES)
                )
            ],
            ports=[net.NetworkPolicyPortArgs(protocol="TCP", port=443)],
        ),
    ]


def _dns_egress() -> k8s.networking.v1.NetworkPolicyEgressRuleArgs:
    """DNS lookups to kube-dns, over UDP and TCP."""
    net = k8s.networking.v1
    dns = net.NetworkPolicyPeerArgs(
        namespace_selector=k8s.meta.v1.LabelSelectorArgs(
            match_labels={NAMESPACE_NAME_LABEL: DNS_NAMESPACE}
        ),
        pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=DNS_POD_LABELS),
    )
    return net.NetworkPolicyEgressRuleArgs(
        to=[dns],
        ports=[
            net.NetworkPolicyPortArgs(protocol=protocol, port=53) for protocol in ("UDP", "TCP")
        ],
    )


def _meta(
    object_name: str, args: TeamIsolationArgs, labels: dict[str, str]
) -> k8s.meta.v1.ObjectMetaArgs:
    return k8s.meta.v1.ObjectMetaArgs(name=object_name, namespace=args.namespace, labels=labels)


def quota_limits(quota: TeamQuota) -> dict[str, str]:
    """The ResourceQuota's ``hard`` map: the limits set, in Kubernetes quantities."""
    limits = {
        "pods": quota.pods,
        "requests.cpu": quota.cpu,
        "requests.memory": None if quota.memory_gib is None else f"{quota.memory_gib}Gi",
        "requests.google.com/tpu": quota.tpu_chips,
        "services.loadbalancers": quota.load_balancers,
        "services.nodeports": quota.node_ports,
    }
    return {key: str(value) for key, value in limits.items() if value is not None}
