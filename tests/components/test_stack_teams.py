"""Team namespaces and the Kubernetes service account each team's workloads run as."""

from __future__ import annotations

import pytest

NAMESPACE = "kubernetes:core/v1:Namespace"
SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"
K8S_PROVIDER = "pulumi:providers:kubernetes"


@pytest.fixture(scope="module")
def teams(plan_of, stack_values):
    return plan_of(
        stack_values(teams=[{"name": "research"}, {"name": "serving", "serviceAccount": "infer"}])
    )


def test_a_namespace_per_team(teams):
    namespaces = {r.inputs["metadata"]["name"]: r for r in teams.by_type(NAMESPACE)}
    assert set(namespaces) == {"research", "serving"}
    for name, namespace in namespaces.items():
        assert namespace.inputs["metadata"]["labels"] == {"tpu-pathways/team": name}


def test_a_service_account_per_team_in_its_namespace(teams):
    accounts = {
        (r.inputs["metadata"]["namespace"], r.inputs["metadata"]["name"])
        for r in teams.by_type(SERVICE_ACCOUNT)
    }
    assert accounts == {("research", "pathways"), ("serving", "infer")}


def test_service_accounts_wait_for_their_namespace(teams):
    namespaces = {r.inputs["metadata"]["name"]: r.urn for r in teams.by_type(NAMESPACE)}
    for account in teams.by_type(SERVICE_ACCOUNT):
        assert namespaces[account.inputs["metadata"]["namespace"]] in account.dependencies


def test_team_objects_use_the_explicit_provider(teams):
    (provider,) = teams.by_type(K8S_PROVIDER)
    for r in [*teams.by_type(NAMESPACE), *teams.by_type(SERVICE_ACCOUNT)]:
        assert r.provider == provider.urn


def test_team_namespaces_output(teams):
    assert teams.outputs["team_namespaces"] == {"research": "research", "serving": "serving"}


def test_default_team(plan_of, stack_values):
    plan = plan_of(stack_values())
    assert [r.inputs["metadata"]["name"] for r in plan.by_type(NAMESPACE)] == ["pathways"]
    (account,) = plan.by_type(SERVICE_ACCOUNT)
    assert account.inputs["metadata"] == {"name": "pathways", "namespace": "pathways"}


def test_duplicate_team_names_are_an_error(stack_values, config_error):
    error = config_error(
        stack_values(teams=[{"name": "ml"}, {"name": "ml", "serviceAccount": "x"}])
    )
    assert [i.key for i in error.issues] == ["teams[0].name", "teams[1].name"]
    assert "'ml' is used by more than one team" in error.issues[0].message


def test_duplicate_team_names_exit_2_before_registering(cli_plan, stack_values):
    code, _, err, registered = cli_plan(stack_values(teams=[{"name": "ml"}, {"name": "ml"}]))
    assert code == 2
    assert "teams[1].name" in err and "used by more than one team" in err
    assert registered == 0


@pytest.mark.parametrize(
    ("team", "key"),
    [
        ({"name": "ML"}, "teams[0].name"),
        ({"name": "ml-"}, "teams[0].name"),
        ({"name": "ml", "serviceAccount": "Trainer"}, "teams[0].serviceAccount"),
    ],
)
def test_team_names_are_dns_labels(stack_values, config_error, team, key):
    error = config_error(stack_values(teams=[team]))
    assert key in [i.key for i in error.issues]
