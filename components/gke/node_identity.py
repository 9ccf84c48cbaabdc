"""The dedicated, least-privilege service account every node of the cluster runs as.

GKE nodes otherwise run as the Compute Engine default service account, which has Editor on the
project. Nodes only need to write logs and metrics and pull images.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components.vocabulary import node_account_id

# Roles GKE documents for a minimally privileged node service account, plus image pulls.
NODE_ROLES: tuple[str, ...] = (
    "roles/logging.logWriter",
    "roles/monitoring.metricWriter",
    "roles/monitoring.viewer",
    "roles/stackdriver.resourceMetadata.writer",
    "roles/autoscaling.metricsWriter",
    "roles/artifactregistry.reader",
)


@dataclass(frozen=True)
class NodeServiceAccountArgs:
    """Inputs of a ``NodeServiceAccount``: the project it lives in and the cluster it serves."""

    project: str
    cluster_name: str
    """The GKE cluster's name: the account ID is derived from it (``<name>-nodes``)."""


class NodeServiceAccount(pulumi.ComponentResource):
    """A service account for the cluster's nodes with the roles GKE nodes need, and no more."""

    email: pulumi.Output[str]

    def __init__(
        self, name: str, args: NodeServiceAccountArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:iam:NodeServiceAccount", name, None, opts)
        project, cluster_name = args.project, args.cluster_name
        account = gcp.serviceaccount.Account(
            name,
            project=project,
            account_id=node_account_id(cluster_name),
            display_name=f"GKE nodes of {cluster_name}",
            opts=pulumi.ResourceOptions(parent=self),
        )
        member = account.email.apply(lambda email: f"serviceAccount:{email}")
        for role in NODE_ROLES:
            gcp.projects.IAMMember(
                f"{name}-{role.removeprefix('roles/').replace('.', '-')}",
                project=project,
                role=role,
                member=member,
                opts=pulumi.ResourceOptions(parent=self),
            )
        self.email = account.email
        self.register_outputs({"email": self.email})
