"""ResourceQuota admission of a pod's creation, as the API server runs it (kubernetes
pkg/quota/v1/evaluator/core/pods.go and staging/src/k8s.io/apiserver/pkg/admission/plugin/
resourcequota/controller.go), on the pod as it reaches that plugin:

- the API server's defaulting first: a container's requests default to its limits, per
  resource (pkg/apis/core/v1/defaults.go ``SetDefaults_Pod``);
- mutating webhooks before it: Cloud Storage FUSE's adds its sidecar to a pod annotated
  ``gke-gcsfuse/volumes: "true"``, requesting 250m CPU and 256Mi memory unless the pod's
  ``gke-gcsfuse/cpu-request``/``memory-request`` annotations say otherwise (a zero is no request:
  GoogleCloudPlatform/gcs-fuse-csi-driver pkg/webhook/config.go ``prepareResourceList``);
- a quota applies to a pod its scopes match (``NotBestEffort``: the pod's QoS class is not
  BestEffort, i.e. some container requests or limits CPU or memory; ``BestEffort``: it is;
  none: every pod). Any other scope (``Terminating``, ``PriorityClass``, ...), a
  ``scopeSelector``, or a ``hard`` limit on a pod resource the model does not count
  (``limits.*``, ephemeral storage, ``count/pods``, hugepages) raises ``UnmodelledQuota``: the
  model would otherwise admit what such a quota refuses;
- an applying quota that tracks CPU or memory requests needs every container and init
  container to name each tracked one (``Constraints``: "must specify ...");
- and the pod's usage, added to what the namespace already uses, stays within ``hard``
  (requests summed over the containers: an upper bound of Kubernetes' own sum, which takes the
  largest init container rather than all).
"""

from __future__ import annotations

import copy
from typing import Any

from components.tpu.quantities import parse_cpu, parse_memory

VALIDATED = ("cpu", "memory", "requests.cpu", "requests.memory")
SCOPES = frozenset({"BestEffort", "NotBestEffort"})
COUNTED = frozenset(
    {"pods", "cpu", "memory", "requests.cpu", "requests.memory", "requests.google.com/tpu"}
)
"""The pod resources ``usage`` counts (``cpu``/``memory``: Kubernetes' names of the requests)."""
FUSE_SIDECAR = "gke-gcsfuse-sidecar"
FUSE_DEFAULTS = {"cpu": "250m", "memory": "256Mi"}


def _containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    spec = pod["spec"]
    return [*spec.get("initContainers", []), *spec.get("containers", [])]


def admitted_form(pod: dict[str, Any]) -> dict[str, Any]:
    """``pod`` after defaulting and the Cloud Storage FUSE webhook."""
    pod = copy.deepcopy(pod)
    annotations = pod.get("metadata", {}).get("annotations", {})
    if annotations.get("gke-gcsfuse/volumes") == "true":
        requests = {}
        for resource, default in FUSE_DEFAULTS.items():
            value = annotations.get(f"gke-gcsfuse/{resource}-request", default)
            if value not in ("0", 0):
                requests[resource] = value
        sidecar = {"name": FUSE_SIDECAR, "restartPolicy": "Always"}
        sidecar["resources"] = {"requests": requests}
        pod["spec"]["initContainers"] = [sidecar, *pod["spec"].get("initContainers", [])]
    for container in _containers(pod):
        resources = container.setdefault("resources", {})
        requests = resources.setdefault("requests", {})
        for resource, limit in resources.get("limits", {}).items():
            requests.setdefault(resource, limit)
    return pod


def best_effort(pod: dict[str, Any]) -> bool:
    """No container requests or limits CPU or memory (Kubernetes' QoS: only they count)."""
    for container in _containers(pod):
        resources = container.get("resources", {})
        for kind in ("requests", "limits"):
            if {"cpu", "memory"} & set(resources.get(kind, {})):
                return False
    return True


class UnmodelledQuota(ValueError):
    """A quota the model cannot evaluate (a scope or a pod resource it does not model)."""


def _pod_resource(resource: str) -> bool:
    """Whether a pod's creation counts against ``resource`` (pkg/quota/v1/evaluator/core/
    pods.go ``podResources``, ``podResourcePrefixes``; ``requests.storage`` is a claim's)."""
    if resource in ("pods", "count/pods", "cpu", "memory", "ephemeral-storage"):
        return True
    if resource == "requests.storage":
        return False
    return resource.startswith(("requests.", "limits.", "hugepages-"))


def checked(quota: dict[str, Any]) -> dict[str, Any]:
    """``quota``, once every scope and pod resource of it is one the model evaluates."""
    name, spec = quota["metadata"]["name"], quota["spec"]
    if "scopeSelector" in spec:
        raise UnmodelledQuota(f"{name}: scopeSelector is not modelled")
    unknown = sorted(set(spec.get("scopes", [])) - SCOPES)
    uncounted = sorted(r for r in spec["hard"] if _pod_resource(r) and r not in COUNTED)
    if unknown:
        raise UnmodelledQuota(f"{name}: scopes {unknown} are not modelled (only {sorted(SCOPES)})")
    if uncounted:
        raise UnmodelledQuota(f"{name}: pod resources {uncounted} are not counted")
    return quota


def applies(quota: dict[str, Any], pod: dict[str, Any]) -> bool:
    scopes = set(checked(quota)["spec"].get("scopes", []))
    if "NotBestEffort" in scopes and best_effort(pod):
        return False
    return not ("BestEffort" in scopes and not best_effort(pod))


def usage(pod: dict[str, Any]) -> dict[str, int]:
    """What the pod counts against ``COUNTED`` (CPU in millicores, memory in bytes, chips)."""
    counted = {"pods": 1, "requests.cpu": 0, "requests.memory": 0, "requests.google.com/tpu": 0}
    for container in _containers(pod):
        requests = container.get("resources", {}).get("requests", {})
        if "cpu" in requests:
            counted["requests.cpu"] += parse_cpu(requests["cpu"])
        if "memory" in requests:
            counted["requests.memory"] += parse_memory(requests["memory"])
        counted["requests.google.com/tpu"] += int(requests.get("google.com/tpu", 0))
    return {**counted, "cpu": counted["requests.cpu"], "memory": counted["requests.memory"]}


def _hard(resource: str, value: str) -> int:
    if resource in ("cpu", "requests.cpu"):
        return parse_cpu(value)
    if resource in ("memory", "requests.memory"):
        return parse_memory(value)
    return int(value)


def quota_denials(
    quotas: list[dict[str, Any]], pod: dict[str, Any], used: dict[str, int] | None = None
) -> list[str]:
    """Why the namespace's ``quotas`` refuse creating ``pod`` (none: admitted), given what its
    pods already ``used`` (same units as ``usage``)."""
    pod, used = admitted_form(pod), used or {}
    found = []
    for quota in quotas:
        if not applies(quota, pod):
            continue
        name, hard = quota["metadata"]["name"], quota["spec"]["hard"]
        for container in _containers(pod):
            named = set(container.get("resources", {}).get("requests", {}))
            named |= {f"requests.{r}" for r in named}
            missing = sorted(r for r in hard if r in VALIDATED and r not in named)
            if missing:
                found.append(f"{name}: must specify {', '.join(missing)} for {container['name']}")
        for resource, amount in usage(pod).items():
            if resource in hard and used.get(resource, 0) + amount > _hard(
                resource, hard[resource]
            ):
                found.append(f"{name}: exceeded quota: {resource}")
    return found
