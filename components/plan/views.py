"""Typed views of planned resources: what cost, diff, critical path, render and the guardrails read
from a resource's inputs, each read in one place. ``WorkloadView`` reads a Pathways workload the
same way on either backend (a PathwaysJob or its JobSet): the one place that knows where each
records its pods.

Inputs are in the engine's camelCase wire form, as a plan document records them and as a policy
pack receives them: any value may be ``UNKNOWN`` (only the cloud knows it yet: a preview, the
mocks) or ``SECRET``, and numbers may be floats (the wire) or ints (the plan). A view never
guesses what it cannot see: an unknown value reads as unknown, not as absent and not as a default.
Pure: no Pulumi.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import Any

from components.errors import ConfigError
from components.labels import NODE_POOL_LABEL, QUEUE_LABEL
from components.pathways import controller_model
from components.pathways.controller_model import ExpandedJob, PodModel
from components.pathways.jobset_names import HEAD_JOB
from components.pathways.jobset_pods import expand_jobset
from components.pathways.spec import PathwaysJobSpec
from components.plan.model import SECRET, UNKNOWN
from components.tokens import JOBSET, PATHWAYS_JOB, WORKLOAD_TYPES
from components.tpu.catalog import is_tpu_machine_type
from components.vocabulary import CapacityType, WorkloadBackend


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
"""What ``value_at`` gives for a path that is not there (absent, null, or through a non-mapping)."""


def is_unknown(value: Any) -> bool:
    """Not visible: computed by the cloud later (``UNKNOWN``), or a secret (``SECRET``)."""
    return isinstance(value, str) and value in (UNKNOWN, SECRET)


def value_at(inputs: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path of keys (``nodeConfig.machineType``):

    - ``MISSING`` when a step is absent or null (the engine sends no nulls; a plan document may
      hold them, and they mean "not set" to the provider), or the path runs through a value
      that is not a mapping (a list, a string, a number: keys do not index them);
    - the marker itself (``UNKNOWN`` or ``SECRET``) when a step meets one before the path ends:
      the value is there, it is only not visible yet;
    - otherwise the value as recorded (at the last step, a marker or anything else).
    """
    value: Any = inputs
    for part in path.split("."):
        if is_unknown(value):
            return value
        if not isinstance(value, Mapping) or value.get(part) is None:
            return MISSING
        value = value[part]
    return value


def number(value: Any) -> int | float | None:
    """A wire number (the engine sends floats) as an int when whole; None if not a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if float(value).is_integer() else value


def count(value: Any) -> int | None:
    """A whole, non-negative number (2, 2.0) as an int; None for anything else."""
    found = number(value)
    return found if isinstance(found, int) and found >= 0 else None


class Bound(Enum):
    """Which node count of a pool: what it always runs, or what it can grow to."""

    MINIMUM = "Min"
    MAXIMUM = "Max"


@dataclass(frozen=True)
class NodeCount:
    """A pool's node count. ``nodes`` None: not known from the plan (see ``node_count``)."""

    nodes: int | None
    autoscaled: bool = False  # read from the autoscaling bound, not from the fixed count


@dataclass(frozen=True)
class NodePoolView:
    """A ``gcp:container/nodePool:NodePool`` (or a cluster's default pool) by its inputs."""

    inputs: Mapping[str, Any]

    @property
    def name(self) -> str | None:
        name = value_at(self.inputs, "name")
        return name if isinstance(name, str) and not is_unknown(name) else None

    @property
    def machine_type(self) -> Any:
        """``nodeConfig.machineType`` as recorded (``MISSING`` when not set)."""
        return value_at(self.inputs, "nodeConfig.machineType")

    @property
    def is_tpu(self) -> bool:
        return is_tpu_machine_type(self.machine_type)

    @property
    def flex_start(self) -> bool:
        return value_at(self.inputs, "nodeConfig.flexStart") is True

    @property
    def capacity(self) -> CapacityType:
        """How the nodes are obtained, from the node config; a flag not visible counts as unset."""
        if self.flex_start:
            return CapacityType.FLEX_START
        flags = ("nodeConfig.spot", "nodeConfig.preemptible")
        if any(value_at(self.inputs, flag) is True for flag in flags):
            return CapacityType.SPOT
        affinity = value_at(self.inputs, "nodeConfig.reservationAffinity.consumeReservationType")
        if affinity in ("SPECIFIC_RESERVATION", "ANY_RESERVATION"):
            return CapacityType.RESERVATION
        return CapacityType.ON_DEMAND

    @property
    def region(self) -> str | None:
        """The region the nodes run in: from the first zone, else the location (None: unknown)."""
        zones = value_at(self.inputs, "nodeLocations")
        place = zones[0] if isinstance(zones, list) and zones else value_at(self.inputs, "location")
        if not isinstance(place, str) or is_unknown(place):
            return None
        region, _, suffix = place.rpartition("-")
        return region if len(suffix) == 1 and region else place

    @property
    def zones(self) -> int | None:
        """How many zones the pool's per-zone counts apply to: its ``nodeLocations``; 1 when it
        sets none (its zones are then the cluster's, which a view of one pool cannot see; every
        pool this project registers sets them); None when they are not known yet."""
        zones = value_at(self.inputs, "nodeLocations")
        if is_unknown(zones):
            return None
        return len(zones) if isinstance(zones, list) and zones else 1

    def node_count(self, bound: Bound) -> NodeCount:
        """Nodes of the whole pool (every zone) at ``bound``, read from the first of these that
        is set (not absent, not null):

        1. ``autoscaling.total{Min,Max}NodeCount`` (for the whole pool);
        2. ``autoscaling.{min,max}NodeCount`` times the zones;
        3. ``nodeCount`` times the zones (a fixed-size pool);
        4. ``initialNodeCount`` times the zones.

        The first field that is set decides: when it is unknown, secret or not a whole number,
        or a per-zone count meets unknown zones, the count is unknown (``nodes`` None), never the
        next field's (a different quantity) and never a default. None of them set: unknown too.
        """
        per_zone = (
            (f"autoscaling.total{bound.value}NodeCount", False),
            (f"autoscaling.{bound.value.lower()}NodeCount", True),
            ("nodeCount", True),
            ("initialNodeCount", True),
        )
        for index, (path, zonal) in enumerate(per_zone):
            value = value_at(self.inputs, path)
            if value is MISSING:
                continue
            nodes = count(value)
            zones = self.zones if zonal else 1
            total = None if nodes is None or zones is None else nodes * zones
            return NodeCount(total, autoscaled=index < 2)
        return NodeCount(None)


@dataclass(frozen=True)
class ClusterView:
    """A ``gcp:container/cluster:Cluster`` by its inputs."""

    inputs: Mapping[str, Any]

    @property
    def name(self) -> str | None:
        name = value_at(self.inputs, "name")
        return name if isinstance(name, str) and not is_unknown(name) else None


# --- workloads ---------------------------------------------------------------------------------


def is_workload(type_token: str) -> bool:
    """A Pathways workload, on either backend (``tokens.WORKLOAD_TYPES``)."""
    return type_token in WORKLOAD_TYPES


def _known_text(value: Any) -> str | None:
    return value if isinstance(value, str) and not is_unknown(value) else None


def _holds_unknown(value: Any) -> bool:
    """Whether any value inside is ``UNKNOWN`` or ``SECRET``."""
    if isinstance(value, Mapping):
        return any(_holds_unknown(item) for item in value.values())
    if isinstance(value, list):
        return any(_holds_unknown(item) for item in value)
    return is_unknown(value)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _replicated_jobs(inputs: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    jobs = value_at(inputs, "spec.replicatedJobs")
    return [job for job in jobs if isinstance(job, Mapping)] if isinstance(jobs, list) else []


def _jobset_templates(inputs: Mapping[str, Any], head: bool) -> tuple[Mapping[str, Any], ...]:
    """The pod templates (``template.spec.template``) of the head's replicated job, or of the
    others (the workers')."""
    found = (
        value_at(job, "template.spec.template")
        for job in _replicated_jobs(inputs)
        if (job.get("name") == HEAD_JOB) == head
    )
    return tuple(template for template in found if isinstance(template, Mapping))


def _expand_pathways_job(inputs: Mapping[str, Any]) -> ExpandedJob:
    metadata = _mapping(inputs.get("metadata"))
    spec = PathwaysJobSpec.parse(dict(_mapping(inputs.get("spec"))))
    return controller_model.expand(metadata.get("name", ""), metadata.get("namespace", ""), spec)


@dataclass(frozen=True)
class _Backend:
    """Where one backend records a workload: its pod templates as planned, the inputs the plain
    plan shows on its line, and the model that expands it into pods (``components.pathways``)."""

    backend: WorkloadBackend
    key_inputs: tuple[str, ...]
    head_template: Callable[[Mapping[str, Any]], Mapping[str, Any]]
    worker_templates: Callable[[Mapping[str, Any]], tuple[Mapping[str, Any], ...]]
    expand: Callable[[Mapping[str, Any]], ExpandedJob]


_BACKENDS: dict[str, _Backend] = {
    # The controller v0.1.4 makes the pods: the user's head template is all it records of them.
    PATHWAYS_JOB: _Backend(
        WorkloadBackend.PATHWAYS_JOB,
        ("spec.workers", "spec.controller.deploymentMode"),
        lambda inputs: _mapping(value_at(inputs, "spec.controller.template")),
        lambda inputs: (),
        _expand_pathways_job,
    ),
    JOBSET: _Backend(
        WorkloadBackend.JOBSET,
        ("metadata.labels", "spec.replicatedJobs"),
        lambda inputs: next(iter(_jobset_templates(inputs, head=True)), {}),
        lambda inputs: _jobset_templates(inputs, head=False),
        expand_jobset,
    ),
}

NODE_IDENTITY = "node"
"""``WorkloadView.identity`` of host-network pods: they act as their node's service account."""


@dataclass(frozen=True)
class WorkloadView:
    """A Pathways workload (``is_workload``) by its inputs, read the same way on either backend.

    What is recorded: ``name``, ``namespace``, ``labels``, ``queue``, the pod templates
    (``head_template``, ``worker_templates``) and their ``volumes``. What its pods will be
    (``pods``: the PathwaysJob controller's or the JobSet's, from the models the preflight
    uses): ``identity``, ``priority``, ``slices``, ``tpu_selector``, ``node_pool``; each None
    when the pods are not known (a value not visible yet, or a spec the models cannot read).
    """

    type: str
    inputs: Mapping[str, Any]

    @classmethod
    def of(cls, type_token: str, inputs: Mapping[str, Any]) -> WorkloadView | None:
        """The view of a resource; None when it is no workload."""
        return cls(type_token, inputs) if is_workload(type_token) else None

    @property
    def _backend(self) -> _Backend:
        return _BACKENDS[self.type]

    @property
    def backend(self) -> WorkloadBackend:
        return self._backend.backend

    @property
    def name(self) -> str | None:
        return _known_text(value_at(self.inputs, "metadata.name"))

    @property
    def namespace(self) -> str | None:
        return _known_text(value_at(self.inputs, "metadata.namespace"))

    @property
    def key(self) -> str | None:
        """``namespace/name``, as the plan's summary names workloads (None: either not known)."""
        if self.name is None or self.namespace is None:
            return None
        return f"{self.namespace}/{self.name}"

    @property
    def labels(self) -> Any:
        """``metadata.labels`` as recorded (``MISSING`` when none, a marker when not visible)."""
        return value_at(self.inputs, "metadata.labels")

    @property
    def queue(self) -> Any:
        """The Kueue LocalQueue that admits it: its ``kueue.x-k8s.io/queue-name`` label (the
        controller copies a PathwaysJob's labels to its JobSet, which Kueue admits); ``MISSING``
        without one, a marker when the labels are not visible."""
        labels = self.labels
        if is_unknown(labels) or not isinstance(labels, Mapping):
            return labels if is_unknown(labels) else MISSING
        queue = labels.get(QUEUE_LABEL)
        return MISSING if queue is None else queue

    @property
    def key_inputs(self) -> tuple[str, ...]:
        """The inputs the plain plan shows on the workload's line."""
        return self._backend.key_inputs

    @property
    def head_template(self) -> Mapping[str, Any]:
        """The head's pod template as recorded ({} when none is: a headless PathwaysJob; the
        controller adds the Pathways containers to a PathwaysJob's)."""
        return self._backend.head_template(self.inputs)

    @property
    def worker_templates(self) -> tuple[Mapping[str, Any], ...]:
        """The workers' pod templates as recorded (a PathwaysJob records none: the controller
        makes them from ``spec.workers``)."""
        return self._backend.worker_templates(self.inputs)

    @property
    def volumes(self) -> tuple[Mapping[str, Any], ...]:
        """The volumes of the recorded pod templates, the head's first."""
        templates = (self.head_template, *self.worker_templates)
        lists = (value_at(template, "spec.volumes") for template in templates)
        found = (v for vs in lists if isinstance(vs, list) for v in vs)
        return tuple(v for v in found if isinstance(v, Mapping))

    @cached_property
    def pods(self) -> ExpandedJob | None:
        """The head and worker pods it makes; None when a value is not visible yet or the models
        cannot read it (a hand-written workload that is not a Pathways one)."""
        if _holds_unknown(self.inputs):
            return None
        try:
            return self._backend.expand(self.inputs)
        except (ConfigError, ValueError, LookupError, TypeError, AttributeError):
            return None

    @property
    def workers(self) -> PodModel | None:
        return self.pods.workers if self.pods else None

    @property
    def identity(self) -> str | None:
        """Who the workers act as in Google Cloud: ``NODE_IDENTITY`` on the host network, else
        their Kubernetes service account (Workload Identity; ``default`` when none is named)."""
        if self.workers is None:
            return None
        if self.workers.host_network:
            return NODE_IDENTITY
        return self.workers.service_account or "default"

    @property
    def priority(self) -> str | None:
        """The workers' PriorityClass (None: none named, or not known)."""
        return self.workers.priority_class if self.workers else None

    @property
    def slices(self) -> int | None:
        return self.workers.groups if self.workers else None

    @property
    def tpu_selector(self) -> Mapping[str, str] | None:
        """The workers' nodeSelector: the TPU accelerator and topology, any pinned pool."""
        return self.workers.node_selector if self.workers else None

    @property
    def node_pool(self) -> str | None:
        """The node pool the workers are pinned to, if any."""
        return (self.tpu_selector or {}).get(NODE_POOL_LABEL)
