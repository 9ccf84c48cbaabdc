"""TeamNamespace from its Args: the namespace, team-labelled, and its workload account."""

from __future__ import annotations

import pytest

from components.addons.teams import TeamNamespace, TeamNamespaceArgs
from tests.components.harness import k8s_provider, register, urn

NAMESPACE = "kubernetes:core/v1:Namespace"
SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"


@pytest.fixture(scope="module")
def team():
    def build():
        args = TeamNamespaceArgs("research", k8s_provider(), service_account="trainer")
        return {"namespace": TeamNamespace("t-research", args).namespace}

    return register(build)


def test_the_namespace(team):
    namespace = team.one(NAMESPACE, "t-research")
    assert namespace.inputs["metadata"] == {
        "name": "research",
        "labels": {"tpu-pathways/team": "research"},
    }
    assert namespace.provider == urn("pulumi:providers:kubernetes", "k8s")
    assert team.outputs == {"namespace": "research"}


def test_the_workload_service_account(team):
    account = team.one(SERVICE_ACCOUNT, "t-research-trainer")
    assert account.inputs["metadata"] == {"name": "trainer", "namespace": "research"}
