"""TeamNamespace from its Args: the namespace, team-labelled and Pod Security-labelled, its
workload account without an automounted token, and the isolation inside it."""

from __future__ import annotations

import pytest

from components.addons.team_isolation import TeamQuota
from components.addons.teams import TeamNamespace, TeamNamespaceArgs
from tests.components.harness import k8s_provider, register, team_namespace_labels, urn

NAMESPACE = "kubernetes:core/v1:Namespace"
SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"
ISOLATION = "tpu-pathways:teams:TeamIsolation"


@pytest.fixture(scope="module")
def team():
    def build():
        args = TeamNamespaceArgs(
            "research",
            k8s_provider(),
            service_account="trainer",
            group="ml-research@example.com",
            quota=TeamQuota(pods=10),
        )
        return {"namespace": TeamNamespace("t-research", args).namespace}

    return register(build)


def test_the_namespace(team):
    namespace = team.one(NAMESPACE, "t-research")
    assert namespace.inputs["metadata"] == {
        "name": "research",
        "labels": team_namespace_labels("research"),
    }
    assert namespace.provider == urn("pulumi:providers:kubernetes", "k8s")
    assert team.outputs == {"namespace": "research"}


def test_the_workload_service_account(team):
    account = team.one(SERVICE_ACCOUNT, "t-research-trainer")
    assert account.inputs["metadata"] == {"name": "trainer", "namespace": "research"}
    assert account.inputs["automountServiceAccountToken"] is False


def test_the_isolation_is_a_child_with_the_teams_group_and_quota(team):
    isolation = team.one(ISOLATION, "t-research-isolation")
    assert isolation.parent == urn("tpu-pathways:teams:TeamNamespace", "t-research")
    binding = team.one(
        "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", "t-research-isolation-edit"
    )
    assert binding.inputs["subjects"][0]["name"] == "ml-research@example.com"
    quota = team.one("kubernetes:core/v1:ResourceQuota", "t-research-isolation-quota")
    assert quota.inputs["spec"]["hard"]["pods"] == "10"
