"""The dedicated, least-privilege service account every node of the cluster runs as.

GKE nodes otherwise run as the Compute Engine default service account, which has Editor on the
project. Nodes only need to write logs and metrics and pull images: GKE's predefined
roles/container.defaultNodeServiceAccount holds the first (GKE docs "Use least privileged IAM
service accounts for nodes", 2024+), and image pulls are granted per Artifact Registry repository,
not project-wide.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components.vocabulary import node_account_id, team_node_account_id

# The role GKE documents for a minimally privileged node service account (logs, metrics,
# resource metadata, autoscaling metrics), granted on the project.
NODE_ROLE = "roles/container.defaultNodeServiceAccount"
# Image pulls, granted on each named repository only.
IMAGE_READER_ROLE = "roles/artifactregistry.reader"


@dataclass(frozen=True)
class ImageRepository:
    """An Artifact Registry repository the nodes pull images from."""

    project: str
    location: str
    name: str


@dataclass(frozen=True)
class NodeServiceAccountArgs:
    """Inputs of a ``NodeServiceAccount``: the project it lives in and the cluster it serves."""

    project: str
    cluster_name: str
    """The GKE cluster's name: the account ID is derived from it (``<name>-nodes``)."""
    image_repositories: Sequence[ImageRepository] = ()
    """Repositories the nodes may read (public images, such as Pathways', need no grant)."""
    team: str = ""
    """The team namespace whose dedicated pools the account is for ("" for the shared pools):
    ``<cluster>-<team>-nodes``."""

    @property
    def account_id(self) -> str:
        if self.team:
            return team_node_account_id(self.cluster_name, self.team)
        return node_account_id(self.cluster_name)


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
            account_id=args.account_id,
            display_name=(
                f"GKE nodes of {cluster_name} dedicated to {args.team}"
                if args.team
                else f"GKE nodes of {cluster_name}"
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        member = account.email.apply(lambda email: f"serviceAccount:{email}")
        child = pulumi.ResourceOptions(parent=self)
        gcp.projects.IAMMember(
            f"{name}-default-node-sa", project=project, role=NODE_ROLE, member=member, opts=child
        )
        for repo in args.image_repositories:
            gcp.artifactregistry.RepositoryIamMember(
                f"{name}-pull-{repo.project}-{repo.location}-{repo.name}",
                project=repo.project,
                location=repo.location,
                repository=repo.name,
                role=IMAGE_READER_ROLE,
                member=member,
                opts=child,
            )
        self.account = account
        self.email = account.email
        self.register_outputs({"email": self.email})
