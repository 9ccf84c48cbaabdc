"""The Pulumi program: validated stack config in, components registered, outputs returned.

`__main__.py` (for `pulumi up`) and the offline plan both call `build_stack`, so what the plan
shows is what the engine would be asked to create.
"""

from __future__ import annotations

from typing import Any

from components.cluster import ClusterTarget, ExistingCluster, GkeCluster
from components.config import StackConfig
from components.cpu_pool import CpuNodePool
from components.tpu_pool import TpuNodePool


def build_stack(config: StackConfig) -> dict[str, Any]:
    """Register every resource of the stack; returns the stack outputs to export."""
    name = config.cluster.name
    if config.creates_cluster:
        cluster: ClusterTarget = GkeCluster(name, config)
        pools = _node_pools(config, cluster)
    else:
        cluster = ExistingCluster(name, config)
        pools = {}

    outputs: dict[str, Any] = {
        "cluster_name": cluster.cluster_name,
        "cluster_location": cluster.location,
        "cluster_endpoint": cluster.endpoint,
        "kubeconfig": cluster.kubeconfig,
        "tpu_node_pools": {pool: p.node_pool_names for pool, p in pools.items()},
        "tpu_summary": tpu_summary(config),
    }
    if isinstance(cluster, GkeCluster):
        outputs["node_service_account"] = cluster.node_service_account
    return outputs


def _node_pools(config: StackConfig, cluster: GkeCluster) -> dict[str, TpuNodePool]:
    common = {
        "project": config.gcp.project,
        "zone": config.gcp.zone,
        "cluster_name": cluster.cluster_name,
        "location": cluster.location,
        "service_account": cluster.node_service_account,
        "team": config.team,
        "protect": config.protects_state,
    }
    name = config.cluster.name
    CpuNodePool(f"{name}-{config.cpu_pool.name}", config.cpu_pool, **common)
    return {
        pool.name: TpuNodePool(f"{name}-{pool.name}", pool, **common) for pool in config.tpu_pools
    }


def tpu_summary(config: StackConfig) -> dict[str, dict[str, int]]:
    """Slices, hosts and chips per TPU generation: what the stack provisions."""
    summary: dict[str, dict[str, int]] = {}
    for pool in config.tpu_pools:
        shape = pool.shape
        row = summary.setdefault(
            shape.generation.value, {"pools": 0, "slices": 0, "hosts": 0, "chips": 0}
        )
        row["pools"] += 1
        row["slices"] += pool.slices
        row["hosts"] += pool.slices * shape.hosts
        row["chips"] += pool.slices * shape.chips
    return dict(sorted(summary.items()))
