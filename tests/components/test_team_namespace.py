"""TeamNamespace from its Args: the namespace, team-labelled and Pod Security-labelled, its
workload account without an automounted token, and the isolation inside it."""

from __future__ import annotations

import pytest

from components.addons.team_isolation import TeamQuota
from components.addons.teams import TeamNamespace, TeamNamespaceArgs
from components.vocabulary import HostNetworkPlacement
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
            host_network=HostNetworkPlacement.DEDICATED,
            priority_classes=("low", "high"),
        )
        return {"namespace": TeamNamespace("t-research", args).namespace}

    return register(build)


def test_a_namespace_without_host_network_enforces_baseline():
    def build():
        args = TeamNamespaceArgs("serving", k8s_provider())
        return {"namespace": TeamNamespace("t-serving", args).namespace}

    labels = register(build).one(NAMESPACE, "t-serving").inputs["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "baseline"
    assert labels["tpu-pathways/host-network"] == "none"
    # all but very-high, unless the args say otherwise
    assert labels["tpu-pathways/priority-classes"] == "very-low.low.medium.high"


def test_the_namespace(team):
    namespace = team.one(NAMESPACE, "t-research")
    assert namespace.inputs["metadata"] == {
        "name": "research",
        # host-network Pathways pods: only privileged can be enforced (the shared admission
        # policies enforce baseline for everything else)
        "labels": team_namespace_labels(
            "research", enforce="privileged", host_network="dedicated", priority_classes="low.high"
        ),
    }
    assert namespace.provider == urn("pulumi:providers:kubernetes", "k8s")
    assert team.outputs == {"namespace": "research"}


def test_the_workload_service_account(team):
    account = team.one(SERVICE_ACCOUNT, "t-research-trainer")
    assert account.inputs["metadata"] == {"name": "trainer", "namespace": "research"}
    assert account.inputs["automountServiceAccountToken"] is False


def test_the_isolation_is_the_namespaces_children_with_the_teams_group_and_quota(team):
    """The RoleBinding and ResourceQuota were children of a TeamIsolation component: their
    aliases keep their state where they were (one component per team cost as much to plan as
    the objects it held)."""
    parent = urn("tpu-pathways:teams:TeamNamespace", "t-research")
    binding = team.one(
        "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding", "t-research-isolation-edit"
    )
    assert binding.inputs["subjects"][0]["name"] == "ml-research@example.com"
    quota = team.one("kubernetes:core/v1:ResourceQuota", "t-research-isolation-quota")
    assert quota.inputs["spec"]["hard"]["pods"] == "10"
    for resource, type_ in (
        (binding, "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"),
        (quota, "kubernetes:core/v1:ResourceQuota"),
    ):
        assert resource.parent == parent
        # the URN the engine gave it: the root stack's type is no part of a URN (pulumi/pulumi
        # pkg/resource/deploy deployment.go generateURN), unlike this mock engine's URNs
        former = (
            f"urn:pulumi:test::tpu-pathways::tpu-pathways:teams:TeamNamespace${ISOLATION}"
            f"${type_}::{resource.name}"
        )
        assert resource.options["aliases"] == [{"urn": former}]
    assert team.of_type(ISOLATION) == []
