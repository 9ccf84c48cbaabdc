"""The team namespaces' admission policies, one per kind of the chain a Pathways pod comes from
(``team_admission``: pods, Jobs, JobSets) and per kind of object the namespace's isolation
stands on (``namespace_admission``: NetworkPolicies, Services), created once per cluster by
the stack that owns it and bound to every namespace labelled ``TEAM_NAMESPACE_LABEL`` (its own
and its team stacks'): the API server evaluates each policy once per request, whatever the number of
teams, and a namespace's parameters are its own labels. ValidatingAdmissionPolicy is GA in
admissionregistration.k8s.io/v1 since Kubernetes 1.30.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.addons.namespace_admission import network_policy_policy, service_policy
from components.addons.team_admission import Policy, job_policy, jobset_policy, pod_policy
from components.labels import TEAM_NAMESPACE_LABEL, standard_labels
from components.pathways.spec import PATHWAYS_PORTS

POD_POLICY = "tpu-pathways-team-pods"
JOB_POLICY = "tpu-pathways-team-jobs"
JOBSET_POLICY = "tpu-pathways-team-jobsets"
NETWORK_POLICY_POLICY = "tpu-pathways-team-network-policies"
SERVICE_POLICY = "tpu-pathways-team-services"
TEAM_NAMESPACE_VALUE = "true"


@dataclass(frozen=True)
class TeamAdmissionPoliciesArgs:
    """Inputs of ``TeamAdmissionPolicies``."""

    provider: k8s.Provider
    pathways_ports: Sequence[int] = PATHWAYS_PORTS
    """The ports Pathways pods bind on the host network (allowed as their host ports)."""
    kueue: bool = True
    """The cluster runs Kueue: TPU pods and jobs must go through it."""
    team: str = ""
    """The team label of the policies ("" for none)."""
    system_pool: str | None = None
    """The node pool of the cluster's controllers, which no team pod may select (None: not
    known here, e.g. a cluster another tool made; its taint still keeps team pods off)."""
    depends_on: Sequence[pulumi.Resource] = ()
    """What the policies wait for (the JobSet install: its CRD names a resource they match)."""


def team_policies(args: TeamAdmissionPoliciesArgs) -> list[Policy]:
    return [
        pod_policy(POD_POLICY, args.pathways_ports, args.kueue, args.system_pool),
        job_policy(JOB_POLICY, args.kueue),
        jobset_policy(JOBSET_POLICY, args.kueue),
        network_policy_policy(NETWORK_POLICY_POLICY),
        service_policy(SERVICE_POLICY),
    ]


class TeamAdmissionPolicies(pulumi.ComponentResource):
    """Each policy of ``team_policies`` and its binding to every team namespace, denying what
    fails (``failurePolicy: Fail``: an evaluation error denies too)."""

    def __init__(
        self,
        name: str,
        args: TeamAdmissionPoliciesArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tpu-pathways:teams:TeamAdmissionPolicies", name, None, opts)
        child = pulumi.ResourceOptions(
            parent=self, provider=args.provider, depends_on=list(args.depends_on)
        )
        labels = standard_labels(args.team)
        for policy in team_policies(args):
            admission_policy(f"{name}-{policy.name}", policy, labels, child)
        self.register_outputs({})


def admission_policy(
    resource_name: str, policy: Policy, labels: dict[str, str], opts: pulumi.ResourceOptions
) -> None:
    """``policy`` and its binding to every team namespace (``Deny``, ``failurePolicy: Fail``;
    the one home of both for the team and the fleet manager's policies)."""
    admission = k8s.admissionregistration.v1
    created = admission.ValidatingAdmissionPolicy(
        resource_name,
        metadata=k8s.meta.v1.ObjectMetaArgs(name=policy.name, labels=labels),
        spec=admission.ValidatingAdmissionPolicySpecArgs(
            failure_policy="Fail",
            match_constraints=admission.MatchResourcesArgs(
                resource_rules=[
                    admission.NamedRuleWithOperationsArgs(
                        api_groups=[rule.api_group],
                        api_versions=[rule.api_version],
                        operations=list(rule.operations),
                        resources=list(rule.resources),
                    )
                    for rule in policy.rules
                ]
            ),
            variables=[
                admission.VariableArgs(name=name, expression=expression)
                for name, expression in policy.variables
            ]
            or None,
            validations=[
                admission.ValidationArgs(expression=check.expression, message=check.message)
                for check in policy.validations
            ],
        ),
        opts=opts,
    )
    bound = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[created]))
    admission.ValidatingAdmissionPolicyBinding(
        f"{resource_name}-binding",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=policy.name, labels=labels),
        spec=admission.ValidatingAdmissionPolicyBindingSpecArgs(
            policy_name=policy.name,
            validation_actions=["Deny"],
            match_resources=admission.MatchResourcesArgs(
                namespace_selector=k8s.meta.v1.LabelSelectorArgs(
                    match_labels={TEAM_NAMESPACE_LABEL: TEAM_NAMESPACE_VALUE}
                )
            ),
        ),
        opts=bound,
    )
