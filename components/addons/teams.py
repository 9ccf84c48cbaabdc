"""Team namespaces and the Kubernetes service account each team's Pathways pods run as."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.labels import standard_labels


@dataclass(frozen=True)
class TeamNamespaceArgs:
    """Inputs of a ``TeamNamespace``."""

    name: str
    """The team: its namespace's name and its team label."""
    provider: k8s.Provider
    service_account: str = "pathways"
    """The Kubernetes service account the team's workloads run as."""


class TeamNamespace(pulumi.ComponentResource):
    """A team's namespace and the service account its workloads run as."""

    namespace: pulumi.Output[str]

    def __init__(
        self, name: str, args: TeamNamespaceArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:teams:TeamNamespace", name, None, opts)
        team = args
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        namespace = k8s.core.v1.Namespace(
            name,
            metadata=k8s.meta.v1.ObjectMetaArgs(name=team.name, labels=standard_labels(team.name)),
            opts=child,
        )
        k8s.core.v1.ServiceAccount(
            f"{name}-{team.service_account}",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=team.service_account, namespace=namespace.metadata.name
            ),
            opts=child,
        )
        self.namespace = namespace.metadata.name
        self.register_outputs({"namespace": self.namespace})
