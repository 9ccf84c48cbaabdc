"""Kueue's quota admission of a queued JobSet on one cluster, on the Kueue objects a plan
renders, for the fleet's attack tests (a manager's, then a worker's). Facts modelled
(kubernetes-sigs/kueue v0.17.1):

- a Workload is queued on the LocalQueue its ``kueue.x-k8s.io/queue-name`` label names in its
  own namespace, on that LocalQueue's ClusterQueue, and is inadmissible when the namespace's
  labels do not match the ClusterQueue's ``namespaceSelector`` (pkg/scheduler/scheduler.go:
  "Workload namespace doesn't match ClusterQueue selector");
- a JobSet's pod sets are its replicated jobs, ``replicas`` x the Job's ``parallelism`` pods of
  the Job's pod template (pkg/controller/jobs/jobset/jobset_controller.go ``PodSets``);
- a pod's requests are kubernetes' ``PodRequests`` (containers and sidecars summed, an
  ordinary init container counted at its peak), a pod set's its pods' (``pod_requests``);
- each resource a pod set requests gets a flavor of the resource group covering it, every
  requested resource of that group the same flavor, and is charged there: a TPU pod set that
  also asks for CPU takes CPU of the CPU group's flavor; a non-zero request of a resource no
  group covers makes the workload inadmissible ("resource %s unavailable in ClusterQueue")
  (pkg/scheduler/flavorassigner/flavorassigner.go ``assignFlavors``,
  ``findFlavorForPodSets``);
- in a group, the pod set takes the first flavor in the group's order whose NoSchedule and
  NoExecute ``nodeTaints`` its pods (with the flavor's ``tolerations``) tolerate, whose
  ``nodeLabels`` match its nodeSelector and its required node affinity terms on the label keys
  some flavor of the group has (``flavorSelector``, ``checkFlavorForPodSets``), and whose quota
  holds what it asks of the group's resources;
- a ClusterQueue's quota of a flavor and resource: without a cohort, its nominal quota less
  its usage; in a cohort, what it keeps to itself (``nominalQuota - lendingLimit``) less its
  usage, plus what the cohort has left (every member's nominal quota less what it keeps, less
  their usage beyond what they keep), at most ``borrowingLimit`` beyond its own nominal quota
  (pkg/cache/scheduler/resource_node.go ``available``, ``localQuota``,
  ``accumulateFromChild``);
- on admission the pods get each assigned flavor's ``nodeLabels`` as nodeSelector and its
  ``tolerations`` (``tests/cluster_objects.admitted``).

Not modelled: flavor fungibility beyond "first flavor that fits" (no borrowing or preemption
preferences), topology-aware scheduling, and preemption: nothing here is ever preempted. The
fleet's reasoning that preemption cannot reach a dedicated team's workloads rests instead on a
property its tests check (test_manager_dedicated_attacks.py): no flavor of a dedicated manager
queue is in any other ClusterQueue of its cohort, and its borrowing and lending limits are 0, so
its workloads never borrow and reclaim never picks them (pkg/scheduler/preemption/preemption.go
``findCandidates`` considers only queues borrowing the flavor-resources the preemptor needs).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from components.tpu.quantities import parse_cpu, parse_memory

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
NAME_LABEL = "kubernetes.io/metadata.name"


def _amount(resource: str, value: Any) -> int:
    if str(value) == "0":
        return 0
    if resource == "cpu":
        return parse_cpu(str(value))
    if resource == "memory":
        return parse_memory(str(value))
    return int(value)


def _container_requests(container: Mapping[str, Any]) -> dict[str, int]:
    resources = container.get("resources", {})
    asked = {**resources.get("limits", {}), **resources.get("requests", {})}
    return {name: _amount(name, value) for name, value in asked.items()}


def _add(total: dict[str, int], more: Mapping[str, int]) -> dict[str, int]:
    return {k: total.get(k, 0) + more.get(k, 0) for k in {*total, *more}}


def _max(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    return {k: max(a.get(k, 0), b.get(k, 0)) for k in {*a, *b}}


def pod_requests(pod_spec: Mapping[str, Any]) -> dict[str, int]:
    """A pod's requests as Kueue counts them (limits where a request is absent: the API
    server's defaulting): kubernetes component-helpers resource ``PodRequests``, which Kueue
    v0.17.1 calls (pkg/workload/workload.go ``totalRequestsFromPodSets``): the containers' sum
    and the sidecars' (init containers with ``restartPolicy: Always``), or an ordinary init
    container with the sidecars started before it, whichever is larger, per resource."""
    total: dict[str, int] = {}
    for container in pod_spec.get("containers", []):
        total = _add(total, _container_requests(container))
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in pod_spec.get("initContainers", []):
        asked = _container_requests(container)
        if container.get("restartPolicy") == "Always":
            total, sidecars = _add(total, asked), _add(sidecars, asked)
            init_peak = _max(init_peak, sidecars)
        else:
            init_peak = _max(init_peak, _add(asked, sidecars))
    return dict(sorted(_max(total, init_peak).items()))


@dataclass(frozen=True)
class PodSet:
    name: str
    count: int
    spec: Mapping[str, Any]


def jobset_pod_sets(jobset: Mapping[str, Any]) -> list[PodSet]:
    sets = []
    for replicated in jobset["spec"]["replicatedJobs"]:
        job = replicated["template"]["spec"]
        count = replicated.get("replicas", 1) * job.get("parallelism", 1)
        sets.append(PodSet(replicated["name"], count, job["template"]["spec"]))
    return sets


def _requirement(expression: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """One matchExpressions requirement (a LabelSelector's or a node selector term's)."""
    key, operator = expression["key"], expression["operator"]
    values = expression.get("values", [])
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return labels.get(key) not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    if operator in ("Gt", "Lt") and labels.get(key, "").lstrip("-").isdigit():
        number, bound = int(labels[key]), int(values[0])
        return number > bound if operator == "Gt" else number < bound
    return False


def _matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """A LabelSelector (matchLabels, matchExpressions) against ``labels``."""
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    return all(_requirement(e, labels) for e in selector.get("matchExpressions", []))


def flavor_selector(pod_spec: Mapping[str, Any], keys: set[str]) -> Any:
    """Whether a flavor's node labels fit the pod's nodeSelector and required node affinity,
    on the label keys of the resource group's flavors only (flavorassigner.go
    ``flavorSelector``): a term left with no requirement on those keys matches every flavor."""
    selector = {k: v for k, v in pod_spec.get("nodeSelector", {}).items() if k in keys}
    affinity = (pod_spec.get("affinity") or {}).get("nodeAffinity") or {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    terms = []
    for term in required.get("nodeSelectorTerms", []):
        kept = [e for e in term.get("matchExpressions", []) if e["key"] in keys]
        if not kept:
            terms = []
            break
        terms.append(kept)

    def fits(labels: Mapping[str, str]) -> bool:
        if any(labels.get(k) != v for k, v in selector.items()):
            return False
        return not terms or any(all(_requirement(e, labels) for e in t) for t in terms)

    return fits


# checkFlavorForPodSets: only these taints of a flavor must be tolerated.
BLOCKING = ("NoSchedule", "NoExecute")


def tolerated(taint: Mapping[str, str], tolerations: list[Mapping[str, str]]) -> bool:
    """Whether one of ``tolerations`` tolerates ``taint`` (core v1 ``ToleratesTaint``)."""
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        if t.get("operator") == "Exists" and t.get("key") in (None, "", taint["key"]):
            return True
        if t.get("key") == taint["key"] and t.get("value") == taint.get("value"):
            return True
    return False


@dataclass
class KueueCluster:
    """A cluster's Kueue objects (manifests by kind) and the quota its admitted jobs use."""

    objects: Mapping[str, list[Mapping[str, Any]]]
    usage: dict[tuple[str, str, str], int] = field(default_factory=dict)
    """(ClusterQueue, flavor, resource) -> what its admitted workloads use."""

    def _queue(self, name: str) -> Mapping[str, Any]:
        (found,) = [q for q in self.objects["ClusterQueue"] if q["metadata"]["name"] == name]
        return found["spec"]

    def _flavor(self, name: str) -> Mapping[str, Any]:
        (found,) = [f for f in self.objects["ResourceFlavor"] if f["metadata"]["name"] == name]
        return found["spec"]

    def _quota(self, queue: str, flavor: str, resource: str) -> Mapping[str, Any] | None:
        for group in self._queue(queue)["resourceGroups"]:
            for f in group["flavors"]:
                for r in f["resources"] if f["name"] == flavor else ():
                    if r["name"] == resource:
                        return r
        return None

    def _local(self, cq: str, quota: Mapping[str, Any]) -> int:
        if "lendingLimit" not in quota:
            return 0
        name = quota["name"]
        return max(0, _amount(name, quota["nominalQuota"]) - _amount(name, quota["lendingLimit"]))

    def available(self, queue: str, flavor: str, resource: str) -> int:
        quota = self._quota(queue, flavor, resource)
        if quota is None:
            return 0
        nominal, used = (
            _amount(resource, quota["nominalQuota"]),
            self.usage.get((queue, flavor, resource), 0),
        )
        cohort = self._queue(queue).get("cohortName")
        if cohort is None:
            return nominal - used
        local = self._local(queue, quota)
        parent = 0
        for member in self.objects["ClusterQueue"]:
            name = member["metadata"]["name"]
            theirs = self._quota(name, flavor, resource)
            if member["spec"].get("cohortName") != cohort or theirs is None:
                continue
            kept = self._local(name, theirs)
            parent += _amount(resource, theirs["nominalQuota"]) - kept
            parent -= max(0, self.usage.get((name, flavor, resource), 0) - kept)
        if "borrowingLimit" in quota:
            stored, used_there = nominal - local, max(0, used - local)
            parent = min(stored - used_there + _amount(resource, quota["borrowingLimit"]), parent)
        return max(0, local - used) + parent

    def admit(
        self, namespace: str, labels: Mapping[str, str], jobset: Mapping[str, Any]
    ) -> tuple[str, dict[str, dict[str, str]]] | str:
        """(ClusterQueue, pod set -> resource -> flavor) of an admitted JobSet, its usage
        counted; or why it is not admitted."""
        queue_name = jobset["metadata"].get("labels", {}).get(QUEUE_LABEL)
        local = [
            q
            for q in self.objects["LocalQueue"]
            if q["metadata"]["namespace"] == namespace and q["metadata"]["name"] == queue_name
        ]
        if not local:
            return f"no LocalQueue {queue_name!r} in namespace {namespace}"
        queue = local[0]["spec"]["clusterQueue"]
        spec = self._queue(queue)
        if not _matches(spec["namespaceSelector"], {**labels, NAME_LABEL: namespace}):
            return "Workload namespace doesn't match ClusterQueue selector"
        asked: dict[tuple[str, str], int] = {}
        chosen = {}
        for pod_set in jobset_pod_sets(jobset):
            flavors = self._assign_pod_set(queue, pod_set, asked)
            if isinstance(flavors, str):
                return flavors
            chosen[pod_set.name] = flavors
        for key, amount in asked.items():
            self.usage[(queue, *key)] = self.usage.get((queue, *key), 0) + amount
        return queue, chosen

    def _assign_pod_set(self, queue: str, pod_set: PodSet, asked) -> dict[str, str] | str:
        """Resource -> flavor for every resource the pod set requests: a flavor of the group
        covering it, all the group's requested resources on the same flavor (flavorassigner.go
        ``assignFlavors``, ``findFlavorForPodSets``)."""
        groups = self._queue(queue)["resourceGroups"]
        requests = pod_requests(pod_set.spec)
        if any("pods" in g["coveredResources"] for g in groups):
            requests["pods"] = 1  # assignFlavors: a group covering pods counts them
        flavors: dict[str, str] = {}
        for resource, amount in requests.items():
            if resource in flavors:
                continue
            group = next((g for g in groups if resource in g["coveredResources"]), None)
            if group is None:
                if amount == 0:  # assignFlavors skips a zero request nothing covers (#8079)
                    continue
                return f"resource {resource} unavailable in ClusterQueue"
            covered = {r: n for r, n in requests.items() if r in group["coveredResources"]}
            flavor = self._assign(queue, group, pod_set, covered, asked)
            if flavor is None:
                return f"pod set {pod_set.name} fits no flavor of {queue} for {sorted(covered)}"
            flavors |= dict.fromkeys(covered, flavor)
        return dict(sorted(flavors.items()))

    def _assign(self, queue, group, pod_set: PodSet, requests, asked) -> str | None:
        """The first flavor of ``group`` (in its order) that the pod set fits and whose quota
        holds ``requests`` (what it asks of the group's resources) for all its pods."""
        keys = {k for f in group["flavors"] for k in self._flavor(f["name"]).get("nodeLabels", {})}
        selector = flavor_selector(pod_set.spec, keys)
        for entry in group["flavors"]:
            flavor = self._flavor(entry["name"])
            tolerations = [*pod_set.spec.get("tolerations", []), *flavor.get("tolerations", [])]
            taints = [t for t in flavor.get("nodeTaints", []) if t["effect"] in BLOCKING]
            if not all(tolerated(t, tolerations) for t in taints):
                continue
            if not selector(flavor.get("nodeLabels", {})):
                continue
            need = {(entry["name"], r): n * pod_set.count for r, n in requests.items()}
            if all(asked.get(k, 0) + n <= self.available(queue, *k) for k, n in need.items()):
                for k, n in need.items():
                    asked[k] = asked.get(k, 0) + n
                return entry["name"]
        return None
