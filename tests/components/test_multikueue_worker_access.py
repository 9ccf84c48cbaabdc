"""WorkerAccess: the manager's service account, Role and RoleBinding per team namespace, an
anchor Secret, a workload set's LocalQueues on the worker (through the worker's provider), a
bounded token bound to the anchor (a dynamic resource); the kubeconfig Secret on the manager
(through the manager's), secret in the plan."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from components.addons.multikueue_worker import (
    TokenLifetime,
    WorkerAccess,
    WorkerAccessArgs,
    WorkerQueueArgs,
)
from tests.components.harness import register


def build():
    worker = k8s.Provider("worker", kubeconfig="{}")
    manager = k8s.Provider("manager", kubeconfig="{}")
    kueue = k8s.core.v1.Namespace("kueue", opts=pulumi.ResourceOptions(provider=manager))
    WorkerAccess(
        "fleet-access-dev",
        WorkerAccessArgs(
            worker="dev",
            worker_provider=worker,
            manager_provider=manager,
            namespaces=("pathways", "research"),
            server="https://dev.example",
            manager_kueue=kueue,
            lifetime=TokenLifetime(14, 7, rotation="r2"),
            access_token="google-token",
            queues=(WorkerQueueArgs("research", "mk-dev-research-v5p", "research-cluster-queue"),),
        ),
    )


def provider_name(resource) -> str:
    return resource.provider.split("::")[3]


def test_worker_objects_go_through_the_worker_provider_and_the_secret_through_the_managers():
    registered = register(build)
    on = {r.name: provider_name(r) for r in registered.resources if r.custom and r.provider}
    assert on == {
        "kueue": "manager",
        "fleet-access-dev-account": "worker",
        "fleet-access-dev-pathways-role": "worker",
        "fleet-access-dev-pathways-binding": "worker",
        "fleet-access-dev-research-role": "worker",
        "fleet-access-dev-research-binding": "worker",
        "fleet-access-dev-watch-role": "worker",
        "fleet-access-dev-watch-binding": "worker",
        "fleet-access-dev-research-mk-dev-research-v5p": "worker",
        "fleet-access-dev-anchor": "worker",
        "fleet-access-dev-kubeconfig": "manager",
    }


def test_the_token_is_minted_for_the_account_bound_to_the_anchor_and_kept_secret():
    registered = register(build)
    anchor = registered.one("kubernetes:core/v1:Secret", "fleet-access-dev-anchor")
    assert anchor.inputs["metadata"] == {
        "name": "multikueue-manager-anchor-r2",
        "namespace": "kueue-system",
    }
    token = registered.one(
        "pulumi-python:dynamic/multikueue:ManagerToken", "fleet-access-dev-token"
    )
    assert token.inputs["server"] == "https://dev.example"
    assert token.inputs["anchor_name"] == "multikueue-manager-anchor-r2"
    assert token.inputs["access_token"] == "[secret]"
    assert (token.inputs["lifetime_seconds"], token.inputs["renew_before_seconds"]) == (
        1_209_600,
        604_800,
    )
    assert anchor.urn in token.dependencies
    secret = registered.one("kubernetes:core/v1:Secret", "fleet-access-dev-kubeconfig")
    assert token.urn in secret.dependencies


def test_a_workload_sets_local_queue_is_created_on_the_worker_and_replaced_on_change():
    registered = register(build)
    queue = registered.one(
        "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue",
        "fleet-access-dev-research-mk-dev-research-v5p",
    )
    assert queue.inputs["metadata"] == {"name": "mk-dev-research-v5p", "namespace": "research"}
    assert queue.inputs["spec"] == {"clusterQueue": "research-cluster-queue"}
    assert queue.options["replaceOnChanges"] == ["spec.clusterQueue"]
    assert queue.options["deleteBeforeReplace"] is True


def test_the_role_binds_the_managers_account_in_each_team_namespace():
    registered = register(build)
    binding = registered.one(
        "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", "fleet-access-dev-research-binding"
    )
    assert binding.inputs["metadata"] == {"name": "multikueue-manager", "namespace": "research"}
    assert binding.inputs["subjects"] == [
        {"kind": "ServiceAccount", "name": "multikueue-manager", "namespace": "kueue-system"}
    ]
    assert binding.inputs["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "multikueue-manager",
    }


def test_the_managers_account_may_list_and_watch_workloads_and_jobsets_cluster_wide():
    registered = register(build)
    role = registered.one(
        "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "fleet-access-dev-watch-role"
    )
    assert role.inputs["metadata"] == {"name": "multikueue-manager-watch"}
    assert role.inputs["rules"] == [
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"], "verbs": ["list", "watch"]},
        {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets"], "verbs": ["list", "watch"]},
    ]
    namespaced = registered.one(
        "kubernetes:rbac.authorization.k8s.io/v1:Role", "fleet-access-dev-research-role"
    )
    assert namespaced.inputs["rules"] == [
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
    binding = registered.one(
        "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
        "fleet-access-dev-watch-binding",
    )
    assert binding.inputs["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "multikueue-manager-watch",
    }
    assert binding.inputs["subjects"] == [
        {"kind": "ServiceAccount", "name": "multikueue-manager", "namespace": "kueue-system"}
    ]


def test_the_kubeconfig_secret_is_never_plain_text_and_waits_for_kueue():
    registered = register(build)
    secret = registered.one("kubernetes:core/v1:Secret", "fleet-access-dev-kubeconfig")
    assert secret.inputs["metadata"] == {"name": "multikueue-dev", "namespace": "kueue-system"}
    assert secret.inputs["stringData"] == "[secret]"
    kueue = registered.one("kubernetes:core/v1:Namespace", "kueue")
    assert kueue.urn in secret.dependencies
