"""The MultiKueue objects of a fleet's manager, as the fleet example plans them: which Secret,
which clusters, which config, which quota. Their field structure (names, enums, required
fields) is the contract test's: tests/contract/test_schema_contract.py validates them against
schemas of Kueue v0.17.1's v1beta2 Go types (kubernetes-sigs/kueue v0.17.1,
apis/kueue/v1beta2/multikueue_types.go and admissioncheck_types.go)."""

from __future__ import annotations

import json

import pytest
import yaml

from components.addons.multikueue import worker_kubeconfig, worker_role_rules, worker_watch_rules
from components.pathways.jobset import render_jobset
from components.plan.engine import read_stack
from components.plan.render import manifest
from components.resolve.workload_specs import workload_spec


@pytest.fixture(scope="module")
def fleet_objects(example_plan):
    return {
        (r.type.rsplit(":", 1)[-1], manifest(r)["metadata"]["name"]): manifest(r)
        for r in example_plan("fleet").resources
        if r.is_kubernetes_object
    }


def test_multikueue_cluster_reads_the_worker_kubeconfig_secret(fleet_objects):
    assert fleet_objects[("MultiKueueCluster", "research-v5p")] == {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "MultiKueueCluster",
        "metadata": {"name": "research-v5p"},
        "spec": {
            "clusterSource": {
                "kubeConfig": {"locationType": "Secret", "location": "multikueue-research-v5p"}
            }
        },
    }


def test_multikueue_config_lists_every_worker(fleet_objects):
    assert fleet_objects[("MultiKueueConfig", "fleet")] == {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "MultiKueueConfig",
        "metadata": {"name": "fleet"},
        "spec": {"clusters": ["research-v5p", "dev"]},
    }


def test_admission_check_is_multikueue_with_the_config(fleet_objects):
    assert fleet_objects[("AdmissionCheck", "multikueue")] == {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "AdmissionCheck",
        "metadata": {"name": "multikueue"},
        "spec": {
            "controllerName": "kueue.x-k8s.io/multikueue",
            "parameters": {
                "apiGroup": "kueue.x-k8s.io",
                "kind": "MultiKueueConfig",
                "name": "fleet",
            },
        },
    }


def test_manager_cluster_queue_sums_the_workers_and_names_the_check(fleet_objects):
    spec = fleet_objects[("ClusterQueue", "cluster-queue")]["spec"]
    assert spec["admissionChecksStrategy"] == {"admissionChecks": [{"name": "multikueue"}]}
    # research-v5p: 2 slices of v5p 2x2x2 (8 chips each); dev: 1 slice of v5e 2x4 (8 chips).
    assert spec["resourceGroups"][0] == {
        "coveredResources": ["google.com/tpu"],
        "flavors": [
            {
                "name": "tpu-v5-lite-podslice-2x4-4t",
                "resources": [{"name": "google.com/tpu", "nominalQuota": 8}],
            },
            {
                "name": "tpu-v5p-slice-2x2x2-4t",
                "resources": [{"name": "google.com/tpu", "nominalQuota": 16}],
            },
        ],
    }


def test_the_manager_credentials_are_secret_in_the_plan(fleet_objects):
    secret = fleet_objects[("Secret", "multikueue-dev")]
    assert secret["metadata"] == {"name": "multikueue-dev", "namespace": "kueue-system"}
    assert secret["stringData"] == "[secret]"
    token = fleet_objects[("Secret", "multikueue-manager-token")]
    assert token["type"] == "kubernetes.io/service-account-token"
    assert token["metadata"]["annotations"] == {
        "kubernetes.io/service-account.name": "multikueue-manager"
    }


def test_fleet_jobsets_are_managed_by_multikueue_on_the_manager_queue(fleet_objects):
    jobset = fleet_objects[("JobSet", "v5e-notebook")]
    assert jobset["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"
    assert jobset["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "multislice-queue"}


def test_worker_role_grants_only_what_multikueue_needs_for_jobsets():
    manage = ["create", "delete", "get", "list", "watch"]
    assert worker_role_rules() == [
        {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets"], "verbs": manage},
        {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets/status"], "verbs": ["get"]},
        # Kueue v0.17.1 updates the remote Workload (finalizer, priority): workload.go.
        {
            "apiGroups": ["kueue.x-k8s.io"],
            "resources": ["workloads"],
            "verbs": ["create", "delete", "get", "list", "watch", "update"],
        },
        {
            "apiGroups": ["kueue.x-k8s.io"],
            "resources": ["workloads/status"],
            "verbs": ["get", "patch", "update"],
        },
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]},
    ]


def test_the_workers_cluster_wide_grant_is_list_and_watch_of_workloads_and_jobsets():
    # Kueue v0.17.1's remote client watches and garbage-collects both kinds in every namespace
    # (multikueuecluster.go startWatcher, runGC); a namespaced Role cannot allow that.
    assert worker_watch_rules() == [
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"], "verbs": ["list", "watch"]},
        {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets"], "verbs": ["list", "watch"]},
    ]


def test_worker_kubeconfig_uses_a_token_and_no_cluster_ca():
    # Kueue v0.17.1 refuses exec plugins in a MultiKueue kubeconfig; the DNS-based endpoint's
    # certificate is a public Google CA's, so the cluster CA would fail verification there.
    document = json.loads(worker_kubeconfig("dev", "https://dev.example", "t0ken"))
    assert document["users"] == [{"name": "multikueue-manager", "user": {"token": "t0ken"}}]
    assert document["clusters"] == [{"name": "dev", "cluster": {"server": "https://dev.example"}}]


def test_render_jobset_sets_managed_by_only_when_asked():
    config = read_stack("dev").config
    spec = workload_spec(config, config.workloads[0], {})
    assert "managedBy" not in render_jobset("a", "default", spec)["spec"]
    managed = render_jobset("a", "default", spec, managed_by="kueue.x-k8s.io/multikueue")
    assert managed["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"


def by_name(plan, name, type_=None):
    return next(r for r in plan.resources if r.name == name and type_ in (None, r.type))


def test_the_managers_kueue_enables_only_the_jobset_integration(example_plan):
    # With Kueue's default list, its remote client also watches MPIJobs, RayJobs, ... on each
    # worker; a worker without those CRDs stays disconnected (kueue issue 3582).
    patch = by_name(example_plan("fleet"), "pathways-fleet-kueue-config-config-map")
    assert patch.type == "kubernetes:core/v1:ConfigMapPatch"
    assert patch.inputs["metadata"] == {
        "annotations": {"pulumi.com/patchForce": "true"},
        "name": "kueue-manager-config",
        "namespace": "kueue-system",
    }
    configuration = yaml.safe_load(patch.inputs["data"]["controller_manager_config.yaml"])
    assert configuration["integrations"] == {"frameworks": ["jobset.x-k8s.io/jobset"]}
    # The rest is the v0.17.1 release's file: its ports and leader-election lease.
    assert configuration["webhook"] == {"port": 9443}
    assert configuration["health"] == {"healthProbeBindAddress": ":8081"}
    assert configuration["leaderElection"] == {
        "leaderElect": True,
        "resourceName": "c1f6bfd2.kueue.x-k8s.io",
    }


def test_the_managers_kueue_restarts_on_its_config_before_the_multikueue_objects(example_plan):
    plan = example_plan("fleet")
    restart = by_name(
        plan, "pathways-fleet-kueue-config-restart", "kubernetes:apps/v1:DeploymentPatch"
    )
    assert restart.inputs["metadata"]["name"] == "kueue-controller-manager"
    assert restart.inputs["spec"]["template"]["metadata"] == {
        "annotations": {
            "tpu-pathways/kueue-config-sha256": (
                "9c83aac1c8c5620425db3cbcf56ba42a5595498b62b34521eab1731d09032c1f"
            )
        }
    }
    config_map = by_name(plan, "pathways-fleet-kueue-config-config-map")
    assert config_map.urn in restart.dependencies
    cluster = by_name(plan, "pathways-fleet-multikueue-multikueuecluster-dev")
    assert restart.urn in cluster.dependencies
