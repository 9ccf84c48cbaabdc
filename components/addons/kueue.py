"""Kueue quota objects computed from the stack's pools, never typed twice.

One ResourceFlavor per TPU shape (node labels accelerator + topology), one for the CPU head pool,
a ClusterQueue whose TPU quota is exactly the chips the stack provisions (and whose CPU/memory
quota is what the CPU pool can hold at its maximum size), a LocalQueue per team namespace, and
the priority classes XPK uses.

Per-team quotas (``addons.kueue.teamQuotas``) split that quota: each such team gets a ClusterQueue
of its own with its chips as nominal quota, restricted to its namespace, and the default
ClusterQueue keeps the rest; all of them form one cohort, so idle chips can be borrowed (up to a
team's borrowingLimit) and a team reclaims its quota from borrowers by preemption
(``reclaimWithinCohort: Any``). The nominal quotas still add up to the provisioned chips, so the
cohort never admits more than the cluster holds. Team stacks create only their LocalQueues,
pointing at the ClusterQueue the owner stack exports for their namespace.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.labels import (
    ACCELERATOR_LABEL,
    INSTANCE_TYPE_LABEL,
    NAMESPACE_NAME_LABEL,
    NODE_POOL_LABEL,
    TOPOLOGY_LABEL,
    TPU_RESOURCE,
)
from components.stack.schema import KueueAddon, Priority, StackConfig, TeamQuota
from components.tpu.catalog import TpuShape, resolve_accelerator
from components.tpu.quantities import format_cpu, format_memory

# The queue objects' apiVersion; KueueAddon pairs it with the Kueue releases that serve it.
KUEUE_API = KueueAddon.API_VERSION
CLUSTER_QUEUE = "cluster-queue"
LOCAL_QUEUE = "multislice-queue"


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


def tpu_node_labels(shape: TpuShape) -> dict[str, str]:
    """The node labels that select one TPU shape (a flavor's nodeLabels)."""
    return {
        ACCELERATOR_LABEL: shape.accelerator_label,
        TOPOLOGY_LABEL: shape.topology,
        # 2x4 exists on two 4-chip hosts and on one 8-chip host: the machine decides.
        INSTANCE_TYPE_LABEL: shape.machine_type,
    }


def team_cluster_queue_name(team: str) -> str:
    return f"{team}-{CLUSTER_QUEUE}"


def team_cluster_queues(config: StackConfig) -> dict[str, str]:
    """The ClusterQueue of each team with a quota of its own."""
    return {q.team: team_cluster_queue_name(q.team) for q in config.addons.kueue.team_quotas}


def cluster_queue_for(config: StackConfig, team: str) -> str:
    """Where a team namespace's LocalQueue points: the owner's queue for a team stack."""
    if config.shared_cluster is not None:
        return config.shared_cluster.queues.cluster_queue(team)
    return team_cluster_queues(config).get(team, CLUSTER_QUEUE)


class LocalQueues(pulumi.ComponentResource):
    """A LocalQueue in each of the stack's team namespaces, pointing at its ClusterQueue."""

    def __init__(
        self,
        name: str,
        config: StackConfig,
        namespaces: Mapping[str, pulumi.Output[str]],
        provider: k8s.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tpu-pathways:kueue:LocalQueues", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=provider)
        local_queues(name, config, namespaces, child)
        self.register_outputs({})


def local_queues(
    name: str,
    config: StackConfig,
    namespaces: Mapping[str, pulumi.Output[str]],
    opts: pulumi.ResourceOptions,
) -> None:
    for team, namespace in namespaces.items():
        k8s.apiextensions.CustomResource(
            f"{name}-{team}-{LOCAL_QUEUE}",
            api_version=KUEUE_API,
            kind="LocalQueue",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=LOCAL_QUEUE, namespace=namespace),
            spec={"clusterQueue": cluster_queue_for(config, team)},
            opts=opts,
        )


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
            labels = tpu_node_labels(flavor.shape)
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
        queues = [cluster_queue]
        for quota in config.addons.kueue.team_quotas:
            queue = team_cluster_queue_name(quota.team)
            queues.append(
                k8s.apiextensions.CustomResource(
                    f"{name}-{queue}",
                    api_version=KUEUE_API,
                    kind="ClusterQueue",
                    metadata=k8s.meta.v1.ObjectMetaArgs(name=queue),
                    spec=team_cluster_queue_spec(config, quota),
                    opts=child,
                )
            )
        local_queues(
            name,
            config,
            namespaces,
            pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=queues)),
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


def team_chips(quota: TeamQuota) -> dict[str, int]:
    """A team's quota per flavor name (config validation guarantees the names resolve)."""
    chips: dict[str, int] = {}
    for accelerator, count in quota.chips.items():
        flavor = flavor_name(resolve_accelerator(accelerator))
        chips[flavor] = chips.get(flavor, 0) + count
    return chips


def _tpu_group(
    flavors: list[TpuFlavor], quota: Mapping[str, int], borrowing_limit: int | None
) -> dict:
    def resource(flavor: TpuFlavor) -> dict:
        entry: dict = {"name": TPU_RESOURCE, "nominalQuota": quota.get(flavor.name, 0)}
        if borrowing_limit is not None:
            entry["borrowingLimit"] = borrowing_limit
        return entry

    return {
        "coveredResources": [TPU_RESOURCE],
        "flavors": [{"name": f.name, "resources": [resource(f)]} for f in flavors],
    }


def _cpu_group(config: StackConfig, cpu: str, memory: str) -> dict:
    resources = [{"name": "cpu", "nominalQuota": cpu}, {"name": "memory", "nominalQuota": memory}]
    return {
        "coveredResources": ["cpu", "memory"],
        "flavors": [{"name": cpu_flavor_name(config), "resources": resources}],
    }


def _queue_spec(config: StackConfig, groups: list[dict], namespaces: dict) -> dict:
    spec: dict = {"namespaceSelector": namespaces, "queueingStrategy": "BestEffortFIFO"}
    cohort = bool(config.addons.kueue.team_quotas)
    if cohort:  # every queue of the cluster shares one cohort; nothing changes without quotas
        # v1beta2 field (v1beta1 called it `cohort`)
        spec["cohortName"] = config.cluster.name
    spec["preemption"] = {
        # A team takes back its own quota from queues that borrowed it.
        "reclaimWithinCohort": "Any" if cohort else "Never",
        "withinClusterQueue": "LowerPriority",
    }
    spec["resourceGroups"] = groups
    return spec


def cluster_queue_spec(config: StackConfig) -> dict:
    """TPU quota = provisioned chips per flavor (less the teams' own quotas); CPU/memory = the
    CPU pool at max size."""
    machine = config.cpu_pool.machine
    nodes = config.cpu_pool.max_nodes
    groups = []
    flavors = tpu_flavors(config)
    if flavors:
        assigned: dict[str, int] = {}
        for quota in config.addons.kueue.team_quotas:
            for flavor, chips in team_chips(quota).items():
                assigned[flavor] = assigned.get(flavor, 0) + chips
        rest = {f.name: f.chips - assigned.get(f.name, 0) for f in flavors}
        groups.append(_tpu_group(flavors, rest, None))
    cpu_quota = format_cpu(machine.allocatable_cpu_millicores * nodes)
    memory_quota = format_memory(machine.allocatable_memory_bytes * nodes)
    groups.append(_cpu_group(config, cpu_quota, memory_quota))
    return _queue_spec(config, groups, {})


def team_cluster_queue_spec(config: StackConfig, quota: TeamQuota) -> dict:
    """A team's own queue: its chips as nominal quota, no CPU of its own (heads borrow the
    default queue's), admitting only from the team's namespace."""
    groups = [
        _tpu_group(tpu_flavors(config), team_chips(quota), quota.borrowing_limit),
        _cpu_group(config, "0", "0"),
    ]
    selector = {"matchLabels": {NAMESPACE_NAME_LABEL: quota.team}}
    return _queue_spec(config, groups, selector)


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
