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

from collections.abc import Iterable

from components.policy.access_checks import (
    admission_denies,
    bucket_retained,
    no_basic_roles,
    no_cluster_admin,
    no_public_access,
    pod_security_labels,
    protected,
    team_host_network_declared,
    team_namespace_baseline,
    team_token_not_mounted,
    team_tpu_quota,
)
from components.policy.cluster_checks import (
    authorized_networks_closed,
    capacity_type,
    control_plane_access,
    control_plane_endpoints,
    maintenance_window,
    node_service_account,
    slice_upgrade,
    tpu_placement,
    workload_identity,
)
from components.policy.model import (
    BUCKET_ACCESS_TYPES,
    PROJECT_IAM_TYPES,
    PROTECTED_IN_PRODUCTION,
    Resource,
    Rule,
    StackContext,
    all_of,
    expect,
)
from components.policy.workload_admission import workload_queued
from components.policy.workload_checks import images_pinned
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
    RESOURCE_QUOTA,
    ROLE_BINDING,
    WORKLOAD_TYPES,
)

# --- the rules (their checks: ``cluster_checks``, ``access_checks``, ``workload_admission``) ----

_NODE_TYPES = frozenset({NODE_POOL})
_CLUSTER_TYPES = frozenset({CLUSTER})

RULES: tuple[Rule, ...] = (
    Rule(
        "cluster-workload-identity",
        "GKE clusters enable Workload Identity (workloadIdentityConfig.workloadPool).",
        _CLUSTER_TYPES,
        workload_identity,
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
        control_plane_access,
    ),
    Rule(
        "cluster-authorized-networks-closed",
        "GKE control planes never list 0.0.0.0/0 (or ::/0), or ranges that add up to it, as "
        "authorized networks.",
        _CLUSTER_TYPES,
        authorized_networks_closed,
    ),
    Rule(
        "cluster-control-plane-endpoints",
        "GKE control planes keep Google Cloud's public IPs off the IP endpoint, and turn the "
        "IP endpoint off when no authorized network is listed.",
        _CLUSTER_TYPES,
        control_plane_endpoints,
    ),
    Rule(
        "cluster-maintenance-window",
        "GKE clusters set a maintenance window (upgrades only then).",
        _CLUSTER_TYPES,
        maintenance_window,
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
        node_service_account,
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
        tpu_placement,
    ),
    Rule(
        "tpu-slice-upgrade",
        "TPU slice pools upgrade every host at once with no surge VM (SURGE, maxSurge 0, "
        "maxUnavailable = hosts); flex-start pools are left to GKE.",
        _NODE_TYPES,
        slice_upgrade,
    ),
    Rule(
        "node-capacity-type",
        "Node pools choose at most one capacity type; flex-start consumes no reservation.",
        _NODE_TYPES,
        capacity_type,
    ),
    Rule(
        "production-protect",
        "Production clusters, node pools, network, node service account and its project grants, "
        "installs (and their controllers' patches) and Kueue objects set the protect resource "
        "option.",
        PROTECTED_IN_PRODUCTION,
        protected,
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
            bucket_retained,
        ),
        production_only=True,
    ),
    Rule(
        "bucket-iam-no-public",
        "Bucket IAM and ACLs never grant allUsers or allAuthenticatedUsers.",
        frozenset(BUCKET_ACCESS_TYPES),
        no_public_access,
    ),
    Rule(
        "team-namespace-pod-security",
        "Team namespaces carry Pod Security admission's enforce, warn and audit labels.",
        frozenset({NAMESPACE}),
        pod_security_labels,
    ),
    Rule(
        "team-host-network-declared",
        "Team namespaces say where their host-network pods may run (their node identity).",
        frozenset({NAMESPACE}),
        team_host_network_declared,
    ),
    Rule(
        "team-namespace-baseline",
        "Team namespaces without host-network Pathways pods enforce Pod Security baseline.",
        frozenset({NAMESPACE}),
        team_namespace_baseline,
    ),
    Rule(
        "team-tpu-quota",
        "Team namespaces' ResourceQuotas over every pod bound their TPU chips.",
        frozenset({RESOURCE_QUOTA}),
        team_tpu_quota,
    ),
    Rule(
        "admission-policy-denies",
        "Admission policies fail closed and their bindings deny.",
        frozenset({ADMISSION_POLICY, ADMISSION_POLICY_BINDING}),
        admission_denies,
    ),
    Rule(
        "rbac-no-admin",
        "RoleBindings and ClusterRoleBindings grant neither cluster-admin nor admin.",
        frozenset({ROLE_BINDING, CLUSTER_ROLE_BINDING}),
        no_cluster_admin,
    ),
    Rule(
        "service-account-token-not-mounted",
        "Service accounts outside default and kube-system do not automount their token.",
        frozenset({K8S_SERVICE_ACCOUNT}),
        team_token_not_mounted,
    ),
    Rule(
        "project-iam-no-basic-roles",
        "Project IAM grants no basic roles (roles/owner, roles/editor, roles/viewer).",
        frozenset(PROJECT_IAM_TYPES),
        no_basic_roles,
    ),
    Rule(
        "workload-queued",
        "Workloads (PathwaysJob or JobSet) in a namespace the stack gives Kueue LocalQueues are "
        "labelled with one of them (kueue.x-k8s.io/queue-name), so Kueue admits them.",
        frozenset(WORKLOAD_TYPES),
        workload_queued,
        stack_wide=True,
    ),
    Rule(
        "images-pinned",
        "Outside dev, every image a workload runs has a tag other than latest, or a digest, "
        "and no Pathways release is latest.",
        frozenset(WORKLOAD_TYPES),
        images_pinned,
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
