"""The Pathways scratch bucket (every PathwaysJob's ``pathwaysDir``) and who may write to it.

Upstream requires the bucket to exist before a job starts. Access is granted to the team's
Kubernetes service account directly through Workload Identity Federation for GKE (a
``principal://`` member), so no Google service account key or impersonation is involved, and
only this bucket is reachable.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_gcp as gcp

from components.config import StackConfig, TeamConfig

OBJECT_READ_WRITE = "roles/storage.objectUser"


def workload_identity_principal(
    project_number: str, project_id: str, namespace: str, service_account: str
) -> str:
    pool = f"{project_id}.svc.id.goog"
    return (
        f"principal://iam.googleapis.com/projects/{project_number}/locations/global/"
        f"workloadIdentityPools/{pool}/subject/ns/{namespace}/sa/{service_account}"
    )


class ScratchBucket(pulumi.ComponentResource):
    bucket_name: pulumi.Output[str]
    url: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        config: StackConfig,
        teams: Sequence[TeamConfig],
        cluster_ready: Sequence[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tpu-pathways:storage:ScratchBucket", name, None, opts)
        cfg, project = config.scratch_bucket, config.gcp.project
        if cfg.create:
            bucket = gcp.storage.Bucket(
                name,
                name=config.bucket_name,
                project=project,
                location=config.gcp.region.upper(),
                uniform_bucket_level_access=True,
                public_access_prevention="enforced",
                force_destroy=cfg.delete_on_destroy,
                lifecycle_rules=[
                    gcp.storage.BucketLifecycleRuleArgs(
                        action=gcp.storage.BucketLifecycleRuleActionArgs(type="Delete"),
                        condition=gcp.storage.BucketLifecycleRuleConditionArgs(
                            age=cfg.retention_days
                        ),
                    )
                ],
                labels={"managed-by": "tpu-pathways", "purpose": "pathways-scratch"},
                opts=pulumi.ResourceOptions(
                    parent=self,
                    protect=config.protects_state,
                    # Scratch state outlives a `pulumi destroy` unless the stack opts in.
                    retain_on_delete=not cfg.delete_on_destroy,
                ),
            )
            bucket_name: pulumi.Input[str] = bucket.name
        else:
            bucket_name = config.bucket_name

        project_number = gcp.organizations.get_project_output(project_id=project).number
        for team, account in _workload_accounts(teams):
            member = project_number.apply(
                lambda number, team=team, account=account: workload_identity_principal(
                    number, project, team, account
                )
            )
            gcp.storage.BucketIAMMember(
                f"{name}-{team}-{account}",
                bucket=bucket_name,
                role=OBJECT_READ_WRITE,
                member=member,
                # The workload identity pool exists once the cluster does.
                opts=pulumi.ResourceOptions(parent=self, depends_on=list(cluster_ready)),
            )
        self.bucket_name = pulumi.Output.from_input(bucket_name)
        self.url = self.bucket_name.apply(lambda n: f"gs://{n}")
        self.register_outputs({"bucket_name": self.bucket_name, "url": self.url})


def _workload_accounts(teams: Sequence[TeamConfig]) -> list[tuple[str, str]]:
    """(namespace, service account) pairs that need the bucket. The controller creates worker
    pods and headless heads without a service account name, so they run as `default`."""
    pairs = []
    for team in teams:
        for account in dict.fromkeys([team.service_account, "default"]):
            pairs.append((team.name, account))
    return pairs
