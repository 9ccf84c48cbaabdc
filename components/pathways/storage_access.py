"""Whether a job's pods may use every ``gs://`` path the job names: who they are for GCS
(``job_identities``: the node's service account on the host network, else their Kubernetes
service account through Workload Identity) against the bucket grants those identities hold
(``storage_access``: write its ``pathwaysDir``, read the rest). Part of the preflight of one job
(``preflight``); pure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from components.pathways.controller_model import ExpandedJob
from components.pathways.gcs_access import (
    PATHWAYS_DIR,
    ROLES,
    Access,
    BucketGrant,
    GcsUse,
    denied,
    kubernetes_identity,
    reachable_buckets,
)
from components.pathways.scheduler_model import Fit


@dataclass(frozen=True)
class StorageCheck:
    """The bucket grants the identities of the pools hold, and how the caller tells a user to add
    one (a stack names its config key; the Python API the role to grant)."""

    grants: tuple[BucketGrant, ...]
    how_to_grant: Callable[[str, Access], str]


UNKNOWN_IDENTITY = "unverified: the nodes belong to another stack, whose node identity is not known"


def job_identities(job: ExpandedJob, head: Fit, workers: Fit) -> frozenset[str | None]:
    """Who the job's pods are for GCS: host-network pods act as the service account of the
    nodes they can land on (Workload Identity does not apply to them; None: not known here);
    the others as their Kubernetes service account (Workload Identity)."""
    identities: set[str | None] = set()
    for pod, fit in ((job.head, head), (job.workers, workers)):
        if pod.host_network:
            identities |= fit.identities
        else:
            identities.add(kubernetes_identity(job.namespace, pod.service_account or "default"))
    return frozenset(identities)


UNRESOLVED = (
    "unverified: the bucket is a $(VAR) reference the container's plain env does not define "
    "(a Secret's value or unset), which only the kubelet resolves"
)


INVALID = "refused: not a Cloud Storage path"


# A job naming thousands of paths gets the first ones reported, then a count.
MAX_PATH_PROBLEMS = 10


MAX_REPORTED_PATHS = 50


def storage_access(
    uses: Sequence[GcsUse], identities: frozenset[str | None], storage: StorageCheck | None
) -> tuple[dict[str, Any], list[str]]:
    """Each ``gs://`` path of the job against what its identities may do (``job_identities``:
    host-network pods act as the node's service account, Workload Identity does not apply to
    them). A path whose bucket is no bucket name is refused whatever the grants; one whose bucket
    the kubelet fills in from a value this stack cannot see is reported unverified."""
    known = sorted(i for i in identities if i is not None)
    unchecked = _unchecked(storage, identities)
    verdicts: dict[GcsUse, str] = {}
    problems: list[str] = []
    for use in uses:
        if use.problem:
            verdicts[use] = INVALID
            problems.append(
                f"{use.path} ({use.where}) is not a valid Cloud Storage path: {use.problem}"
            )
        elif use.unresolved:
            verdicts[use] = UNRESOLVED
        elif unchecked is not None or storage is None:
            verdicts[use] = str(unchecked)
        else:
            refused = denied(use, known, storage.grants)
            verdicts[use] = (
                f"denied to {', '.join(i for i, _ in refused)}"
                if refused
                else f"granted to {', '.join(_identity_name(i) for i in known)}"
            )
            problems += [_denial(use, identity, have, storage) for identity, have in refused]
    if unchecked is not None or storage is None:
        return _access_summary(uses, str(unchecked), verdicts, unchecked), _bounded(problems)
    buckets = reachable_buckets(storage.grants, known)
    return _access_summary(uses, buckets, verdicts, None), _bounded(problems)


def _unchecked(storage: StorageCheck | None, identities: set[str | None]) -> str | None:
    """Why the job's paths cannot be checked against grants (None: they can)."""
    if storage is None:
        return "not checked (no bucket grants given)"
    if None in identities or not identities:
        return UNKNOWN_IDENTITY
    return None


def _bounded(problems: list[str]) -> list[str]:
    if len(problems) <= MAX_PATH_PROBLEMS:
        return problems
    more = len(problems) - MAX_PATH_PROBLEMS
    return [*problems[:MAX_PATH_PROBLEMS], f"... and {more} more paths refused"]


def _identity_name(identity: str) -> str:
    if _is_kubernetes_identity(identity):
        return f"Kubernetes service account {identity} (Workload Identity)"
    return f"node service account {identity}"


def _is_kubernetes_identity(identity: str) -> bool:
    return identity.startswith("ns/")


def _denial(use: GcsUse, identity: str, have: Access | None, storage: StorageCheck) -> str:
    held = f"only {have.value} access to" if have else "no object access to"
    if _is_kubernetes_identity(identity):
        # dataBuckets grant the node service account only (least privilege: README, "Workload
        # backends"); a team's account holds its prefix of the scratch bucket and nothing else.
        return (
            f"{use.path} ({use.where}) needs {use.needs.value} access, but its pods run off the "
            f"host network as Kubernetes service account {identity} (Workload Identity), which "
            f"has {held} gs://{use.bucket}{_prefix_hint(use)}; keep the job on the host network "
            "(remove hostNetwork: false) to use the node service account's dataBuckets grants, "
            f"or grant that account's principal {ROLES[use.needs]} on gs://{use.bucket} where "
            "the bucket is managed"
        )
    return (
        f"{use.path} ({use.where}) needs {use.needs.value} access, but its pods run on the host "
        f"network, so they act as the node service account {identity} for GCS, which has {held} "
        f"gs://{use.bucket}; {storage.how_to_grant(use.bucket, use.needs)}"
    )


def _prefix_hint(use: GcsUse) -> str:
    if use.where == PATHWAYS_DIR:
        return " (it holds its team's prefix of the scratch bucket only)"
    return ""


def _access_summary(
    uses: Sequence[GcsUse],
    buckets: dict[str, str] | str,
    verdicts: dict[GcsUse, str],
    fallback: str | None,
) -> dict[str, Any]:
    pathways_dir = next((u for u in uses if u.where == PATHWAYS_DIR), None)
    dir_access = verdicts[pathways_dir] if pathways_dir else fallback or "no pathwaysDir"
    summary = {
        "pathwaysDirAccess": dir_access,
        "buckets": buckets,
        "gcsPaths": [
            {"path": u.path, "in": u.where, "needs": u.needs.value, "access": verdicts[u]}
            for u in uses[:MAX_REPORTED_PATHS]
        ],
    }
    if len(uses) > MAX_REPORTED_PATHS:
        summary["gcsPathsNotShown"] = len(uses) - MAX_REPORTED_PATHS
    return summary
