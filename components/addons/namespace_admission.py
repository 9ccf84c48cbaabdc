"""The admission policies of a team namespace's own objects, beside the pod chain of
``team_admission``: what a member with ``edit`` may not change because the namespace's
isolation stands on it. Pure data (``Policy``), created with the others by
``team_policies.TeamAdmissionPolicies``.

- **NetworkPolicies** are the stack's (``team_isolation``: one per namespace). Kubernetes adds
  up every NetworkPolicy that selects a pod, so one a member adds (``edit`` writes
  networkpolicies: kubernetes/kubernetes plugin/pkg/auth/authorizer/rbac/bootstrappolicy/
  testdata/cluster-roles.yaml, ``system:aggregate-to-edit``) would let the namespace's pods
  send anywhere: to another team's Pathways head at its node's address, to the internet
  through Cloud NAT. Creating, changing or deleting one (DELETE is matched too) is left to
  whoever may change the namespace itself and to the controllers. The first is asked of the
  API server's authorizer (``authorizer``, the CEL authorization library of admission policies,
  Kubernetes 1.28+: staging/src/k8s.io/apiserver/pkg/cel/library/authz.go): ``update`` on the
  Namespace object, which the stack that deploys the namespace holds (it labels it) and ``edit``
  does not (``system:aggregate-to-edit`` writes no namespaces); whoever holds it could take
  the namespace out of every policy by its label anyway. The controllers are
  ``team_admission.trusted``: the namespace controller deletes them with their namespace.
- **Services** claim no ``spec.externalIPs`` (CVE-2020-8554: a Service with an external IP
  intercepts the traffic every pod and node of the cluster sends to that address; ``edit``
  writes Services). The cluster turns the field off as well (``gke.cluster``:
  ``serviceExternalIpsConfig``), which a cluster another tool made may not.
"""

from __future__ import annotations

from components.addons.pod_security import Check
from components.addons.team_admission import Policy, ResourceRule, trusted

NAMESPACE_WRITER = (
    "authorizer.group('').resource('namespaces').name(request.namespace).check('update').allowed()"
)
"""The requester may update the namespace the request is in (its labels: its policies)."""


def service_policy(name: str) -> Policy:
    """Services of a team namespace: no external IPs."""
    return Policy(
        name,
        (ResourceRule("", "v1", ("services",), ("CREATE", "UPDATE")),),
        (),
        (
            Check(
                "!has(object.spec.externalIPs) || size(object.spec.externalIPs) == 0",
                "spec.externalIPs is not allowed: a Service with an external IP intercepts the "
                "traffic every pod and node sends to that address (CVE-2020-8554)",
            ),
        ),
    )


def network_policy_policy(name: str) -> Policy:
    """NetworkPolicies of a team namespace: created, changed and deleted by its deployer or a
    controller only."""
    return Policy(
        name,
        (
            ResourceRule(
                "networking.k8s.io", "v1", ("networkpolicies",), ("CREATE", "UPDATE", "DELETE")
            ),
        ),
        (("trusted", trusted()), ("deployer", NAMESPACE_WRITER)),
        (
            Check(
                "variables.trusted || variables.deployer",
                "a team namespace's NetworkPolicies are its stack's: only who may change the "
                "namespace itself, or a controller, creates, changes or deletes one (one added "
                "would let the namespace's pods send anywhere)",
            ),
        ),
    )
