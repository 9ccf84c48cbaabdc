"""Team namespaces and the Kubernetes service account each team's workloads run as."""

from __future__ import annotations

import pytest

from tests.components.harness import team_namespace_labels

NAMESPACE = "kubernetes:core/v1:Namespace"
SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"
K8S_PROVIDER = "pulumi:providers:kubernetes"
ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
QUOTA = "kubernetes:core/v1:ResourceQuota"
VAP = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"


def team_accounts(plan):
    """The service accounts in team namespaces (the controllers' metrics scrapers live in
    theirs)."""
    teams = {r.inputs["metadata"]["name"] for r in plan.by_type(NAMESPACE)}
    return [r for r in plan.by_type(SERVICE_ACCOUNT) if r.inputs["metadata"]["namespace"] in teams]


@pytest.fixture(scope="module")
def teams(plan_of, stack_values):
    return plan_of(
        stack_values(teams=[{"name": "research"}, {"name": "serving", "serviceAccount": "infer"}])
    )


def test_a_namespace_per_team(teams):
    """Two teams that declared nothing and have no pools of their own: no host network for
    either (neither may share the other's node identity), so Pod Security baseline is enforced;
    the labels are the shared admission policies' parameters."""
    namespaces = {r.inputs["metadata"]["name"]: r for r in teams.by_type(NAMESPACE)}
    assert set(namespaces) == {"research", "serving"}
    for name, namespace in namespaces.items():
        assert namespace.inputs["metadata"]["labels"] == team_namespace_labels(
            name,
            enforce="baseline",
            host_network="none",
            priority_classes="very-low.low.medium.high",
        )


def test_a_service_account_per_team_in_its_namespace(teams):
    accounts = {
        (r.inputs["metadata"]["namespace"], r.inputs["metadata"]["name"])
        for r in team_accounts(teams)
    }
    assert accounts == {("research", "pathways"), ("serving", "infer")}


def test_service_accounts_wait_for_their_namespace(teams):
    namespaces = {r.inputs["metadata"]["name"]: r.urn for r in teams.by_type(NAMESPACE)}
    for account in team_accounts(teams):
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
    (account,) = team_accounts(plan)
    assert account.inputs["metadata"] == {"name": "pathways", "namespace": "pathways"}
    assert account.inputs["automountServiceAccountToken"] is False
    # isolated by default: the shared pod, Job, JobSet, NetworkPolicy and Service policies, a
    # NetworkPolicy, a quota
    # with the team's share of the chips (the one v5e-8 slice: 8); no group, so no RoleBinding
    # in the team's namespace (the controllers' metrics collector has its own, in theirs)
    assert [
        r for r in plan.by_type(ROLE_BINDING) if r.inputs["metadata"]["namespace"] == "pathways"
    ] == []
    # and pods, CPU and memory at most what the shared pools hold: 3 n2-standard-64 nodes
    # (63.77 cores, 244.02 GiB allocatable each) and 2 ct5lp-hightpu-4t hosts (111.73 cores,
    # 181.30 GiB), 110 pods a node
    quotas = {q.inputs["metadata"]["name"]: q for q in plan.by_type(QUOTA)}
    quota, compute = quotas["pathways-quota"], quotas["pathways-compute"]
    assert quota.inputs["spec"] == {
        "hard": {
            "pods": "550",
            "requests.google.com/tpu": "8",
            "services.loadbalancers": "0",
            "services.nodeports": "0",
            "count/ingresses.networking.k8s.io": "0",
        }
    }
    assert compute.inputs["spec"] == {
        "hard": {"requests.cpu": "414", "requests.memory": "1094Gi"},
        "scopes": ["NotBestEffort"],
    }
    assert len(plan.by_type(VAP)) == 5
    # alone on the cluster's pools: its Pathways pods may use the host network there
    (namespace,) = plan.by_type(NAMESPACE)
    labels = namespace.inputs["metadata"]["labels"]
    assert labels["tpu-pathways/host-network"] == "alone"
    assert labels["pod-security.kubernetes.io/enforce"] == "privileged"


def test_a_teams_group_and_quota(plan_of, stack_values):
    team = {
        "name": "research",
        "group": "ml-research@example.com",
        "resourceQuota": {"pods": 50, "cpu": 640, "memoryGib": 2048, "tpuChips": 32},
    }
    cluster = {"securityGroup": "gke-security-groups@example.com"}
    plan = plan_of(stack_values(teams=[team], cluster=cluster))
    (binding,) = [
        r for r in plan.by_type(ROLE_BINDING) if r.inputs["metadata"]["namespace"] == "research"
    ]
    assert binding.inputs["subjects"] == [
        {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "Group",
            "name": "ml-research@example.com",
        }
    ]
    quotas = {q.inputs["metadata"]["name"]: q for q in plan.by_type(QUOTA)}
    quota, compute = quotas["research-quota"], quotas["research-compute"]
    assert quota.inputs["spec"]["hard"] == {
        "pods": "50",
        "requests.google.com/tpu": "32",
        "services.loadbalancers": "0",
        "services.nodeports": "0",
        "count/ingresses.networking.k8s.io": "0",
    }
    assert compute.inputs["spec"]["hard"] == {"requests.cpu": "640", "requests.memory": "2048Gi"}
    (cluster_resource,) = plan.by_type("gcp:container/cluster:Cluster")
    assert cluster_resource.inputs["authenticatorGroupsConfig"] == {
        "securityGroup": "gke-security-groups@example.com"
    }


def test_a_group_needs_the_clusters_security_group(stack_values, config_error):
    error = config_error(stack_values(teams=[{"name": "ml", "group": "ml@example.com"}]))
    assert [i.key for i in error.issues] == ["teams[0].group"]
    assert "cluster.securityGroup" in error.issues[0].message


@pytest.mark.parametrize(
    ("values", "key"),
    [
        ({"teams": [{"name": "ml", "group": "not-an-email"}]}, "teams[0].group"),
        ({"teams": [{"name": "ml", "resourceQuota": {"pods": 0}}]}, "teams[0].resourceQuota.pods"),
        ({"cluster": {"securityGroup": "admins@example.com"}}, "cluster.securityGroup"),
        (
            {"cluster": {"imageRepositories": ["us-docker.pkg.dev/p/r"]}},
            "cluster.imageRepositories[0]",
        ),
        (
            {"cluster": {"secretsEncryption": {"kmsKey": "my-key"}}},
            "cluster.secretsEncryption.kmsKey",
        ),
    ],
)
def test_isolation_keys_are_checked(stack_values, config_error, values, key):
    error = config_error(stack_values(**values))
    assert key in [i.key for i in error.issues]


def test_production_requires_a_kms_key_for_secrets(stack_values, config_error):
    values = stack_values(environment="production")
    del values["cluster"]["secretsEncryption"]
    error = config_error(values)
    assert [i.key for i in error.issues] == ["cluster.secretsEncryption"]
    assert "required in production" in error.issues[0].message


@pytest.mark.parametrize(
    ("location", "regional", "allowed"),
    [
        ("europe-west4", True, "the cluster's region 'us-west4'"),
        ("global", True, "the cluster's region 'us-west4'"),
        ("us", False, "'us-west4', the region of the cluster's zone 'us-west4-a'"),
    ],
)
def test_a_kms_key_outside_the_clusters_region_is_refused(
    stack_values, config_error, location, regional, allowed
):
    # GKE, "Encrypt secrets at the application layer": the key is in the cluster's location.
    key = f"projects/tpu-pathways-dev/locations/{location}/keyRings/gke/cryptoKeys/secrets"
    values = stack_values(cluster={"regional": regional, "secretsEncryption": {"kmsKey": key}})
    error = config_error(values)
    assert [(i.key, i.message) for i in error.issues] == [
        (
            "cluster.secretsEncryption.kmsKey",
            f"{key!r} is in location {location!r}; GKE encrypts Secrets only with a key in the "
            f"cluster's location, so its key ring must be in {allowed} (not 'global' nor a "
            "multi-region): projects/<project>/locations/us-west4/keyRings/<ring>/cryptoKeys/"
            "<key>",
        )
    ]


@pytest.mark.parametrize("regional", [True, False])
def test_a_kms_key_in_the_clusters_region_is_accepted(stack_values, config_of, regional):
    key = "projects/keys-project/locations/us-west4/keyRings/gke/cryptoKeys/secrets"
    values = stack_values(cluster={"regional": regional, "secretsEncryption": {"kmsKey": key}})
    assert config_of(values).cluster.secrets_encryption.kms_key == key


def test_a_malformed_kms_key_is_quoted_in_the_report(stack_values, config_error):
    # Under a key named secretsEncryption, but a key's resource name is no credential.
    error = config_error(stack_values(cluster={"secretsEncryption": {"kmsKey": "my-key"}}))
    assert [(i.key, i.message) for i in error.issues] == [
        (
            "cluster.secretsEncryption.kmsKey",
            "'my-key' is not a Cloud KMS key: projects/<project>/locations/<location>/"
            "keyRings/<ring>/cryptoKeys/<key>",
        )
    ]


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
