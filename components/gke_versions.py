"""GKE versions, read and compared, and the first GKE version of each feature this project relies
on: one home, each with its source, so the preflight, the schema and the docs never disagree.

A GKE version is ``1.<minor>.<patch>-gke.<build>`` (``1.33.3-gke.1226000``). A bare minor
(``1.34``) is what ``minMasterVersion`` may name ("the newest 1.34 patch"); as a floor it reads as
the lowest version of that minor (``1.34.0-gke.0``), so a check against it never assumes more
than the minor promises. Pure: no Pulumi, no pydantic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_VERSION = re.compile(r"1\.(?P<minor>\d{1,3})(?:\.(?P<patch>\d{1,4})-gke\.(?P<build>\d{1,10}))?")
VERSION_FORM = "a GKE version such as '1.34' or '1.33.3-gke.1226000'"


@dataclass(frozen=True, order=True)
class GkeVersion:
    """A GKE version; ordered numerically (1.33.10 is after 1.33.3, as GKE orders them)."""

    minor: int
    patch: int = 0
    build: int = 0

    @classmethod
    def parse(cls, text: str) -> GkeVersion:
        """``1.34`` or ``1.33.3-gke.1226000``; ValueError naming the form otherwise."""
        match = _VERSION.fullmatch(text)
        if match is None:
            shown = repr(text) if len(text) <= 40 else f"{text[:37]!r}..."
            raise ValueError(f"{shown} is not {VERSION_FORM}")
        return cls(int(match["minor"]), int(match["patch"] or 0), int(match["build"] or 0))

    def __str__(self) -> str:
        return f"1.{self.minor}.{self.patch}-gke.{self.build}"


@dataclass(frozen=True)
class Feature:
    """A GKE feature and the first version that has it (``since``), with where that is said."""

    name: str
    since: GkeVersion
    source: str

    def supported_by(self, floor: GkeVersion | None) -> bool:
        """Whether a cluster known to run at least ``floor`` has it (None: not known: no)."""
        return floor is not None and floor >= self.since


# Cloud Storage FUSE CSI driver (GoogleCloudPlatform/gcs-fuse-csi-driver, docs/releases.md
# "GKE Compatibility" feature table, read at commit 5fcdc04a, 2026-08): host-network pods (on GKE
# Standard, with the volume attribute hostNetworkPodKSA) from 1.33.3-gke.1226000; the sidecar as
# a native sidecar (an init container with restartPolicy Always) from 1.29.3-gke.1093000; the
# volume attribute gcsfuseMetadataPrefetchOnMount from 1.32.1-gke.1357001; streaming writes on by
# default from 1.33.2-gke.4655000.
GCS_FUSE_HOST_NETWORK = Feature(
    "Cloud Storage FUSE on host-network pods (hostNetworkPodKSA)",
    GkeVersion.parse("1.33.3-gke.1226000"),
    "gcs-fuse-csi-driver docs/releases.md, 'Host networking support'",
)
GCS_FUSE_NATIVE_SIDECAR = Feature(
    "the Cloud Storage FUSE sidecar as a native sidecar",
    GkeVersion.parse("1.29.3-gke.1093000"),
    "gcs-fuse-csi-driver docs/releases.md and docs/known-issues.md",
)
GCS_FUSE_METADATA_PREFETCH = Feature(
    "gcsfuseMetadataPrefetchOnMount",
    GkeVersion.parse("1.32.1-gke.1357001"),
    "gcs-fuse-csi-driver docs/releases.md, 'Metadata prefetch'",
)
GCS_FUSE_STREAMING_WRITES_DEFAULT = Feature(
    "Cloud Storage FUSE streaming writes on by default",
    GkeVersion.parse("1.33.2-gke.4655000"),
    "gcs-fuse-csi-driver docs/releases.md, 'Streaming writes'",
)
# GKE "About the Managed Lustre CSI driver"
# (cloud.google.com/kubernetes-engine/docs/concepts/managed-lustre, read 2026-11): the cluster and
# its nodes at 1.33.2-gke.1111000 or later, Container-Optimized OS nodes.
LUSTRE_CSI = Feature(
    "the Managed Lustre CSI driver",
    GkeVersion.parse("1.33.2-gke.1111000"),
    "cloud.google.com/kubernetes-engine/docs/concepts/managed-lustre",
)
# GKE "Access Filestore instances with the Filestore CSI driver"
# (cloud.google.com/filestore/docs/csi-driver, read 2026-11): the regional tier from
# 1.33.4-gke.1172000.
FILESTORE_REGIONAL = Feature(
    "Filestore regional instances through the CSI driver",
    GkeVersion.parse("1.33.4-gke.1172000"),
    "cloud.google.com/filestore/docs/csi-driver",
)
# GKE "Configure collection of kube state metrics"
# (cloud.google.com/kubernetes-engine/docs/how-to/kube-state-metrics, read 2026-11): the JobSet
# package (kube_jobset_*) from 1.32.1-gke.1357001.
JOBSET_STATE_METRICS = Feature(
    "kube state metrics of JobSets (kube_jobset_*)",
    GkeVersion.parse("1.32.1-gke.1357001"),
    "cloud.google.com/kubernetes-engine/docs/how-to/kube-state-metrics",
)


# The oldest version a cluster on a release channel can run: GKE's release notes, "Current
# versions" (read 2026-11: Rapid offers 1.34 to 1.37, Regular 1.34 to 1.36, Stable 1.34 to 1.35),
# and GKE upgrades a cluster automatically before its minor version leaves support. A cluster
# this project creates is on a channel (RAPID, REGULAR or STABLE), so it runs 1.34 or later;
# every feature above is older. Revisit when the channels move on.
CHANNEL_FLOOR = GkeVersion.parse("1.34")
CHANNEL_FLOOR_SOURCE = "GKE release notes, current versions of the Rapid, Regular, Stable channels"
