"""Team namespaces and the Kubernetes service account each team's Pathways pods run as."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from components.labels import standard_labels
from components.stack.schema import TeamConfig


class TeamNamespace(pulumi.ComponentResource):
    namespace: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        team: TeamConfig,
        provider: k8s.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tpu-pathways:teams:TeamNamespace", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=provider)
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
