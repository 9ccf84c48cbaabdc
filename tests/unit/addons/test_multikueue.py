"""The MultiKueue objects of a fleet's manager, as the fleet example plans them: which Secret,
which clusters, one config, check and ClusterQueue per worker set with that set's quota, and
what the manager may do on a worker. Their field structure (names, enums, required fields) is
the contract test's: tests/contract/test_schema_contract.py validates them against Kueue
v0.17.1's CRDs."""

from __future__ import annotations

import json

import pytest
import yaml

from components.addons.multikueue_worker import worker_kubeconfig
from components.pathways.jobset import render_jobset
from components.pathways.multikueue_rights import MANAGER_ROLE_RULES, MANAGER_WATCH_RULES
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


def test_one_multikueue_config_per_worker_set(fleet_objects):
    configs = {k[1]: v for k, v in fleet_objects.items() if k[0] == "MultiKueueConfig"}
    assert configs == {
        "mk-research-v5p": {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "MultiKueueConfig",
            "metadata": {"name": "mk-research-v5p"},
            "spec": {"clusters": ["research-v5p"]},
        },
        "mk-dev": {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "MultiKueueConfig",
            "metadata": {"name": "mk-dev"},
            "spec": {"clusters": ["dev"]},
        },
    }


def test_each_sets_admission_check_is_multikueue_with_its_config(fleet_objects):
    assert fleet_objects[("AdmissionCheck", "mk-dev")] == {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "AdmissionCheck",
        "metadata": {"name": "mk-dev"},
        "spec": {
            "controllerName": "kueue.x-k8s.io/multikueue",
            "parameters": {
                "apiGroup": "kueue.x-k8s.io",
                "kind": "MultiKueueConfig",
                "name": "mk-dev",
            },
        },
    }


def test_each_sets_cluster_queue_holds_its_workers_quota_and_its_teams(fleet_objects):
    spec = fleet_objects[("ClusterQueue", "mk-research-v5p")]["spec"]
    assert spec["admissionChecksStrategy"] == {"admissionChecks": [{"name": "mk-research-v5p"}]}
    assert spec["namespaceSelector"] == {
        "matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["research"]}
        ]
    }
    # research-v5p: 2 slices of v5p 2x2x2 (8 chips each); dev's v5e is not in this set
    assert spec["resourceGroups"][0] == {
        "coveredResources": ["google.com/tpu"],
        "flavors": [
            {
                "name": "tpu-v5p-slice-2x2x2-4t",
                "resources": [{"name": "google.com/tpu", "nominalQuota": 16}],
            }
        ],
    }
    dev = fleet_objects[("ClusterQueue", "mk-dev")]["spec"]
    assert dev["resourceGroups"][0]["flavors"] == [
        {
            "name": "tpu-v5-lite-podslice-2x4-4t",
            "resources": [{"name": "google.com/tpu", "nominalQuota": 8}],
        }
    ]
    # dev's CPU pool: 3 n2-standard-64 nodes
    assert dev["resourceGroups"][1]["flavors"][0]["name"] == "cpu-heads"


def test_each_team_queues_on_its_sets_cluster_queue(example_plan):
    local = sorted(
        (m["metadata"]["namespace"], m["metadata"]["name"], m["spec"]["clusterQueue"], r.provider)
        for r in example_plan("fleet").resources
        if r.is_kubernetes_object and (m := manifest(r))["kind"] == "LocalQueue"
    )
    assert [(ns, name, queue) for ns, name, queue, _ in local] == [
        ("pathways", "multislice-queue", "mk-dev"),
        ("research", "multislice-queue", "mk-research-v5p"),
    ]
    # on the manager (the workers' own LocalQueue of that name is their stack's)
    assert {provider.rsplit("::", 1)[-1] for *_, provider in local} == {"pathways-fleet-k8s"}


def test_the_manager_credentials_are_secret_in_the_plan(fleet_objects, example_plan):
    secret = fleet_objects[("Secret", "multikueue-dev")]
    assert secret["metadata"] == {"name": "multikueue-dev", "namespace": "kueue-system"}
    assert secret["stringData"] == "[secret]"
    # no legacy service-account-token Secret (it never expires): an anchor, and a bounded token
    anchor = fleet_objects[("Secret", "multikueue-manager-anchor")]
    assert anchor == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "multikueue-manager-anchor", "namespace": "kueue-system"},
        "type": "Opaque",
    }
    assert "multikueue-manager-token" not in {name for _, name in fleet_objects}
    token = by_name(example_plan("fleet"), "pathways-fleet-access-dev-token")
    assert token.type == "pulumi-python:dynamic/multikueue:ManagerToken"
    assert {k: v for k, v in token.inputs.items() if k != "server"} == {
        "__provider": "[secret]",
        "access_token": "[secret]",
        "anchor_name": "multikueue-manager-anchor",
        "namespace": "kueue-system",
        "service_account": "multikueue-manager",
        "lifetime_seconds": 14 * 86400,
        "renew_before_seconds": 7 * 86400,
    }


def test_fleet_jobsets_are_managed_by_multikueue_on_the_manager_queue(fleet_objects):
    jobset = fleet_objects[("JobSet", "v5e-notebook")]
    assert jobset["spec"]["managedBy"] == "kueue.x-k8s.io/multikueue"
    assert jobset["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "multislice-queue"}


def test_worker_role_grants_only_what_multikueue_calls_for_jobsets():
    # Kueue v0.17.1 (research/28-multikueue.md section 1): readGroup gets, the dispatcher
    # creates, RemoveRemoteObjects updates (finalizer) and deletes, GC deletes, eviction patches
    # the status; the JobSet adapter gets, creates, deletes. No pods, logs, status reads.
    assert [r.as_dict() for r in MANAGER_ROLE_RULES] == [
        {
            "apiGroups": ["kueue.x-k8s.io"],
            "resources": ["workloads"],
            "verbs": ["get", "create", "update", "delete"],
        },
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads/status"], "verbs": ["patch"]},
        {
            "apiGroups": ["jobset.x-k8s.io"],
            "resources": ["jobsets"],
            "verbs": ["get", "create", "delete"],
        },
    ]


def test_the_workers_cluster_wide_grant_is_list_and_watch_of_workloads_and_jobsets():
    # Kueue v0.17.1's remote client watches and garbage-collects both kinds in every namespace
    # (multikueuecluster.go startWatcher, runGC); a namespaced Role cannot allow that.
    assert [r.as_dict() for r in MANAGER_WATCH_RULES] == [
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
    restart = by_name(plan, "pathways-fleet-kueue-controller", "kubernetes:apps/v1:DeploymentPatch")
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
