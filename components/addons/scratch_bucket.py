"""The Pathways scratch bucket (every PathwaysJob's ``pathwaysDir``) and who may write to it.

Upstream requires the bucket to exist before a job starts. Who needs it:

- Every Pathways pod (head: resource manager, proxy and the user's container; every worker)
  runs on the host network: the PathwaysJob controller v0.1.4 sets ``hostNetwork: true``
  (internal/controller/pathwaysjob_controller.go ~775, 862, 873). Workload Identity does not
  apply to host-network pods; they reach the metadata server as the node pool's service
  account. So the node service account gets object access on this bucket (a bucket-scoped
  grant, never a project-wide role), or every job fails on its pathwaysDir. The shared pools'
  account gets the bucket but ``_/``, where the teams with dedicated pools keep their prefixes
  (``_/<team>/``): every shared team's host-network pods share that identity and so reach every
  shared team's prefix (docs/security.md: multi-tenant threat model); a dedicated team's pools'
  own account gets its prefix only.
- Other pods of a team (a notebook, a data loader) use Workload Identity. Each team gets its own
  prefix, ``gs://<bucket>/<team>/`` (``gs://<bucket>/_/<team>/`` for a dedicated team; the
  caller passes it), and its Kubernetes service accounts get ``objectUser`` on that prefix only,
  directly (a ``principal://`` member, no key, no impersonation) with an IAM condition:

  - object reads, writes and deletes name the object, ``projects/_/buckets/<b>/objects/<name>``,
    so ``resource.name.startsWith("projects/_/buckets/<b>/objects/<prefix>")`` admits the team's
    objects and no other team's;
  - listing is checked on the bucket (``resource.name`` is ``projects/_/buckets/<b>``), where
    that test is false; the list request's prefix is the API attribute
    ``storage.googleapis.com/objectListPrefix``, so a list is admitted only when its prefix lies
    inside the team's (a list without a prefix, or with another team's, is refused).

  Source: Cloud Storage IAM Conditions, "resource.name" of objects and the storage API
  attributes of the IAM Conditions attribute reference; conditions need uniform bucket-level
  access, which the created bucket enforces.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_gcp as gcp

from components.labels import gcp_resource_labels
from components.pathways.bucket_conditions import object_prefix_expression, shared_nodes_expression
from components.pathways.gcs_access import ROLES, Access

OBJECT_READ_WRITE = ROLES[Access.READ_WRITE]


def workload_identity_principal(
    project_number: str, project_id: str, namespace: str, service_account: str
) -> str:
    pool = f"{project_id}.svc.id.goog"
    return (
        f"principal://iam.googleapis.com/projects/{project_number}/locations/global/"
        f"workloadIdentityPools/{pool}/subject/ns/{namespace}/sa/{service_account}"
    )


@dataclass(frozen=True)
class WorkloadAccount:
    """A team's Kubernetes service account: it gets the team's prefix of the bucket."""

    namespace: str
    """The team's namespace."""
    service_account: str
    prefix: str
    """The team's prefix of the bucket: ``<namespace>/`` for a team on the shared pools,
    ``_/<namespace>/`` for a team with pools dedicated to it (``vocabulary.team_prefix``; no
    default: the shared pools' grant leaves out ``_/``, so a dedicated team given the other
    would share its prefix with the shared pools' nodes)."""


@dataclass(frozen=True)
class TeamNodeAccount:
    """The node service account of the pools dedicated to one team: it gets the team's prefix."""

    team: str
    """The team namespace the pools are dedicated to."""
    prefix: str
    """Its prefix of the bucket (``_/<team>/``)."""
    email: pulumi.Input[str]


@dataclass(frozen=True)
class ScratchBucketArgs:
    """Inputs of a ``ScratchBucket``: the bucket, and who gets access to it."""

    project: str
    region: str
    """The bucket's location (a region)."""
    bucket_name: str
    create: bool = True
    """Create the bucket (False: grant access on an existing bucket of that name)."""
    retention_days: int = 30
    """Scratch objects are deleted after this many days."""
    delete_on_destroy: bool = False
    """Delete the bucket and its objects when the stack is destroyed (default: keep it)."""
    team: str = ""
    """The bucket's team label ("" for none)."""
    protect: bool = False
    workload_accounts: Sequence[WorkloadAccount] = ()
    """Each gets objectUser on its own team's prefix (through Workload Identity)."""
    cluster_ready: Sequence[pulumi.Resource] = ()
    """What the Workload Identity grants wait for (the cluster: its identity pool)."""
    node_service_account: pulumi.Input[str] | None = None
    """The shared pools' node service account (host-network Pathways pods act as it): gets the
    bucket but ``_/``, where the teams with dedicated pools keep their prefixes (this stack's
    and any other stack's on the bucket)."""
    team_node_accounts: Sequence[TeamNodeAccount] = ()
    """Each set of dedicated pools' node service account: each gets its team's prefix only."""


class ScratchBucket(pulumi.ComponentResource):
    """The scratch bucket and its grants; ``grants`` is what a PathwaysJob must wait for."""

    bucket_name: pulumi.Output[str]
    url: pulumi.Output[str]
    grants: list[pulumi.Resource]

    def __init__(
        self, name: str, args: ScratchBucketArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:storage:ScratchBucket", name, None, opts)
        bucket = self._bucket(name, args) if args.create else None
        bucket_name: pulumi.Input[str] = bucket.name if bucket else args.bucket_name
        grants: list[pulumi.Resource] = [bucket] if bucket else []
        if args.node_service_account is not None:
            condition = shared_nodes_condition(args.bucket_name)
            grants.append(
                self._node_grant(f"{name}-nodes", bucket_name, args.node_service_account, condition)
            )
        for team in args.team_node_accounts:
            condition = team_prefix_condition(args.bucket_name, team.team, team.prefix)
            grants.append(
                self._node_grant(f"{name}-{team.team}-nodes", bucket_name, team.email, condition)
            )
        grants += self._team_grants(name, args, bucket_name)
        # What a PathwaysJob must wait for: the bucket and every grant on it.
        self.grants = grants
        self.bucket_name = pulumi.Output.from_input(bucket_name)
        self.url = self.bucket_name.apply(lambda n: f"gs://{n}")
        self.register_outputs({"bucket_name": self.bucket_name, "url": self.url})

    def _bucket(self, name: str, args: ScratchBucketArgs) -> gcp.storage.Bucket:
        return gcp.storage.Bucket(
            name,
            name=args.bucket_name,
            project=args.project,
            location=args.region.upper(),
            uniform_bucket_level_access=True,
            public_access_prevention="enforced",
            force_destroy=args.delete_on_destroy,
            lifecycle_rules=[
                gcp.storage.BucketLifecycleRuleArgs(
                    action=gcp.storage.BucketLifecycleRuleActionArgs(type="Delete"),
                    condition=gcp.storage.BucketLifecycleRuleConditionArgs(age=args.retention_days),
                )
            ],
            labels=gcp_resource_labels(args.team, purpose="pathways-scratch"),
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=args.protect,
                # Scratch state outlives a `pulumi destroy` unless the stack opts in.
                retain_on_delete=not args.delete_on_destroy,
                # Bucket names are global and the location is fixed at creation: a region
                # change would plan a replacement whose new bucket cannot be created while
                # the old one holds the name (and, without protect, deletes the scratch
                # data). The bucket stays where it was created; the preview lists the
                # location change as ignored. To move it, give scratchBucket.name a new name.
                ignore_changes=["location"],
            ),
        )

    def _node_grant(
        self,
        resource_name: str,
        bucket_name: pulumi.Input[str],
        node_service_account: pulumi.Input[str],
        condition: gcp.storage.BucketIAMMemberConditionArgs,
    ) -> gcp.storage.BucketIAMMember:
        """Pathways pods act as the node service account (host network): see above."""
        node_member = pulumi.Output.from_input(node_service_account).apply(
            lambda email: f"serviceAccount:{email}"
        )
        return gcp.storage.BucketIAMMember(
            resource_name,
            bucket=bucket_name,
            role=OBJECT_READ_WRITE,
            member=node_member,
            condition=condition,
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _team_grants(
        self, name: str, args: ScratchBucketArgs, bucket_name: pulumi.Input[str]
    ) -> list[pulumi.Resource]:
        """Each team's Workload Identity reads and writes its own prefix only."""
        project = args.project
        project_number = gcp.organizations.get_project_output(project_id=project).number
        grants: list[pulumi.Resource] = []
        for workload in args.workload_accounts:
            team, account = workload.namespace, workload.service_account
            member = project_number.apply(
                lambda number, team=team, account=account: workload_identity_principal(
                    number, project, team, account
                )
            )
            condition = team_prefix_condition(args.bucket_name, team, workload.prefix)
            member_grant = gcp.storage.BucketIAMMember(
                f"{name}-{team}-{account}",
                bucket=bucket_name,
                role=OBJECT_READ_WRITE,
                member=member,
                condition=condition,
                # The workload identity pool exists once the cluster does.
                opts=pulumi.ResourceOptions(parent=self, depends_on=list(args.cluster_ready)),
            )
            grants.append(member_grant)
        return grants


def shared_nodes_condition(bucket: str) -> gcp.storage.BucketIAMMemberConditionArgs:
    return gcp.storage.BucketIAMMemberConditionArgs(
        title="shared pools: not the dedicated teams' _/",
        description=f"Objects of gs://{bucket} outside _/, where the teams with dedicated pools "
        "keep their prefixes, and lists that show no name under it",
        expression=shared_nodes_expression(bucket),
    )


def team_prefix_condition(
    bucket: str, team: str, prefix: str
) -> gcp.storage.BucketIAMMemberConditionArgs:
    return gcp.storage.BucketIAMMemberConditionArgs(
        title=f"team {team} prefix only",
        description=f"Objects under gs://{bucket}/{prefix} and lists of that prefix",
        expression=object_prefix_expression(bucket, prefix),
    )
