"""Team namespaces and the Kubernetes service account each team's Pathways pods run as."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from components.addons.pod_security import BASELINE_VERSION
from components.addons.team_admission import PRIORITY_SEPARATOR
from components.addons.team_isolation import TeamIsolationArgs, TeamQuota, isolate
from components.addons.team_policies import TEAM_NAMESPACE_VALUE
from components.labels import (
    HOST_NETWORK_LABEL,
    PRIORITY_CLASSES_LABEL,
    TEAM_NAMESPACE_LABEL,
    standard_labels,
)
from components.vocabulary import (
    TEAM_PRIORITY_CLASSES,
    DnsProvider,
    GoogleApiEgress,
    HostNetworkPlacement,
)

# Pod Security admission's namespace labels (kubernetes.io/docs/concepts/security/
# pod-security-admission), pinned to the minor the admission policies follow. A namespace whose
# pods stay off the host network enforces `baseline`; one given host-network Pathways pods can
# only enforce `privileged` (baseline forbids the host network and hostPath), and the shared
# admission policies enforce baseline there for everything else. Every namespace warns and
# audits at `restricted`.
POD_SECURITY = "pod-security.kubernetes.io"


def pod_security_labels(host_network: HostNetworkPlacement) -> dict[str, str]:
    enforce = "baseline" if host_network is HostNetworkPlacement.NONE else "privileged"
    return {
        f"{POD_SECURITY}/{mode}{suffix}": value
        for mode, level in (("enforce", enforce), ("warn", "restricted"), ("audit", "restricted"))
        for suffix, value in (("", level), ("-version", BASELINE_VERSION))
    }


TEAM_NAMESPACE_TYPE = "tpu-pathways:teams:TeamNamespace"


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
    host_network: HostNetworkPlacement = HostNetworkPlacement.NONE
    """Where its host-network pods may run (none: Pod Security baseline is enforced)."""
    priority_classes: Sequence[str] = tuple(p.value for p in TEAM_PRIORITY_CLASSES)
    """The PriorityClasses its pods and jobs may name (default: all but very-high)."""
    dns: DnsProvider = DnsProvider.CLOUD_DNS
    google_apis: GoogleApiEgress = GoogleApiEgress.PRIVATE_ACCESS

    def labels(self) -> dict[str, str]:
        """The namespace's labels: its team, Pod Security, and the parameters the shared
        admission policies read."""
        labels = {
            **standard_labels(self.name),
            **pod_security_labels(self.host_network),
            TEAM_NAMESPACE_LABEL: TEAM_NAMESPACE_VALUE,
            HOST_NETWORK_LABEL: self.host_network.value,
        }
        if self.priority_classes:
            labels[PRIORITY_CLASSES_LABEL] = PRIORITY_SEPARATOR.join(self.priority_classes)
        return labels


class TeamNamespace(pulumi.ComponentResource):
    """A team's namespace, the service account its workloads run as and what isolates it."""

    namespace: pulumi.Output[str]

    def __init__(
        self, name: str, args: TeamNamespaceArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(TEAM_NAMESPACE_TYPE, name, None, opts)
        team = args
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        namespace = k8s.core.v1.Namespace(
            name,
            metadata=k8s.meta.v1.ObjectMetaArgs(name=team.name, labels=team.labels()),
            opts=child,
        )
        # Pathways pods reach GCP as the node's service account (host network), and nothing of
        # theirs calls the Kubernetes API: no token is mounted unless a pod asks for one. The
        # namespace's objects name it plainly and wait for it (no Output chain per object: a
        # cluster may hold a thousand team namespaces).
        after = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[namespace]))
        k8s.core.v1.ServiceAccount(
            f"{name}-{team.service_account}",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=team.service_account, namespace=team.name),
            automount_service_account_token=False,
            opts=after,
        )
        isolate(
            f"{name}-isolation",
            TeamIsolationArgs(
                team=team.name,
                namespace=team.name,
                provider=args.provider,
                group=team.group,
                quota=team.quota,
                dns=team.dns,
                google_apis=team.google_apis,
            ),
            parent=self,
            namespace=namespace,
            parent_types=TEAM_NAMESPACE_TYPE if opts is None or opts.parent is None else None,
        )
        self.namespace = namespace.metadata.name
        self.register_outputs({"namespace": self.namespace})
