"""The Pathways scratch bucket (every PathwaysJob's ``pathwaysDir``) and who may write to it.

Upstream requires the bucket to exist before a job starts. Each team gets its own prefix,
``gs://<bucket>/<team>/``, and its Kubernetes service accounts get ``objectUser`` on that prefix
only, directly through Workload Identity Federation for GKE (a ``principal://`` member, no key,
no impersonation) with an IAM condition:

- object reads, writes and deletes name the object, ``projects/_/buckets/<b>/objects/<name>``,
  so ``resource.name.startsWith("projects/_/buckets/<b>/objects/<team>/")`` admits the team's
  objects and no other team's;
- listing is checked on the bucket (``resource.name`` is ``projects/_/buckets/<b>``), where that
  test is false; the list request's prefix is the API attribute
  ``storage.googleapis.com/objectListPrefix``, so a list is admitted only when its prefix lies
  inside the team's (a list without a prefix, or with another team's, is refused).
  Source: Cloud Storage IAM Conditions, "resource.name" of objects and the storage API
  attributes of the IAM Conditions attribute reference; conditions need uniform bucket-level
  access, which the created bucket enforces.

These grants bind pods that run with Workload Identity. Pathways' own pods do not: the
PathwaysJob controller runs the head (resource manager, proxy, user container) and every worker
on the host network, where GKE's metadata server answers as the node's service account, so what
those pods reach is what the node service account is granted (README: multi-tenant threat model).
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_gcp as gcp

from components.config import StackConfig, TeamConfig, team_prefix

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
                    # Bucket names are global and the location is fixed at creation: a region
                    # change would plan a replacement whose new bucket cannot be created while
                    # the old one holds the name (and, without protect, deletes the scratch
                    # data). The bucket stays where it was created; the preview lists the
                    # location change as ignored. To move it, give scratchBucket.name a new name.
                    ignore_changes=["location"],
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
                condition=team_prefix_condition(config.bucket_name, team),
                # The workload identity pool exists once the cluster does.
                opts=pulumi.ResourceOptions(parent=self, depends_on=list(cluster_ready)),
            )
        self.bucket_name = pulumi.Output.from_input(bucket_name)
        self.url = self.bucket_name.apply(lambda n: f"gs://{n}")
        self.register_outputs({"bucket_name": self.bucket_name, "url": self.url})


def team_prefix_expression(bucket: str, team: str) -> str:
    """CEL for "an object under the team's prefix, or a list of it" (see the module doc)."""
    prefix = team_prefix(team)
    return (
        f'resource.name.startsWith("projects/_/buckets/{bucket}/objects/{prefix}") || '
        f'api.getAttribute("storage.googleapis.com/objectListPrefix", "").startsWith("{prefix}")'
    )


def team_prefix_condition(bucket: str, team: str) -> gcp.storage.BucketIAMMemberConditionArgs:
    return gcp.storage.BucketIAMMemberConditionArgs(
        title=f"team {team} prefix only",
        description=f"Objects under gs://{bucket}/{team_prefix(team)} and lists of that prefix",
        expression=team_prefix_expression(bucket, team),
    )


def _workload_accounts(teams: Sequence[TeamConfig]) -> list[tuple[str, str]]:
    """(namespace, service account) pairs that need the bucket. The controller creates worker
    pods and headless heads without a service account name, so they run as `default`."""
    pairs = []
    for team in teams:
        for account in dict.fromkeys([team.service_account, "default"]):
            pairs.append((team.name, account))
    return pairs
