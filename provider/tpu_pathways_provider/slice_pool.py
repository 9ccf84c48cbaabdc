"""``TpuSlicePool``: TPU slices added to a cluster (one GKE node pool per slice)."""

from typing import NotRequired, TypedDict

import pulumi

from components.config.schema.cluster import GcpConfig
from components.config.schema.pools import TpuPoolConfig
from components.gke.node_config import PoolTarget
from components.gke.tpu_pool import TpuNodePool
from components.stack.args import tpu_pool_args
from components.vocabulary import node_service_account_email
from tpu_pathways_provider.checks import Problems
from tpu_pathways_provider.kube import child_options
from tpu_pathways_provider.types import Gcp, TpuPool
from tpu_pathways_provider.wire import stack_values


class TpuSlicePoolArgs(TypedDict):
    """A TPU pool of a GKE cluster."""

    gcp: Gcp
    """The cluster's project, region and zone (the pools go in the zone)."""
    cluster_name: str
    """The GKE cluster's name."""
    regional: NotRequired[bool]
    """Whether the cluster is regional (default true; false: zonal, in gcp.zone)."""
    node_service_account: NotRequired[str]
    """Email of the service account the nodes run as (default: the one a Cluster of this name creates)."""
    pool: TpuPool
    """The slice shape, how many slices and their capacity type."""
    team: NotRequired[str]
    """Team label put on the nodes."""
    protect: NotRequired[bool]
    """Protect the node pools from deletion (what production stacks do)."""


class TpuSlicePool(pulumi.ComponentResource):
    """TPU slices of one shape in an existing GKE cluster: one node pool per slice, placed and upgraded as one."""

    node_pool_names: pulumi.Output[list[str]]
    """The GKE node pools, one per slice (<pool name>-<slice index>)."""

    def __init__(
        self, name: str, args: TpuSlicePoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:index:TpuSlicePool", name, None, opts)
        values = stack_values(TpuSlicePoolArgs, args)
        problems = Problems(f"TpuSlicePool {name!r}")
        gcp = problems.model(GcpConfig, "gcp", values["gcp"])
        pool = problems.model(TpuPoolConfig, "pool", values["pool"])
        problems.raise_any()
        assert gcp is not None and pool is not None
        cluster = args["cluster_name"]
        target = PoolTarget(
            project=gcp.project,
            region=gcp.region,
            zone=gcp.zone,
            cluster_name=cluster,
            location=gcp.region if args.get("regional", True) else gcp.zone,
            service_account=args.get("node_service_account")
            or node_service_account_email(gcp.project, cluster),
            team=args.get("team") or "",
            protect=bool(args.get("protect", False)),
            node_pools=pool.slices,
            # Each node pool waits for these: the SDK does not pass a component's depends_on on
            # to its children's registrations.
            created_first=list(opts.depends_on or []) if opts else [],
        )
        pools = TpuNodePool(name, tpu_pool_args(pool, target), child_options(self, opts))
        self.node_pool_names = pools.node_pool_names
        self.register_outputs({"node_pool_names": self.node_pool_names})
