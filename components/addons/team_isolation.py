"""What keeps one team's namespace from another's inside the cluster: RBAC for its group, one
NetworkPolicy and two ResourceQuotas. The admission policies every team namespace shares are
``team_policies``; the node pools a team's host-network pods are kept to are the owner stack's.

The quotas: ``<team>-quota`` (pods, TPU chips, Services that reach outside) over every pod, and
``<team>-compute`` (CPU and memory requests) over the pods that request or limit CPU or memory
(scope ``NotBestEffort``). Kubernetes requires a pod under a quota of CPU or memory to name
them in every container (kubernetes pkg/quota/v1/evaluator/core/pods.go ``Constraints``: "if
we quota cpu or memory, then each container must make an explicit request"), which the
PathwaysJob controller's workers do not (v0.1.4: ``google.com/tpu`` limits only), so the scope
leaves out best-effort pods, which reserve no CPU or memory on a node (the scheduler counts
none for them), are the first evicted under memory pressure and are bounded by the pods quota.
No LimitRange: its default requests would reach those workers too, and Kueue counts a
LimitRange's defaults in a job's requests (kubernetes-sigs/kueue pkg/workload/resources.go
``AdjustResources``) and would then give a TPU worker the CPU pool's flavor (its node
selector); its minimum, maximum and ratio refuse a container that names no request or limit.

NetworkPolicy does not govern pods on the host network (they use the node's network
namespace): the policy here covers the team's other pods only. It is one object (Kubernetes adds
up every policy that selects a pod, so one with all the allowed peers admits what several
would): ingress from the namespace's own pods; egress to them, to the cluster's DNS
(``dns_peers``: the provider the cluster sets), to the GKE metadata server (Workload Identity:
169.254.169.254:80, served on Dataplane V2 at 169.254.169.252:988; GKE "Workload Identity
Federation for GKE") and to Google APIs (``GoogleApiEgress``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from components.labels import NAMESPACE_NAME_LABEL, standard_labels
from components.vocabulary import DnsProvider, GoogleApiEgress

# The ClusterRole a team's group gets in its namespace (Kubernetes' user-facing "edit" role:
# workloads, Services, Secrets; no Roles, RoleBindings, ResourceQuotas or Namespaces).
TEAM_ROLE = "edit"
# kube-dns on GKE: pods labelled k8s-app=kube-dns in kube-system, port 53.
DNS_NAMESPACE = "kube-system"
DNS_POD_LABELS = {"k8s-app": "kube-dns"}
# Cloud DNS for GKE answers pods at the metadata server's address (the kubelet writes it into
# their resolv.conf; GKE "Using Cloud DNS for GKE").
CLOUD_DNS_RESOLVER = "169.254.169.254/32"
METADATA_SERVERS = (("169.254.169.254/32", 80), ("169.254.169.252/32", 988))
# Private Google Access: private.googleapis.com's addresses (GCP "Configure Private Google
# Access", domain options), which the cluster's private DNS zones resolve Google APIs to.
PRIVATE_GOOGLE_ACCESS = "199.36.153.8/30"
PRIVATE_RANGES = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]
NETWORK_POLICY = "team-network"


@dataclass(frozen=True)
class TeamQuota:
    """The hard limits of a team's ResourceQuotas (None: unbounded); ``cpu`` and ``memory_gib``
    bound the pods that request or limit CPU or memory (``<team>-compute``)."""

    pods: int | None = None
    cpu: int | None = None
    memory_gib: int | None = None
    tpu_chips: int | None = None
    load_balancers: int = 0
    node_ports: int = 0
    ingresses: int = 0


@dataclass(frozen=True)
class TeamIsolationArgs:
    """What isolates one team namespace (``isolate``)."""

    team: str
    """The team and its namespace's name."""
    namespace: str
    """The namespace's name (its objects depend on the namespace explicitly)."""
    provider: k8s.Provider
    group: str | None = None
    """The Google group bound to ``edit`` in the namespace (None: no binding)."""
    quota: TeamQuota = field(default_factory=TeamQuota)
    dns: DnsProvider = DnsProvider.CLOUD_DNS
    """The cluster's DNS provider: where the team's pods may send DNS queries."""
    google_apis: GoogleApiEgress = GoogleApiEgress.PRIVATE_ACCESS


ISOLATION_TYPE = "tpu-pathways:teams:TeamIsolation"
"""The component the RoleBinding and ResourceQuota were children of (their aliases): one
component per team cost as much to plan as the objects it held."""
# The objects that moved from under it, by their names' suffix.
MOVED_TYPES = {
    "edit": "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
    "quota": "kubernetes:core/v1:ResourceQuota",
}
COMPUTE_SCOPE = "NotBestEffort"
"""The pods ``<team>-compute`` counts: those that request or limit CPU or memory."""


def isolate(
    name: str,
    args: TeamIsolationArgs,
    parent: pulumi.Resource,
    namespace: pulumi.Resource,
    parent_types: str | None = None,
) -> None:
    """A team namespace's RBAC, NetworkPolicy and ResourceQuotas, children of ``parent`` (the
    team's ``TeamNamespace``), after ``namespace``. ``name``: their names' prefix;
    ``parent_types``: the parent's type chain when it is known here (a top-level component:
    its own type), which spares an Output per alias."""
    child = pulumi.ResourceOptions(parent=parent, provider=args.provider, depends_on=[namespace])
    labels = standard_labels(args.team)

    def moved(resource_name: str) -> pulumi.ResourceOptions:
        """``child``, aliased to the URN the resource had under ``TeamIsolation``: written
        out for a top-level namespace, from the parent's URN otherwise."""
        alias = _former_urn(resource_name, name, parent, parent_types)
        return pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(aliases=[alias]))

    labels = standard_labels(args.team)
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
            opts=moved(f"{name}-edit"),
        )
    net = k8s.networking.v1
    every_pod = k8s.meta.v1.LabelSelectorArgs()
    same_namespace = net.NetworkPolicyPeerArgs(pod_selector=every_pod)
    net.NetworkPolicy(
        f"{name}-network",
        metadata=_meta(NETWORK_POLICY, args, labels),
        spec=net.NetworkPolicySpecArgs(
            pod_selector=every_pod,
            policy_types=["Ingress", "Egress"],
            ingress=[net.NetworkPolicyIngressRuleArgs(from_=[same_namespace])],
            egress=[
                net.NetworkPolicyEgressRuleArgs(to=[same_namespace]),
                _dns_egress(args.dns),
                *_google_api_egress(args.google_apis),
            ],
        ),
        opts=child,
    )
    _quotas(name, args, labels, moved(f"{name}-quota"), child)


def _quotas(
    name: str,
    args: TeamIsolationArgs,
    labels: dict[str, str],
    moved: pulumi.ResourceOptions,
    child: pulumi.ResourceOptions,
) -> None:
    """``<team>-quota`` (``moved``: aliased to where it was) and ``<team>-compute``."""
    k8s.core.v1.ResourceQuota(
        f"{name}-quota",
        metadata=_meta(f"{args.team}-quota", args, labels),
        spec=k8s.core.v1.ResourceQuotaSpecArgs(hard=quota_limits(args.quota)),
        opts=moved,
    )
    compute = compute_limits(args.quota)
    if compute:
        k8s.core.v1.ResourceQuota(
            f"{name}-compute",
            metadata=_meta(f"{args.team}-compute", args, labels),
            spec=k8s.core.v1.ResourceQuotaSpecArgs(hard=compute, scopes=[COMPUTE_SCOPE]),
            opts=child,
        )


def former_isolation_urn(
    stack: str, project: str, parent_types: str, name: str, child: tuple[str, str]
) -> str:
    """The URN the engine gave ``child`` (type, name) of the ``TeamIsolation`` component
    ``name`` under a top-level parent of type chain ``parent_types`` (the root stack's type is
    no part of a URN: pulumi/pulumi pkg/resource/deploy deployment.go, ``generateURN``)."""
    type_, child_name = child
    chain = f"{parent_types}${ISOLATION_TYPE}${type_}"
    return f"urn:pulumi:{stack}::{project}::{chain}::{child_name}"


def _former_urn(
    resource_name: str, name: str, parent: pulumi.Resource, parent_types: str | None
) -> pulumi.Input[str]:
    type_ = MOVED_TYPES[resource_name.rsplit("-", 1)[-1]]
    if parent_types is not None:
        stack, project = pulumi.get_stack(), pulumi.get_project()
        return former_isolation_urn(stack, project, parent_types, name, (type_, resource_name))
    isolation = pulumi.Output.from_input(parent.urn).apply(
        lambda urn: _child_urn(urn, ISOLATION_TYPE, name)
    )
    return isolation.apply(lambda urn: _child_urn(urn, type_, resource_name))


def _child_urn(parent_urn: str, type_: str, name: str) -> str:
    """The URN of a resource of ``type_`` named ``name`` whose parent's URN is ``parent_urn``
    (Pulumi: the parent's type chain, ``$``, its own type, ``::``, its name)."""
    prefix, parent_types, _ = parent_urn.rsplit("::", 2)
    return f"{prefix}::{parent_types}${type_}::{name}"


def _ip_block(cidr: str, except_: Sequence[str] | None = None):
    net = k8s.networking.v1
    return net.NetworkPolicyPeerArgs(ip_block=net.IPBlockArgs(cidr=cidr, except_=except_))


def _google_api_egress(
    google_apis: GoogleApiEgress,
) -> list[k8s.networking.v1.NetworkPolicyEgressRuleArgs]:
    """The metadata server, and HTTPS to Google APIs: private.googleapis.com, or (a VPC whose
    DNS is not this project's) any address outside the private ranges."""
    net = k8s.networking.v1
    https = [net.NetworkPolicyPortArgs(protocol="TCP", port=443)]
    apis = (
        _ip_block(PRIVATE_GOOGLE_ACCESS)
        if google_apis is GoogleApiEgress.PRIVATE_ACCESS
        else _ip_block("0.0.0.0/0", PRIVATE_RANGES)
    )
    return [
        *(
            net.NetworkPolicyEgressRuleArgs(
                to=[_ip_block(cidr)], ports=[net.NetworkPolicyPortArgs(protocol="TCP", port=port)]
            )
            for cidr, port in METADATA_SERVERS
        ),
        net.NetworkPolicyEgressRuleArgs(to=[apis], ports=https),
    ]


def dns_peers(dns: DnsProvider) -> list[k8s.networking.v1.NetworkPolicyPeerArgs]:
    """Where the team's pods send DNS queries: Cloud DNS answers at the metadata server's
    address; kube-dns (without NodeLocal DNSCache, which the cluster turns off with it) in its
    pods in kube-system."""
    net = k8s.networking.v1
    if dns is DnsProvider.CLOUD_DNS:
        return [_ip_block(CLOUD_DNS_RESOLVER)]
    return [
        net.NetworkPolicyPeerArgs(
            namespace_selector=k8s.meta.v1.LabelSelectorArgs(
                match_labels={NAMESPACE_NAME_LABEL: DNS_NAMESPACE}
            ),
            pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels=DNS_POD_LABELS),
        )
    ]


def _dns_egress(dns: DnsProvider) -> k8s.networking.v1.NetworkPolicyEgressRuleArgs:
    """DNS lookups, over UDP and TCP."""
    net = k8s.networking.v1
    return net.NetworkPolicyEgressRuleArgs(
        to=dns_peers(dns),
        ports=[
            net.NetworkPolicyPortArgs(protocol=protocol, port=53) for protocol in ("UDP", "TCP")
        ],
    )


def _meta(
    object_name: str, args: TeamIsolationArgs, labels: dict[str, str]
) -> k8s.meta.v1.ObjectMetaArgs:
    return k8s.meta.v1.ObjectMetaArgs(name=object_name, namespace=args.namespace, labels=labels)


def quota_limits(quota: TeamQuota) -> dict[str, str]:
    """``<team>-quota``'s ``hard`` map: the limits set, in Kubernetes quantities."""
    limits = {
        "pods": quota.pods,
        "requests.google.com/tpu": quota.tpu_chips,
        "services.loadbalancers": quota.load_balancers,
        "services.nodeports": quota.node_ports,
        # object count quota (Kubernetes "Resource Quotas": count/<resource>.<group>)
        "count/ingresses.networking.k8s.io": quota.ingresses,
    }
    return {key: str(value) for key, value in limits.items() if value is not None}


def compute_limits(quota: TeamQuota) -> dict[str, str]:
    """``<team>-compute``'s ``hard`` map (empty: no such quota)."""
    limits = {
        "requests.cpu": quota.cpu,
        "requests.memory": None if quota.memory_gib is None else f"{quota.memory_gib}Gi",
    }
    return {key: str(value) for key, value in limits.items() if value is not None}
