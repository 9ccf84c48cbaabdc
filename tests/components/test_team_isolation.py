"""TeamIsolation from its Args: the pod admission policy bound to the team's namespace, the
group's RoleBinding, default-deny NetworkPolicies and the ResourceQuota."""

from __future__ import annotations

import pytest

from components.addons.team_isolation import TeamIsolation, TeamIsolationArgs, TeamQuota
from tests.components.harness import k8s_provider, register, urn

VAP = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"
VAP_BINDING = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding"
ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
QUOTA = "kubernetes:core/v1:ResourceQuota"
LABELS = {"tpu-pathways/team": "research"}
PARENT = "tpu-pathways:teams:TeamIsolation"


def isolation(**more):
    def build():
        args = TeamIsolationArgs("research", "research", k8s_provider(), **more)
        return {"policy": TeamIsolation("iso", args).policy_name}

    return register(build)


@pytest.fixture(scope="module")
def team():
    return isolation(
        group="ml-research@example.com",
        quota=TeamQuota(pods=40, cpu=512, memory_gib=4096, tpu_chips=64),
    )


def test_the_pod_policy(team):
    policy = team.one(VAP, "iso-pod-policy")
    assert policy.inputs["metadata"] == {"name": "tpu-pathways-pods-research", "labels": LABELS}
    spec = policy.inputs["spec"]
    assert spec["failurePolicy"] == "Fail"
    assert spec["matchConstraints"] == {
        "resourceRules": [
            {
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "operations": ["CREATE"],
                "resources": ["pods"],
            },
            {
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "operations": ["UPDATE"],
                "resources": ["pods/ephemeralcontainers"],
            },
        ]
    }
    assert [v["message"] for v in spec["validations"]] == [
        "hostNetwork is allowed only for Pathways pods (pods of a JobSet's Job)",
        "hostPID is not allowed",
        "hostIPC is not allowed",
        "hostPath volumes other than /tmp are not allowed",
        "privileged containers are not allowed",
        "adding Linux capabilities is not allowed",
        "an unmasked /proc (procMount) is not allowed",
        "an Unconfined seccomp profile is not allowed",
        "hostPort is allowed only with the host network of a Pathways pod",
    ]
    assert spec["validations"][1]["expression"] == (
        "!has(object.spec.hostPID) || !object.spec.hostPID"
    )
    assert spec["validations"][3]["expression"] == (
        "!has(object.spec.volumes) || object.spec.volumes.all(v, !has(v.hostPath) || "
        "v.hostPath.path == '/tmp')"
    )
    # every expression reads the pod alone: no params, no old object, no request
    for validation in spec["validations"]:
        assert "params" not in validation["expression"]
        assert "oldObject" not in validation["expression"]
        assert "request" not in validation["expression"]
    assert "matchConditions" not in spec
    assert team.outputs == {"policy": "tpu-pathways-pods-research"}


def test_the_policy_binding_denies_in_the_teams_namespace_only(team):
    binding = team.one(VAP_BINDING, "iso-pod-policy-binding")
    assert binding.inputs["spec"] == {
        "policyName": "tpu-pathways-pods-research",
        "validationActions": ["Deny"],
        "matchResources": {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "research"}}
        },
    }
    assert team.one(VAP, "iso-pod-policy").urn in binding.dependencies


def test_the_groups_edit_binding(team):
    binding = team.one(ROLE_BINDING, "iso-edit")
    assert binding.inputs == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "research-edit", "namespace": "research", "labels": LABELS},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "edit"},
        "subjects": [
            {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Group",
                "name": "ml-research@example.com",
            }
        ],
    }


def test_default_deny_then_the_namespace_and_dns(team):
    assert team.names(NETWORK_POLICY) == [
        "iso-default-deny",
        "iso-dns",
        "iso-google-apis",
        "iso-same-namespace",
    ]
    deny = team.one(NETWORK_POLICY, "iso-default-deny")
    assert deny.inputs["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    same = team.one(NETWORK_POLICY, "iso-same-namespace")
    assert same.inputs["spec"] == {
        "podSelector": {},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [{"from": [{"podSelector": {}}]}],
        "egress": [{"to": [{"podSelector": {}}]}],
    }
    dns = team.one(NETWORK_POLICY, "iso-dns")
    assert dns.inputs["spec"] == {
        "podSelector": {},
        "policyTypes": ["Egress"],
        "egress": [
            {
                "to": [
                    {
                        "namespaceSelector": {
                            "matchLabels": {"kubernetes.io/metadata.name": "kube-system"}
                        },
                        "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                    }
                ],
                "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
            }
        ],
    }
    assert dns.inputs["metadata"] == {
        "name": "allow-dns",
        "namespace": "research",
        "labels": LABELS,
    }


def test_workload_identity_and_google_apis_but_no_private_range(team):
    apis = team.one(NETWORK_POLICY, "iso-google-apis")
    assert apis.inputs["spec"] == {
        "podSelector": {},
        "policyTypes": ["Egress"],
        "egress": [
            {
                "to": [{"ipBlock": {"cidr": "169.254.169.254/32"}}],
                "ports": [{"protocol": "TCP", "port": 80}],
            },
            {
                "to": [{"ipBlock": {"cidr": "169.254.169.252/32"}}],
                "ports": [{"protocol": "TCP", "port": 988}],
            },
            {
                "to": [
                    {
                        "ipBlock": {
                            "cidr": "0.0.0.0/0",
                            "except": ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"],
                        }
                    }
                ],
                "ports": [{"protocol": "TCP", "port": 443}],
            },
        ],
    }


def test_the_quota(team):
    quota = team.one(QUOTA, "iso-quota")
    assert quota.inputs["metadata"] == {
        "name": "research-quota",
        "namespace": "research",
        "labels": LABELS,
    }
    assert quota.inputs["spec"] == {
        "hard": {
            "pods": "40",
            "requests.cpu": "512",
            "requests.memory": "4096Gi",
            "requests.google.com/tpu": "64",
            "services.loadbalancers": "0",
            "services.nodeports": "0",
        }
    }


def test_everything_is_a_child_on_the_explicit_provider(team):
    for resource in team.resources:
        if resource.type.startswith("kubernetes:"):
            assert resource.parent == urn(PARENT, "iso")
            assert resource.provider == urn("pulumi:providers:kubernetes", "k8s")


def test_no_group_no_binding_and_only_the_service_limits():
    bare = isolation()
    assert bare.of_type(ROLE_BINDING) == []
    assert bare.one(QUOTA, "iso-quota").inputs["spec"] == {
        "hard": {"services.loadbalancers": "0", "services.nodeports": "0"}
    }
