"""Node pools as the Kubernetes scheduler sees them, and whether a pod fits one.

A ``NodePoolModel`` is one GKE node pool: the labels and taints GKE puts on its nodes, what a
node leaves allocatable, how many nodes it can have and which Google identity its nodes act
as. The preflight takes a list of them as input, so it can check a stack's workloads against
the pools this stack plans or the pools another stack owns.

GKE facts used (GKE documentation, "About TPUs in GKE" and node-pool labels, 2026-11):
- every node carries ``cloud.google.com/gke-nodepool=<pool>``,
  ``node.kubernetes.io/instance-type=<machine type>`` and the pool's own labels;
- TPU nodes also carry ``cloud.google.com/gke-tpu-accelerator`` and
  ``cloud.google.com/gke-tpu-topology``, and the taint ``google.com/tpu=present:NoSchedule``;
  GKE's ExtendedResourceToleration admission adds a toleration of it to every pod that requests
  ``google.com/tpu``, and to no other pod;
- Spot nodes carry ``cloud.google.com/gke-spot=true``.

JobSet facts used (kubernetes-sigs/jobset v0.10.1, pkg/webhooks/pod_mutating_webhook.go,
setExclusiveAffinities and setNodeSelector): a pod annotated
``alpha.jobset.sigs.k8s.io/exclusive-topology: <key>`` is admitted, as the leader of its Job
(completion index 0), with a required pod affinity to its own Job's pods and a required
anti-affinity to pods of every other Job (label ``jobset.sigs.k8s.io/job-key``) of the same
``jobset.sigs.k8s.io/priority``, per domain of ``<key>``, in all namespaces; the Job's other pods
get a nodeSelector for the leader's domain. Only pods it patches get the priority label, so a
pod without the annotation (a colocated head) is selected by no Job's anti-affinity: nothing
keeps it out of a node pool another Job holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from components.errors import ConfigError, ConfigIssue
from components.labels import NODE_POOL_LABEL, TPU_RESOURCE, TaintEffect
from components.pathways.controller_model import AffinityTerm, PodModel, PodSet, Toleration
from components.pathways.head_sizing import node_free, node_holds
from components.tpu.machines import MachineType

TPU_TAINT_KEY = TPU_RESOURCE


@dataclass(frozen=True)
class Taint:
    """A node taint. ``effect`` may be given as Kubernetes' string (a ``Taint`` is public API):
    it is kept as the ``TaintEffect`` it names, so a misspelt effect fails here, not on a
    cluster."""

    key: str
    value: str
    effect: TaintEffect

    def __post_init__(self) -> None:
        if self.effect not in set(TaintEffect):
            allowed = ", ".join(TaintEffect)
            issue = ConfigIssue("effect", f"{self.effect!r} is not allowed; one of {allowed}")
            raise ConfigError([issue], f"Taint {self.key!r}")
        object.__setattr__(self, "effect", TaintEffect(self.effect))

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}"

    def toleration(self) -> dict[str, str]:
        """The manifest toleration of this taint, whatever its value."""
        return {"key": self.key, "operator": "Exists", "effect": self.effect.value}

    def tolerated_by(self, toleration: Toleration) -> bool:
        """Kubernetes' match (core v1 ``Toleration.ToleratesTaint``): the toleration's effect, a
        plain string from a manifest or the user, is empty (every effect) or this one."""
        if toleration.effect and toleration.effect != self.effect:
            return False
        if toleration.operator == "Exists":
            return toleration.key in ("", self.key)
        return toleration.key == self.key and toleration.value == self.value


TPU_TAINT = Taint(TPU_TAINT_KEY, "present", TaintEffect.NO_SCHEDULE)


@dataclass(frozen=True)
class NodePoolModel:
    """One GKE node pool: ``group`` is the stack's name for it (a TPU pool's slices share one)."""

    name: str
    group: str
    # None: a TPU host whose size is not published (v4, 1-chip Ironwood/tpu7; see machines.py):
    # pods' CPU and memory are then not checked against it, only chips, taints and labels.
    machine: MachineType | None
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    max_nodes: int
    tpu_chips: int  # per node
    identity: str | None  # the Google service account its nodes act as; None: not known here

    def describe_labels(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in sorted(self.labels.items()))


def selector_mismatch(pod: PodModel, pool: NodePoolModel) -> dict[str, str]:
    """The pod's nodeSelector entries this pool's nodes do not carry."""
    return {k: v for k, v in pod.node_selector.items() if pool.labels.get(k) != v}


def untolerated_taints(pod: PodModel, pool: NodePoolModel) -> list[Taint]:
    tolerations = list(pod.tolerations)
    if pod.tpu_chips:
        # ExtendedResourceToleration: pods requesting google.com/tpu tolerate its taint.
        tolerations.append(Toleration(TPU_TAINT_KEY, operator="Exists"))
    return [t for t in pool.taints if not any(t.tolerated_by(x) for x in tolerations)]


def resource_shortfall(pod: PodModel, pool: NodePoolModel) -> str | None:
    problems = []
    if (machine := pool.machine) is not None and not node_holds(machine, pod.resources):
        free = node_free(machine)
        problems.append(
            f"needs {pod.resources} but a {machine.name} node has about "
            f"{free.cpu_millicores / 1000:g} CPU / {free.memory_bytes / 2**30:.0f}Gi free after "
            "GKE's system pods"
        )
    if pod.tpu_chips > pool.tpu_chips:
        problems.append(f"needs {pod.tpu_chips} TPU chips; its nodes have {pool.tpu_chips}")
    if pod.per_group > pool.max_nodes:
        problems.append(
            f"needs {pod.per_group} nodes in one node pool; it has at most {pool.max_nodes}"
        )
    return "; ".join(problems) or None


def why_not(pod: PodModel, pool: NodePoolModel) -> str | None:
    """Why the pod cannot run on this pool's nodes, or None if it can."""
    missing = selector_mismatch(pod, pool)
    if missing:
        wanted = ", ".join(f"{k}={v}" for k, v in sorted(missing.items()))
        return f"nodeSelector {wanted} matches none of its node labels"
    taints = untolerated_taints(pod, pool)
    if taints:
        return f"does not tolerate the taint {', '.join(map(str, taints))}"
    return resource_shortfall(pod, pool)


def pools_that_fit(pod: PodModel, pools: Sequence[NodePoolModel]) -> list[NodePoolModel]:
    """The pools whose nodes can run the pod, in the order given (``PoolIndex.fit``)."""
    return list(PoolIndex(pools).fit(pod).pools)


@dataclass(frozen=True)
class Fit:
    """The node pools one kind of pod can run on, with what the preflight reports of them."""

    pools: tuple[NodePoolModel, ...]  # in the order the index was given
    groups: tuple[str, ...]  # sorted
    names: frozenset[str]
    identities: frozenset[str | None]
    by_group: Mapping[str, tuple[NodePoolModel, ...]]

    @classmethod
    def of(cls, pools: Sequence[NodePoolModel]) -> Fit:
        by_group: dict[str, list[NodePoolModel]] = {}
        for pool in pools:
            by_group.setdefault(pool.group, []).append(pool)
        return cls(
            tuple(pools),
            tuple(sorted(by_group)),
            frozenset(p.name for p in pools),
            frozenset(p.identity for p in pools),
            {group: tuple(members) for group, members in by_group.items()},
        )

    def in_group(self, group: str) -> tuple[NodePoolModel, ...]:
        return self.by_group.get(group, ())


def _fit_key(pod: PodModel) -> tuple:
    """Everything ``why_not`` reads of a pod: pods that agree on it fit the same pools."""
    selector = tuple(sorted(pod.node_selector.items()))
    return selector, pod.tolerations, pod.tpu_chips, pod.resources, pod.per_group


class PoolIndex:
    """Node pools indexed by what pods select on, so a stack's check is linear in its jobs and
    pools, not their product.

    A pod selecting ``cloud.google.com/gke-nodepool`` is checked against that one pool. Any
    other pod is checked once per group of identical pools (a TPU pool's slices differ only in
    their name label, so its first pool stands for the group), and only against the groups
    whose labels carry every other entry of its nodeSelector. Pods that agree on everything the
    check reads share one verdict (``_fit_key``): a stack's jobs of one shape cost one check."""

    def __init__(self, pools: Sequence[NodePoolModel]) -> None:
        self.pools = tuple(pools)
        self._position = {id(p): i for i, p in enumerate(self.pools)}
        self.by_name = {p.name: p for p in self.pools}
        self.groups: dict[str, list[NodePoolModel]] = {}
        for pool in self.pools:
            self.groups.setdefault(pool.group, []).append(pool)
        self._group_order = {group: i for i, group in enumerate(self.groups)}
        self._labelled: dict[tuple[str, str], set[str]] = {}
        for group, members in self.groups.items():
            for item in members[0].labels.items():
                if item[0] != NODE_POOL_LABEL:
                    self._labelled.setdefault(item, set()).add(group)
        self._fits: dict[tuple, Fit] = {}

    def group(self, group: str) -> tuple[NodePoolModel, ...]:
        return tuple(self.groups.get(group, ()))

    def fit(self, pod: PodModel) -> Fit:
        key = _fit_key(pod)
        if key not in self._fits:
            self._fits[key] = Fit.of(self._fitting(pod))
        return self._fits[key]

    def _fitting(self, pod: PodModel) -> list[NodePoolModel]:
        if (name := pod.node_selector.get(NODE_POOL_LABEL)) is not None:
            pool = self.by_name.get(name)
            return [pool] if pool is not None and why_not(pod, pool) is None else []
        groups = self._candidate_groups(pod)
        found = [
            pool
            for group in groups
            if why_not(pod, self.groups[group][0]) is None
            for pool in self.groups[group]
        ]
        return sorted(found, key=lambda p: self._position[id(p)])

    def _candidate_groups(self, pod: PodModel) -> list[str]:
        """The groups whose (first pool's) labels carry every entry of the pod's nodeSelector."""
        candidates: set[str] | None = None
        for item in pod.node_selector.items():
            carrying = self._labelled.get(item, set())
            candidates = carrying if candidates is None else candidates & carrying
        if candidates is None:
            return list(self.groups)
        return sorted(candidates, key=self._group_order.__getitem__)


def required_terms(pod: PodModel) -> tuple[tuple[AffinityTerm, ...], tuple[AffinityTerm, ...]]:
    """The pod's required (affinity, anti-affinity) terms once admitted: the controller's, plus
    what JobSet's exclusive placement injects (see the module docstring)."""
    affinity, anti_affinity = pod.affinity, pod.anti_affinity
    if pod.exclusive_topology is not None:
        # The term "own Job" binds a group's pods together, which a group does anyway.
        anti_affinity += (AffinityTerm(PodSet.OTHER_JOBS, pod.exclusive_topology),)
    return affinity, anti_affinity


def jobset_bound_topologies(pod: PodModel) -> frozenset[str]:
    """Topology keys whose domain the pod must share with its JobSet's pods already placed."""
    affinity, _ = required_terms(pod)
    return frozenset(t.topology_key for t in affinity if t.selects is PodSet.OWN_JOBSET)


def schedulable_groups(pod: PodModel) -> int:
    """How many of the pod's groups (slices) can be placed at once. A group bound to the domain
    its JobSet's pods are in (affinity) that also keeps every other group out of its domain
    (anti-affinity to other Jobs of its priority, which its sibling slices are) leaves room for
    one group: the first takes the domain, the rest stay Pending."""
    _, anti_affinity = required_terms(pod)
    apart = {t.topology_key for t in anti_affinity if t.selects is PodSet.OTHER_JOBS}
    return 1 if jobset_bound_topologies(pod) & apart else pod.groups
