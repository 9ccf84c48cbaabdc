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

from components.labels import NODE_POOL_LABEL, TPU_RESOURCE
from components.pathways.controller_model import AffinityTerm, PodModel, PodSet, Toleration
from components.pathways.head_sizing import node_free, node_holds
from components.tpu.machines import MachineType

TPU_TAINT_KEY = TPU_RESOURCE


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}"

    def toleration(self) -> dict[str, str]:
        """The manifest toleration of this taint, whatever its value."""
        return {"key": self.key, "operator": "Exists", "effect": self.effect}

    def tolerated_by(self, toleration: Toleration) -> bool:
        if toleration.effect and toleration.effect != self.effect:
            return False
        if toleration.operator == "Exists":
            return toleration.key in ("", self.key)
        return toleration.key == self.key and toleration.value == self.value


TPU_TAINT = Taint(TPU_TAINT_KEY, "present", "NoSchedule")


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
    """The pools whose nodes can run the pod. The node pools of one group (a TPU pool's slices)
    differ only in their name label, so unless the pod selects on that label one verdict
    serves the whole group: a stack's check stays linear in its slices, not quadratic."""
    if NODE_POOL_LABEL in pod.node_selector:
        return [p for p in pools if why_not(pod, p) is None]
    fits: dict[str, bool] = {}
    for pool in pools:
        if pool.group not in fits:
            fits[pool.group] = why_not(pod, pool) is None
    return [p for p in pools if fits[p.group]]


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
