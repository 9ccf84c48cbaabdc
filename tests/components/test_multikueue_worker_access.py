"""WorkerAccess: the manager's service account, Role and RoleBinding per team namespace and token
on the worker (through the worker's provider); the kubeconfig Secret on the manager (through the
manager's), secret in the plan."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from components.addons.multikueue import WorkerAccess, WorkerAccessArgs
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
        "fleet-access-dev-token": "worker",
        "fleet-access-dev-kubeconfig": "manager",
    }


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
