"""Kueue's quota admission of a queued JobSet on one cluster, on the Kueue objects a plan
renders, for the fleet's attack tests (a manager's, then a worker's). Facts modelled
(kubernetes-sigs/kueue v0.17.1):

- a Workload is queued on the LocalQueue its ``kueue.x-k8s.io/queue-name`` label names in its
  own namespace, on that LocalQueue's ClusterQueue, and is inadmissible when the namespace's
  labels do not match the ClusterQueue's ``namespaceSelector`` (pkg/scheduler/scheduler.go:
  "Workload namespace doesn't match ClusterQueue selector");
- a JobSet's pod sets are its replicated jobs, ``replicas`` x the Job's ``parallelism`` pods of
  the Job's pod template (pkg/controller/jobs/jobset/jobset_controller.go ``PodSets``);
- each pod set takes, in the resource group covering what it requests, the first flavor in the
  group's order whose ``nodeTaints`` its pods (with the flavor's ``tolerations``) tolerate, whose
  ``nodeLabels`` match its nodeSelector on the keys some flavor of the group has
  (pkg/scheduler/flavorassigner/flavorassigner.go ``flavorSelector``,
  ``checkFlavorForPodSets``), and whose quota holds what it asks;
- a ClusterQueue's quota of a flavor and resource: without a cohort, its nominal quota less
  its usage; in a cohort, what it keeps to itself (``nominalQuota - lendingLimit``) less its
  usage, plus what the cohort has left (every member's nominal quota less what it keeps, less
  their usage beyond what they keep), at most ``borrowingLimit`` beyond its own nominal quota
  (pkg/cache/scheduler/resource_node.go ``available``, ``localQuota``,
  ``accumulateFromChild``). Preemption is not modelled: nothing here is ever preempted;
- on admission the pods get the flavor's ``nodeLabels`` as nodeSelector and its
  ``tolerations`` (``tests/cluster_objects.admitted``).
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


def pod_requests(pod_spec: Mapping[str, Any]) -> dict[str, int]:
    """A pod's requests (limits where a request is absent: the API server's defaulting)."""
    total: dict[str, int] = {}
    for container in [*pod_spec.get("initContainers", []), *pod_spec.get("containers", [])]:
        resources = container.get("resources", {})
        asked = {**resources.get("limits", {}), **resources.get("requests", {})}
        for name, value in asked.items():
            total[name] = total.get(name, 0) + _amount(name, value)
    return total


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


def _matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """A LabelSelector (matchLabels, matchExpressions) against ``labels``."""
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", []):
        key, operator = expression["key"], expression["operator"]
        values = expression.get("values", [])
        ok = {
            "In": key in labels and labels[key] in values,
            "NotIn": labels.get(key) not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[operator]
        if not ok:
            return False
    return True


def _tolerated(taint: Mapping[str, str], tolerations: list[Mapping[str, str]]) -> bool:
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
    ) -> tuple[str, dict[str, str]] | str:
        """(ClusterQueue, pod set -> flavor) of an admitted JobSet, its usage counted; or why
        it is not admitted."""
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
            requests = pod_requests(pod_set.spec)
            group = next(
                (g for g in spec["resourceGroups"] if set(requests) & set(g["coveredResources"])),
                None,
            )
            if group is None:
                return f"no resource group of {queue} covers {sorted(requests)}"
            flavor = self._assign(queue, group, pod_set, requests, asked)
            if flavor is None:
                return f"pod set {pod_set.name} fits no flavor of {queue}"
            chosen[pod_set.name] = flavor
        for key, amount in asked.items():
            self.usage[(queue, *key)] = self.usage.get((queue, *key), 0) + amount
        return queue, chosen

    def _assign(self, queue, group, pod_set: PodSet, requests, asked) -> str | None:
        keys = {k for f in group["flavors"] for k in self._flavor(f["name"]).get("nodeLabels", {})}
        selector = {k: v for k, v in pod_set.spec.get("nodeSelector", {}).items() if k in keys}
        for entry in group["flavors"]:
            flavor = self._flavor(entry["name"])
            tolerations = [*pod_set.spec.get("tolerations", []), *flavor.get("tolerations", [])]
            if not all(_tolerated(t, tolerations) for t in flavor.get("nodeTaints", [])):
                continue
            labels = flavor.get("nodeLabels", {})
            if any(labels.get(k) != v for k, v in selector.items()):
                continue
            need = {
                (entry["name"], r): n * pod_set.count
                for r, n in requests.items()
                if r in group["coveredResources"]
            }
            if all(asked.get(k, 0) + n <= self.available(queue, *k) for k, n in need.items()):
                for k, n in need.items():
                    asked[k] = asked.get(k, 0) + n
                return entry["name"]
        return None
