"""The stack's alert policies as plain specs (pure): what each watches, in PromQL over the metrics
of ``metric_queries``, how long its condition must hold and how severe it is. ``monitoring``
creates one ``gcp.monitoring.AlertPolicy`` per spec.

Each condition names metrics GKE or Managed Service for Prometheus writes once the cluster runs
(kube_jobset_* once a JobSet exists, kueue_* once Kueue is scraped), so the policies skip
Cloud Monitoring's check that a metric exists (``disable_metric_validation``); they are
evaluated every 60 s (pulumi-gcp 10.2 ``AlertPolicyConditionConditionPrometheusQueryLanguageArgs``:
a multiple of 30 s)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from components.addons import metric_queries as q


class Severity(StrEnum):
    """pulumi-gcp 10.2 ``AlertPolicy.severity``."""

    CRITICAL = "CRITICAL"
    ERROR = "ERROR"
    WARNING = "WARNING"


@dataclass(frozen=True)
class Condition:
    title: str
    query: str
    minutes: int

    @property
    def duration(self) -> str:
        return f"{self.minutes * 60}s"


@dataclass(frozen=True)
class AlertSpec:
    key: str  # the policy's resource name suffix
    title: str
    severity: Severity
    conditions: tuple[Condition, ...]
    what_to_do: str


@dataclass(frozen=True)
class Threshold:
    """An alert the stack asked for: on, after ``minutes``; ``percent`` for the idle alert."""

    minutes: int
    percent: int = 0


@dataclass(frozen=True)
class AlertsArgs:
    """What the alerts watch. ``training_jobs``: the JobSets of the stack that should keep their
    TPUs busy (training and inference workloads; a headless job or a shared service is idle by
    design); ``controllers``: the namespaces of the controllers installed."""

    cluster: str
    training_jobs: Sequence[str] = ()
    kueue: bool = True
    scraped: bool = True
    controllers: Sequence[str] = ()
    tpu_idle: Threshold | None = None
    slice_not_ready: Threshold | None = None
    pending_too_long: Threshold | None = None
    controller_not_ready: Threshold | None = None


def _tpu_idle(args: AlertsArgs, scope: q.Scope) -> AlertSpec | None:
    if args.tpu_idle is None or not args.training_jobs:
        return None
    query = f"{q.duty_cycle_per_jobset(scope, args.training_jobs)} < {args.tpu_idle.percent}"
    return AlertSpec(
        "tpu-idle",
        f"{args.cluster}: TPU idle while a workload holds the slices",
        Severity.WARNING,
        (Condition("TPU duty cycle under the threshold", query, args.tpu_idle.minutes),),
        "A training or inference workload holds TPU slices whose TensorCores are idle: it pays "
        "for chips that do nothing. Check its logs (input pipeline stalled, waiting on a "
        "checkpoint, hung), then stop it or fix it.",
    )


def _slices(args: AlertsArgs, scope: q.Scope) -> AlertSpec | None:
    if args.slice_not_ready is None:
        return None
    return AlertSpec(
        "slices-not-ready",
        f"{args.cluster}: worker slices not ready after admission",
        Severity.ERROR,
        (
            Condition(
                "fewer worker slices ready than specified",
                q.slices_not_ready(scope),
                args.slice_not_ready.minutes,
            ),
        ),
        "A JobSet was admitted (not suspended) but not all its worker slices are ready: pods "
        "Pending (capacity, a node pool being repaired or upgraded, a taint) or crash-looping. "
        "Look at the worker pods' events and the node pools.",
    )


def _pending(args: AlertsArgs, scope: q.Scope) -> AlertSpec | None:
    if args.pending_too_long is None or not args.kueue:
        return None
    minutes = args.pending_too_long.minutes
    conditions = [
        Condition("a JobSet held by Kueue (suspended)", q.suspended_jobsets(scope), minutes)
    ]
    if args.scraped:
        inadmissible = (
            f'sum by (cluster_queue) ({q.PENDING}{{cluster="{args.cluster}",'
            'status="inadmissible"}) > 0'
        )
        conditions.append(
            Condition("inadmissible workloads in a ClusterQueue", inadmissible, minutes)
        )
    return AlertSpec(
        "pending-too-long",
        f"{args.cluster}: a workload waits in Kueue too long",
        Severity.WARNING,
        tuple(conditions),
        "A job waits for admission: its team's quota is used, the pool has too few free "
        "slices, or it asks for more than any flavor offers (inadmissible). `kubectl get "
        "workloads -A` shows why.",
    )


def _controllers(args: AlertsArgs, scope: q.Scope) -> AlertSpec | None:
    if args.controller_not_ready is None or not args.controllers:
        return None
    minutes = args.controller_not_ready.minutes
    conditions = [
        Condition(
            "a controller Deployment with no available replica",
            f"{q.controllers_available(scope, args.controllers)} < 1",
            minutes,
        )
    ]
    if args.kueue and args.scraped:
        conditions.append(Condition("Kueue's metrics missing", q.kueue_absent(scope), minutes))
    return AlertSpec(
        "controllers-not-ready",
        f"{args.cluster}: a controller is not ready",
        Severity.CRITICAL,
        tuple(conditions),
        "JobSet, Kueue or the PathwaysJob controller has no ready replica: jobs are not "
        "admitted, started or restarted. Check the controller's pods on the system pool.",
    )


def alert_specs(args: AlertsArgs) -> list[AlertSpec]:
    """The policies asked for that have something to watch."""
    scope = q.Scope(args.cluster)
    specs = [f(args, scope) for f in (_tpu_idle, _slices, _pending, _controllers)]
    return [s for s in specs if s is not None]
