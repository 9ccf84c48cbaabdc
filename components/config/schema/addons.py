"""The in-cluster installs: JobSet, the PathwaysJob controller and Kueue."""

from __future__ import annotations

import re
from typing import Annotated, ClassVar

from pydantic import (
    StrictBool,
    model_validator,
)

from components.config.schema.base import ChipCount, pattern
from components.config.schema.teams import TeamNamespace
from components.errors import KeyedError
from components.model import ConfigModel
from components.vocabulary import KUEUE_API_FIRST_SERVING, KUEUE_API_VERSION

Version = Annotated[str, pattern(r"v\d+\.\d+\.\d+", "a release tag such as 'v0.10.1'")]
ManifestUrl = Annotated[str, pattern(r"https://\S+\.ya?ml", "an https:// URL of a YAML manifest")]
Sha256 = Annotated[str, pattern(r"[0-9a-f]{64}", "a sha256 digest (64 lowercase hex digits)")]
# Upstream release assets: https://github.com/<org>/<repo>/releases/download/<tag>/<file>.
RELEASE_HOST = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/releases/download/[^/\s]+/[^/\s]+")


def _version_tuple(tag: str) -> tuple[int, ...]:
    return tuple(int(part) for part in tag.removeprefix("v").split("."))


class ReleaseAddon(ConfigModel):
    """An upstream project installed from its pinned release manifest."""

    # The release manifest's URL for a version tag; a subclass names its project's.
    RELEASE_URL: ClassVar[str]
    version: Version
    manifest_url: ManifestUrl | None = None
    """Mirror of the release manifest: a GitHub release asset URL unless allowAnyManifestHost;
    requires sha256."""
    sha256: Sha256 | None = None
    """sha256 of the manifest: `pulumi up` fetches it, fails on any other content and applies
    the checked copy. Unset: the upstream release is applied as served."""
    allow_any_manifest_host: StrictBool = False
    """Let manifestUrl name a host other than github.com/<org>/<repo>/releases/download/."""

    @model_validator(mode="after")
    def _pinned_mirror(self) -> ReleaseAddon:
        if self.manifest_url is None:
            return self
        if self.sha256 is None:
            raise KeyedError.at(
                "sha256",
                "required with manifestUrl: a mirror's content must be pinned (sha256sum of the "
                "manifest you mirrored)",
            )
        if not self.allow_any_manifest_host and not RELEASE_HOST.fullmatch(self.manifest_url):
            raise KeyedError.at(
                "manifestUrl",
                f"{self.manifest_url!r} is not a GitHub release asset "
                "(https://github.com/<org>/<repo>/releases/download/<tag>/<file>); set "
                "allowAnyManifestHost: true to use another host",
            )
        return self

    @property
    def url(self) -> str:
        return self.manifest_url or self.RELEASE_URL.format(version=self.version)


class JobSetAddon(ReleaseAddon):
    """JobSet, which the PathwaysJob controller turns every PathwaysJob into."""

    RELEASE_URL = (
        "https://github.com/kubernetes-sigs/jobset/releases/download/{version}/manifests.yaml"
    )

    install: StrictBool = True
    """Install it (turn off when another stack already installed it on the cluster)."""
    version: Version = "v0.10.1"
    """Release tag. v0.10.1 is what XPK pins; the PathwaysJob controller v0.1.4 is built against
    JobSet v0.8 and does not map the restart condition v0.12 adds."""

    @model_validator(mode="after")
    def _supported(self) -> JobSetAddon:
        if _version_tuple(self.version) < (0, 8, 0):
            raise KeyedError.at(
                "version",
                f"{self.version!r} is older than v0.8.0, the JobSet API the PathwaysJob "
                "controller needs; use v0.8.0 or newer (default v0.10.1)",
            )
        return self


class PathwaysJobAddon(ReleaseAddon):
    """The PathwaysJob CRD and controller (google/pathways-job)."""

    RELEASE_URL = "https://github.com/google/pathways-job/releases/download/{version}/install.yaml"

    install: StrictBool = True
    """Install it (turn off when another stack already installed it on the cluster)."""
    version: Version = "v0.1.4"
    """Release tag of google/pathways-job; the typed PathwaysJob spec follows v0.1.4."""


class TeamQuota(ConfigModel):
    """A team's guaranteed share of the cluster's TPUs: its own ClusterQueue in a cohort."""

    team: TeamNamespace
    """Team namespace (of this stack or of a team stack on this cluster; not a system
    namespace)."""
    chips: dict[str, ChipCount]
    """Chips per TPU shape, keyed by accelerator name (v5p-16, v5litepod-16, v6e-2x2)."""
    borrowing_limit: ChipCount | None = None
    """Chips per shape the team may borrow beyond its quota while others leave them idle
    (default: all idle chips; 0: never more than its quota)."""


class KueueAddon(ReleaseAddon):
    """Kueue quota management: one flavor per TPU shape, quota = the chips the stack provisions."""

    RELEASE_URL = (
        "https://github.com/kubernetes-sigs/kueue/releases/download/{version}/manifests.yaml"
    )

    enabled: StrictBool | None = None
    """Install Kueue and create flavors, a ClusterQueue, LocalQueues and priority classes.
    Default: on in a stack that owns its cluster (as XPK does; Kueue admits a job
    all-or-nothing, so jobs sharing a pool cannot deadlock), off on an existing cluster."""
    version: Version = "v0.17.1"
    """Release tag of kubernetes-sigs/kueue (XPK's pin)."""
    tpu_quota: ChipCount | None = None
    """Optional cross-check: the TPU chip quota you expect. It must equal the provisioned chips."""
    team_quotas: list[TeamQuota] = []
    """Per-team TPU quotas (fairness between teams); none: one ClusterQueue for everyone."""

    @model_validator(mode="after")
    def _served_api(self) -> KueueAddon:
        # The one place the Kueue release and the API of the queue objects meet.
        if _version_tuple(self.version) < KUEUE_API_FIRST_SERVING:
            first = "v" + ".".join(map(str, KUEUE_API_FIRST_SERVING))
            raise KeyedError.at(
                "version",
                f"{self.version!r} is not supported; use {first} or newer (the queue objects "
                f"use {KUEUE_API_VERSION}, which Kueue serves from {first})",
            )
        return self


class AddonsConfig(ConfigModel):
    """In-cluster installs, in dependency order: JobSet, then the PathwaysJob controller."""

    jobset: JobSetAddon = JobSetAddon()
    """JobSet install."""
    pathways_job: PathwaysJobAddon = PathwaysJobAddon()
    """PathwaysJob CRD and controller install."""
    kueue: KueueAddon = KueueAddon()
    """Optional Kueue install and queues."""
