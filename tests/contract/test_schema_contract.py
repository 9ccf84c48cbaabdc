"""Contract: every Kubernetes object of every example stack's plan is valid against the schema of
what the cluster runs, not just against our own models.

- Kubernetes' own kinds (core, apps, scheduling, rbac, ...): the OpenAPI schemas of each
  Kubernetes minor that GKE's release channels offer, as the ``kubernetes-validate`` package
  ships them, strict (unknown fields are errors). GKE_MINORS: the "available minor versions" of
  the Rapid, Regular and Stable channels in GKE's release notes (current versions table, November
  2026): Rapid 1.34 to 1.37, Regular 1.34 to 1.36, Stable 1.34 to 1.35.
- Kueue's kinds (ClusterQueue, LocalQueue, ResourceFlavor, WorkloadPriorityClass and the
  MultiKueue ones: MultiKueueCluster, MultiKueueConfig, AdmissionCheck): the openAPIV3Schema of
  the version Kueue v0.17.1 stores, extracted from the release's CRDs
  (tests/data/kueue-v0.17.1-openapi-schemas.json); a served-but-deprecated version is refused.
- PathwaysJobs: the v0.1.4 CRD (tests/data/pathwaysjob-v0.1.4-openapi-schema.json).
- JobSets (the JobSet backend): the v0.10.1 CRD (tests/data/jobset-v0.10.1-openapi-schema.json).
- PodMonitorings (Managed Service for Prometheus; GKE installs the CRD, no release of ours to
  extract it from): a schema hand-written from GoogleCloudPlatform/prometheus-engine's CRD
  (tests/data/gmp-podmonitoring-v1-schema.json, its source inside).
- Patches (``*Patch`` types, applied server-side to objects an install created): the same
  schemas, except that a partial object need not carry the required fields.

The extracted schema files come from scripts/refresh_crd_schemas.py; nothing here touches the
network.
Every custom resource is checked as the API server admits it on create: beside its CRD's OpenAPI
schema, the CRD's CEL rules (x-kubernetes-validations, tests/crd_cel.py, on a real CEL
evaluator), and for Kueue's kinds the rules of Kueue v0.17.1's validating webhooks
(tests/kueue_webhooks.py: a ClusterQueue's flavors list their resources in coveredResources'
order, a flavor is in one resource group, borrowing and lending limits need a cohort, ...).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import kubernetes_validate
import pytest
from kubernetes_validate import utils as kv_utils

from components.config.schema import KueueAddon
from components.plan.model import PlannedResource
from components.plan.render import manifest
from tests.examples import EXAMPLE_STACKS
from tests.object_schemas import DATA, GKE_MINORS, kueue_extracted, schema_errors

# --- every object of every example stack -----------------------------------------------------


@pytest.mark.parametrize("stack", list(EXAMPLE_STACKS))
def test_every_kubernetes_object_of_every_example_stack_is_valid(example_plan, stack):
    objects = [r for r in example_plan(stack).resources if r.is_kubernetes_object]
    assert objects
    problems = {r.name: errors for r in objects if (errors := schema_errors(r))}
    assert problems == {}


def test_the_contract_covers_every_kind_the_examples_emit(example_plan):
    kinds = {
        r.type
        for stack in list(EXAMPLE_STACKS)
        for r in example_plan(stack).resources
        if r.is_kubernetes_object
    }
    assert {
        "kubernetes:core/v1:Namespace",
        "kubernetes:core/v1:ServiceAccount",
        "kubernetes:scheduling.k8s.io/v1:PriorityClass",
        "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue",
        "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue",
        "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor",
        "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueCluster",
        "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueConfig",
        "kubernetes:kueue.x-k8s.io/v1beta2:AdmissionCheck",
        "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob",
        "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet",
        "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy",
        "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding",
        "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
        "kubernetes:networking.k8s.io/v1:NetworkPolicy",
        "kubernetes:core/v1:ResourceQuota",
        "kubernetes:monitoring.googleapis.com/v1:PodMonitoring",
        "kubernetes:core/v1:PersistentVolume",
        "kubernetes:core/v1:PersistentVolumeClaim",
    } <= kinds


def kind_of(resource: PlannedResource) -> str:
    return resource.type.rsplit(":", 1)[-1]


def test_the_fleet_managers_kueue_objects_are_valid(example_plan):
    """The fleet's MultiKueueClusters (one per worker), MultiKueueConfig, AdmissionCheck,
    ClusterQueue (admissionChecksStrategy, summed quota), LocalQueues and ResourceFlavors against
    the v0.17.1 v1beta2 schemas extracted from the release's CRDs."""
    objects = [
        r
        for r in example_plan("fleet").resources
        if r.is_kubernetes_object and r.type.startswith("kubernetes:kueue.x-k8s.io/")
    ]
    multikueue = ("AdmissionCheck", "MultiKueueCluster", "MultiKueueConfig")
    # a MultiKueueCluster per worker; a MultiKueueConfig and an AdmissionCheck per worker set
    assert sorted(kind_of(r) for r in objects if kind_of(r) in multikueue) == [
        "AdmissionCheck",
        "AdmissionCheck",
        "MultiKueueCluster",
        "MultiKueueCluster",
        "MultiKueueConfig",
        "MultiKueueConfig",
    ]
    assert {"ClusterQueue", "LocalQueue", "ResourceFlavor"} <= {kind_of(r) for r in objects}
    assert {r.name: errors for r in objects if (errors := schema_errors(r))} == {}


def test_each_multikueue_cluster_reads_a_kubeconfig_secret_the_fleet_puts_beside_kueue(
    example_plan,
):
    """The schema cannot see it: a MultiKueueCluster's kubeConfig.location names a Secret in the
    namespace Kueue runs in (locationType Secret, its default: multikueue_types.go), on the same
    cluster."""
    resources = [r for r in example_plan("fleet").resources if r.is_kubernetes_object]
    secrets = {
        (manifest(r)["metadata"]["name"], manifest(r)["metadata"]["namespace"], r.provider)
        for r in resources
        if kind_of(r) == "Secret"
    }
    kube_configs = [
        (manifest(r)["spec"]["clusterSource"]["kubeConfig"], r.provider)
        for r in resources
        if kind_of(r) == "MultiKueueCluster"
    ]
    resolved = [
        kube_config["location"]
        for kube_config, provider in kube_configs
        if kube_config.get("locationType", "Secret") == "Secret"
        and (kube_config["location"], "kueue-system", provider) in secrets
    ]
    assert sorted(resolved) == ["multikueue-dev", "multikueue-research-v5p"]
    assert len(kube_configs) == 2


def test_gke_minors_are_all_shipped_by_kubernetes_validate():
    shipped = {kv_utils.major_minor(v) for v in kv_utils.all_versions()}
    assert set(GKE_MINORS) <= shipped
    assert kubernetes_validate.validate(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}, "1.34", strict=True
    )


def test_kueue_schemas_are_v0_17_1_v1beta2():
    document = kueue_extracted()
    assert "kubernetes-sigs/kueue release v0.17.1" in document["$comment"]
    assert sorted(document["schemas"]) == [
        "kueue.x-k8s.io/v1beta2/AdmissionCheck",
        "kueue.x-k8s.io/v1beta2/ClusterQueue",
        "kueue.x-k8s.io/v1beta2/LocalQueue",
        "kueue.x-k8s.io/v1beta2/MultiKueueCluster",
        "kueue.x-k8s.io/v1beta2/MultiKueueConfig",
        "kueue.x-k8s.io/v1beta2/ResourceFlavor",
        "kueue.x-k8s.io/v1beta2/WorkloadPriorityClass",
    ]
    assert document["deprecated"]["kueue.x-k8s.io/v1beta1/ClusterQueue"] == (
        "This version is deprecated. Use v1beta2 instead."
    )
    # v1beta1 MultiKueueConfig is served without a deprecation warning in v0.17.1
    assert sorted(k for k in document["deprecated"] if "MultiKueue" in k) == [
        "kueue.x-k8s.io/v1beta1/MultiKueueCluster"
    ]
    spec = document["schemas"]["kueue.x-k8s.io/v1beta2/ClusterQueue"]["properties"]["spec"]
    assert "cohortName" in spec["properties"] and "cohort" not in spec["properties"]


def test_the_multikueue_schemas_carry_the_v0_17_1_crd_limits():
    # Facts of the CRDs (kubernetes-sigs/kueue v0.17.1 config/components/crd/bases), read here so
    # a refresh that loses them fails: at most 20 clusters per MultiKueueConfig, a set; an
    # AdmissionCheck's parameters name a DNS label of at most 63 characters.
    schemas = kueue_extracted()["schemas"]
    clusters = schemas["kueue.x-k8s.io/v1beta2/MultiKueueConfig"]["properties"]["spec"][
        "properties"
    ]["clusters"]
    assert (clusters["minItems"], clusters["maxItems"]) == (1, 20)
    assert clusters["x-kubernetes-list-type"] == "set"
    check = schemas["kueue.x-k8s.io/v1beta2/AdmissionCheck"]["properties"]["spec"]
    assert check["properties"]["parameters"]["properties"]["name"]["maxLength"] == 63
    assert not (DATA / f"kueue-{KueueAddon().version}-multikueue-schemas.json").exists()


# --- the contract does fail ------------------------------------------------------------------


def first(example_plan, stack: str, type_token: str) -> PlannedResource:
    return next(r for r in example_plan(stack).resources if r.type == type_token)


def altered(resource: PlannedResource, change: Callable[[dict], None]) -> PlannedResource:
    inputs = json.loads(json.dumps(resource.inputs))
    change(inputs)
    return PlannedResource(
        resource.urn,
        resource.type,
        resource.name,
        resource.parent,
        resource.custom,
        resource.provider,
        inputs,
        resource.dependencies,
        resource.options,
    )


def _set(path: str, value: Any) -> Callable[[dict], None]:
    def change(inputs: dict) -> None:
        *parents, last = path.split(".")
        node = inputs
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        node[last] = value

    return change


BROKEN = [
    pytest.param(
        "research-v5p",
        "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue",
        _set("apiVersion", "kueue.x-k8s.io/v1beta1"),
        "kueue.x-k8s.io/v1beta1/ClusterQueue: deprecated in Kueue: This version is deprecated. "
        "Use v1beta2 instead.",
        id="kueue-v1beta1",
    ),
    pytest.param(
        "research-v5p",
        "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue",
        _set("spec.cohort", "all"),  # v1beta1's name; v1beta2 calls it cohortName
        "spec: Additional properties are not allowed ('cohort' was unexpected)",
        id="kueue-v1beta1-field",
    ),
    pytest.param(
        "research-v5p",
        "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue",
        _set("spec.resourceGroups.0.flavors.0.resources.0.nominalQuota", "lots"),
        "spec.resourceGroups.0.flavors.0.resources.0.nominalQuota: 'lots' does not match",
        id="kueue-bad-quantity",
    ),
    pytest.param(
        "fleet",
        "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueCluster",
        _set("spec.clusterSource.kubeconfig", {"location": "multikueue-dev"}),
        "spec.clusterSource: Additional properties are not allowed ('kubeconfig' was unexpected)",
        id="multikueue-cluster-misspelt-field",
    ),
    pytest.param(
        "fleet",
        "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueCluster",
        _set("spec.clusterSource.kubeConfig.locationType", "ConfigMap"),
        "spec.clusterSource.kubeConfig.locationType: 'ConfigMap' is not one of ['Secret', 'Path']",
        id="multikueue-cluster-bad-enum",
    ),
    pytest.param(
        "fleet",
        "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueCluster",
        _set("spec.clusterSource.kubeConfig.location", ""),
        "spec.clusterSource.kubeConfig.location: '' should be non-empty",
        id="multikueue-cluster-empty-location",
    ),
    pytest.param(
        "fleet",
        "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueCluster",
        _set("apiVersion", "kueue.x-k8s.io/v1beta1"),
        "kueue.x-k8s.io/v1beta1/MultiKueueCluster: deprecated in Kueue: This version is "
        "deprecated. Use v1beta2 instead.",
        id="multikueue-cluster-v1beta1",
    ),
    pytest.param(
        "fleet",
        "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueConfig",
        _set("spec.clusters", ["dev", "dev"]),
        "spec.clusters: duplicate items in a list-type set",
        id="multikueue-config-duplicate-cluster",
    ),
    pytest.param(
        "fleet",
        "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueConfig",
        _set("spec.clusters", []),
        "spec.clusters: [] should be non-empty",
        id="multikueue-config-no-cluster",
    ),
    pytest.param(
        "fleet",
        "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueConfig",
        _set("apiVersion", "kueue.x-k8s.io/v1beta1"),
        "kueue.x-k8s.io/v1beta1/MultiKueueConfig: Kueue v0.17.1 stores no such kind and version",
        id="multikueue-config-v1beta1",
    ),
    pytest.param(
        "fleet",
        "kubernetes:kueue.x-k8s.io/v1beta2:AdmissionCheck",
        _set("spec.controller", "kueue.x-k8s.io/multikueue"),
        "spec: Additional properties are not allowed ('controller' was unexpected)",
        id="admission-check-misspelt-field",
    ),
    pytest.param(
        "fleet",
        "kubernetes:kueue.x-k8s.io/v1beta2:AdmissionCheck",
        _set("spec.parameters.kind", "MultiKueue_Config"),
        "spec.parameters.kind: 'MultiKueue_Config' does not match",
        id="admission-check-bad-kind",
    ),
    pytest.param(
        "fleet",
        "kubernetes:kueue.x-k8s.io/v1beta2:AdmissionCheck",
        _set("spec.parameters", {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig"}),
        "spec.parameters: 'name' is a required property",
        id="admission-check-parameters-without-name",
    ),
    pytest.param(
        "research-v5p",
        "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue",
        _set("spec.resourceGroups.0.flavors.0.resources.0.borrowingLimit", 0),
        "spec: borrowingLimit must be nil when cohort is empty (CEL rule: !has(self.cohortName)",
        id="kueue-cel-borrowing-limit-without-cohort",
    ),
    pytest.param(
        "research-v5p",
        "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue",
        _set("spec.preemption.borrowWithinCohort", {"policy": "LowerPriority"}),
        "spec.preemption: reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never (CEL "
        "rule: ",
        id="kueue-cel-preemption",
    ),
    pytest.param(
        "research-v5p",
        "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue",
        _set("spec.resourceGroups.1.coveredResources", ["memory", "cpu"]),
        "spec.resourceGroups[1].flavors[0].resources[0].name: Invalid value: 'cpu': must match "
        "the name in coveredResources (kueue v0.17.1 pkg/webhooks/clusterqueue_webhook.go "
        "validateFlavorQuotas)",
        id="kueue-webhook-resource-order",
    ),
    pytest.param(
        "research-v5p",
        "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue",
        _set("spec.resourceGroups.0.flavors.0.resources.0.lendingLimit", 0),
        "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: Invalid value: 0: must be "
        "nil when cohort is empty (kueue v0.17.1 pkg/webhooks/clusterqueue_webhook.go "
        "validateLimit)",
        id="kueue-webhook-lending-limit-without-cohort",
    ),
    pytest.param(
        "research-v5p",
        "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor",
        _set("spec.tolerations", [{"key": "k", "operator": "Exists", "value": "v"}]),
        "spec.tolerations: a value must be empty when 'operator' is 'Exists' (CEL rule: ",
        id="kueue-cel-toleration",
    ),
    pytest.param(
        "research-v5p",
        "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor",
        _set("spec.nodeTaints", [{"key": "k", "value": v, "effect": "NoSchedule"} for v in "ab"]),
        "spec.nodeTaints[1]: Invalid value: {'key': 'k', 'value': 'b', 'effect': 'NoSchedule'}: "
        "Duplicate value: taints must be unique by key and effect pair (kueue v0.17.1 "
        "pkg/webhooks/resourceflavor_webhook.go validateNodeTaints)",
        id="kueue-webhook-duplicate-taint",
    ),
    pytest.param(
        "fleet",
        "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueCluster",
        _set("spec.clusterSource.clusterProfileRef", {"name": "rvwa"}),
        "spec.clusterSource: exactly one of the fields in [kubeConfig clusterProfileRef] must be "
        "set (CEL rule: ",
        id="multikueue-cluster-cel-two-sources",
    ),
    pytest.param(
        "research-v5p",
        "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue",
        _set("metadata.labels", {"team": 7}),
        "Kubernetes 1.34: metadata.labels.team: 7 is not of type 'string'",
        id="custom-resource-metadata",
    ),
    pytest.param(
        "research-v5p",
        "kubernetes:scheduling.k8s.io/v1:PriorityClass",
        _set("apiVersion", "scheduling.k8s.io/v1alpha1"),
        "Kubernetes 1.34 has no PriorityClass in scheduling.k8s.io/v1alpha1",
        id="core-wrong-api-version",
    ),
    pytest.param(
        "research-v5p",
        "kubernetes:scheduling.k8s.io/v1:PriorityClass",
        _set("value", "1000"),
        "Kubernetes 1.34: value: '1000' is not of type 'integer', 'null'",
        id="core-ill-typed",
    ),
    pytest.param(
        "dev",
        "kubernetes:core/v1:ServiceAccount",
        _set("automountToken", False),
        "Kubernetes 1.37: <root>: Additional properties are not allowed ('automountToken' was "
        "unexpected)",
        id="core-unknown-field",
    ),
    pytest.param(
        "dev",
        "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob",
        _set("apiVersion", "pathways-job.pathways.domain/v1beta1"),
        "pathways-job.pathways.domain/v1beta1/PathwaysJob: the PathwaysJob CRD serves only "
        "pathways-job.pathways.domain/v1",
        id="pathways-job-wrong-api-version",
    ),
    pytest.param(
        "dev",
        "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob",
        _set("spec.workers.0.numSlices", "1"),
        "spec.workers.0.numSlices: '1' is not of type 'integer'",
        id="pathways-job-ill-typed",
    ),
]


@pytest.mark.parametrize(("stack", "type_token", "change", "expected"), BROKEN)
def test_a_wrong_api_version_or_field_fails_the_contract(
    example_plan, stack, type_token, change, expected
):
    resource = first(example_plan, stack, type_token)
    assert schema_errors(resource) == []  # the untouched object passes...
    errors = schema_errors(altered(resource, change))
    assert any(e.startswith(expected) for e in errors), errors  # ...the altered one does not


def deployment_patch(spec: dict) -> PlannedResource:
    return PlannedResource(
        urn="urn:pulumi:s::p::kubernetes:apps/v1:DeploymentPatch::jobset-memory",
        type="kubernetes:apps/v1:DeploymentPatch",
        name="jobset-memory",
        parent=None,
        custom=True,
        provider=None,
        inputs={
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "jobset-controller-manager", "namespace": "jobset-system"},
            "spec": spec,
        },
        dependencies=[],
    )


def test_a_patch_need_not_be_a_whole_object_but_its_fields_must_be_right():
    limits = {"containers": [{"name": "manager", "resources": {"limits": {"memory": "4Gi"}}}]}
    assert schema_errors(deployment_patch({"template": {"spec": limits}})) == []
    misspelt = {"containers": [{"name": "manager", "resource": {"limits": {"memory": "4Gi"}}}]}
    errors = schema_errors(deployment_patch({"template": {"spec": misspelt}}))
    assert errors[0] == (
        "Kubernetes 1.34: spec.template.spec.containers.0: Additional properties are not allowed "
        "('resource' was unexpected)"
    )
