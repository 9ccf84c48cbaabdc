"""Guardrail rules: every rule passes a compliant resource and names a failing one; the offline
plan of every example stack passes, and plans with a planted defect fail on exactly that."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from components.cli.main import main
from components.plan.model import UNKNOWN, Plan, PlannedResource
from components.policy import rules as guardrails
from components.policy.report import Violation, check_plan
from components.policy.rules import (
    BUCKET,
    CLUSTER,
    NODE_POOL,
    RULES,
    Resource,
    StackContext,
)
from components.resolve.stack_files import STACKS_DIR
from components.resolve.tenancy.ownership import owner_stacks
from tests.examples import EXAMPLE_STACKS, EXAMPLES_DIR
from tests.helpers import stack_file_values

BUCKET_IAM_MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
BUCKET_IAM_BINDING = "gcp:storage/bucketIAMBinding:BucketIAMBinding"
BUCKET_IAM_POLICY = "gcp:storage/bucketIAMPolicy:BucketIAMPolicy"
BUCKET_ACL = "gcp:storage/bucketACL:BucketACL"
PROJECT_IAM_MEMBER = "gcp:projects/iAMMember:IAMMember"
PROJECT_IAM_POLICY = "gcp:projects/iAMPolicy:IAMPolicy"

NODE_SA = "nodes@tpu-pathways-dev.iam.gserviceaccount.com"
DELETE = object()

CLUSTER_OK: dict[str, Any] = {
    "name": "pathways-dev",
    "workloadIdentityConfig": {"workloadPool": "tpu-pathways-dev.svc.id.goog"},
    "enableShieldedNodes": True,
    "enableLegacyAbac": False,
    "controlPlaneEndpointsConfig": {
        "dnsEndpointConfig": {"allowExternalTraffic": True},
        "ipEndpointsConfig": {"enabled": False},
    },
    "nodeConfig": {"serviceAccount": NODE_SA},
    "deletionProtection": True,
    "maintenancePolicy": {
        "recurringWindow": {
            "startTime": "2025-01-04T00:00:00Z",
            "endTime": "2025-01-04T08:00:00Z",
            "recurrence": "FREQ=WEEKLY;BYDAY=SA,SU",
        }
    },
}
# A two-host v5e 2x4 slice on spot VMs, as the dev stack registers it.
TPU_POOL_OK: dict[str, Any] = {
    "name": "v5e-0",
    "nodeCount": 2,
    "placementPolicy": {"type": "COMPACT", "tpuTopology": "2x4"},
    "upgradeSettings": {"strategy": "SURGE", "maxSurge": 0, "maxUnavailable": 2},
    "nodeConfig": {
        "machineType": "ct5lp-hightpu-4t",
        "serviceAccount": NODE_SA,
        "shieldedInstanceConfig": {"enableSecureBoot": True, "enableIntegrityMonitoring": True},
        "workloadMetadataConfig": {"mode": "GKE_METADATA"},
        "metadata": {"disable-legacy-endpoints": "true"},
        "spot": True,
    },
}
BUCKET_OK: dict[str, Any] = {
    "name": "pathways-dev-scratch",
    "uniformBucketLevelAccess": True,
    "publicAccessPrevention": "enforced",
    "forceDestroy": False,
}
PROTECTED = {"protect": True}


def edit(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A deep copy of ``base`` with dotted paths (``a__b`` = ``a.b``) set, or removed by DELETE."""
    result = copy.deepcopy(base)
    for key, value in changes.items():
        *parents, last = key.split("__")
        node = result
        for part in parents:
            node = node.setdefault(part, {})
        if value is DELETE:
            node.pop(last, None)
        else:
            node[last] = value
    return result


def node_config(**changes: Any) -> dict[str, Any]:
    return edit(TPU_POOL_OK, **{f"nodeConfig__{k}": v for k, v in changes.items()})


def violations(
    rule_id: str,
    type_token: str,
    inputs: dict[str, Any],
    options: dict[str, Any] | None = None,
    environment: str = "dev",
    name: str = "res",
    queues: dict[str, frozenset[str]] | None = None,
) -> list[str]:
    resource = Resource(type_token, name, inputs, options or {})
    return guardrails.rule(rule_id).violations(resource, StackContext(environment, queues))


def case(
    rule_id, type_token, inputs, expected, options=None, environment="dev", id=None, queues=None
):
    """One resource and what the rule reports (``queues``: the stack's LocalQueues by namespace,
    for a stack-wide rule)."""
    return pytest.param(rule_id, type_token, inputs, options, environment, expected, queues, id=id)


PATHWAYS_JOB = "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob"
JOBSET = "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
QUEUES = {"team-a": frozenset({"lq"})}


def pathways_job_workload(labels: Any = None) -> dict[str, Any]:
    """A PathwaysJob's inputs in namespace team-a (queued on ``lq`` unless ``labels`` say)."""
    metadata = {"name": "train", "namespace": "team-a", "labels": {QUEUE_LABEL: "lq"}}
    if labels is not None:
        metadata["labels"] = labels
    worker = {"type": "ct5p-hightpu-4t", "topology": "2x2x2", "numSlices": 1}
    spec = {"workers": [worker], "controller": {"deploymentMode": "default"}}
    return {"kind": "PathwaysJob", "metadata": metadata, "spec": spec}


def jobset_workload(labels: Any = None) -> dict[str, Any]:
    """The same job as a JobSet's inputs (its head and worker replicated jobs)."""
    inputs = pathways_job_workload(labels)
    jobs = [{"name": "pathways-head"}, {"name": "worker", "replicas": 1}]
    return {"kind": "JobSet", "metadata": inputs["metadata"], "spec": {"replicatedJobs": jobs}}


WORKLOADS = [
    (PATHWAYS_JOB, pathways_job_workload, "pathwaysjob"),
    (JOBSET, jobset_workload, "jobset"),
]

C = "gcp:container/cluster:Cluster 'res': "
NAMESPACE = "kubernetes:core/v1:Namespace"
N = f"{NAMESPACE} 'res': "
QUOTA = "kubernetes:core/v1:ResourceQuota"
HOST_NETWORK = "tpu-pathways/host-network"
ENFORCE = "pod-security.kubernetes.io/enforce"
VAP = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"
VAP_LABEL = f"{VAP} 'res': "
VAP_BINDING = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding"
VAP_BINDING_LABEL = f"{VAP_BINDING} 'res': "
ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
RB = f"{ROLE_BINDING} 'res': "
KSA = "kubernetes:core/v1:ServiceAccount"
KSA_LABEL = f"{KSA} 'res': "
TEAM_NAMESPACE_LABELS = {
    "tpu-pathways/team": "ml",
    "pod-security.kubernetes.io/enforce": "privileged",
    "pod-security.kubernetes.io/warn": "baseline",
    "pod-security.kubernetes.io/audit": "restricted",
}
P = "gcp:container/nodePool:NodePool 'res': "
B = "gcp:storage/bucket:Bucket 'res': "
SECURE_BOOT = "nodeConfig.shieldedInstanceConfig.enableSecureBoot"
INTEGRITY = "nodeConfig.shieldedInstanceConfig.enableIntegrityMonitoring"
PROTECT_MSG = (
    "production stacks must set the protect resource option (a `pulumi destroy` or an "
    "accidental replacement would delete it)"
)
DEFAULT_SA_MSG = (
    "nodes would run as the Compute Engine default service account (Editor on the project); "
    "use a dedicated node service account"
)
NO_PLACEMENT_2X4 = (
    "multi-host TPU slice (2 nodes of ct5lp-hightpu-4t) has no placementPolicy; it needs type "
    "COMPACT with its tpuTopology so GKE places the hosts on one ICI-connected block"
)
CPU_POOL = edit(
    TPU_POOL_OK,
    nodeCount=DELETE,
    placementPolicy=DELETE,
    autoscaling={"minNodeCount": 1, "maxNodeCount": 20},
    nodeConfig__machineType="n2-standard-64",
    nodeConfig__spot=DELETE,
)

NO_WINDOW = (
    "maintenancePolicy sets no maintenance window: GKE may upgrade the control plane and nodes "
    "at any hour, and upgrading one host of a TPU slice interrupts the whole slice and its job; "
    "set maintenancePolicy.recurringWindow"
)
CPU_POOL_DEFAULT_UPGRADE = edit(CPU_POOL, upgradeSettings=DELETE)

PATHWAYS_JOB = "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob"
PJ = f"{PATHWAYS_JOB} 'res': "
JOBSET = "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"


def _job(image: str, version: str = "jax-0.9.0") -> dict:
    """A PathwaysJob's inputs with one user container."""
    container = {"name": "main", "image": image}
    template = {"spec": {"containers": [container]}}
    return {"spec": {"pathwaysVersion": version, "controller": {"template": template}}}


CASES = [
    # images-pinned (outside dev, every image of a workload is pinned)
    case(
        "images-pinned", PATHWAYS_JOB, _job("us-docker.pkg.dev/acme/t:1"), [], "staging", id="tag"
    ),
    case("images-pinned", PATHWAYS_JOB, _job("us-docker.pkg.dev/acme/t"), [], id="dev-untagged"),
    case(
        "images-pinned",
        PATHWAYS_JOB,
        _job("us-docker.pkg.dev/acme/t"),
        [
            PJ + "spec.controller.template.spec.containers[0].image: 'us-docker.pkg.dev/acme/t' "
            "has no tag or digest, so it runs whatever 'latest' is (pin a tag or a digest "
            "outside dev)"
        ],
        environment="staging",
        id="staging-untagged",
    ),
    case(
        "images-pinned",
        PATHWAYS_JOB,
        _job("us-docker.pkg.dev/acme/t:LATEST", version="latest"),
        [
            PJ + "spec.controller.template.spec.containers[0].image: "
            "'us-docker.pkg.dev/acme/t:LATEST' is tagged 'LATEST', which names no fixed build "
            "(pin a tag or a digest outside dev)",
            PJ + "spec.pathwaysVersion is 'latest', which names no fixed build (use a Pathways "
            "release such as jax-0.9.0 outside dev)",
        ],
        environment="production",
        id="production-latest",
    ),
    case(
        "images-pinned",
        JOBSET,
        {"spec": {"replicatedJobs": [{"template": {"spec": {"image": "r.io/a/b:latest"}}}]}},
        [
            JOBSET + " 'res': spec.replicatedJobs[0].template.spec.image: 'r.io/a/b:latest' is "
            "tagged 'latest', which names no fixed build (pin a tag or a digest outside dev)"
        ],
        environment="staging",
        id="jobset-latest",
    ),
    # cluster-workload-identity
    case("cluster-workload-identity", CLUSTER, CLUSTER_OK, [], id="wi-set"),
    case(
        "cluster-workload-identity",
        CLUSTER,
        edit(CLUSTER_OK, workloadIdentityConfig=DELETE),
        [
            C + "workloadIdentityConfig.workloadPool is not set (pods on the pod network would "
            "have to use the node's service account instead of Workload Identity; Pathways pods "
            "run on the host network and act as the node's service account either way)"
        ],
        id="wi-missing",
    ),
    # cluster-shielded-nodes
    case(
        "cluster-shielded-nodes",
        CLUSTER,
        edit(CLUSTER_OK, enableShieldedNodes=DELETE),
        [],
        id="shielded-default-on",
    ),
    case(
        "cluster-shielded-nodes",
        CLUSTER,
        edit(CLUSTER_OK, enableShieldedNodes=False),
        [C + "enableShieldedNodes is false, must be true (node identity is verified)"],
        id="shielded-off",
    ),
    # cluster-legacy-abac-disabled
    case(
        "cluster-legacy-abac-disabled",
        CLUSTER,
        edit(CLUSTER_OK, enableLegacyAbac=DELETE),
        [],
        id="abac-default-off",
    ),
    case(
        "cluster-legacy-abac-disabled",
        CLUSTER,
        edit(CLUSTER_OK, enableLegacyAbac=True),
        [C + "enableLegacyAbac is true, must be false (RBAC and IAM must decide access)"],
        id="abac-on",
    ),
    # cluster-control-plane-access
    case("cluster-control-plane-access", CLUSTER, CLUSTER_OK, [], id="dns-endpoint"),
    case(
        "cluster-control-plane-access",
        CLUSTER,
        edit(
            CLUSTER_OK,
            controlPlaneEndpointsConfig=DELETE,
            masterAuthorizedNetworksConfig={"cidrBlocks": [{"cidrBlock": "10.0.0.0/8"}]},
        ),
        [],
        id="authorized-networks",
    ),
    case(
        "cluster-control-plane-access",
        CLUSTER,
        edit(CLUSTER_OK, controlPlaneEndpointsConfig=DELETE),
        [
            C + "neither masterAuthorizedNetworksConfig nor "
            "controlPlaneEndpointsConfig.dnsEndpointConfig is set (limit the IP endpoint to "
            "authorized networks, or reach the control plane through the IAM-gated DNS endpoint)"
        ],
        id="open-control-plane",
    ),
    # cluster-maintenance-window
    case("cluster-maintenance-window", CLUSTER, CLUSTER_OK, [], id="weekend-window"),
    case(
        "cluster-maintenance-window",
        CLUSTER,
        edit(
            CLUSTER_OK,
            maintenancePolicy={"dailyMaintenanceWindow": {"startTime": "03:00"}},
        ),
        [],
        id="daily-window",
    ),
    case(
        "cluster-maintenance-window",
        CLUSTER,
        edit(CLUSTER_OK, maintenancePolicy=DELETE),
        [C + NO_WINDOW],
        id="no-policy",
    ),
    case(
        "cluster-maintenance-window",
        CLUSTER,
        edit(
            CLUSTER_OK,
            maintenancePolicy={
                "maintenanceExclusions": [
                    {
                        "exclusionName": "x",
                        "startTime": "2025-01-01T00:00:00Z",
                        "exclusionOptions": {
                            "scope": "NO_MINOR_OR_NODE_UPGRADES",
                            "endTimeBehavior": "UNTIL_END_OF_SUPPORT",
                        },
                    }
                ]
            },
        ),
        [C + NO_WINDOW],
        id="exclusions-but-no-window",
    ),
    case(
        "cluster-maintenance-window",
        CLUSTER,
        edit(CLUSTER_OK, maintenancePolicy=UNKNOWN),
        [],
        id="window-unknown",
    ),
    # tpu-slice-upgrade
    case("tpu-slice-upgrade", NODE_POOL, TPU_POOL_OK, [], id="whole-slice"),
    case("tpu-slice-upgrade", NODE_POOL, CPU_POOL_DEFAULT_UPGRADE, [], id="cpu-pool-any"),
    case(
        "tpu-slice-upgrade",
        NODE_POOL,
        edit(TPU_POOL_OK, upgradeSettings=DELETE, nodeConfig__flexStart=True),
        [],
        id="flex-start-left-to-gke",
    ),
    case(
        "tpu-slice-upgrade",
        NODE_POOL,
        edit(TPU_POOL_OK, upgradeSettings=DELETE),
        [
            P + "upgradeSettings.maxSurge is not set (GKE's default 1 when unset): an upgrade "
            "would wait for spare TPU VMs of this shape; set it to 0",
            P + "upgradeSettings.maxUnavailable is not set (GKE's default 0 when unset) for a "
            "slice of 2 hosts: an upgrade would take the slice host by host, interrupting its "
            "job once per batch; set it to 2 so the slice is recreated once, whole",
        ],
        id="gke-defaults",
    ),
    case(
        "tpu-slice-upgrade",
        NODE_POOL,
        edit(TPU_POOL_OK, upgradeSettings__maxUnavailable=1.0),
        [
            P + "upgradeSettings.maxUnavailable is 1.0 (GKE's default 0 when unset) for a "
            "slice of 2 hosts: an upgrade would take the slice host by host, interrupting its "
            "job once per batch; set it to 2 so the slice is recreated once, whole"
        ],
        id="host-by-host",
    ),
    case(
        "tpu-slice-upgrade",
        NODE_POOL,
        edit(TPU_POOL_OK, upgradeSettings={"strategy": "BLUE_GREEN"}),
        [
            P + 'upgradeSettings.strategy is "BLUE_GREEN": GKE would need a second slice of TPU '
            'capacity of this shape to upgrade it; use "SURGE" with maxSurge 0 and '
            "maxUnavailable equal to the slice's hosts"
        ],
        id="blue-green",
    ),
    case(
        "tpu-slice-upgrade",
        NODE_POOL,
        edit(TPU_POOL_OK, upgradeSettings=UNKNOWN),
        [],
        id="upgrade-unknown",
    ),
    # cluster-authorized-networks-closed
    case(
        "cluster-authorized-networks-closed",
        CLUSTER,
        edit(
            CLUSTER_OK, masterAuthorizedNetworksConfig={"cidrBlocks": [{"cidrBlock": "10.0.0.0/8"}]}
        ),
        [],
        id="authorized-private-range",
    ),
    case(
        "cluster-authorized-networks-closed",
        CLUSTER,
        edit(
            CLUSTER_OK,
            masterAuthorizedNetworksConfig={
                "cidrBlocks": [{"cidrBlock": "10.0.0.0/8"}, {"cidrBlock": "0.0.0.0/0"}]
            },
        ),
        [
            C + "masterAuthorizedNetworksConfig.cidrBlocks has '0.0.0.0/0': the control plane's "
            "IP endpoint would take traffic from the whole internet; list your networks' CIDRs "
            "or use the IAM-gated DNS endpoint"
        ],
        id="authorized-everywhere",
    ),
    case(
        "cluster-authorized-networks-closed",
        CLUSTER,
        edit(CLUSTER_OK, masterAuthorizedNetworksConfig={"cidrBlocks": [{"cidrBlock": "::/0"}]}),
        [
            C + "masterAuthorizedNetworksConfig.cidrBlocks has '::/0': the control plane's "
            "IP endpoint would take traffic from the whole internet; list your networks' CIDRs "
            "or use the IAM-gated DNS endpoint"
        ],
        environment="production",
        id="authorized-everywhere-v6",
    ),
    # cluster-deletion-protection
    case(
        "cluster-deletion-protection",
        CLUSTER,
        CLUSTER_OK,
        [],
        environment="production",
        id="prod-protected",
    ),
    case(
        "cluster-deletion-protection",
        CLUSTER,
        edit(CLUSTER_OK, deletionProtection=False),
        [],
        environment="dev",
        id="dev-unprotected",
    ),
    case(
        "cluster-deletion-protection",
        CLUSTER,
        edit(CLUSTER_OK, deletionProtection=False),
        [C + "deletionProtection is false, must be true (production clusters refuse deletion)"],
        environment="production",
        id="prod-unprotected",
    ),
    case(
        "cluster-deletion-protection",
        CLUSTER,
        edit(CLUSTER_OK, deletionProtection=DELETE),
        [C + "deletionProtection is not set, must be true (production clusters refuse deletion)"],
        environment="production",
        id="prod-unset",
    ),
    # node-service-account
    case("node-service-account", CLUSTER, CLUSTER_OK, [], id="cluster-dedicated-sa"),
    case("node-service-account", NODE_POOL, TPU_POOL_OK, [], id="pool-dedicated-sa"),
    case(
        "node-service-account",
        NODE_POOL,
        node_config(serviceAccount=UNKNOWN),
        [],
        id="pool-sa-unknown-in-preview",
    ),
    case(
        "node-service-account",
        CLUSTER,
        edit(CLUSTER_OK, nodeConfig=DELETE),
        [C + "nodeConfig.serviceAccount is not set: " + DEFAULT_SA_MSG],
        id="cluster-sa-missing",
    ),
    case(
        "node-service-account",
        NODE_POOL,
        node_config(serviceAccount="default"),
        [P + 'nodeConfig.serviceAccount is "default": ' + DEFAULT_SA_MSG],
        id="pool-sa-default",
    ),
    case(
        "node-service-account",
        NODE_POOL,
        node_config(serviceAccount="123456789-compute@developer.gserviceaccount.com"),
        [
            P + "nodeConfig.serviceAccount '123456789-compute@developer.gserviceaccount.com' is "
            "the Compute Engine default service account (Editor on the project); use a "
            "dedicated node service account"
        ],
        id="pool-sa-compute-default",
    ),
    # node-shielded-instance
    case("node-shielded-instance", NODE_POOL, TPU_POOL_OK, [], id="shielded-on"),
    case(
        "node-shielded-instance",
        NODE_POOL,
        node_config(shieldedInstanceConfig={"enableSecureBoot": True}),
        [],
        id="integrity-default-on",
    ),
    case(
        "node-shielded-instance",
        NODE_POOL,
        node_config(shieldedInstanceConfig={"enableIntegrityMonitoring": False}),
        [
            P + f"{SECURE_BOOT} is not set, must be true (only signed boot components may run)",
            P + f"{INTEGRITY} is false, must be true (boot integrity is attested)",
        ],
        id="secure-boot-unset-integrity-off",
    ),
    # node-workload-metadata
    case("node-workload-metadata", NODE_POOL, TPU_POOL_OK, [], id="gke-metadata"),
    case(
        "node-workload-metadata",
        NODE_POOL,
        node_config(workloadMetadataConfig={"mode": "GCE_METADATA"}),
        [
            P + 'nodeConfig.workloadMetadataConfig.mode is "GCE_METADATA", must be '
            '"GKE_METADATA" (pods on the pod network must not get the node\'s credentials)'
        ],
        id="gce-metadata",
    ),
    # node-legacy-metadata-endpoints
    case("node-legacy-metadata-endpoints", NODE_POOL, TPU_POOL_OK, [], id="legacy-disabled"),
    case(
        "node-legacy-metadata-endpoints",
        NODE_POOL,
        node_config(metadata={"disable-legacy-endpoints": "false"}),
        [
            P + 'nodeConfig.metadata.disable-legacy-endpoints is "false", must be "true" (the '
            "v0.1/v1beta1 endpoints do not require the Metadata-Flavor header)"
        ],
        id="legacy-enabled",
    ),
    # tpu-slice-placement
    case("tpu-slice-placement", NODE_POOL, TPU_POOL_OK, [], id="multi-host-compact"),
    case(
        "tpu-slice-placement",
        NODE_POOL,
        edit(TPU_POOL_OK, nodeCount=2.0),
        [],
        id="float-node-count",
    ),
    case(
        "tpu-slice-placement",
        NODE_POOL,
        edit(
            TPU_POOL_OK,
            nodeCount=DELETE,
            initialNodeCount=0.0,
            autoscaling={"totalMinNodeCount": 0.0, "totalMaxNodeCount": 2.0},
        ),
        [],
        id="flex-autoscaling-to-slice",
    ),
    case(
        "tpu-slice-placement",
        NODE_POOL,
        edit(
            TPU_POOL_OK,
            nodeCount=1,
            placementPolicy=DELETE,
            nodeConfig__machineType="ct6e-standard-4t",
        ),
        [],
        id="single-host-no-topology",
    ),
    case(
        "tpu-slice-placement",
        NODE_POOL,
        edit(
            TPU_POOL_OK,
            placementPolicy={"type": "COMPACT", "tpuTopology": "2x2x2"},
            nodeConfig__machineType="ct5p-hightpu-4t",
        ),
        [],
        id="v5p-2x2x2",
    ),
    case("tpu-slice-placement", NODE_POOL, CPU_POOL, [], id="cpu-pool-ignored"),
    case(
        "tpu-slice-placement",
        NODE_POOL,
        edit(TPU_POOL_OK, placementPolicy=DELETE),
        [P + NO_PLACEMENT_2X4],
        id="multi-host-no-placement",
    ),
    case(
        "tpu-slice-placement",
        NODE_POOL,
        edit(TPU_POOL_OK, placementPolicy={"type": "COMPACT"}, nodeCount=4),
        [
            P + "multi-host TPU slice (4 nodes of ct5lp-hightpu-4t) needs "
            "placementPolicy.tpuTopology"
        ],
        id="compact-without-topology",
    ),
    case(
        "tpu-slice-placement",
        NODE_POOL,
        edit(TPU_POOL_OK, placementPolicy={"tpuTopology": "2x4"}),
        [
            P + 'placementPolicy.type is not set, must be "COMPACT" for a multi-host TPU slice '
            "(2 hosts of ct5lp-hightpu-4t)"
        ],
        id="topology-without-compact",
    ),
    # Multi-host Ironwood: a named workload policy, no COMPACT type (GKE docs, XPK 1.16).
    case(
        "tpu-slice-placement",
        NODE_POOL,
        edit(
            TPU_POOL_OK,
            nodeCount=16,
            placementPolicy={"type": "", "policyName": "pathways-dev-iw-4x4x4"},
            nodeConfig__machineType="tpu7x-standard-4t",
        ),
        [],
        id="ironwood-workload-policy",
    ),
    case(
        "tpu-slice-placement",
        NODE_POOL,
        edit(
            TPU_POOL_OK,
            nodeCount=16,
            placementPolicy={"type": "", "policyName": UNKNOWN},
            nodeConfig__machineType="tpu7x-standard-4t",
        ),
        [],
        id="ironwood-workload-policy-unknown-name",
    ),
    case(
        "tpu-slice-placement",
        NODE_POOL,
        edit(
            TPU_POOL_OK,
            nodeCount=16,
            placementPolicy={"type": "COMPACT", "tpuTopology": "4x4x4"},
            nodeConfig__machineType="tpu7x-standard-4t",
        ),
        [
            P + "multi-host TPU slice (16 hosts of tpu7x-standard-4t) needs "
            "placementPolicy.policyName: a HIGH_THROUGHPUT workload policy with the slice's "
            "accelerator topology (GKE refuses COMPACT placement with a TPU topology for this "
            "machine type)",
            P + 'placementPolicy.type is "COMPACT"; a multi-host TPU slice of tpu7x-standard-4t '
            "is placed by its workload policy alone (COMPACT adds a group placement policy, "
            "which Compute Engine refuses next to a workload policy): leave the type empty",
        ],
        id="ironwood-compact-refused",
    ),
    case(
        "tpu-slice-placement",
        NODE_POOL,
        edit(
            TPU_POOL_OK,
            nodeCount=2,
            placementPolicy=DELETE,
            nodeConfig__machineType="tpu7-standard-4t",
        ),
        [
            P + "multi-host TPU slice (2 nodes of tpu7-standard-4t) needs "
            "placementPolicy.policyName: a HIGH_THROUGHPUT workload policy with the slice's "
            "accelerator topology (GKE refuses COMPACT placement with a TPU topology for this "
            "machine type)",
        ],
        id="ironwood-no-placement",
    ),
    case(
        "tpu-slice-placement",
        NODE_POOL,
        edit(
            TPU_POOL_OK,
            nodeCount=1,
            placementPolicy=DELETE,
            nodeConfig__machineType="tpu7x-standard-4t",
        ),
        [],
        id="ironwood-single-host",
    ),
    case(
        "tpu-slice-placement",
        NODE_POOL,
        edit(
            TPU_POOL_OK,
            nodeCount=1,
            placementPolicy={"type": "COMPACT", "tpuTopology": "2x2"},
            nodeConfig__machineType="ct6e-standard-4t",
        ),
        [
            P + "placementPolicy.tpuTopology '2x2' is a single-host slice of ct6e-standard-4t; a "
            "single-host TPU pool must not set a TPU topology (GKE rejects it)"
        ],
        id="single-host-with-topology",
    ),
    case(
        "tpu-slice-placement",
        NODE_POOL,
        edit(TPU_POOL_OK, nodeCount=3.0),
        [
            P + "the pool has 3 nodes but TPU topology '2x4' of ct5lp-hightpu-4t has 2 hosts; a "
            "slice's node pool has exactly one node per host"
        ],
        id="node-count-not-hosts",
    ),
    case(
        "tpu-slice-placement",
        NODE_POOL,
        edit(TPU_POOL_OK, nodeLocations=["us-west4-a", "us-west4-b"]),
        [
            P + "the pool has 4 nodes but TPU topology '2x4' of ct5lp-hightpu-4t has 2 hosts; a "
            "slice's node pool has exactly one node per host"
        ],
        id="node-count-per-zone",
    ),
    case(
        "tpu-slice-placement",
        NODE_POOL,
        edit(TPU_POOL_OK, nodeCount=UNKNOWN, placementPolicy=DELETE, initialNodeCount=2),
        [],
        id="node-count-unknown-in-preview",
    ),
    case(
        "node-shielded-instance",
        NODE_POOL,
        edit(TPU_POOL_OK, nodeConfig=UNKNOWN),
        [],
        id="node-config-unknown-in-preview",
    ),
    case(
        "cluster-control-plane-access",
        CLUSTER,
        edit(CLUSTER_OK, controlPlaneEndpointsConfig=UNKNOWN),
        [],
        id="endpoint-block-unknown-in-preview",
    ),
    case(
        "tpu-slice-placement",
        NODE_POOL,
        edit(TPU_POOL_OK, placementPolicy={"type": "COMPACT", "tpuTopology": "3x3"}),
        [
            P + "placementPolicy.tpuTopology: '3x3' is not a v5e topology for ct5lp-hightpu-4t; "
            "valid: 2x2, 2x4, 4x4, 4x8, 8x8, 8x16, 16x16 (python -m components shapes v5e)"
        ],
        id="unknown-topology",
    ),
    # node-capacity-type
    case("node-capacity-type", NODE_POOL, TPU_POOL_OK, [], id="spot-only"),
    case("node-capacity-type", NODE_POOL, node_config(spot=DELETE), [], id="on-demand"),
    case(
        "node-capacity-type",
        NODE_POOL,
        node_config(
            spot=DELETE,
            flexStart=True,
            reservationAffinity={"consumeReservationType": "NO_RESERVATION"},
        ),
        [],
        id="flex-start",
    ),
    case(
        "node-capacity-type",
        NODE_POOL,
        node_config(
            reservationAffinity={
                "consumeReservationType": "SPECIFIC_RESERVATION",
                "key": "compute.googleapis.com/reservation-name",
                "values": ["r1"],
            }
        ),
        [
            P + "nodeConfig chooses more than one capacity type (spot, reservationAffinity "
            "SPECIFIC_RESERVATION); choose exactly one of spot, flexStart or a specific "
            "reservation (none = on-demand)"
        ],
        id="spot-and-reservation",
    ),
    case(
        "node-capacity-type",
        NODE_POOL,
        node_config(spot=DELETE, flexStart=True),
        [
            P + "nodeConfig.flexStart needs nodeConfig.reservationAffinity.consumeReservationType "
            '"NO_RESERVATION" (it is not set)'
        ],
        id="flex-start-without-no-reservation",
    ),
    # production-protect
    case(
        "production-protect",
        NODE_POOL,
        TPU_POOL_OK,
        [],
        options=PROTECTED,
        environment="production",
        id="prod-pool-protected",
    ),
    case(
        "production-protect",
        NODE_POOL,
        TPU_POOL_OK,
        [],
        environment="staging",
        id="staging-pool-unprotected",
    ),
    case(
        "production-protect",
        NODE_POOL,
        TPU_POOL_OK,
        [P + PROTECT_MSG],
        environment="production",
        id="prod-pool-unprotected",
    ),
    case(
        "production-protect",
        CLUSTER,
        CLUSTER_OK,
        [C + PROTECT_MSG],
        environment="production",
        id="prod-cluster-unprotected",
    ),
    # bucket-public-access
    case("bucket-public-access", BUCKET, BUCKET_OK, [], id="bucket-private"),
    case(
        "bucket-public-access",
        BUCKET,
        edit(BUCKET_OK, uniformBucketLevelAccess=False, publicAccessPrevention=DELETE),
        [
            B + "uniformBucketLevelAccess is false, must be true (IAM alone decides access)",
            B + 'publicAccessPrevention is not set, must be "enforced" (the bucket can never be '
            "made public)",
        ],
        id="bucket-acl-and-inherited",
    ),
    # bucket-retention
    case(
        "bucket-retention",
        BUCKET,
        BUCKET_OK,
        [],
        options={"retainOnDelete": True},
        environment="production",
        id="prod-retained",
    ),
    case(
        "bucket-retention",
        BUCKET,
        BUCKET_OK,
        [],
        options=PROTECTED,
        environment="production",
        id="prod-protected-bucket",
    ),
    case(
        "bucket-retention",
        BUCKET,
        edit(BUCKET_OK, forceDestroy=True),
        [],
        environment="dev",
        id="dev-force-destroy",
    ),
    case(
        "bucket-retention",
        BUCKET,
        edit(BUCKET_OK, forceDestroy=True),
        [
            B + "forceDestroy is true, must be false (objects are never deleted with it)",
            B + "production stacks must keep the bucket: set the retainOnDelete or protect "
            "resource option",
        ],
        environment="production",
        id="prod-force-destroy-unretained",
    ),
    # bucket-iam-no-public
    case(
        "bucket-iam-no-public",
        BUCKET_IAM_MEMBER,
        {"bucket": "b", "role": "roles/storage.objectUser", "member": f"serviceAccount:{NODE_SA}"},
        [],
        id="member-service-account",
    ),
    case(
        "bucket-iam-no-public",
        BUCKET_IAM_MEMBER,
        {"bucket": "b", "role": "roles/storage.objectViewer", "member": "allUsers"},
        [
            "gcp:storage/bucketIAMMember:BucketIAMMember 'res': grants access to 'allUsers': the "
            "bucket's data would be public"
        ],
        id="member-all-users",
    ),
    case(
        "bucket-iam-no-public",
        BUCKET_IAM_BINDING,
        {"role": "roles/storage.objectViewer", "members": ["user:a@b.c", "allAuthenticatedUsers"]},
        [
            "gcp:storage/bucketIAMBinding:BucketIAMBinding 'res': grants access to "
            "'allAuthenticatedUsers': the bucket's data would be public"
        ],
        id="binding-all-authenticated",
    ),
    case(
        "bucket-iam-no-public",
        BUCKET_IAM_POLICY,
        {"policyData": '{"bindings": [{"role": "roles/storage.admin", "members": ["allUsers"]}]}'},
        [
            "gcp:storage/bucketIAMPolicy:BucketIAMPolicy 'res': grants access to 'allUsers': the "
            "bucket's data would be public"
        ],
        id="policy-all-users",
    ),
    case(
        "bucket-iam-no-public",
        BUCKET_ACL,
        {"bucket": "b", "roleEntities": ["OWNER:user-a@b.c", "READER:allUsers"]},
        [
            "gcp:storage/bucketACL:BucketACL 'res': grants access to 'allUsers': the bucket's "
            "data would be public"
        ],
        id="acl-all-users",
    ),
    case(
        "bucket-iam-no-public",
        BUCKET_ACL,
        {"bucket": "b", "predefinedAcl": "publicRead"},
        ["gcp:storage/bucketACL:BucketACL 'res': predefinedAcl 'publicRead' makes the data public"],
        id="acl-predefined-public",
    ),
    # project-iam-no-basic-roles
    case(
        "project-iam-no-basic-roles",
        PROJECT_IAM_MEMBER,
        {"project": "p", "role": "roles/logging.logWriter", "member": f"serviceAccount:{NODE_SA}"},
        [],
        id="predefined-role",
    ),
    case(
        "project-iam-no-basic-roles",
        PROJECT_IAM_MEMBER,
        {"project": "p", "role": "roles/editor", "member": f"serviceAccount:{NODE_SA}"},
        [
            "gcp:projects/iAMMember:IAMMember 'res': grants the basic role 'roles/editor': "
            "project-wide access far beyond what node service accounts need; grant the specific "
            "predefined roles instead"
        ],
        id="editor",
    ),
    case(
        "project-iam-no-basic-roles",
        PROJECT_IAM_POLICY,
        {"policyData": '{"bindings": [{"role": "roles/owner", "members": ["user:a@b.c"]}]}'},
        [
            "gcp:projects/iAMPolicy:IAMPolicy 'res': grants the basic role 'roles/owner': "
            "project-wide access far beyond what node service accounts need; grant the specific "
            "predefined roles instead"
        ],
        id="policy-owner",
    ),
    # cluster-control-plane-endpoints
    case("cluster-control-plane-endpoints", CLUSTER, CLUSTER_OK, [], id="dns-only"),
    case(
        "cluster-control-plane-endpoints",
        CLUSTER,
        edit(
            CLUSTER_OK,
            masterAuthorizedNetworksConfig={
                "cidrBlocks": [{"cidrBlock": "192.0.2.0/24"}],
                "gcpPublicCidrsAccessEnabled": False,
            },
            controlPlaneEndpointsConfig__ipEndpointsConfig__enabled=True,
        ),
        [],
        id="listed-networks-only",
    ),
    case(
        "cluster-control-plane-endpoints",
        CLUSTER,
        edit(
            CLUSTER_OK,
            masterAuthorizedNetworksConfig={"cidrBlocks": [{"cidrBlock": "192.0.2.0/24"}]},
            controlPlaneEndpointsConfig__ipEndpointsConfig__enabled=True,
        ),
        [
            C + "masterAuthorizedNetworksConfig.gcpPublicCidrsAccessEnabled is not set, must be "
            "false (GKE's default lets every Google Cloud public IP reach the IP endpoint)"
        ],
        id="google-cloud-public-ips",
    ),
    case(
        "cluster-control-plane-endpoints",
        CLUSTER,
        edit(CLUSTER_OK, controlPlaneEndpointsConfig__ipEndpointsConfig=DELETE),
        [
            C + "no authorized network is listed but controlPlaneEndpointsConfig."
            "ipEndpointsConfig.enabled is not set: turn the IP endpoint off (false) and use the "
            "IAM-gated DNS endpoint"
        ],
        id="ip-endpoint-open-to-nobody",
    ),
    # team-namespace-pod-security
    case(
        "team-namespace-pod-security",
        NAMESPACE,
        {"metadata": {"name": "ml", "labels": TEAM_NAMESPACE_LABELS}},
        [],
        id="labelled",
    ),
    case(
        "team-namespace-pod-security",
        NAMESPACE,
        {"metadata": {"name": "other"}},
        [],
        id="not-a-team-namespace",
    ),
    case(
        "team-namespace-pod-security",
        NAMESPACE,
        {"metadata": {"name": "ml", "labels": {"tpu-pathways/team": "ml"}}},
        [
            N + f"metadata.labels has no 'pod-security.kubernetes.io/{mode}' (Pod Security "
            f"admission's {mode} level)"
            for mode in ("enforce", "warn", "audit")
        ],
        id="unlabelled",
    ),
    # team-host-network-declared
    *[
        case(
            "team-host-network-declared",
            NAMESPACE,
            {"metadata": {"labels": {"tpu-pathways/team": "ml", HOST_NETWORK: placement}}},
            [],
            id=f"host-network-{placement}",
        )
        for placement in ("dedicated", "shared", "alone", "none")
    ],
    case(
        "team-host-network-declared",
        NAMESPACE,
        {"metadata": {"labels": {"tpu-pathways/team": "ml", HOST_NETWORK: "anywhere"}}},
        [
            N + f'metadata.labels[{HOST_NETWORK!r}] is "anywhere": where the namespace\'s '
            "host-network pods may run must be one of dedicated, shared, alone, none (teams on "
            "the shared pools act as one node identity: declared with teams[].isolation: shared)"
        ],
        id="host-network-undeclared-value",
    ),
    # team-namespace-baseline
    case(
        "team-namespace-baseline",
        NAMESPACE,
        {"metadata": {"labels": {**TEAM_NAMESPACE_LABELS, ENFORCE: "baseline"}}},
        [],
        id="baseline-enforced",
    ),
    case(
        "team-namespace-baseline",
        NAMESPACE,
        {"metadata": {"labels": {**TEAM_NAMESPACE_LABELS, HOST_NETWORK: "dedicated"}}},
        [],
        id="privileged-for-its-pathways-pods",
    ),
    case(
        "team-namespace-baseline",
        NAMESPACE,
        {"metadata": {"labels": {**TEAM_NAMESPACE_LABELS, HOST_NETWORK: "none"}}},
        [
            N + "enforces Pod Security privileged, but no host-network Pathways pod may run in "
            "it (tpu-pathways/host-network: none): enforce baseline"
        ],
        id="privileged-without-pathways-pods",
    ),
    # team-tpu-quota
    case(
        "team-tpu-quota",
        QUOTA,
        {
            "metadata": {"labels": {"tpu-pathways/team": "ml"}},
            "spec": {"hard": {"requests.google.com/tpu": "8"}},
        },
        [],
        id="tpu-chips-bounded",
    ),
    case(
        "team-tpu-quota",
        QUOTA,
        {"metadata": {"name": "other"}, "spec": {"hard": {"pods": "10"}}},
        [],
        id="not-a-teams-quota",
    ),
    case(
        "team-tpu-quota",
        QUOTA,
        {
            "metadata": {"labels": {"tpu-pathways/team": "ml"}},
            "spec": {"hard": {"services.loadbalancers": "0"}},
        },
        [
            f"{QUOTA} 'res': spec.hard has no 'requests.google.com/tpu': a pod of the team that "
            "went around Kueue could hold every TPU chip of the cluster; give it the team's "
            "share (teams[].resourceQuota.tpuChips)"
        ],
        id="tpu-chips-unbounded",
    ),
    case(
        "team-tpu-quota",
        QUOTA,
        {
            "metadata": {"labels": {"tpu-pathways/team": "ml"}},
            "spec": {"hard": {"requests.cpu": "8"}, "scopes": ["NotBestEffort"]},
        },
        [],
        id="a-scoped-quota-counts-only-some-pods",
    ),
    # admission-policy-denies
    case(
        "admission-policy-denies", VAP, {"spec": {"failurePolicy": "Fail"}}, [], id="fails-closed"
    ),
    case(
        "admission-policy-denies",
        VAP,
        {"spec": {"failurePolicy": "Ignore"}},
        [
            VAP_LABEL
            + "spec.failurePolicy is 'Ignore': a pod the policy cannot evaluate is admitted"
        ],
        id="fails-open",
    ),
    case(
        "admission-policy-denies",
        VAP_BINDING,
        {"spec": {"policyName": "p", "validationActions": ["Deny"]}},
        [],
        id="binding-denies",
    ),
    case(
        "admission-policy-denies",
        VAP_BINDING,
        {"spec": {"policyName": "p", "validationActions": ["Warn", "Audit"]}},
        [
            VAP_BINDING_LABEL + 'spec.validationActions is ["Warn", "Audit"]: without '
            "'Deny' nothing is refused"
        ],
        id="binding-only-warns",
    ),
    # rbac-no-admin
    case("rbac-no-admin", ROLE_BINDING, {"roleRef": {"name": "edit"}}, [], id="edit"),
    case(
        "rbac-no-admin",
        ROLE_BINDING,
        {"roleRef": {"name": "cluster-admin"}},
        [
            RB + "roleRef.name is 'cluster-admin': it may change RBAC, quotas and policies of the "
            "namespace (or cluster); teams get 'edit'"
        ],
        id="cluster-admin",
    ),
    # service-account-token-not-mounted
    case(
        "service-account-token-not-mounted",
        KSA,
        {"metadata": {"namespace": "ml"}, "automountServiceAccountToken": False},
        [],
        id="not-mounted",
    ),
    case(
        "service-account-token-not-mounted",
        KSA,
        {"metadata": {"namespace": "default"}},
        [],
        id="default-namespace",
    ),
    case(
        "service-account-token-not-mounted",
        KSA,
        {"metadata": {"namespace": "ml"}},
        [
            KSA_LABEL + "automountServiceAccountToken is not set, must be false: every pod of the "
            "account would carry a Kubernetes API token it does not need"
        ],
        id="mounted",
    ),
    # workload-queued (the same rule for both backends)
    *(
        case("workload-queued", kind, workload(), [], queues=QUEUES, id=f"{backend}-queued")
        for kind, workload, backend in WORKLOADS
    ),
    *(
        case(
            "workload-queued",
            kind,
            workload(labels={"team": "a"}),
            [
                f"{kind} 'res': metadata.labels has no 'kueue.x-k8s.io/queue-name', while the "
                "stack queues namespace 'team-a' through LocalQueue 'lq': Kueue leaves the job "
                "alone (manageJobsWithoutQueueName is false), so it starts outside the quota and "
                "its slices are not admitted all or nothing"
            ],
            queues=QUEUES,
            id=f"{backend}-unqueued",
        )
        for kind, workload, backend in WORKLOADS
    ),
    case(
        "workload-queued",
        JOBSET,
        jobset_workload(labels={QUEUE_LABEL: "lq2"}),
        [
            JOBSET + " 'res': kueue.x-k8s.io/queue-name is 'lq2', not a LocalQueue of namespace "
            "'team-a' (the stack's there: 'lq', 'other'): Kueue never admits the job"
        ],
        queues={"team-a": frozenset({"lq", "other"})},
        id="jobset-no-such-queue",
    ),
    case(
        "workload-queued",
        PATHWAYS_JOB,
        pathways_job_workload(labels={}),
        [],
        queues={"team-b": frozenset({"lq"})},
        id="namespace-without-queues",
    ),
    case("workload-queued", PATHWAYS_JOB, pathways_job_workload(labels={}), [], id="one-resource"),
    case(
        "workload-queued",
        JOBSET,
        jobset_workload(labels=UNKNOWN),
        [],
        queues=QUEUES,
        id="labels-not-visible",
    ),
    case(
        "workload-queued",
        JOBSET,
        jobset_workload(labels={QUEUE_LABEL: "lq2"}),
        [],
        queues={"team-a": frozenset({"lq", UNKNOWN})},
        id="queue-name-not-visible",
    ),
]


@pytest.mark.parametrize(
    ("rule_id", "type_token", "inputs", "options", "environment", "expected", "queues"), CASES
)
def test_rule(rule_id, type_token, inputs, options, environment, expected, queues):
    assert violations(rule_id, type_token, inputs, options, environment, queues=queues) == expected


def test_every_rule_has_a_passing_and_a_failing_case():
    passing = {p.values[0] for p in CASES if not p.values[5]}
    failing = {p.values[0] for p in CASES if p.values[5]}
    ids = [r.id for r in RULES]
    assert len(set(ids)) == len(ids), "two rules share an id"
    assert set(ids) - passing == set()
    assert set(ids) - failing == set()


def test_rules_ignore_other_resource_types():
    assert violations("bucket-public-access", CLUSTER, {}) == []
    assert violations("cluster-workload-identity", NODE_POOL, {}) == []


def test_unknown_environment_is_refused():
    with pytest.raises(ValueError):
        StackContext("prod")


# --- the offline plan ---------------------------------------------------------------------


@pytest.fixture
def stack_plan(example_plan) -> Callable[[str], tuple[Plan, str]]:
    """(plan, environment) of an example stack: its plan, made once per session (conftest's
    ``example_plan``; never mutate it), and the environment its file sets."""

    def plan(stack: str) -> tuple[Plan, str]:
        return example_plan(stack), stack_file_values(stack)["environment"]

    return plan


def test_the_example_stacks_cover_every_environment_and_rule_target(stack_plan):
    plans = [stack_plan(s) for s in list(EXAMPLE_STACKS)]
    assert {environment for _, environment in plans} >= {"dev", "staging", "production"}
    planned = {r.type for plan, _ in plans for r in plan.resources}
    targets = {CLUSTER, NODE_POOL, BUCKET, BUCKET_IAM_MEMBER, PROJECT_IAM_MEMBER}
    assert targets <= planned  # so "every stack passes" exercised each family of rules


@pytest.mark.parametrize("stack", list(EXAMPLE_STACKS))
def test_every_example_stack_passes(stack, stack_plan):
    plan, environment = stack_plan(stack)
    if stack in owner_stacks(EXAMPLES_DIR):
        assert plan.by_type(CLUSTER) and plan.by_type(NODE_POOL)  # the rules had work to do
    assert check_plan(plan, environment) == []


def _replace(plan: Plan, type_token: str, name: str, **changes: Any) -> Plan:
    """A copy of the plan whose one resource has ``changes`` applied to its inputs / options."""
    target = plan.get(type_token, name)
    options = changes.pop("options", target.options)
    changed = dataclasses.replace(target, inputs=edit(target.inputs, **changes), options=options)
    resources = [changed if r is target else r for r in plan.resources]
    return dataclasses.replace(plan, resources=resources)


def _planted(urn_name: str, type_token: str, inputs: dict[str, Any]) -> PlannedResource:
    return PlannedResource(
        urn=f"urn:pulumi:dev::tpu-pathways::{type_token}::{urn_name}",
        type=type_token,
        name=urn_name,
        parent=None,
        custom=True,
        provider=None,
        inputs=inputs,
        dependencies=[],
    )


def test_default_service_account_fails_naming_the_pool(stack_plan):
    plan, environment = stack_plan("dev")
    bad = _replace(plan, NODE_POOL, "pathways-dev-cpu-np", nodeConfig__serviceAccount="default")
    assert check_plan(bad, environment) == [
        Violation(
            "node-service-account",
            "urn:pulumi:dev::tpu-pathways::tpu-pathways:nodepool:CpuNodePool$"
            "gcp:container/nodePool:NodePool::pathways-dev-cpu-np",
            NODE_POOL,
            "pathways-dev-cpu-np",
            "gcp:container/nodePool:NodePool 'pathways-dev-cpu-np': nodeConfig.serviceAccount is "
            '"default": ' + DEFAULT_SA_MSG,
        )
    ]


def test_multi_host_pool_without_placement_fails_naming_the_pool(stack_plan):
    plan, environment = stack_plan("dev")
    bad = _replace(plan, NODE_POOL, "pathways-dev-v5e-0", placementPolicy=DELETE)
    assert [(v.rule, v.message) for v in check_plan(bad, environment)] == [
        (
            "tpu-slice-placement",
            "gcp:container/nodePool:NodePool 'pathways-dev-v5e-0': " + NO_PLACEMENT_2X4,
        )
    ]


def test_a_slice_drained_host_by_host_fails_naming_the_pool(stack_plan):
    plan, environment = stack_plan("research-v5p")
    bad = _replace(
        plan,
        NODE_POOL,
        "pathways-research-v5p-0",
        upgradeSettings={"strategy": "SURGE", "maxSurge": 0, "maxUnavailable": 1},
    )
    assert [(v.rule, v.message) for v in check_plan(bad, environment)] == [
        (
            "tpu-slice-upgrade",
            "gcp:container/nodePool:NodePool 'pathways-research-v5p-0': "
            "upgradeSettings.maxUnavailable is 1 (GKE's default 0 when unset) for a slice of 2 "
            "hosts: an upgrade would take the slice host by host, interrupting its job once per "
            "batch; set it to 2 so the slice is recreated once, whole",
        )
    ]


def test_a_cluster_without_a_window_fails_naming_it(stack_plan):
    plan, environment = stack_plan("dev")
    bad = _replace(plan, CLUSTER, "pathways-dev", maintenancePolicy=DELETE)
    assert [(v.rule, v.message) for v in check_plan(bad, environment)] == [
        ("cluster-maintenance-window", "gcp:container/cluster:Cluster 'pathways-dev': " + NO_WINDOW)
    ]


def test_public_bucket_fails_naming_the_bucket_and_the_grant(stack_plan):
    plan, environment = stack_plan("dev")
    bucket = _planted("public-scratch", BUCKET, edit(BUCKET_OK, publicAccessPrevention="inherited"))
    grant = _planted(
        "public-scratch-viewer",
        BUCKET_IAM_MEMBER,
        {"bucket": "public-scratch", "role": "roles/storage.objectViewer", "member": "allUsers"},
    )
    bad = dataclasses.replace(plan, resources=[*plan.resources, bucket, grant])
    assert [(v.rule, v.name, v.message) for v in check_plan(bad, environment)] == [
        (
            "bucket-public-access",
            "public-scratch",
            "gcp:storage/bucket:Bucket 'public-scratch': publicAccessPrevention is \"inherited\", "
            'must be "enforced" (the bucket can never be made public)',
        ),
        (
            "bucket-iam-no-public",
            "public-scratch-viewer",
            "gcp:storage/bucketIAMMember:BucketIAMMember 'public-scratch-viewer': grants access "
            "to 'allUsers': the bucket's data would be public",
        ),
    ]


@pytest.mark.parametrize(
    ("stack", "type_token", "name", "namespace"),
    [
        ("dev", PATHWAYS_JOB, "pathways-dev-pathways-hello-train", "pathways"),
        ("research-jobset", JOBSET, "pathways-jobset-research-llm-pretrain", "research"),
    ],
)
def test_a_workload_without_its_queue_label_fails_on_either_backend(
    stack, type_token, name, namespace, stack_plan
):
    plan, environment = stack_plan(stack)
    bad = _replace(plan, type_token, name, metadata__labels={})
    assert [(v.rule, v.name, v.message) for v in check_plan(bad, environment)] == [
        (
            "workload-queued",
            name,
            f"{type_token} '{name}': metadata.labels has no 'kueue.x-k8s.io/queue-name', while "
            f"the stack queues namespace '{namespace}' through LocalQueue 'multislice-queue': "
            "Kueue leaves the job alone (manageJobsWithoutQueueName is false), so it starts "
            "outside the quota and its slices are not admitted all or nothing",
        )
    ]


def test_production_rules_follow_the_stack_environment(stack_plan):
    plan, environment = stack_plan("serving-v6e")
    assert environment == "production"
    bad = _replace(plan, NODE_POOL, "pathways-serving-v6e-1", options={})
    assert [(v.rule, v.name) for v in check_plan(bad, environment)] == [
        ("production-protect", "pathways-serving-v6e-1")
    ]
    assert check_plan(bad, "staging") == []


PRODUCTION_STATE = [
    ("gcp:compute/network:Network", "pathways-serving-net"),
    ("gcp:compute/subnetwork:Subnetwork", "pathways-serving-net-subnet"),
    ("gcp:compute/firewall:Firewall", "pathways-serving-pathways-ports-deny"),
    ("gcp:compute/routerNat:RouterNat", "pathways-serving-net-nat"),
    ("gcp:serviceaccount/account:Account", "pathways-serving-nodes"),
    (PROJECT_IAM_MEMBER, "pathways-serving-nodes-default-node-sa"),
    ("kubernetes:yaml/v2:ConfigFile", "pathways-serving-pathways-job"),
    ("kubernetes:apps/v1:DeploymentPatch", "pathways-serving-pathways-job-controller"),
]


@pytest.mark.parametrize(("type_token", "name"), PRODUCTION_STATE)
def test_production_protects_what_the_cluster_stands_on(type_token, name, stack_plan):
    plan, environment = stack_plan("serving-v6e")
    assert plan.get(type_token, name).options.get("protect") is True
    bad = _replace(plan, type_token, name, options={})
    assert [(v.rule, v.name) for v in check_plan(bad, environment)] == [
        ("production-protect", name)
    ]


@pytest.mark.parametrize(
    "type_token",
    [
        "kubernetes:kueue.x-k8s.io/v1beta1:ClusterQueue",
        "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue",
        "kubernetes:scheduling.k8s.io/v1:PriorityClass",
    ],
)
def test_production_protects_kueue_objects_of_any_version(type_token):
    message = "production stacks must set the protect resource option"
    found = violations("production-protect", type_token, {}, {}, "production")
    assert len(found) == 1 and message in found[0]
    assert violations("production-protect", type_token, {}, PROTECTED, "production") == []


# --- the CLI ------------------------------------------------------------------------------


def test_cli_policy_passes_the_dev_stack(capsys):
    assert main(["plan", "--stack", "dev", "--policy"]) == 0
    # every rule of the table ran (the count is the table's, not a literal to bump per rule)
    assert f"Policy for stack 'dev' (dev environment): no violations of {len(RULES)} rules" in (
        capsys.readouterr().out
    )


def test_cli_policy_exits_1_and_names_the_resource(tmp_path: Path, capsys):
    text = (STACKS_DIR / "Pulumi.serving-v6e.yaml").read_text()
    assert "    releaseChannel: REGULAR\n" in text
    text = text.replace("REGULAR\n", "REGULAR\n    deletionProtection: false\n")
    (tmp_path / "Pulumi.unsafe.yaml").write_text(text)
    code = main(["plan", "--stack", "unsafe", "--stacks-dir", str(tmp_path), "--policy", "--json"])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.err.splitlines() == [
        "Policy for stack 'unsafe' (production environment): 1 violation",
        "  [cluster-deletion-protection] gcp:container/cluster:Cluster 'pathways-serving': "
        "deletionProtection is false, must be true (production clusters refuse deletion)",
    ]
    assert captured.out.startswith("{")  # the JSON plan stays alone on stdout
