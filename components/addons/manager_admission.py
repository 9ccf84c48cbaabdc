"""The admission policies of a fleet manager's team namespaces: nothing of a team runs on the
manager. Its only pool is the system pool, where Kueue holds every worker's token (kubeconfig
Secrets in kueue-system); a team's work is a JobSet MultiKueue dispatches to a worker.

- **Pods**: none is created in a team namespace, by anyone: a member's own, and those the
  controllers create on a member's behalf (a Deployment's ReplicaSet, a Job's, a DaemonSet's,
  an unlabelled JobSet's Jobs) alike, since those controllers' service accounts act for whoever
  wrote the object. The namespace's ResourceQuota (``pods: 0``, ``stack.fleet``) says the same
  to the quota admission; this policy says why, to the member, at their own request.
- **JobSets**: every one carries ``spec.managedBy: kueue.x-k8s.io/multikueue`` and names a
  LocalQueue of its namespace (``kueue.x-k8s.io/queue-name``), at creation and at every update.
  The JobSet controller skips a JobSet managed by another controller (kubernetes-sigs/jobset
  v0.10.1 pkg/controllers/jobset_controller.go ``managedByExternalController``; the field is
  immutable, api/jobset/v1alpha2 jobset_types.go), so the manager creates no Job of it: Kueue
  admits its Workload on the manager, MultiKueue copies the JobSet to a worker with
  ``managedBy`` cleared (kubernetes-sigs/kueue v0.17.1 pkg/controller/jobs/jobset/
  jobset_multikueue_adapter.go ``SyncJob``) and only there do its pods run. Every LocalQueue of
  the manager points at a ClusterQueue with a MultiKueue AdmissionCheck (``multikueue``); a
  JobSet on no such queue would sit on the manager and, unmanaged, be run by nobody, so it is
  refused rather than left there.
- **NetworkPolicies** and **Services**: as in every team namespace (``namespace_admission``).

Pure data (``Policy``) and the component that creates them, bound to every team namespace
(``TEAM_NAMESPACE_LABEL``) through ``team_policies.admission_policy``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.addons.namespace_admission import network_policy_policy, service_policy
from components.addons.pod_security import Check, cel_list
from components.addons.team_admission import Policy, ResourceRule
from components.addons.team_policies import (
    NETWORK_POLICY_POLICY,
    SERVICE_POLICY,
    admission_policy,
)
from components.labels import QUEUE_LABEL, standard_labels
from components.pathways.multikueue_model import MULTIKUEUE_CONTROLLER

MANAGER_POD_POLICY = "tpu-pathways-manager-pods"
MANAGER_JOBSET_POLICY = "tpu-pathways-manager-jobsets"


def manager_pod_policy(name: str) -> Policy:
    """No pod is created in a manager's team namespace, whoever asks."""
    return Policy(
        name,
        (ResourceRule("", "v1", ("pods",), ("CREATE",)),),
        (),
        (
            Check(
                "request.operation != 'CREATE'",
                "no pod runs in a team namespace of the fleet's manager (it holds every "
                "worker's token): queue a JobSet on the namespace's LocalQueue with "
                f"spec.managedBy {MULTIKUEUE_CONTROLLER}, and MultiKueue runs it on a worker",
            ),
        ),
    )


def _queues(queues: Mapping[str, Sequence[str]]) -> str:
    """A CEL map literal: each team namespace -> its LocalQueues on the manager."""
    entries = [f"'{ns}': {cel_list(sorted(names))}" for ns, names in sorted(queues.items())]
    return "{" + ", ".join(entries) + "}"


def manager_jobset_policy(name: str, queues: Mapping[str, Sequence[str]]) -> Policy:
    """A JobSet of a manager's team namespace is MultiKueue's and on a LocalQueue of its
    namespace (``queues``: each namespace's)."""
    labelled = (
        f"has(object.metadata.labels) && '{QUEUE_LABEL}' in object.metadata.labels && "
        "request.namespace in variables.queues && "
        f"object.metadata.labels['{QUEUE_LABEL}'] in variables.queues[request.namespace]"
    )
    return Policy(
        name,
        (ResourceRule("jobset.x-k8s.io", "v1alpha2", ("jobsets",), ("CREATE", "UPDATE")),),
        (("queues", _queues(queues)),),
        (
            Check(
                f"has(object.spec.managedBy) && object.spec.managedBy == '{MULTIKUEUE_CONTROLLER}'",
                f"a JobSet on the fleet's manager has spec.managedBy {MULTIKUEUE_CONTROLLER}: "
                "MultiKueue runs it on a worker, never the manager",
            ),
            Check(
                labelled,
                "a JobSet on the fleet's manager names a LocalQueue of its namespace "
                f"({QUEUE_LABEL}): Kueue dispatches it from there to the team's workers",
            ),
        ),
    )


@dataclass(frozen=True)
class ManagerAdmissionPoliciesArgs:
    """Inputs of ``ManagerAdmissionPolicies``."""

    provider: k8s.Provider
    queues: Mapping[str, Sequence[str]]
    """Each team namespace's LocalQueues on the manager."""
    depends_on: Sequence[pulumi.Resource] = ()
    """What the policies wait for (the JobSet install: its CRD names a resource they match)."""


def manager_policies(args: ManagerAdmissionPoliciesArgs) -> list[Policy]:
    """The manager's own pod and JobSet policies, and the namespace objects' policies every
    team namespace has (``namespace_admission``)."""
    return [
        manager_pod_policy(MANAGER_POD_POLICY),
        manager_jobset_policy(MANAGER_JOBSET_POLICY, args.queues),
        network_policy_policy(NETWORK_POLICY_POLICY),
        service_policy(SERVICE_POLICY),
    ]


class ManagerAdmissionPolicies(pulumi.ComponentResource):
    """Each policy of ``manager_policies`` and its binding to every team namespace."""

    def __init__(
        self,
        name: str,
        args: ManagerAdmissionPoliciesArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tpu-pathways:fleet:ManagerAdmissionPolicies", name, None, opts)
        child = pulumi.ResourceOptions(
            parent=self, provider=args.provider, depends_on=list(args.depends_on)
        )
        for policy in manager_policies(args):
            admission_policy(f"{name}-{policy.name}", policy, standard_labels(""), child)
        self.register_outputs({})
