"""The Cloud Storage paths a PathwaysJob names, and whether the identity its pods act as may use
them.

A Pathways pod on the host network (always, under the controller v0.1.4) acts for GCS as the
node pool's service account, whatever Kubernetes service account it names; one off the host
network (JobSet backend, ``hostNetwork: false``) acts as its Kubernetes service account through
Workload Identity (README: "What runs as which identity"). A job names ``gs://`` paths in its
``pathwaysDir`` (the resource manager, proxy and workers keep scratch state there, so they write
it), in its user containers' command, args and plain env values, and in its custom components'
flags and plain env values. A path outside ``pathwaysDir`` is only known to be read: a command
line does not say whether the program writes there, so a job that writes checkpoints to a bucket
needs that bucket granted read-write by its owner, and the preflight checks read.

No Pulumi here: the preflight reads it, and so does the stack layer that knows the grants.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from components.pathways.spec import PathwaysJobSpec

# A bucket name (3-222 characters of lowercase letters, digits, '-', '_' and '.'), then an object
# path up to the first character that ends a word on a command line.
_GCS_PATH = re.compile(r"gs://([a-z0-9][-_.a-z0-9]{1,220}[a-z0-9])(/[^\s'\",;]*)?")


class Access(StrEnum):
    """What a grant lets an identity do with a bucket's objects."""

    READ = "read"
    READ_WRITE = "readWrite"

    def covers(self, needed: Access) -> bool:
        return self is Access.READ_WRITE or needed is Access.READ


# The bucket-scoped roles that give each access, and no more: objectViewer gets and lists
# objects; objectUser also creates, overwrites and deletes them (neither changes IAM).
# Source: Cloud Storage's IAM roles reference
# (cloud.google.com/storage/docs/access-control/iam-roles).
ROLES: dict[Access, str] = {
    Access.READ: "roles/storage.objectViewer",
    Access.READ_WRITE: "roles/storage.objectUser",
}
PATHWAYS_DIR = "pathwaysDir"


@dataclass(frozen=True)
class BucketGrant:
    """An identity's object access to one bucket (a bucket-scoped IAM binding), or to the
    objects under ``prefix`` only (a binding with the prefix condition ``ScratchBucket`` gives
    each team's service account)."""

    identity: str
    bucket: str
    access: Access
    prefix: str = ""

    def reaches(self, bucket: str, object_name: str) -> bool:
        return self.bucket == bucket and object_name.startswith(self.prefix)


def kubernetes_identity(namespace: str, service_account: str) -> str:
    """How a pod off the host network is known to GCS: its Kubernetes service account, the
    subject of its Workload Identity principal (``ns/<namespace>/sa/<account>``)."""
    return f"ns/{namespace}/sa/{service_account}"


@dataclass(frozen=True)
class GcsUse:
    """One ``gs://`` path a job names, where it names it, and what its pods need to do there."""

    path: str
    where: str  # "pathwaysDir", "command", "env.INPUT", "customComponents[worker].flags"
    needs: Access

    @property
    def bucket(self) -> str:
        return self.path.removeprefix("gs://").partition("/")[0]

    @property
    def object_name(self) -> str:
        return self.path.removeprefix("gs://").partition("/")[2]


def paths_in(text: str) -> list[str]:
    """Every ``gs://`` path in a string (a flag such as ``--input=gs://b/p`` included)."""
    return [match.group(0) for match in _GCS_PATH.finditer(text)]


def gcs_uses(spec: PathwaysJobSpec) -> list[GcsUse]:
    """The job's ``gs://`` paths, each once per place it is named."""
    found: dict[tuple[str, str], GcsUse] = {}
    for use in _uses(spec):
        found.setdefault((use.path, use.where), use)
    return list(found.values())


def _uses(spec: PathwaysJobSpec) -> Iterator[GcsUse]:
    if spec.pathways_dir:
        yield from _read(spec.pathways_dir, PATHWAYS_DIR, Access.READ_WRITE)
    pod_spec: Mapping[str, Any] = (spec.controller.template or {}).get("spec", {})
    for container in pod_spec.get("containers", []):
        for part in ("command", "args"):
            for text in container.get(part) or []:
                yield from _read(text, part)
        for env in container.get("env") or []:
            yield from _read(env.get("value") or "", f"env.{env['name']}")
    for component in spec.custom_components or []:
        where = f"customComponents[{component.component_type.value}]"
        for flag in component.custom_flags or []:
            yield from _read(flag, f"{where}.flags")
        for env in component.custom_env or []:
            yield from _read(env.value or "", f"{where}.env.{env.name}")


def _read(text: str, where: str, needs: Access = Access.READ) -> Iterator[GcsUse]:
    for path in paths_in(text):
        yield GcsUse(path, where, needs)


def access_of(
    grants: Iterable[BucketGrant], identity: str, bucket: str, object_name: str = ""
) -> Access | None:
    """The widest access ``identity`` has to ``object_name`` (a path or prefix) in ``bucket``
    through ``grants`` (None: none)."""
    granted = {
        g.access for g in grants if g.identity == identity and g.reaches(bucket, object_name)
    }
    if Access.READ_WRITE in granted:
        return Access.READ_WRITE
    return Access.READ if granted else None


def reachable_buckets(grants: Iterable[BucketGrant], identities: Iterable[str]) -> dict[str, str]:
    """The buckets (or prefixes of one: ``bucket/prefix/``) every one of ``identities``
    reaches, with the access all of them have."""
    grants, identities = list(grants), sorted(set(identities))
    places = sorted({(g.bucket, g.prefix) for g in grants if g.identity in identities})
    reachable = {}
    for bucket, prefix in places:
        levels = [access_of(grants, identity, bucket, prefix) for identity in identities]
        if identities and None not in levels:
            widest_for_all = Access.READ if Access.READ in levels else Access.READ_WRITE
            reachable[f"{bucket}/{prefix}" if prefix else bucket] = widest_for_all.value
    return reachable


def denied(
    use: GcsUse, identities: Iterable[str], grants: Iterable[BucketGrant]
) -> list[tuple[str, Access | None]]:
    """The identities that cannot do what ``use`` needs, with the access each does have."""
    grants = list(grants)
    refused = []
    for identity in sorted(set(identities)):
        have = access_of(grants, identity, use.bucket, use.object_name)
        if have is None or not have.covers(use.needs):
            refused.append((identity, have))
    return refused
