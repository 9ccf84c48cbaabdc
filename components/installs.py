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

from collections.abc import Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.config import ReleaseAddon


class ReleaseManifest(pulumi.ComponentResource):
    """One upstream release manifest, applied server-side; ready when its workloads are."""

    def __init__(
        self,
        name: str,
        addon: ReleaseAddon,
        provider: k8s.Provider,
        depends_on: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tpu-pathways:installs:ReleaseManifest", name, None, opts)
        url, version = addon.url, addon.version
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
