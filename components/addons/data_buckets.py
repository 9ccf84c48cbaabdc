"""Grants on the buckets Pathways jobs read and write besides the scratch bucket (datasets,
prompts, checkpoints).

Every Pathways pod runs on the host network, so for GCS it acts as the node pool's service
account (see ``scratch_bucket``). Each grant is one bucket IAM member for that account, with the
narrowest role that does the job (``gcs_access.ROLES``): objectViewer to read, objectUser to read
and write. Nothing is granted on the project, so the nodes reach only the buckets named here and
the scratch bucket. The buckets themselves belong to whoever owns the data: this component never
creates or deletes one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components.pathways.gcs_access import ROLES, Access


@dataclass(frozen=True)
class DataBucketGrant:
    """One bucket and what the node service account may do with its objects."""

    bucket: str
    access: Access = Access.READ


@dataclass(frozen=True)
class DataBucketGrantsArgs:
    """Inputs of ``DataBucketGrants``: the node service account and the buckets it gets."""

    node_service_account: pulumi.Input[str]
    """Email of the account the cluster's nodes (and so every Pathways pod) run as."""
    grants: Sequence[DataBucketGrant]


class DataBucketGrants(pulumi.ComponentResource):
    """Bucket-scoped roles for the node service account; ``grants`` is what a PathwaysJob that
    reads or writes those buckets must wait for."""

    grants: list[pulumi.Resource]

    def __init__(
        self, name: str, args: DataBucketGrantsArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:storage:DataBucketGrants", name, None, opts)
        member = pulumi.Output.from_input(args.node_service_account).apply(
            lambda email: f"serviceAccount:{email}"
        )
        self.grants = [
            gcp.storage.BucketIAMMember(
                f"{name}-{grant.bucket}",
                gcp.storage.BucketIAMMemberArgs(
                    bucket=grant.bucket, role=ROLES[grant.access], member=member
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )
            for grant in args.grants
        ]
        self.register_outputs(
            {"buckets": {grant.bucket: grant.access.value for grant in args.grants}}
        )
