"""In-cluster installs from pinned upstream release manifests: JobSet, the PathwaysJob CRD and
controller, Kueue.

Each is a `kubernetes:yaml/v2:ConfigFile` of the project's official release manifest, applied
server-side through the cluster's explicit provider (the CRDs are too large for client-side
apply). The manifest URL is the only thing that varies, so one component serves all three.
Why manifests rather than Helm charts: JobSet and PathwaysJob publish a single install manifest
per release, `helm.v4.Chart` children do not inherit the chart's explicit provider
(pulumi-kubernetes issue 3684) and its previews fail while the cluster does not exist yet
(issue 3027).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s


@dataclass(frozen=True)
class ReleaseManifestArgs:
    """Inputs of a ``ReleaseManifest``: the manifest and the cluster it is applied to."""

    url: str
    """The release manifest (https URL of a YAML file)."""
    version: str
    """Its release tag (reported as an output)."""
    provider: k8s.Provider
    """The cluster's explicit Kubernetes provider."""
    depends_on: Sequence[pulumi.Resource] = ()
    """What the manifest's objects wait for (the control plane, the system pool)."""


class ReleaseManifest(pulumi.ComponentResource):
    """One upstream release manifest, applied server-side; ready when its workloads are."""

    def __init__(
        self, name: str, args: ReleaseManifestArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:installs:ReleaseManifest", name, None, opts)
        url, version, provider, depends_on = args.url, args.version, args.provider, args.depends_on
        # Awaited (no skip_await): dependents wait until the controller Deployment is available,
        # which matters because JobSet's webhooks fail closed until then.
        self.manifest = k8s.yaml.v2.ConfigFile(
            name,
            file=url,
            opts=pulumi.ResourceOptions(
                parent=self, provider=provider, depends_on=list(depends_on)
            ),
        )
        self.register_outputs({"url": url, "version": version})


# XPK raises the JobSet controller's memory limit to 1.2 MiB per node, at least 4 GiB
# (xpk src/xpk/core/jobset.py: MEMORY_SIZE_PER_VM, MIN_MEMORY_LIMIT_SIZE): the release
# manifest's default is too small for clusters with many TPU hosts.
JOBSET_NAMESPACE = "jobset-system"
JOBSET_DEPLOYMENT = "jobset-controller-manager"
JOBSET_CONTAINER = "manager"
_MIB_PER_NODE = 1.2
_MIN_MIB = 4096


def jobset_memory_mib(nodes: int) -> int:
    """The JobSet controller's memory for a cluster of up to ``nodes`` nodes."""
    return max(math.ceil(nodes * _MIB_PER_NODE), _MIN_MIB)


@dataclass(frozen=True)
class JobSetControllerMemoryArgs:
    """Inputs of a ``JobSetControllerMemory``."""

    memory_mib: int
    """The controller's memory request and limit (``jobset_memory_mib(nodes)``)."""
    provider: k8s.Provider
    jobset_install: pulumi.Resource
    """The JobSet install (its Deployment must exist before it is patched)."""


class JobSetControllerMemory(pulumi.ComponentResource):
    """The JobSet controller's memory, raised by a server-side patch of the installed
    Deployment (not a copied manifest: every other field stays the release's)."""

    def __init__(
        self,
        name: str,
        args: JobSetControllerMemoryArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tpu-pathways:installs:JobSetControllerMemory", name, None, opts)
        provider, jobset_install = args.provider, args.jobset_install
        memory = f"{args.memory_mib}Mi"
        k8s.apps.v1.DeploymentPatch(
            name,
            metadata=k8s.meta.v1.ObjectMetaPatchArgs(
                name=JOBSET_DEPLOYMENT,
                namespace=JOBSET_NAMESPACE,
                # The release manifest's field manager owns these fields; take them over.
                annotations={"pulumi.com/patchForce": "true"},
            ),
            spec=k8s.apps.v1.DeploymentSpecPatchArgs(
                template=k8s.core.v1.PodTemplateSpecPatchArgs(
                    spec=k8s.core.v1.PodSpecPatchArgs(
                        containers=[
                            k8s.core.v1.ContainerPatchArgs(
                                name=JOBSET_CONTAINER,
                                resources=k8s.core.v1.ResourceRequirementsPatchArgs(
                                    limits={"memory": memory}, requests={"memory": memory}
                                ),
                            )
                        ]
                    )
                )
            ),
            opts=pulumi.ResourceOptions(
                parent=self, provider=provider, depends_on=[jobset_install]
            ),
        )
        self.register_outputs({"memory": memory})
