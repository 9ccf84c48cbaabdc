"""The Cloud Storage paths a PathwaysJob names, and whether the identity its pods act as may use
them.

A Pathways pod on the host network (always, under the controller v0.1.4) acts for GCS as the
node pool's service account, whatever Kubernetes service account it names; one off the host
network (JobSet backend, ``hostNetwork: false``) acts as its Kubernetes service account through
Workload Identity (docs/workloads.md, its identity table). A job names ``gs://`` paths in its
``pathwaysDir`` (the resource manager, proxy and workers keep scratch state there, so they write
it), in its user containers' command, args and plain env values, and in its custom components'
flags and plain env values. A path outside ``pathwaysDir`` is only known to be read: a command
line does not say whether the program writes there, so a job that writes checkpoints to a bucket
needs that bucket granted read-write by its owner, and the preflight checks read.

No Pulumi here: the preflight reads it, and so does the stack layer that knows the grants.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from components.pathways.spec import PathwaysJobSpec

# The scheme in any case (gsutil and gcloud storage lower-case it), then a bucket part and an object
# path, each ending at the first character that separates words or list items on a command line
# (whitespace, quotes, ',', ';', ':', brackets). A kubelet reference ``$(VAR)`` is kept whole. Every
# scheme is a path of its own, so one path cannot hide another (``gs://a/x:gs://b/y``).
_VAR_NAME = r"[-._a-zA-Z][-._a-zA-Z0-9]*"
_VAR_REF = re.compile(rf"\$\((?P<var>{_VAR_NAME})\)")
_WORD = rf"(?:\$\({_VAR_NAME}\)|[^/\s'\"`,;:\[\](){{}}<>])"
_SCHEME_AT = re.compile(r"gs://", re.IGNORECASE)
_GCS_PATH = re.compile(rf"gs://(?P<bucket>{_WORD}*)(?P<object>/(?:/|{_WORD})*)?", re.IGNORECASE)
_SCHEME = len("gs://")
# The bucket names of a path: Cloud Storage's naming rules
# (cloud.google.com/storage/docs/buckets#naming), the one rule every bucket name is held to.
_BUCKET = re.compile(r"[a-z0-9][-_.a-z0-9]*[a-z0-9]", re.ASCII)
BUCKET_RULES = (
    "bucket names are 3-63 lowercase letters, digits, '-', '_' or '.' (up to 222 with "
    "dots, 63 per dot-separated part), start and end with a letter or digit, are not an IP "
    "address and neither start with 'goog' nor contain 'google' or a close misspelling of "
    "it such as 'g00gle'"
)
# "google" and its close misspellings, which Cloud Storage refuses in bucket names ("g00gle"):
# each letter or a digit that reads as it.
_GOOGLE_LIKE = re.compile(r"g[o0][o0]g[l1i][e3]")


def bucket_problem(bucket: str) -> str | None:
    """None for a valid bucket name, else what is wrong with it."""
    parts = bucket.split(".")
    too_long = len(bucket) > (222 if len(parts) > 1 else 63) or any(len(p) > 63 for p in parts)
    bad = len(bucket) < 3 or too_long or not _BUCKET.fullmatch(bucket) or "" in parts
    if bad or _is_ip(bucket) or bucket.startswith("goog") or _GOOGLE_LIKE.search(bucket):
        shown = repr(bucket) if len(bucket) <= 70 else f"{bucket[:67]!r}..."
        return f"{shown} is not a bucket name; {BUCKET_RULES}"
    return None


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


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
    excluded: tuple[str, ...] = ()
    """Prefixes the grant leaves out (the shared pools' grant on the scratch bucket: the
    prefixes of the teams with dedicated pools)."""

    def reaches(self, bucket: str, object_name: str) -> bool:
        return (
            self.bucket == bucket
            and object_name.startswith(self.prefix)
            and not object_name.startswith(self.excluded)
        )


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
        return self.path[_SCHEME:].partition("/")[0]

    @property
    def unresolved(self) -> bool:
        """The bucket is a ``$(VAR)`` the container's plain env does not define: only the
        kubelet knows it."""
        return "$(" in self.bucket

    @property
    def problem(self) -> str | None:
        """Why the path is no Cloud Storage path at all (an invalid bucket name)."""
        return None if self.unresolved else bucket_problem(self.bucket)

    @property
    def object_name(self) -> str:
        return self.path.removeprefix("gs://").partition("/")[2]


def paths_in(text: str) -> list[str]:
    """Every ``gs://`` path in a string (a flag such as ``--input=gs://b/p`` included)."""
    found = []
    for scheme in _SCHEME_AT.finditer(text):
        match = _GCS_PATH.match(text, scheme.start())
        assert match is not None  # the scheme alone matches
        found.append(match.group(0))
    return found


def expand_references(text: str, env: Mapping[str, str]) -> str:
    """``text`` as the kubelet expands it: ``$(VAR)`` becomes VAR's value where ``env`` has it
    (else it stays as written), ``$$`` becomes ``$`` (Kubernetes' ``expansion.Expand``)."""
    if "$" not in text:  # most text: nothing to expand
        return text
    out, i = [], 0
    while (dollar := text.find("$", i)) != -1:  # only a '$' starts a reference or '$$'
        out.append(text[i:dollar])
        if text.startswith("$$", dollar):
            out.append("$")
            i = dollar + 2
        elif (match := _VAR_REF.match(text, dollar)) is not None:
            out.append(env.get(match["var"], match.group(0)))
            i = match.end()
        else:
            out.append("$")
            i = dollar + 1
    out.append(text[i:])
    return "".join(out)


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
        env = [(e["name"], e.get("value")) for e in container.get("env") or []]
        plain, env_uses = _expanded_env(env, "env")
        for part in ("command", "args"):
            for text in container.get(part) or []:
                yield from _read(expand_references(text, plain), part)
        yield from env_uses
    for component in spec.custom_components or []:
        where = f"customComponents[{component.component_type.value}]"
        env = [(e.name, e.value) for e in component.custom_env or []]
        plain, env_uses = _expanded_env(env, f"{where}.env")
        for flag in component.custom_flags or []:
            yield from _read(expand_references(flag, plain), f"{where}.flags")
        yield from env_uses


def _expanded_env(
    env: list[tuple[str, str | None]], where: str
) -> tuple[dict[str, str], list[GcsUse]]:
    """A container's plain env values, each expanded by the ones before it (as the kubelet does;
    a valueFrom entry is known only to the kubelet), and the paths in them."""
    plain: dict[str, str] = {}
    uses: list[GcsUse] = []
    for name, value in env:
        if value is None:
            plain.pop(name, None)
            continue
        plain[name] = expand_references(value, plain)
        uses += _read(plain[name], f"{where}.{name}")
    return plain, uses


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
