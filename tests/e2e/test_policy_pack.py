"""The pulumi-policy pack in policy/: one mandatory policy per guardrail rule, fed the way the
engine feeds it (wire properties behind the unknown-checking proxy, floats, the stack config in
Pulumi's runtime config, the policy config as the engine passes it), without starting the pack
server, plus one run of the real pack over gRPC (stack config in PULUMI_CONFIG, policy config in
the Configure call)."""

from __future__ import annotations

import importlib.util
import json
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pulumi_policy import (
    EnforcementLevel,
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, unknown_checking_proxy

from components.policy.rules import RULES

POLICY_DIR = Path(__file__).resolve().parents[2] / "policy"


def _load_pack_module():
    spec = importlib.util.spec_from_file_location(
        "tpu_pathways_policies", POLICY_DIR / "tpu_pathways_policies.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


pack = _load_pack_module()
Policy = ResourceValidationPolicy | StackValidationPolicy
POLICIES: dict[str, Policy] = {p.name: p for p in pack.policies()}

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
BUCKET = "gcp:storage/bucket:Bucket"
BUCKET_IAM_MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
PROJECT_IAM_MEMBER = "gcp:projects/iAMMember:IAMMember"
NAMESPACE = "kubernetes:core/v1:Namespace"
VAP = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"
VAP_BINDING = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding"
ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
KSA = "kubernetes:core/v1:ServiceAccount"
QUOTA = "kubernetes:core/v1:ResourceQuota"
PATHWAYS_JOB = "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob"
LOCAL_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"
NODE_SA = "nodes@tpu-pathways-serving.iam.gserviceaccount.com"

# Compliant resources in the engine's wire form: numbers are floats.
GOOD: dict[str, dict[str, Any]] = {
    CLUSTER: {
        "name": "pathways-serving",
        "workloadIdentityConfig": {"workloadPool": "tpu-pathways-serving.svc.id.goog"},
        "enableShieldedNodes": True,
        "enableLegacyAbac": False,
        "controlPlaneEndpointsConfig": {
            "dnsEndpointConfig": {"allowExternalTraffic": True},
            "ipEndpointsConfig": {"enabled": False},
        },
        "nodeConfig": {"serviceAccount": NODE_SA},
        "deletionProtection": True,
        "initialNodeCount": 1.0,
        "maintenancePolicy": {
            "recurringWindow": {
                "startTime": "2025-01-04T00:00:00Z",
                "endTime": "2025-01-04T08:00:00Z",
                "recurrence": "FREQ=WEEKLY;BYDAY=SA,SU",
            },
            "maintenanceExclusions": [
                {
                    "exclusionName": "no-minor-or-node-upgrades",
                    "startTime": "2025-01-01T00:00:00Z",
                    "exclusionOptions": {
                        "scope": "NO_MINOR_OR_NODE_UPGRADES",
                        "endTimeBehavior": "UNTIL_END_OF_SUPPORT",
                    },
                }
            ],
        },
    },
    NODE_POOL: {
        "name": "v5e-0",
        "nodeCount": 2.0,
        "placementPolicy": {"type": "COMPACT", "tpuTopology": "2x4"},
        "upgradeSettings": {"strategy": "SURGE", "maxSurge": 0.0, "maxUnavailable": 2.0},
        "nodeConfig": {
            "machineType": "ct5lp-hightpu-4t",
            "serviceAccount": NODE_SA,
            "shieldedInstanceConfig": {
                "enableSecureBoot": True,
                "enableIntegrityMonitoring": True,
            },
            "workloadMetadataConfig": {"mode": "GKE_METADATA"},
            "metadata": {"disable-legacy-endpoints": "true"},
            "spot": True,
        },
    },
    BUCKET: {
        "name": "pathways-serving-scratch",
        "uniformBucketLevelAccess": True,
        "publicAccessPrevention": "enforced",
        "forceDestroy": False,
    },
    BUCKET_IAM_MEMBER: {
        "bucket": "pathways-serving-scratch",
        "role": "roles/storage.objectUser",
        "member": f"serviceAccount:{NODE_SA}",
    },
    PROJECT_IAM_MEMBER: {
        "project": "tpu-pathways-serving",
        "role": "roles/container.defaultNodeServiceAccount",
        "member": f"serviceAccount:{NODE_SA}",
    },
    NAMESPACE: {
        "metadata": {
            "name": "serving",
            "labels": {
                "tpu-pathways/team": "serving",
                "pod-security.kubernetes.io/enforce": "privileged",
                "pod-security.kubernetes.io/warn": "restricted",
                "pod-security.kubernetes.io/audit": "restricted",
                "tpu-pathways/host-network": "dedicated",
            },
        }
    },
    QUOTA: {
        "metadata": {
            "name": "serving-quota",
            "namespace": "serving",
            "labels": {"tpu-pathways/team": "serving"},
        },
        "spec": {"hard": {"requests.google.com/tpu": "16", "services.loadbalancers": "0"}},
    },
    VAP: {"metadata": {"name": "tpu-pathways-pods-serving"}, "spec": {"failurePolicy": "Fail"}},
    VAP_BINDING: {
        "metadata": {"name": "tpu-pathways-pods-serving"},
        "spec": {"policyName": "tpu-pathways-pods-serving", "validationActions": ["Deny"]},
    },
    ROLE_BINDING: {
        "metadata": {"name": "serving-edit", "namespace": "serving"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
    },
    KSA: {
        "metadata": {"name": "infer", "namespace": "serving"},
        "automountServiceAccountToken": False,
    },
    PATHWAYS_JOB: {
        "kind": "PathwaysJob",
        "metadata": {
            "name": "infer",
            "namespace": "serving",
            "labels": {"kueue.x-k8s.io/queue-name": "lq"},
        },
        "spec": {
            "pathwaysVersion": "jax-0.9.0",
            "image": "us-docker.pkg.dev/acme/serve:1.2",
            "workers": [{"type": "ct6e-standard-4t", "topology": "2x2", "numSlices": 1.0}],
            "controller": {"deploymentMode": "default"},
        },
    },
}
# What else the stack registers, as a stack validation sees it: the namespace's LocalQueue.
STACK = [(LOCAL_QUEUE, "lq", {"metadata": {"name": "lq", "namespace": "serving"}})]
RULE_TYPES = {rule.id: sorted(rule.types & set(GOOD)) for rule in RULES}


def _changed(inputs: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    result = json.loads(json.dumps(inputs))
    *parents, last = path.split(".")
    node = result
    for part in parents:
        node = node[part]
    node[last] = value
    return result


def _options(protect: bool) -> PolicyResourceOptions:
    return PolicyResourceOptions(
        protect=protect,
        ignore_changes=[],
        delete_before_replace=None,
        aliases=[],
        custom_timeouts=PolicyCustomTimeouts(0, 0, 0),
        additional_secret_outputs=[],
    )


def _urn(type_token: str, name: str) -> str:
    return f"urn:pulumi:serving::tpu-pathways::{type_token}::{name}"


def _stack_resource(type_token: str, name: str, props: dict[str, Any], protect: bool):
    wire = unknown_checking_proxy(deserialize_properties(props))
    return PolicyResource(
        type_token, wire, _urn(type_token, name), name, _options(protect), None, None, [], {}
    )


def run_policy(
    policy: Policy,
    type_token: str,
    props: dict[str, Any],
    *,
    protect: bool = True,
    name: str = "res",
    config: dict[str, Any] | None = None,
) -> list[tuple[str, str | None]]:
    """Call the policy's validator the way the pack server does (a stack validation gets the
    resource among the rest of the ``STACK``); return what it reported."""
    if isinstance(policy, StackValidationPolicy):
        resources = [_stack_resource(type_token, name, props, protect)]
        resources += [_stack_resource(*other, protect=True) for other in STACK]
        args: Any = StackValidationArgs(resources, config or {})
    else:
        args = ResourceValidationArgs(
            resource_type=type_token,
            props=unknown_checking_proxy(deserialize_properties(props)),
            urn=_urn(type_token, name),
            name=name,
            opts=_options(protect),
            provider=None,
            config=config or {},  # the policy's config, as the engine passes it
        )
    reported: list[tuple[str, str | None]] = []

    def report_violation(message: str, urn: str | None = None) -> None:
        reported.append((message, urn))

    assert policy.validate(args, report_violation) is None  # synchronous validators
    return reported


@pytest.fixture
def stack_config(monkeypatch):
    """Set the stack config pulumi-policy gives a validator (Pulumi's runtime config)."""
    import pulumi

    monkeypatch.delenv("PULUMI_CONFIG", raising=False)

    def set_environment(environment: str) -> None:
        config = {
            "tpu-pathways:environment": environment,
            "tpu-pathways:team": "serving",
            "tpu-pathways:gcp": '{"project": "tpu-pathways-serving"}',
        }
        pulumi.runtime.set_all_config(config, [])

    set_environment("production")
    yield set_environment
    pulumi.runtime.set_all_config({}, [])


def test_one_mandatory_policy_per_rule():
    policies = pack.policies()
    assert [p.name for p in policies] == [rule.id for rule in RULES]
    assert [p.description for p in policies] == [rule.description for rule in RULES]
    assert {p.enforcement_level for p in policies} == {EnforcementLevel.MANDATORY}
    # a rule that reads the rest of the stack sees it: the engine runs it over the whole stack
    kinds = [isinstance(p, StackValidationPolicy) for p in policies]
    assert kinds == [rule.stack_wide for rule in RULES]


@pytest.mark.parametrize("rule_id", [rule.id for rule in RULES])
def test_every_policy_passes_compliant_resources_in_production(rule_id, stack_config):
    assert RULE_TYPES[rule_id], f"no compliant {rule_id} resource to check"
    for type_token in RULE_TYPES[rule_id]:
        assert run_policy(POLICIES[rule_id], type_token, GOOD[type_token]) == []


# One failing resource per rule (production, protect off unless stated) and what it reports.
FAILING = [
    (
        "cluster-workload-identity",
        CLUSTER,
        "workloadIdentityConfig.workloadPool",
        "",
        "workloadIdentityConfig.workloadPool is not set (pods on the pod network would have to "
        "use the node's service account instead of Workload Identity; Pathways pods run on the "
        "host network and act as the node's service account either way)",
    ),
    (
        "cluster-shielded-nodes",
        CLUSTER,
        "enableShieldedNodes",
        False,
        "enableShieldedNodes is false, must be true (node identity is verified)",
    ),
    (
        "cluster-legacy-abac-disabled",
        CLUSTER,
        "enableLegacyAbac",
        True,
        "enableLegacyAbac is true, must be false (RBAC and IAM must decide access)",
    ),
    (
        "cluster-control-plane-access",
        CLUSTER,
        "controlPlaneEndpointsConfig",
        None,
        "neither masterAuthorizedNetworksConfig nor controlPlaneEndpointsConfig.dnsEndpointConfig "
        "is set (limit the IP endpoint to authorized networks, or reach the control plane through "
        "the IAM-gated DNS endpoint)",
    ),
    (
        "cluster-authorized-networks-closed",
        CLUSTER,
        "masterAuthorizedNetworksConfig",
        {"cidrBlocks": [{"cidrBlock": "0.0.0.0/0", "displayName": "anywhere"}]},
        "masterAuthorizedNetworksConfig.cidrBlocks has '0.0.0.0/0': the control plane's IP "
        "endpoint would take traffic from the whole internet; list your networks' CIDRs or use "
        "the IAM-gated DNS endpoint",
    ),
    (
        "cluster-authorized-networks-closed",
        CLUSTER,
        "masterAuthorizedNetworksConfig",
        {"cidrBlocks": [{"cidrBlock": "0.0.0.0/1"}, {"cidrBlock": "128.0.0.0/1"}]},
        "masterAuthorizedNetworksConfig.cidrBlocks together cover 0.0.0.0/0 (0.0.0.0/1, "
        "128.0.0.0/1): the control plane's IP endpoint would take traffic from the whole "
        "internet; list your networks' CIDRs or use the IAM-gated DNS endpoint",
    ),
    (
        "cluster-authorized-networks-closed",
        CLUSTER,
        "masterAuthorizedNetworksConfig",
        {
            "cidrBlocks": [
                {"cidrBlock": "::ffff:0:0/97"},
                {"cidrBlock": "2002:8000::/17"},
            ]
        },
        "masterAuthorizedNetworksConfig.cidrBlocks together cover 0.0.0.0/0 (::ffff:0:0/97 "
        "(0.0.0.0/1 written as IPv6, IPv4-mapped), 2002:8000::/17 (128.0.0.0/1 written as IPv6, "
        "6to4)) (::ffff:0:0/97, 2002:8000::/17): the control plane's IP endpoint would take "
        "traffic from the whole internet; list your networks' CIDRs or use the IAM-gated DNS "
        "endpoint",
    ),
    (
        "cluster-control-plane-endpoints",
        CLUSTER,
        "controlPlaneEndpointsConfig.ipEndpointsConfig",
        {"enabled": True},
        "no authorized network is listed but controlPlaneEndpointsConfig.ipEndpointsConfig."
        "enabled is true: turn the IP endpoint off (false) and use the IAM-gated DNS endpoint",
    ),
    (
        "team-namespace-pod-security",
        NAMESPACE,
        "metadata.labels",
        {
            "tpu-pathways/team": "serving",
            "pod-security.kubernetes.io/enforce": "privileged",
            "pod-security.kubernetes.io/warn": "baseline",
        },
        "metadata.labels has no 'pod-security.kubernetes.io/audit' (Pod Security admission's "
        "audit level)",
    ),
    (
        "team-host-network-declared",
        NAMESPACE,
        "metadata.labels",
        {"tpu-pathways/team": "serving", "tpu-pathways/host-network": "anywhere"},
        "metadata.labels['tpu-pathways/host-network'] is \"anywhere\": where the namespace's "
        "host-network pods may run must be one of dedicated, shared, alone, none (teams on the "
        "shared pools act as one node identity: declared with teams[].isolation: shared)",
    ),
    (
        "team-namespace-baseline",
        NAMESPACE,
        "metadata.labels",
        {
            "tpu-pathways/team": "serving",
            "pod-security.kubernetes.io/enforce": "privileged",
            "tpu-pathways/host-network": "none",
        },
        "enforces Pod Security privileged, but no host-network Pathways pod may run in it "
        "(tpu-pathways/host-network: none): enforce baseline",
    ),
    (
        "team-tpu-quota",
        QUOTA,
        "spec.hard",
        {"services.loadbalancers": "0"},
        "spec.hard has no 'requests.google.com/tpu': a pod of the team that went around Kueue "
        "could hold every TPU chip of the cluster; give it the team's share "
        "(teams[].resourceQuota.tpuChips)",
    ),
    (
        "admission-policy-denies",
        VAP_BINDING,
        "spec.validationActions",
        ["Audit"],
        "spec.validationActions is [\"Audit\"]: without 'Deny' nothing is refused",
    ),
    (
        "rbac-no-admin",
        ROLE_BINDING,
        "roleRef.name",
        "admin",
        "roleRef.name is 'admin': it may change RBAC, quotas and policies of the namespace (or "
        "cluster); teams get 'edit'",
    ),
    (
        "service-account-token-not-mounted",
        KSA,
        "automountServiceAccountToken",
        True,
        "automountServiceAccountToken is true, must be false: every pod of the account would "
        "carry a Kubernetes API token it does not need",
    ),
    (
        "cluster-deletion-protection",
        CLUSTER,
        "deletionProtection",
        False,
        "deletionProtection is false, must be true (production clusters refuse deletion)",
    ),
    (
        "node-service-account",
        NODE_POOL,
        "nodeConfig.serviceAccount",
        "default",
        'nodeConfig.serviceAccount is "default": nodes would run as the Compute Engine default '
        "service account (Editor on the project); use a dedicated node service account",
    ),
    (
        "node-shielded-instance",
        NODE_POOL,
        "nodeConfig.shieldedInstanceConfig.enableSecureBoot",
        False,
        "nodeConfig.shieldedInstanceConfig.enableSecureBoot is false, must be true (only "
        "signed boot components may run)",
    ),
    (
        "node-workload-metadata",
        NODE_POOL,
        "nodeConfig.workloadMetadataConfig.mode",
        "GCE_METADATA",
        'nodeConfig.workloadMetadataConfig.mode is "GCE_METADATA", must be '
        '"GKE_METADATA" (pods on the pod network must not get the node\'s credentials)',
    ),
    (
        "node-legacy-metadata-endpoints",
        NODE_POOL,
        "nodeConfig.metadata",
        {},
        'nodeConfig.metadata.disable-legacy-endpoints is not set, must be "true" (the '
        "v0.1/v1beta1 endpoints do not require the Metadata-Flavor header)",
    ),
    (
        "tpu-slice-placement",
        NODE_POOL,
        "placementPolicy",
        None,
        "multi-host TPU slice (2 nodes of ct5lp-hightpu-4t) has no placementPolicy; it needs type "
        "COMPACT with its tpuTopology so GKE places the hosts on one ICI-connected block",
    ),
    (
        "tpu-slice-upgrade",
        NODE_POOL,
        "upgradeSettings",
        {"strategy": "SURGE", "maxSurge": 0.0, "maxUnavailable": 1.0},
        "upgradeSettings.maxUnavailable is 1.0 (GKE's default 0 when unset) for a slice of 2 "
        "hosts: an upgrade would take the slice host by host, interrupting its job once per "
        "batch; set it to 2 so the slice is recreated once, whole",
    ),
    (
        "cluster-maintenance-window",
        CLUSTER,
        "maintenancePolicy",
        None,
        "maintenancePolicy sets no maintenance window: GKE may upgrade the control plane and "
        "nodes at any hour, and upgrading one host of a TPU slice interrupts the whole slice and "
        "its job; set maintenancePolicy.recurringWindow",
    ),
    (
        "node-capacity-type",
        NODE_POOL,
        "nodeConfig.reservationAffinity",
        {"consumeReservationType": "SPECIFIC_RESERVATION", "values": ["serving-v5e"]},
        "nodeConfig chooses more than one capacity type (spot, reservationAffinity "
        "SPECIFIC_RESERVATION); choose exactly one of spot, flexStart or a specific reservation "
        "(none = on-demand)",
    ),
    (
        "production-protect",
        NODE_POOL,
        "name",
        "v5e-0",
        "production stacks must set the protect resource option (a `pulumi destroy` or an "
        "accidental replacement would delete it)",
    ),
    (
        "bucket-public-access",
        BUCKET,
        "publicAccessPrevention",
        "inherited",
        'publicAccessPrevention is "inherited", must be "enforced" (the bucket can never be made '
        "public)",
    ),
    (
        "bucket-retention",
        BUCKET,
        "forceDestroy",
        True,
        "forceDestroy is true, must be false (objects are never deleted with it)",
    ),
    (
        "bucket-iam-no-public",
        BUCKET_IAM_MEMBER,
        "member",
        "allUsers",
        "grants access to 'allUsers': the bucket's data would be public",
    ),
    (
        "project-iam-no-basic-roles",
        PROJECT_IAM_MEMBER,
        "role",
        "roles/owner",
        "grants the basic role 'roles/owner': project-wide access far beyond what node service "
        "accounts need; grant the specific predefined roles instead",
    ),
    (
        "workload-queued",
        PATHWAYS_JOB,
        "metadata.labels",
        {},
        "metadata.labels has no 'kueue.x-k8s.io/queue-name', while the stack queues namespace "
        "'serving' through LocalQueue 'lq': Kueue leaves the job alone "
        "(manageJobsWithoutQueueName is false), so it starts outside the quota and its slices "
        "are not admitted all or nothing",
    ),
    (
        "images-pinned",
        PATHWAYS_JOB,
        "spec.image",
        "us-docker.pkg.dev/acme/serve",
        "spec.image: 'us-docker.pkg.dev/acme/serve' has no tag or digest, so it runs whatever "
        "'latest' is (pin a tag or a digest outside dev)",
    ),
]


def test_every_rule_has_a_failing_case():
    assert sorted({f[0] for f in FAILING}) == sorted(rule.id for rule in RULES)


@pytest.mark.parametrize(("rule_id", "type_token", "path", "value", "message"), FAILING)
def test_every_policy_reports_a_violation_naming_the_resource(
    rule_id, type_token, path, value, message, stack_config
):
    props = _changed(GOOD[type_token], path, value)
    protect = rule_id != "production-protect"
    policy = POLICIES[rule_id]
    reported = run_policy(policy, type_token, props, protect=protect, name="bad-one")
    # a stack validation names the resource by its URN as well
    urn = _urn(type_token, "bad-one") if isinstance(policy, StackValidationPolicy) else None
    assert reported == [(f"{type_token} 'bad-one': {message}", urn)]


def test_production_rules_follow_the_stack_config(stack_config):
    props = _changed(GOOD[CLUSTER], "deletionProtection", False)
    assert len(run_policy(POLICIES["cluster-deletion-protection"], CLUSTER, props)) == 1
    stack_config("dev")
    assert run_policy(POLICIES["cluster-deletion-protection"], CLUSTER, props) == []
    assert run_policy(POLICIES["production-protect"], CLUSTER, GOOD[CLUSTER], protect=False) == []


def test_bucket_retention_in_a_pack_relies_on_protect(stack_config):
    # Policy packs are not told about retainOnDelete: protect satisfies the rule, and without it
    # the pack cannot tell, so it reports only what it can see (forceDestroy).
    policy = POLICIES["bucket-retention"]
    assert run_policy(policy, BUCKET, GOOD[BUCKET], protect=True) == []
    assert run_policy(policy, BUCKET, GOOD[BUCKET], protect=False) == []


def test_values_unknown_during_preview_are_not_reported(stack_config):
    unknown_sa = _changed(GOOD[NODE_POOL], "nodeConfig.serviceAccount", UNKNOWN_STRING_VALUE)
    for policy in POLICIES.values():
        assert run_policy(policy, NODE_POOL, unknown_sa) == []
    # ...while the rest of the resource is still checked
    both = _changed(unknown_sa, "nodeConfig.workloadMetadataConfig.mode", "GCE_METADATA")
    assert len(run_policy(POLICIES["node-workload-metadata"], NODE_POOL, both)) == 1


def test_policies_ignore_resources_of_other_types(stack_config):
    for policy in POLICIES.values():
        assert run_policy(policy, "gcp:compute/network:Network", {"name": "n"}) == []


GCP = {"gcp": '{"project": "p"}'}


@pytest.mark.parametrize(
    ("stack", "policy", "expected"),
    [
        ({**GCP, "environment": "staging"}, {}, "staging"),
        (GCP, {}, "dev"),  # the program's default
        ({"owner": "dev"}, {}, "dev"),  # a team stack
        ({**GCP, "environment": "prod"}, {}, "production"),  # not an environment: fail closed
        ({}, {}, "production"),  # no stack config visible at all
        ({"environment": "dev"}, {}, "production"),  # ...none of a stack's keys
        ({**GCP, "environment": "dev"}, {"environment": "production"}, "production"),
        ({**GCP, "environment": "dev"}, {"environment": "staging"}, "staging"),
        # The policy config only tightens: it cannot downgrade a production stack's policy...
        ({**GCP, "environment": "production"}, {"environment": "dev"}, "production"),
        ({**GCP, "environment": "staging"}, {"environment": "dev"}, "staging"),
        # ...nor relax the fail-closed default when no stack config is visible
        ({}, {"environment": "dev"}, "production"),
    ],
)
def test_stack_environment(stack, policy, expected):
    assert pack.stack_environment(stack, policy) == expected


def test_a_validator_reads_the_stack_config_through_pulumi_config(stack_config):
    props = _changed(GOOD[CLUSTER], "deletionProtection", False)
    policy = POLICIES["cluster-deletion-protection"]
    stack_config("dev")
    assert run_policy(policy, CLUSTER, props) == []
    # the policy config (policyPackConfigs) checks the dev stack as production
    assert len(run_policy(policy, CLUSTER, props, config={"environment": "production"})) == 1


def test_every_policy_declares_its_config_schema():
    import jsonschema

    config = json.loads((POLICY_DIR / "config.json").read_text())
    for policy in pack.policies():
        schema = policy.config_schema
        assert schema is not None, policy.name
        document = {"type": "object", "properties": schema.properties}
        jsonschema.Draft202012Validator.check_schema(document)
        assert "enforcementLevel" not in schema.properties
        entry = config.get(policy.name, {})
        assert list(jsonschema.Draft202012Validator(document).iter_errors(entry)) == []
    assert config["all"] == "mandatory"
    unknown = set(config) - {"all"} - {p.name for p in pack.policies()}
    assert unknown == set()


def test_a_bad_policy_config_value_is_refused_by_the_schema():
    import jsonschema

    schema = pack.CONFIG_SCHEMA
    document = {"type": "object", "properties": schema.properties, "additionalProperties": False}
    errors = [
        e.message
        for e in jsonschema.Draft202012Validator(document).iter_errors({"environment": "prod"})
    ]
    assert errors == ["'prod' is not one of ['dev', 'staging', 'production']"]


def test_the_pack_serves_the_policies_over_grpc(tmp_path):
    """Start the real pack the way Pulumi does and analyze one resource through gRPC."""
    import grpc
    from google.protobuf import empty_pb2, struct_pb2
    from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

    env = {
        "PATH": "/usr/bin:/bin",
        # A dev stack: the production-only rules apply only once the policy config says so.
        "PULUMI_CONFIG": json.dumps(
            {"tpu-pathways:environment": "dev", "tpu-pathways:gcp": '{"project": "p"}'}
        ),
        # the checkout under test, not another copy of the project installed in the venv
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
    }
    errors = tmp_path / "pack.stderr"
    server = subprocess.Popen(
        # -u as Pulumi runs it: the pack prints its port unbuffered.
        [sys.executable, "-u", "-m", "pulumi.policy", "127.0.0.1:0", str(POLICY_DIR)],
        stdout=subprocess.PIPE,
        stderr=errors.open("w"),
        cwd=tmp_path,
        env=env,
    )
    try:
        ready, _, _ = select.select([server.stdout], [], [], 60)
        line = server.stdout.readline() if ready else b""  # its port, once it serves
        assert line.strip().isdigit(), f"the pack did not start: {errors.read_text()}"
        port = int(line)
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            analyzer = analyzer_pb2_grpc.AnalyzerStub(channel)
            info = analyzer.GetAnalyzerInfo(empty_pb2.Empty(), timeout=30)
            assert info.name == pack.PACK_NAME
            assert [p.name for p in info.policies] == [rule.id for rule in RULES]

            unplaced = _changed(GOOD[NODE_POOL], "placementPolicy", None)
            request = _wire(
                analyzer_pb2.AnalyzeRequest, NODE_POOL, "pathways-serving-v5e-0", unplaced
            )
            response = analyzer.Analyze(request, timeout=30)
            unprotected = _changed(GOOD[CLUSTER], "deletionProtection", False)
            cluster_request = _wire(
                analyzer_pb2.AnalyzeRequest, CLUSTER, "pathways-dev", unprotected
            )
            as_dev = analyzer.Analyze(cluster_request, timeout=30)
            tighter = struct_pb2.Struct()
            tighter.update({"environment": "production"})
            policy = analyzer_pb2.PolicyConfig(
                enforcementLevel=analyzer_pb2.MANDATORY, properties=tighter
            )
            analyzer.Configure(
                analyzer_pb2.ConfigureAnalyzerRequest(
                    policyConfig={"cluster-deletion-protection": policy}
                ),
                timeout=30,
            )
            as_production = analyzer.Analyze(cluster_request, timeout=30)
            stack = analyzer.AnalyzeStack(_stack_request(), timeout=30)
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert [(d.policyName, d.enforcementLevel) for d in response.diagnostics] == [
        ("tpu-slice-placement", analyzer_pb2.MANDATORY)
    ]
    assert response.diagnostics[0].message.endswith(
        "gcp:container/nodePool:NodePool 'pathways-serving-v5e-0': multi-host TPU slice "
        "(2 nodes of ct5lp-hightpu-4t) has no placementPolicy; it needs type COMPACT with its "
        "tpuTopology so GKE places the hosts on one ICI-connected block"
    )
    # The stack's environment came through pulumi.Config in the pack's process (dev: the
    # production-only rule is quiet), the policy config through Configure (it tightens).
    assert [d.policyName for d in as_dev.diagnostics] == []
    assert [d.policyName for d in as_production.diagnostics] == ["cluster-deletion-protection"]
    # The stack-wide rule ran over the whole stack: the workload, beside its namespace's queue.
    assert [(d.policyName, d.urn) for d in stack.diagnostics] == [
        ("workload-queued", _urn(PATHWAYS_JOB, "unqueued"))
    ]


def _wire(message: Any, type_token: str, name: str, props: dict[str, Any]) -> Any:
    """A resource as the engine sends it (an AnalyzeRequest or an AnalyzerResource), protected."""
    from google.protobuf import struct_pb2
    from pulumi.runtime.proto import analyzer_pb2

    properties = struct_pb2.Struct()
    properties.update(props)
    return message(
        type=type_token,
        properties=properties,
        urn=_urn(type_token, name),
        name=name,
        options=analyzer_pb2.AnalyzerResourceOptions(protect=True),
    )


def _stack_request() -> Any:
    """A stack of a LocalQueue and a PathwaysJob in its namespace without the queue label."""
    from pulumi.runtime.proto import analyzer_pb2

    job = _changed(GOOD[PATHWAYS_JOB], "metadata.labels", {})
    resources = [(LOCAL_QUEUE, name, props) for _, name, props in STACK]
    resources.append((PATHWAYS_JOB, "unqueued", job))
    return analyzer_pb2.AnalyzeStackRequest(
        resources=[_wire(analyzer_pb2.AnalyzerResource, *resource) for resource in resources]
    )
