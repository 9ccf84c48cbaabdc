"""Kueue quota objects computed from the stack's pools, never typed twice.

One ResourceFlavor per TPU shape (node labels accelerator + topology), one for the CPU head pool,
a ClusterQueue whose TPU quota is exactly the chips the stack provisions (and whose CPU/memory
quota is what the CPU pool can hold at its maximum size), a LocalQueue per team namespace, and
the priority classes XPK uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.catalog import TpuShape
from components.config import KueueAddon, Priority, StackConfig
from components.quantities import format_cpu, format_memory

# The queue objects' apiVersion; KueueAddon pairs it with the Kueue releases that serve it.
KUEUE_API = KueueAddon.API_VERSION
CLUSTER_QUEUE = "cluster-queue"
LOCAL_QUEUE = "multislice-queue"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"
NODE_POOL_LABEL = "cloud.google.com/gke-nodepool"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
TPU_RESOURCE = "google.com/tpu"

# XPK's priority classes, lowest to highest (the names workloads may ask for).
PRIORITY_CLASSES: Mapping[Priority, int] = {
    Priority.VERY_LOW: 100,
    Priority.LOW: 250,
    Priority.MEDIUM: 500,
    Priority.HIGH: 750,
    Priority.VERY_HIGH: 1000,
}


@dataclass(frozen=True)
class TpuFlavor:
    name: str
    shape: TpuShape
    chips: int


def flavor_name(shape: TpuShape) -> str:
    return f"{shape.accelerator_label}-{shape.topology}-{shape.machine_type.rsplit('-', 1)[-1]}"


def tpu_flavors(config: StackConfig) -> list[TpuFlavor]:
    """One flavor per distinct TPU shape, with the chips all its slices provide."""
    chips: dict[str, int] = {}
    shapes: dict[str, TpuShape] = {}
    for pool in config.tpu_pools:
        name = flavor_name(pool.shape)
        shapes[name] = pool.shape
        chips[name] = chips.get(name, 0) + pool.slices * pool.shape.chips
    return [TpuFlavor(name, shapes[name], chips[name]) for name in sorted(shapes)]


def cpu_flavor_name(config: StackConfig) -> str:
    return f"cpu-{config.cpu_pool.name}"


class KueueQueues(pulumi.ComponentResource):
    """Flavors, the ClusterQueue and per-team LocalQueues (needs Kueue's CRDs installed)."""

    def __init__(
        self,
        name: str,
        config: StackConfig,
        namespaces: Mapping[str, pulumi.Output[str]],
        provider: k8s.Provider,
        kueue_install: pulumi.Resource,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tpu-pathways:kueue:KueueQueues", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[kueue_install])
        flavors = tpu_flavors(config)
        for flavor in flavors:
            labels = {
                ACCELERATOR_LABEL: flavor.shape.accelerator_label,
                TOPOLOGY_LABEL: flavor.shape.topology,
                # 2x4 exists on two 4-chip hosts and on one 8-chip host: the machine decides.
                INSTANCE_TYPE_LABEL: flavor.shape.machine_type,
            }
            self._flavor(f"{name}-{flavor.name}", flavor.name, labels, child)
        cpu_flavor = cpu_flavor_name(config)
        self._flavor(
            f"{name}-{cpu_flavor}", cpu_flavor, {NODE_POOL_LABEL: config.cpu_pool.name}, child
        )

        cluster_queue = k8s.apiextensions.CustomResource(
            f"{name}-{CLUSTER_QUEUE}",
            api_version=KUEUE_API,
            kind="ClusterQueue",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=CLUSTER_QUEUE),
            spec=cluster_queue_spec(config),
            opts=child,
        )
        queue_opts = pulumi.ResourceOptions.merge(
            child, pulumi.ResourceOptions(depends_on=[cluster_queue])
        )
        for team, namespace in namespaces.items():
            k8s.apiextensions.CustomResource(
                f"{name}-{team}-{LOCAL_QUEUE}",
                api_version=KUEUE_API,
                kind="LocalQueue",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=LOCAL_QUEUE, namespace=namespace),
                spec={"clusterQueue": CLUSTER_QUEUE},
                opts=queue_opts,
            )
        self.register_outputs({})

    @staticmethod
    def _flavor(resource_name: str, flavor: str, labels: dict[str, str], opts) -> None:
        k8s.apiextensions.CustomResource(
            resource_name,
            api_version=KUEUE_API,
            kind="ResourceFlavor",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=flavor),
            spec={"nodeLabels": labels},
            opts=opts,
        )


def cluster_queue_spec(config: StackConfig) -> dict:
    """TPU quota = provisioned chips per flavor; CPU/memory = the CPU pool at max size."""
    machine = config.cpu_pool.machine
    nodes = config.cpu_pool.max_nodes
    groups = []
    flavors = tpu_flavors(config)
    if flavors:
        groups.append(
            {
                "coveredResources": [TPU_RESOURCE],
                "flavors": [
                    {
                        "name": f.name,
                        "resources": [{"name": TPU_RESOURCE, "nominalQuota": f.chips}],
                    }
                    for f in flavors
                ],
            }
        )
    cpu_quota = format_cpu(machine.allocatable_cpu_millicores * nodes)
    memory_quota = format_memory(machine.allocatable_memory_bytes * nodes)
    groups.append(
        {
            "coveredResources": ["cpu", "memory"],
            "flavors": [
                {
                    "name": cpu_flavor_name(config),
                    "resources": [
                        {"name": "cpu", "nominalQuota": cpu_quota},
                        {"name": "memory", "nominalQuota": memory_quota},
                    ],
                }
            ],
        }
    )
    return {
        "namespaceSelector": {},
        "queueingStrategy": "BestEffortFIFO",
        "preemption": {
            "reclaimWithinCohort": "Never",
            "withinClusterQueue": "LowerPriority",
        },
        "resourceGroups": groups,
    }


class PriorityClasses(pulumi.ComponentResource):
    def __init__(
        self, name: str, provider: k8s.Provider, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:kueue:PriorityClasses", name, None, opts)
        for priority, value in PRIORITY_CLASSES.items():
            k8s.scheduling.v1.PriorityClass(
                f"{name}-{priority.value}",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=priority.value),
                value=value,
                global_default=False,
                description=f"Pathways workload priority {priority.value} ({value})",
                opts=pulumi.ResourceOptions(parent=self, provider=provider),
            )
        self.register_outputs({})
