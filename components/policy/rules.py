"""Guardrails: security and TPU-placement rules over what a resource registers.

Each rule looks at one resource: its type token, its inputs in the engine's camelCase wire form
(as the offline plan records them and as a policy pack receives them), its resource options
(``protect``, ``retainOnDelete``) and the stack's environment. It yields one message per problem,
each naming the resource: ``gcp:container/nodePool:NodePool 'pathways-dev-v5e-0': ...``.

The same rules run in two places: over the offline plan (``components.policy.report``, the
``--policy`` option of ``python -m components plan``) and inside the pulumi-policy pack in
``policy/`` under ``pulumi preview --policy-pack policy``.

Values the engine does not know yet (outputs of resources not created yet, secrets) arrive as
``UNKNOWN`` / ``SECRET``; a check never reports a value it cannot see. Numbers may arrive as floats
(the engine's wire form) or ints (the plan's). A setting the provider defaults to the secure value
may be omitted (``enableShieldedNodes``, ``enableLegacyAbac``, ``enableIntegrityMonitoring``,
``forceDestroy``); every other checked setting must be set explicitly.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from components.config.grammars import covers_every_address
from components.labels import TEAM_LABEL
from components.plan.views import MISSING, Bound, NodePoolView, is_unknown, number, value_at
from components.policy.model import (
    BASIC_ROLES,
    BUCKET_ACCESS_TYPES,
    DEFAULT_COMPUTE_SA_SUFFIX,
    IAM_POLICY,
    PROJECT_IAM_TYPES,
    PROTECTED_IN_PRODUCTION,
    PUBLIC_MEMBERS,
    PUBLIC_PREDEFINED_ACLS,
    Resource,
    Rule,
    StackContext,
    all_of,
    as_list,
    expect,
    grantees,
    policy_bindings,
    show,
)
from components.tokens import (
    ADMISSION_POLICY,
    ADMISSION_POLICY_BINDING,
    BUCKET,
    CLUSTER,
    CLUSTER_ROLE_BINDING,
    K8S_SERVICE_ACCOUNT,
    KUEUE_TYPE_PREFIX,
    NAMESPACE,
    NODE_POOL,
    ROLE_BINDING,
)
from components.tpu import catalog
from components.vocabulary import UpgradeStrategy

# --- checks -------------------------------------------------------------------------------


def _workload_identity(resource: Resource, _: StackContext) -> Iterator[str]:
    pool = value_at(resource.inputs, "workloadIdentityConfig.workloadPool")
    if pool is MISSING or pool == "":
        yield (
            "workloadIdentityConfig.workloadPool is not set (pods on the pod network would have "
            "to use the node's service account instead of Workload Identity; Pathways pods run "
            "on the host network and act as the node's service account either way)"
        )


def _control_plane_access(resource: Resource, _: StackContext) -> Iterator[str]:
    authorized = value_at(resource.inputs, "masterAuthorizedNetworksConfig")
    dns_endpoint = value_at(resource.inputs, "controlPlaneEndpointsConfig.dnsEndpointConfig")
    if authorized is MISSING and dns_endpoint is MISSING:
        yield (
            "neither masterAuthorizedNetworksConfig nor "
            "controlPlaneEndpointsConfig.dnsEndpointConfig is set (limit the IP endpoint to "
            "authorized networks, or reach the control plane through the IAM-gated DNS endpoint)"
        )


def _authorized_networks_closed(resource: Resource, _: StackContext) -> Iterator[str]:
    blocks = value_at(resource.inputs, "masterAuthorizedNetworksConfig.cidrBlocks")
    cidrs = []
    for block in as_list(blocks):
        cidr = block.get("cidrBlock") if isinstance(block, Mapping) else None
        if not isinstance(cidr, str):
            continue
        cidrs.append(cidr)
        if _is_everywhere(cidr):
            yield (
                f"masterAuthorizedNetworksConfig.cidrBlocks has {cidr!r}: the control plane's IP "
                "endpoint would take traffic from the whole internet; list your networks' CIDRs "
                "or use the IAM-gated DNS endpoint"
            )
    union = covers_every_address(cidrs)
    if union is not None and not any(_is_everywhere(cidr) for cidr in cidrs):
        yield (
            f"masterAuthorizedNetworksConfig.cidrBlocks together cover {union} "
            f"({', '.join(cidrs[:4])}{', ...' if len(cidrs) > 4 else ''}): the control plane's "
            "IP endpoint would take traffic from the whole internet; list your networks' CIDRs "
            "or use the IAM-gated DNS endpoint"
        )


def _control_plane_endpoints(resource: Resource, _: StackContext) -> Iterator[str]:
    authorized = value_at(resource.inputs, "masterAuthorizedNetworksConfig")
    if is_unknown(authorized):
        return
    blocks = as_list(value_at(resource.inputs, "masterAuthorizedNetworksConfig.cidrBlocks"))
    public = value_at(resource.inputs, "masterAuthorizedNetworksConfig.gcpPublicCidrsAccessEnabled")
    if authorized is not MISSING and public is not False and not is_unknown(public):
        yield (
            f"masterAuthorizedNetworksConfig.gcpPublicCidrsAccessEnabled is {show(public)}, must "
            "be false (GKE's default lets every Google Cloud public IP reach the IP endpoint)"
        )
    ip_endpoint = value_at(resource.inputs, "controlPlaneEndpointsConfig.ipEndpointsConfig.enabled")
    if not blocks and ip_endpoint is not False and not is_unknown(ip_endpoint):
        yield (
            "no authorized network is listed but controlPlaneEndpointsConfig.ipEndpointsConfig."
            f"enabled is {show(ip_endpoint)}: turn the IP endpoint off (false) and use the "
            "IAM-gated DNS endpoint"
        )


def _is_everywhere(cidr: str) -> bool:
    try:
        return ipaddress.ip_network(cidr, strict=False).prefixlen == 0
    except ValueError:
        return False


def _node_service_account(resource: Resource, _: StackContext) -> Iterator[str]:
    account = value_at(resource.inputs, "nodeConfig.serviceAccount")
    if is_unknown(account):
        return
    if account is MISSING or account in ("", "default"):
        shown = "not set" if account is MISSING else json.dumps(account)
        yield (
            f"nodeConfig.serviceAccount is {shown}: nodes would run as the Compute Engine default "
            "service account (Editor on the project); use a dedicated node service account"
        )
    elif isinstance(account, str) and account.endswith(DEFAULT_COMPUTE_SA_SUFFIX):
        yield (
            f"nodeConfig.serviceAccount {account!r} is the Compute Engine default service "
            "account (Editor on the project); use a dedicated node service account"
        )


def _tpu_hosts(machine_type: str, topology: str) -> int | None:
    """Hosts of the slice, from the TPU catalog; None for a machine type it does not know.
    Raises CatalogError when the topology does not exist for the machine type."""
    generation = catalog.generation_of_machine_type(machine_type)
    if generation is None:
        return None
    return catalog.shape_for(generation, topology, machine_type).hosts


def _tpu_placement(resource: Resource, _: StackContext) -> Iterator[str]:
    pool = NodePoolView(resource.inputs)
    if not pool.is_tpu:
        return
    machine = pool.machine_type
    placement = value_at(resource.inputs, "placementPolicy")
    if is_unknown(placement):
        return
    placement = placement if isinstance(placement, Mapping) else {}
    topology = placement.get("tpuTopology")
    kind = placement.get("type")
    nodes = pool.node_count(Bound.MAXIMUM).nodes

    hosts = None
    if isinstance(topology, str) and not is_unknown(topology):
        try:
            hosts = _tpu_hosts(machine, topology)
        except catalog.CatalogError as exc:
            yield f"placementPolicy.tpuTopology: {exc}"
            return
    if hosts == 1:
        yield (
            f"placementPolicy.tpuTopology {topology!r} is a single-host slice of {machine}; "
            "a single-host TPU pool must not set a TPU topology (GKE rejects it)"
        )
        return
    if (hosts or 0) <= 1 and (nodes or 0) <= 1:
        return  # a single-host slice without a topology: nothing to place

    slice_text = f"{hosts} hosts" if hosts else f"{nodes} nodes"
    if catalog.places_with_workload_policy(machine):
        yield from _workload_policy_placement(placement, machine, slice_text)
        return
    if not placement:
        yield (
            f"multi-host TPU slice ({slice_text} of {machine}) has no placementPolicy; it needs "
            "type COMPACT with its tpuTopology so GKE places the hosts on one ICI-connected block"
        )
        return
    if topology is None:
        yield f"multi-host TPU slice ({slice_text} of {machine}) needs placementPolicy.tpuTopology"
    if kind != "COMPACT" and not is_unknown(kind):
        yield (
            f"placementPolicy.type is {show(kind if kind is not None else MISSING)}, "
            f'must be "COMPACT" for a multi-host TPU slice ({slice_text} of {machine})'
        )
    if hosts and nodes is not None and nodes != hosts:
        yield (
            f"the pool has {nodes} nodes but TPU topology {topology!r} of {machine} has {hosts} "
            "hosts; a slice's node pool has exactly one node per host"
        )


def _workload_policy_placement(
    placement: Mapping[str, Any], machine: str, slice_text: str
) -> Iterator[str]:
    """Multi-host Ironwood slices: GKE places them with a workload policy named in
    placementPolicy.policyName; Compute Engine refuses COMPACT (group) placement for these
    machine types (GKE docs, "About Ironwood (TPU7x) in GKE"; XPK 1.16 xpk/core/nodepool.py)."""
    if value_at(placement, "policyName") in (MISSING, None, ""):
        yield (
            f"multi-host TPU slice ({slice_text} of {machine}) needs placementPolicy.policyName: "
            "a HIGH_THROUGHPUT workload policy with the slice's accelerator topology (GKE "
            "refuses COMPACT placement with a TPU topology for this machine type)"
        )
    kind = placement.get("type")
    if kind == "COMPACT":
        yield (
            f'placementPolicy.type is "COMPACT"; a multi-host TPU slice of {machine} is placed '
            "by its workload policy alone (COMPACT adds a group placement policy, which Compute "
            "Engine refuses next to a workload policy): leave the type empty"
        )


def _capacity_type(resource: Resource, _: StackContext) -> Iterator[str]:
    node_config = value_at(resource.inputs, "nodeConfig")
    if not isinstance(node_config, Mapping):
        return
    reservation = value_at(node_config, "reservationAffinity.consumeReservationType")
    flags = {
        "spot": node_config.get("spot") is True,
        "preemptible": node_config.get("preemptible") is True,
        "flexStart": node_config.get("flexStart") is True,
        "reservationAffinity SPECIFIC_RESERVATION": reservation == "SPECIFIC_RESERVATION",
    }
    chosen = [name for name, on in flags.items() if on]
    if len(chosen) > 1:
        yield (
            f"nodeConfig chooses more than one capacity type ({', '.join(chosen)}); choose "
            "exactly one of spot, flexStart or a specific reservation (none = on-demand)"
        )
    if flags["flexStart"] and reservation != "NO_RESERVATION" and not is_unknown(reservation):
        yield (
            "nodeConfig.flexStart needs nodeConfig.reservationAffinity.consumeReservationType "
            f'"NO_RESERVATION" (it is {show(reservation)})'
        )


# Where a GKE cluster's maintenance policy can set its window (pulumi-gcp
# ClusterMaintenancePolicyArgs: recurring_window, daily_maintenance_window,
# recurring_maintenance_window).
_WINDOW_KEYS = ("recurringWindow", "dailyMaintenanceWindow", "recurringMaintenanceWindow")
# GKE's surge settings when a node pool sets none: one extra node, none unavailable.
_DEFAULT_MAX_SURGE = 1
_DEFAULT_MAX_UNAVAILABLE = 0


def _maintenance_window(resource: Resource, _: StackContext) -> Iterator[str]:
    policy = value_at(resource.inputs, "maintenancePolicy")
    if is_unknown(policy):
        return
    policy = policy if isinstance(policy, Mapping) else {}
    if not any(value_at(policy, key) is not MISSING for key in _WINDOW_KEYS):
        yield (
            "maintenancePolicy sets no maintenance window: GKE may upgrade the control plane and "
            "nodes at any hour, and upgrading one host of a TPU slice interrupts the whole slice "
            "and its job; set maintenancePolicy.recurringWindow"
        )


def _slice_upgrade(resource: Resource, _: StackContext) -> Iterator[str]:
    """A TPU slice's pool upgrades every host at once with no surge VM (``SliceUpgrade``);
    flex-start pools get GKE's short-lived upgrades and are left alone."""
    pool = NodePoolView(resource.inputs)
    if not pool.is_tpu or pool.flex_start:
        return
    settings = value_at(resource.inputs, "upgradeSettings")
    if is_unknown(settings):
        return
    settings = settings if isinstance(settings, Mapping) else {}
    strategy = settings.get("strategy", UpgradeStrategy.SURGE.value)
    if strategy == UpgradeStrategy.BLUE_GREEN.value:
        yield (
            'upgradeSettings.strategy is "BLUE_GREEN": GKE would need a second slice of TPU '
            'capacity of this shape to upgrade it; use "SURGE" with maxSurge 0 and maxUnavailable '
            "equal to the slice's hosts"
        )
        return
    surge = number(settings.get("maxSurge", _DEFAULT_MAX_SURGE))
    if surge != 0 and not is_unknown(settings.get("maxSurge")):
        yield (
            f"upgradeSettings.maxSurge is {show(settings.get('maxSurge', MISSING))} "
            f"(GKE's default {_DEFAULT_MAX_SURGE} when unset): an upgrade would wait for spare "
            "TPU VMs of this shape; set it to 0"
        )
    nodes = pool.node_count(Bound.MAXIMUM).nodes
    unavailable = number(settings.get("maxUnavailable", _DEFAULT_MAX_UNAVAILABLE))
    if nodes and unavailable != nodes and not is_unknown(settings.get("maxUnavailable")):
        yield (
            f"upgradeSettings.maxUnavailable is {show(settings.get('maxUnavailable', MISSING))} "
            f"(GKE's default {_DEFAULT_MAX_UNAVAILABLE} when unset) for a slice of {nodes} "
            f"hosts: an upgrade would take the slice host by host, interrupting its job once "
            f"per batch; set it to {nodes} so the slice is recreated once, whole"
        )


def _protected(resource: Resource, _: StackContext) -> Iterator[str]:
    if resource.options.get("protect") is not True:
        yield (
            "production stacks must set the protect resource option (a `pulumi destroy` or an "
            "accidental replacement would delete it)"
        )


def _bucket_retained(resource: Resource, _: StackContext) -> Iterator[str]:
    protect = resource.options.get("protect")
    retain = resource.options.get("retainOnDelete")
    if protect is True or retain is True or is_unknown(retain):
        return
    yield (
        "production stacks must keep the bucket: set the retainOnDelete or protect resource option"
    )


def _no_public_access(resource: Resource, _: StackContext) -> Iterator[str]:
    public = [m for m in grantees(resource) if m in PUBLIC_MEMBERS]
    for member in dict.fromkeys(public):
        yield f"grants access to {member!r}: the bucket's data would be public"
    predefined = resource.inputs.get("predefinedAcl")
    if predefined in PUBLIC_PREDEFINED_ACLS:
        yield f"predefinedAcl {predefined!r} makes the data public"


def _no_basic_roles(resource: Resource, _: StackContext) -> Iterator[str]:
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


def _pod_security_labels(resource: Resource, _: StackContext) -> Iterator[str]:
    if not _is_team_namespace(resource):
        return
    labels = value_at(resource.inputs, "metadata.labels")
    for mode in ("enforce", "warn", "audit"):
        key = f"pod-security.kubernetes.io/{mode}"
        if key not in labels:
            yield f"metadata.labels has no {key!r} (Pod Security admission's {mode} level)"


def _admission_denies(resource: Resource, _: StackContext) -> Iterator[str]:
    if resource.type == ADMISSION_POLICY:
        failure = value_at(resource.inputs, "spec.failurePolicy")
        if failure == "Ignore":
            yield "spec.failurePolicy is 'Ignore': a pod the policy cannot evaluate is admitted"
        return
    actions = value_at(resource.inputs, "spec.validationActions")
    if not is_unknown(actions) and "Deny" not in as_list(actions):
        yield f"spec.validationActions is {show(actions)}: without 'Deny' nothing is refused"


def _no_cluster_admin(resource: Resource, _: StackContext) -> Iterator[str]:
    role = value_at(resource.inputs, "roleRef.name")
    if role in ("cluster-admin", "admin"):
        yield (
            f"roleRef.name is {role!r}: it may change RBAC, quotas and policies of the "
            "namespace (or cluster); teams get 'edit'"
        )


def _team_token_not_mounted(resource: Resource, _: StackContext) -> Iterator[str]:
    namespace = value_at(resource.inputs, "metadata.namespace")
    if namespace in ("default", "kube-system") or is_unknown(namespace):
        return
    mounted = value_at(resource.inputs, "automountServiceAccountToken")
    if mounted is not False and not is_unknown(mounted):
        yield (
            f"automountServiceAccountToken is {show(mounted)}, must be false: every pod of the "
            "account would carry a Kubernetes API token it does not need"
        )


# --- the rules ----------------------------------------------------------------------------

_NODE_TYPES = frozenset({NODE_POOL})
_CLUSTER_TYPES = frozenset({CLUSTER})

RULES: tuple[Rule, ...] = (
    Rule(
        "cluster-workload-identity",
        "GKE clusters enable Workload Identity (workloadIdentityConfig.workloadPool).",
        _CLUSTER_TYPES,
        _workload_identity,
    ),
    Rule(
        "cluster-shielded-nodes",
        "GKE clusters keep Shielded GKE Nodes on (enableShieldedNodes).",
        _CLUSTER_TYPES,
        expect("enableShieldedNodes", True, "node identity is verified", default=True),
    ),
    Rule(
        "cluster-legacy-abac-disabled",
        "GKE clusters keep legacy ABAC off (enableLegacyAbac), so RBAC and IAM decide access.",
        _CLUSTER_TYPES,
        expect("enableLegacyAbac", False, "RBAC and IAM must decide access", default=False),
    ),
    Rule(
        "cluster-control-plane-access",
        "GKE control planes are reached through authorized networks or the DNS endpoint.",
        _CLUSTER_TYPES,
        _control_plane_access,
    ),
    Rule(
        "cluster-authorized-networks-closed",
        "GKE control planes never list 0.0.0.0/0 (or ::/0), or ranges that add up to it, as "
        "authorized networks.",
        _CLUSTER_TYPES,
        _authorized_networks_closed,
    ),
    Rule(
        "cluster-control-plane-endpoints",
        "GKE control planes keep Google Cloud's public IPs off the IP endpoint, and turn the "
        "IP endpoint off when no authorized network is listed.",
        _CLUSTER_TYPES,
        _control_plane_endpoints,
    ),
    Rule(
        "cluster-maintenance-window",
        "GKE clusters set a maintenance window (upgrades only then).",
        _CLUSTER_TYPES,
        _maintenance_window,
    ),
    Rule(
        "cluster-deletion-protection",
        "Production GKE clusters set deletionProtection.",
        _CLUSTER_TYPES,
        expect("deletionProtection", True, "production clusters refuse deletion"),
        production_only=True,
    ),
    Rule(
        "node-service-account",
        "Nodes run as a dedicated service account, not the Compute Engine default one.",
        frozenset({CLUSTER, NODE_POOL}),
        _node_service_account,
    ),
    Rule(
        "node-shielded-instance",
        "Node pools turn on secure boot and integrity monitoring.",
        _NODE_TYPES,
        all_of(
            expect(
                "nodeConfig.shieldedInstanceConfig.enableSecureBoot",
                True,
                "only signed boot components may run",
            ),
            expect(
                "nodeConfig.shieldedInstanceConfig.enableIntegrityMonitoring",
                True,
                "boot integrity is attested",
                default=True,
            ),
        ),
    ),
    Rule(
        "node-workload-metadata",
        "Node pools expose the GKE metadata server (Workload Identity for pods on the pod "
        "network; host-network pods, such as every Pathways pod, act as the node's service "
        "account).",
        _NODE_TYPES,
        expect(
            "nodeConfig.workloadMetadataConfig.mode",
            "GKE_METADATA",
            "pods on the pod network must not get the node's credentials",
        ),
    ),
    Rule(
        "node-legacy-metadata-endpoints",
        "Node pools disable the legacy Compute Engine metadata endpoints.",
        _NODE_TYPES,
        expect(
            "nodeConfig.metadata.disable-legacy-endpoints",
            "true",
            "the v0.1/v1beta1 endpoints do not require the Metadata-Flavor header",
        ),
    ),
    Rule(
        "tpu-slice-placement",
        "Multi-host TPU pools use COMPACT placement with their topology (Ironwood: a named "
        "workload policy); single-host pools set no topology.",
        _NODE_TYPES,
        _tpu_placement,
    ),
    Rule(
        "tpu-slice-upgrade",
        "TPU slice pools upgrade every host at once with no surge VM (SURGE, maxSurge 0, "
        "maxUnavailable = hosts); flex-start pools are left to GKE.",
        _NODE_TYPES,
        _slice_upgrade,
    ),
    Rule(
        "node-capacity-type",
        "Node pools choose at most one capacity type; flex-start consumes no reservation.",
        _NODE_TYPES,
        _capacity_type,
    ),
    Rule(
        "production-protect",
        "Production clusters, node pools, network, node service account and its project grants, "
        "installs and Kueue objects set the protect resource option.",
        PROTECTED_IN_PRODUCTION,
        _protected,
        type_prefixes=(KUEUE_TYPE_PREFIX,),
        production_only=True,
    ),
    Rule(
        "bucket-public-access",
        "Buckets use uniform bucket-level access and enforce public access prevention.",
        frozenset({BUCKET}),
        all_of(
            expect("uniformBucketLevelAccess", True, "IAM alone decides access", default=False),
            expect(
                "publicAccessPrevention",
                "enforced",
                "the bucket can never be made public",
                default="inherited",
            ),
        ),
    ),
    Rule(
        "bucket-retention",
        "Production buckets are not force-destroyed and survive a `pulumi destroy`.",
        frozenset({BUCKET}),
        all_of(
            expect("forceDestroy", False, "objects are never deleted with it", default=False),
            _bucket_retained,
        ),
        production_only=True,
    ),
    Rule(
        "bucket-iam-no-public",
        "Bucket IAM and ACLs never grant allUsers or allAuthenticatedUsers.",
        frozenset(BUCKET_ACCESS_TYPES),
        _no_public_access,
    ),
    Rule(
        "team-namespace-pod-security",
        "Team namespaces carry Pod Security admission's enforce, warn and audit labels.",
        frozenset({NAMESPACE}),
        _pod_security_labels,
    ),
    Rule(
        "admission-policy-denies",
        "Admission policies fail closed and their bindings deny.",
        frozenset({ADMISSION_POLICY, ADMISSION_POLICY_BINDING}),
        _admission_denies,
    ),
    Rule(
        "rbac-no-admin",
        "RoleBindings and ClusterRoleBindings grant neither cluster-admin nor admin.",
        frozenset({ROLE_BINDING, CLUSTER_ROLE_BINDING}),
        _no_cluster_admin,
    ),
    Rule(
        "service-account-token-not-mounted",
        "Service accounts outside default and kube-system do not automount their token.",
        frozenset({K8S_SERVICE_ACCOUNT}),
        _team_token_not_mounted,
    ),
    Rule(
        "project-iam-no-basic-roles",
        "Project IAM grants no basic roles (roles/owner, roles/editor, roles/viewer).",
        frozenset(PROJECT_IAM_TYPES),
        _no_basic_roles,
    ),
)


def rule(rule_id: str) -> Rule:
    """The rule with this id (KeyError if there is none)."""
    for each in RULES:
        if each.id == rule_id:
            return each
    raise KeyError(rule_id)


def evaluate(
    resource: Resource, context: StackContext, rules: Iterable[Rule] = RULES
) -> list[tuple[Rule, str]]:
    """Every violation of the resource, with the rule it breaks, in rule order."""
    return [(r, message) for r in rules for message in r.violations(resource, context)]
