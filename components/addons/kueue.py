"""Kueue quota objects computed from the stack's pools, never typed twice.

One ResourceFlavor per TPU shape (node labels accelerator + topology), one for the CPU head pool,
a ClusterQueue whose TPU quota is exactly the chips the stack provisions (and whose CPU/memory
quota is what the CPU pool can hold at its maximum size), a LocalQueue per team namespace, one
per shared Pathways service in namespace ``default`` (where pathwaysutils' client needs the
service; it points at its team's ClusterQueue), and the priority classes XPK uses.

Per-team quotas (``addons.kueue.teamQuotas``) split that quota: each such team gets a ClusterQueue
of its own with its chips as nominal quota, restricted to its namespace, and the default
ClusterQueue keeps the rest; all of them form one cohort, so idle chips can be borrowed (up to a
team's borrowingLimit) and a team reclaims its quota from borrowers by preemption
(``reclaimWithinCohort: Any``). The nominal quotas still add up to the provisioned chips, so the
cohort never admits more than the cluster holds. Team stacks create only their LocalQueues,
pointing at the ClusterQueue the owner stack exports for their namespace.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from components.labels import (
    DEDICATED_TO_LABEL,
    NAMESPACE_NAME_LABEL,
    NODE_POOL_LABEL,
    SHARED_POOL_LABEL,
    SHARED_POOL_VALUE,
    TPU_RESOURCE,
    tpu_node_labels,
)
from components.pathways.service_client import SERVICE_NAMESPACE
from components.tpu.catalog import TpuShape, resolve_accelerator
from components.tpu.machines import pods_capacity
from components.vocabulary import (
    CLUSTER_QUEUE,
    KUEUE_API_VERSION,
    LOCAL_QUEUE,
    PRIORITY_CLASSES,
    Priority,
    team_cluster_queue_name,
    team_cluster_queues,
)


@dataclass(frozen=True)
class TpuFlavor:
    name: str
    shape: TpuShape
    chips: int


def flavor_name(shape: TpuShape) -> str:
    return f"{shape.accelerator_label}-{shape.topology}-{shape.machine_type.rsplit('-', 1)[-1]}"


def tpu_flavors(pools: Iterable[tuple[TpuShape, int]]) -> list[TpuFlavor]:
    """One flavor per distinct TPU shape of ``(shape, slices)`` pools, with the chips all its
    slices provide."""
    chips: dict[str, int] = {}
    shapes: dict[str, TpuShape] = {}
    for shape, slices in pools:
        name = flavor_name(shape)
        shapes[name] = shape
        chips[name] = chips.get(name, 0) + slices * shape.chips
    return [TpuFlavor(name, shapes[name], chips[name]) for name in sorted(shapes)]


def cpu_flavor_name(cpu_pool: str) -> str:
    return f"cpu-{cpu_pool}"


@dataclass(frozen=True)
class TeamQuotaArgs:
    """A team's guaranteed share of the TPUs: its own ClusterQueue in the cluster's cohort."""

    team: str
    """The team's namespace (the only one its queue admits from)."""
    chips: Mapping[str, int]
    """Chips per TPU shape, keyed by accelerator name (v5p-16, v6e-2x2)."""
    borrowing_limit: int | None = None
    """Chips per shape it may borrow beyond its quota (None: all idle chips)."""

    def __post_init__(self) -> None:
        for accelerator in self.chips:
            resolve_accelerator(accelerator)  # CatalogError names the unknown accelerator


@dataclass(frozen=True)
class DedicatedQueueArgs:
    """A team namespace's dedicated pools as Kueue sees them: flavors that select and tolerate
    only its nodes, and a ClusterQueue of its own whose quota is exactly those pools."""

    team: str
    tpu_flavors: Sequence[TpuFlavor]
    """One per TPU shape of its pools, with their chips (``tpu_flavors``)."""
    cpu_pool: str
    cpu_machine_type: str
    cpu_max_nodes: int

    def flavor(self, base: str) -> str:
        return f"{base}-{self.team}"


def dedicated_flavor_spec(team: str, labels: Mapping[str, str]) -> dict:
    """A flavor of a team's dedicated pools: Kueue adds its node labels and toleration to the
    pods it admits there (ResourceFlavor nodeLabels/tolerations, v1beta2). The toleration names
    no effect: it tolerates the pools' taint whatever its effect (NoExecute)."""
    return {
        "nodeLabels": {**labels, DEDICATED_TO_LABEL: team},
        "tolerations": [{"key": DEDICATED_TO_LABEL, "operator": "Equal", "value": team}],
    }


def shared_flavor_labels(labels: Mapping[str, str], labelled: bool = True) -> dict[str, str]:
    """A flavor of the shared pools selects them by ``SHARED_POOL_LABEL`` too (dedicated nodes
    have the same TPU labels); not another tool's nodes (they lack it: pods would stay Pending)."""
    return {**labels, SHARED_POOL_LABEL: SHARED_POOL_VALUE} if labelled else dict(labels)


@dataclass(frozen=True)
class KueueQueuesArgs:
    """Inputs of ``KueueQueues``: what the cluster provisions (the quota), its teams and
    where their LocalQueues go."""

    provider: k8s.Provider
    kueue_install: pulumi.Resource
    """Kueue's install (its CRDs must exist first)."""
    cohort: str
    """The cohort of every ClusterQueue when there are team quotas (the cluster's name)."""
    tpu_flavors: Sequence[TpuFlavor]
    """One per TPU shape with the chips provisioned (``tpu_flavors([(shape, slices)])``)."""
    cpu_pool: str
    """The CPU node pool of the Pathways heads (its flavor selects it by name)."""
    cpu_machine_type: str
    cpu_max_nodes: int
    """The CPU pool's size at most: its allocatable CPU and memory are the CPU quota."""
    namespaces: Mapping[str, pulumi.Input[str]]
    """Team -> its namespace: each gets a LocalQueue."""
    team_quotas: Sequence[TeamQuotaArgs] = ()
    service_queues: Mapping[str, str] = field(default_factory=dict)
    """LocalQueue name in namespace default (one per shared service) -> the team that owns it."""
    dedicated: Sequence[DedicatedQueueArgs] = ()
    """Team namespaces with dedicated pools (``tpu_flavors`` holds the shared pools' only)."""
    shared_pool_label: bool = True  # False: the shared nodes are another tool's, unlabelled


@dataclass(frozen=True)
class LocalQueuesArgs:
    """Inputs of ``LocalQueues`` (a team stack's queues, pointing at its owner's)."""

    provider: k8s.Provider
    namespaces: Mapping[str, pulumi.Input[str]]
    """Team -> its namespace."""
    cluster_queues: Mapping[str, str]
    """Team -> the ClusterQueue its LocalQueue points at."""
    service_queues: Mapping[str, str] = field(default_factory=dict)
    """LocalQueue name in namespace default (one per shared service) -> the team that owns it
    (which must be in ``cluster_queues``)."""


class LocalQueues(pulumi.ComponentResource):
    """A LocalQueue in each of the stack's team namespaces, pointing at its ClusterQueue."""

    def __init__(
        self, name: str, args: LocalQueuesArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:kueue:LocalQueues", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=args.provider)
        local_queues(name, args.namespaces, args.cluster_queues, child)
        service_local_queues(name, args.service_queues, args.cluster_queues, child)
        self.register_outputs({})


def local_queues(
    name: str,
    namespaces: Mapping[str, pulumi.Input[str]],
    cluster_queues: Mapping[str, str],
    opts: pulumi.ResourceOptions,
) -> None:
    for team, namespace in namespaces.items():
        local_queue(
            f"{name}-{team}-{LOCAL_QUEUE}", LOCAL_QUEUE, namespace, cluster_queues[team], opts
        )


def service_local_queues(
    name: str,
    service_queues: Mapping[str, str],
    cluster_queues: Mapping[str, str],
    opts: pulumi.ResourceOptions,
) -> None:
    """Each shared service's LocalQueue in ``default``, on its team's ClusterQueue (its quota)."""
    for queue, team in service_queues.items():
        local_queue(
            f"{name}-{SERVICE_NAMESPACE}-{queue}",
            queue,
            SERVICE_NAMESPACE,
            cluster_queues[team],
            opts,
        )


def local_queue(
    resource_name: str,
    queue: str,
    namespace: pulumi.Input[str],
    cluster_queue: str,
    opts: pulumi.ResourceOptions,
) -> None:
    """One LocalQueue: where a namespace's jobs are queued on a ClusterQueue."""
    k8s.apiextensions.CustomResource(
        resource_name,
        api_version=KUEUE_API_VERSION,
        kind="LocalQueue",
        metadata=k8s.meta.v1.ObjectMetaArgs(name=queue, namespace=namespace),
        spec={"clusterQueue": cluster_queue},
        opts=opts,
    )


class KueueQueues(pulumi.ComponentResource):
    """Flavors, the ClusterQueue and per-team LocalQueues (needs Kueue's CRDs installed)."""

    def __init__(
        self, name: str, args: KueueQueuesArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:kueue:KueueQueues", name, None, opts)
        child = pulumi.ResourceOptions(
            parent=self, provider=args.provider, depends_on=[args.kueue_install]
        )
        for flavor in args.tpu_flavors:
            labels = shared_flavor_labels(tpu_node_labels(flavor.shape), args.shared_pool_label)
            self._flavor(f"{name}-{flavor.name}", flavor.name, labels, child)
        cpu_flavor = cpu_flavor_name(args.cpu_pool)
        labels = shared_flavor_labels({NODE_POOL_LABEL: args.cpu_pool}, args.shared_pool_label)
        self._flavor(f"{name}-{cpu_flavor}", cpu_flavor, labels, child)

        cluster_queue = k8s.apiextensions.CustomResource(
            f"{name}-{CLUSTER_QUEUE}",
            api_version=KUEUE_API_VERSION,
            kind="ClusterQueue",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=CLUSTER_QUEUE),
            spec=cluster_queue_spec(args),
            opts=child,
        )
        queues = [cluster_queue]
        for quota in args.team_quotas:
            queue = team_cluster_queue_name(quota.team)
            queues.append(
                k8s.apiextensions.CustomResource(
                    f"{name}-{queue}",
                    api_version=KUEUE_API_VERSION,
                    kind="ClusterQueue",
                    metadata=k8s.meta.v1.ObjectMetaArgs(name=queue),
                    spec=team_cluster_queue_spec(args, quota),
                    opts=child,
                )
            )
        for dedicated in args.dedicated:
            queues.append(self._dedicated(name, dedicated, child))
        own_queues = team_cluster_queues(
            [*(q.team for q in args.team_quotas), *(d.team for d in args.dedicated)]
        )
        cluster_queues = {team: own_queues.get(team, CLUSTER_QUEUE) for team in args.namespaces}
        after_queues = pulumi.ResourceOptions.merge(
            child, pulumi.ResourceOptions(depends_on=queues)
        )
        local_queues(name, args.namespaces, cluster_queues, after_queues)
        service_local_queues(name, args.service_queues, cluster_queues, after_queues)
        self.register_outputs({})

    @staticmethod
    def _flavor(resource_name: str, flavor: str, labels: Mapping[str, str], opts, spec=None):
        k8s.apiextensions.CustomResource(
            resource_name,
            api_version=KUEUE_API_VERSION,
            kind="ResourceFlavor",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=flavor),
            spec=spec or {"nodeLabels": dict(labels)},
            opts=opts,
        )

    def _dedicated(self, name: str, args: DedicatedQueueArgs, opts) -> pulumi.Resource:
        """A team's dedicated flavors and its ClusterQueue (no cohort: it lends and borrows
        nothing; its namespace and ``default``, where its shared services run)."""
        for flavor in args.tpu_flavors:
            spec = dedicated_flavor_spec(args.team, tpu_node_labels(flavor.shape))
            self._flavor(
                f"{name}-{args.flavor(flavor.name)}", args.flavor(flavor.name), {}, opts, spec
            )
        cpu = cpu_flavor_name(args.cpu_pool)
        spec = dedicated_flavor_spec(args.team, {NODE_POOL_LABEL: args.cpu_pool})
        self._flavor(f"{name}-{cpu}", cpu, {}, opts, spec)
        queue = team_cluster_queue_name(args.team)
        return k8s.apiextensions.CustomResource(
            f"{name}-{queue}",
            api_version=KUEUE_API_VERSION,
            kind="ClusterQueue",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=queue),
            spec=dedicated_cluster_queue_spec(args),
            opts=opts,
        )


def team_chips(quota: TeamQuotaArgs) -> dict[str, int]:
    """A team's quota per flavor name (``TeamQuotaArgs`` checked that the names resolve)."""
    chips: dict[str, int] = {}
    for accelerator, count in quota.chips.items():
        flavor = flavor_name(resolve_accelerator(accelerator))
        chips[flavor] = chips.get(flavor, 0) + count
    return chips


def tpu_quota_group(
    flavors: Sequence[TpuFlavor], quota: Mapping[str, int], borrowing_limit: int | None
) -> dict:
    """A ClusterQueue resource group: ``quota`` chips (by flavor name, 0 if absent) per flavor."""

    def resource(flavor: TpuFlavor) -> dict:
        entry: dict = {"name": TPU_RESOURCE, "nominalQuota": quota.get(flavor.name, 0)}
        if borrowing_limit is not None:
            entry["borrowingLimit"] = borrowing_limit
        return entry

    return {
        "coveredResources": [TPU_RESOURCE],
        "flavors": [{"name": f.name, "resources": [resource(f)]} for f in flavors],
    }


def cpu_quota_group(cpu_pool: str, cpu: str, memory: str) -> dict:
    """A ClusterQueue resource group: CPU and memory on the CPU pool's flavor."""
    resources = [{"name": "cpu", "nominalQuota": cpu}, {"name": "memory", "nominalQuota": memory}]
    return {
        "coveredResources": ["cpu", "memory"],
        "flavors": [{"name": cpu_flavor_name(cpu_pool), "resources": resources}],
    }


def _queue_spec(args: KueueQueuesArgs, groups: list[dict], namespaces: dict) -> dict:
    spec: dict = {"namespaceSelector": namespaces, "queueingStrategy": "BestEffortFIFO"}
    if args.team_quotas:  # every queue of the cluster shares one cohort; none without quotas
        spec["cohortName"] = args.cohort  # v1beta2 field (v1beta1 called it `cohort`)
    spec["preemption"] = queue_preemption(bool(args.team_quotas))
    spec["resourceGroups"] = groups
    return spec


def queue_preemption(cohort: bool) -> dict:
    """Higher priority preempts within a queue; in a cohort a team reclaims its own quota."""
    reclaim = "Any" if cohort else "Never"  # a team takes back its quota from borrowers
    return {"reclaimWithinCohort": reclaim, "withinClusterQueue": "LowerPriority"}


def cluster_queue_spec(args: KueueQueuesArgs) -> dict:
    """TPU quota = provisioned chips per flavor (less the teams' own quotas); CPU/memory = the
    CPU pool at max size."""
    groups = []
    flavors = list(args.tpu_flavors)
    if flavors:
        assigned: dict[str, int] = {}
        for quota in args.team_quotas:
            for flavor, chips in team_chips(quota).items():
                assigned[flavor] = assigned.get(flavor, 0) + chips
        rest = {f.name: f.chips - assigned.get(f.name, 0) for f in flavors}
        groups.append(tpu_quota_group(flavors, rest, None))
    capacity = pods_capacity([(args.cpu_machine_type, args.cpu_max_nodes)])
    groups.append(cpu_quota_group(args.cpu_pool, *capacity))
    return _queue_spec(args, groups, {})


def team_cluster_queue_spec(args: KueueQueuesArgs, quota: TeamQuotaArgs) -> dict:
    """A team's own queue: its chips as nominal quota, no CPU of its own (heads borrow the
    default queue's), admitting only from the team's namespace and ``default``, where the
    team's shared services must run."""
    groups = [
        tpu_quota_group(args.tpu_flavors, team_chips(quota), quota.borrowing_limit),
        cpu_quota_group(args.cpu_pool, "0", "0"),
    ]
    namespaces = [quota.team, SERVICE_NAMESPACE]
    selector = {
        "matchExpressions": [{"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": namespaces}]
    }
    return _queue_spec(args, groups, selector)


def dedicated_cluster_queue_spec(args: DedicatedQueueArgs) -> dict:
    """Exactly the team's pools: their chips per flavor, its CPU pool at its maximum size."""
    flavors = [TpuFlavor(args.flavor(f.name), f.shape, f.chips) for f in args.tpu_flavors]
    groups = [tpu_quota_group(flavors, {f.name: f.chips for f in flavors}, None)] if flavors else []
    capacity = pods_capacity([(args.cpu_machine_type, args.cpu_max_nodes)])
    groups.append(cpu_quota_group(args.cpu_pool, *capacity))
    selector = {
        "matchExpressions": [
            {
                "key": NAMESPACE_NAME_LABEL,
                "operator": "In",
                "values": [args.team, SERVICE_NAMESPACE],
            }
        ]
    }
    return {
        "namespaceSelector": selector,
        "queueingStrategy": "BestEffortFIFO",
        "preemption": {"reclaimWithinCohort": "Never", "withinClusterQueue": "LowerPriority"},
        "resourceGroups": groups,
    }


@dataclass(frozen=True)
class PriorityClassesArgs:
    """Inputs of ``PriorityClasses``."""

    provider: k8s.Provider
    classes: Mapping[Priority, int] = field(default_factory=lambda: dict(PRIORITY_CLASSES))
    """Each priority's value (default: XPK's classes)."""


class PriorityClasses(pulumi.ComponentResource):
    """The PriorityClasses Pathways workloads may ask for."""

    def __init__(
        self, name: str, args: PriorityClassesArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:kueue:PriorityClasses", name, None, opts)
        provider = args.provider
        for priority, value in args.classes.items():
            k8s.scheduling.v1.PriorityClass(
                f"{name}-{priority.value}",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=priority.value),
                value=value,
                global_default=False,
                description=f"Pathways workload priority {priority.value} ({value})",
                opts=pulumi.ResourceOptions(parent=self, provider=provider),
            )
        self.register_outputs({})
