"""Team namespaces and the Kubernetes service account each team's Pathways pods run as."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from components.addons.team_isolation import TeamIsolation, TeamIsolationArgs, TeamQuota
from components.labels import standard_labels

# Pod Security admission's namespace labels (kubernetes.io/docs/concepts/security/
# pod-security-admission). Pathways pods need hostNetwork and a hostPath, which `baseline`
# forbids, so only `privileged` can be enforced; TeamIsolation's admission policy enforces the
# rest. `warn` shows users what `baseline` would refuse, `audit` logs what `restricted` would.
POD_SECURITY = "pod-security.kubernetes.io"
POD_SECURITY_LABELS = {
    f"{POD_SECURITY}/enforce": "privileged",
    f"{POD_SECURITY}/enforce-version": "latest",
    f"{POD_SECURITY}/warn": "baseline",
    f"{POD_SECURITY}/warn-version": "latest",
    f"{POD_SECURITY}/audit": "restricted",
    f"{POD_SECURITY}/audit-version": "latest",
}


@dataclass(frozen=True)
class TeamNamespaceArgs:
    """Inputs of a ``TeamNamespace``."""

    name: str
    """The team: its namespace's name and its team label."""
    provider: k8s.Provider
    service_account: str = "pathways"
    """The Kubernetes service account the team's workloads run as."""
    group: str | None = None
    """The Google group that gets ``edit`` in the namespace (None: no one is bound)."""
    quota: TeamQuota = field(default_factory=TeamQuota)


class TeamNamespace(pulumi.ComponentResource):
    """A team's namespace, the service account its workloads run as and what isolates it."""

    namespace: pulumi.Output[str]

    def __init__(
        self, name: str, args: TeamNamespaceArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:teams:TeamNamespace", name, None, opts)
        team = args
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        namespace = k8s.core.v1.Namespace(
            name,
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=team.name, labels={**standard_labels(team.name), **POD_SECURITY_LABELS}
            ),
            opts=child,
        )
        # Pathways pods reach GCP as the node's service account (host network), and nothing of
        # theirs calls the Kubernetes API: no token is mounted unless a pod asks for one.
        k8s.core.v1.ServiceAccount(
            f"{name}-{team.service_account}",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=team.service_account, namespace=namespace.metadata.name
            ),
            automount_service_account_token=False,
            opts=child,
        )
        TeamIsolation(
            f"{name}-isolation",
            TeamIsolationArgs(
                team=team.name,
                namespace=namespace.metadata.name,
                provider=args.provider,
                group=team.group,
                quota=team.quota,
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.namespace = namespace.metadata.name
        self.register_outputs({"namespace": self.namespace})
