"""What a team's storage is reached through: its own Kubernetes service account's grants on the
buckets the team named (``TeamBucketGrants``), and the claims of the file systems it was given
(``team_claim``: a PersistentVolume bound to one claim of one namespace).

Bucket grants follow the tenancy model: each names the team's Workload Identity principal
(``principal://.../subject/ns/<team>/sa/<account>``, no key, no impersonation) with the bucket's
narrowest role for the access (``gcs_access.ROLES``) and, for a prefix, the IAM condition the
scratch bucket's team grants use (objects under it, lists of it). Other teams' accounts get
nothing; the node service account gets nothing either: a Cloud Storage FUSE mount acts as the
pod's account on either network (``pathways.volumes``).

A claimed volume is a PersistentVolume whose ``claimRef`` names one namespace's claim: Kubernetes
binds it to that claim only, so another team's namespace cannot claim it, and no team's ``edit``
role may create PersistentVolumes (cluster-scoped) of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components.addons.scratch_bucket import workload_identity_principal
from components.pathways.bucket_conditions import object_prefix_expression
from components.pathways.gcs_access import ROLES, Access


@dataclass(frozen=True)
class TeamBucket:
    """One grant: team ``namespace``'s ``service_account`` may use ``bucket`` (or ``prefix``)."""

    namespace: str
    service_account: str
    bucket: str
    access: Access = Access.READ
    prefix: str = ""


@dataclass(frozen=True)
class TeamBucketGrantsArgs:
    """Inputs of ``TeamBucketGrants``; ``cluster_ready``: what the grants wait for (the cluster:
    its Workload Identity pool)."""

    project: str
    grants: Sequence[TeamBucket]
    cluster_ready: Sequence[pulumi.Resource] = ()


class TeamBucketGrants(pulumi.ComponentResource):
    """Bucket IAM members for teams' service accounts; ``grants`` is what a workload that mounts
    those buckets waits for."""

    grants: list[pulumi.Resource]

    def __init__(
        self, name: str, args: TeamBucketGrantsArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:storage:TeamBucketGrants", name, None, opts)
        number = gcp.organizations.get_project_output(project_id=args.project).number
        child = pulumi.ResourceOptions(parent=self, depends_on=list(args.cluster_ready))
        self.grants = []
        for grant in args.grants:
            member = number.apply(
                lambda n, g=grant: workload_identity_principal(
                    n, args.project, g.namespace, g.service_account
                )
            )
            suffix = f"-{grant.prefix.strip('/').replace('/', '-')}" if grant.prefix else ""
            self.grants.append(
                gcp.storage.BucketIAMMember(
                    f"{name}-{grant.namespace}-{grant.bucket}{suffix}",
                    gcp.storage.BucketIAMMemberArgs(
                        bucket=grant.bucket,
                        role=ROLES[grant.access],
                        member=member,
                        condition=_prefix_condition(grant),
                    ),
                    opts=child,
                )
            )
        self.register_outputs({})


def _prefix_condition(grant: TeamBucket) -> gcp.storage.BucketIAMMemberConditionArgs | None:
    if not grant.prefix:
        return None
    prefix = f"{grant.prefix.strip('/')}/"
    return gcp.storage.BucketIAMMemberConditionArgs(
        title=f"team {grant.namespace} prefix {prefix}"[:100],
        description=f"Objects under gs://{grant.bucket}/{prefix} and lists of that prefix",
        expression=object_prefix_expression(grant.bucket, prefix),
    )


@dataclass(frozen=True)
class ClaimedVolume:
    """A file system share as one namespace's claim: ``csi`` is the PersistentVolume's CSI
    source (driver, volumeHandle, volumeAttributes), ``gib`` its size."""

    volume_name: str
    namespace: pulumi.Input[str]
    claim: str
    gib: int
    csi: Mapping[str, Any]


def team_claim(
    name: str, volume: ClaimedVolume, provider: k8s.Provider, parent: pulumi.Resource
) -> k8s.core.v1.PersistentVolumeClaim:
    """The PersistentVolume (bound to the claim only: ``claimRef``, no storage class, kept when
    released) and the claim in the team's namespace."""
    child = pulumi.ResourceOptions(parent=parent, provider=provider)
    size = {"storage": f"{volume.gib}Gi"}
    pv = k8s.core.v1.PersistentVolume(
        f"{name}-pv",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=volume.volume_name),
        spec=k8s.core.v1.PersistentVolumeSpecArgs(
            capacity=size,
            access_modes=["ReadWriteMany"],
            persistent_volume_reclaim_policy="Retain",
            storage_class_name="",
            claim_ref=k8s.core.v1.ObjectReferenceArgs(
                namespace=volume.namespace, name=volume.claim
            ),
            csi=k8s.core.v1.CSIPersistentVolumeSourceArgs(**volume.csi),
        ),
        opts=child,
    )
    return k8s.core.v1.PersistentVolumeClaim(
        f"{name}-pvc",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=volume.claim, namespace=volume.namespace),
        spec=k8s.core.v1.PersistentVolumeClaimSpecArgs(
            access_modes=["ReadWriteMany"],
            storage_class_name="",
            volume_name=pv.metadata.name,
            resources=k8s.core.v1.VolumeResourceRequirementsArgs(requests=size),
        ),
        opts=child,
    )
