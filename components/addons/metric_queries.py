"""The metrics the dashboard and the alerts read, and the PromQL over them: one home for each
metric and label name, with its source, so a check on a live cluster fixes one place. Pure.

Sources (read 2026-11):
- GKE system metrics (cloud.google.com/monitoring/api/metrics_kubernetes; free, sampled every
  60 s): node-level TPU metrics ``kubernetes.io/node/accelerator/{duty_cycle,
  tensorcore_utilization,memory_used,memory_total}`` (resource ``k8s_node``; labels ``make``,
  ``accelerator_id``, ``model``), written per chip whether or not a container asks for metrics:
  the container-level ones need the TPU container to declare port 8431, which Pathways workers
  do not (google/pathways-job v0.1.4 declares 29005, 29006, 8471, 8080). Duty cycle and HBM from
  GKE 1.27.4-gke.900, TensorCore utilization from 1.28.1-gke.1066000.
  ``kubernetes.io/node/assigned_jobsets`` maps nodes to the JobSets on them. In PromQL a system
  metric reads as ``kubernetes_io:<path with '/' as '_'>`` with ``monitored_resource`` and the
  resource labels (``cluster_name``, ``node_name``).
- GKE kube state metrics (cloud.google.com/kubernetes-engine/docs/how-to/kube-state-metrics):
  ``kube_jobset_specified_replicas``, ``kube_jobset_ready_replicas``,
  ``kube_jobset_suspended_replicas``, ``kube_jobset_restarts`` (labels ``jobset_name``,
  ``replicated_job_name``; package JOBSET, GKE 1.32.1-gke.1357001) and
  ``kube_deployment_status_replicas_available`` (package DEPLOYMENT).
- Kueue v0.17.1 (kubernetes-sigs/kueue pkg/metrics/metrics.go): ``kueue_pending_workloads``
  (``cluster_queue``, ``status`` active|inadmissible), ``kueue_admitted_active_workloads``,
  ``kueue_admission_wait_time_seconds`` (histogram), ``kueue_cluster_queue_resource_usage``
  and ``kueue_cluster_queue_nominal_quota`` (``resource``), ``kueue_build_info``.
- Managed Service for Prometheus adds ``cluster`` (and ``namespace``, ``job``...) to what it
  scrapes (GoogleCloudPlatform/prometheus-engine, the protected target labels).
The label names of ``node/assigned_jobsets`` and of GKE's kube state metrics are to be confirmed
on a live cluster (docs/operations.md lists them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# GKE system metrics, node level (PromQL names).
DUTY_CYCLE = "kubernetes_io:node_accelerator_duty_cycle"
TENSORCORE = "kubernetes.io/node/accelerator/tensorcore_utilization"  # a Monitoring filter type
HBM_USED = "kubernetes_io:node_accelerator_memory_used"
HBM_TOTAL = "kubernetes_io:node_accelerator_memory_total"
ASSIGNED_JOBSETS = "kubernetes_io:node_assigned_jobsets"
NODE_RESOURCE = 'monitored_resource="k8s_node"'
JOBSET_LABEL = "jobset_name"
# GKE kube state metrics.
SPECIFIED = "kube_jobset_specified_replicas"
READY = "kube_jobset_ready_replicas"
SUSPENDED = "kube_jobset_suspended_replicas"
RESTARTS = "kube_jobset_restarts"
DEPLOYMENT_AVAILABLE = "kube_deployment_status_replicas_available"
WORKER_JOB = 'replicated_job_name="worker"'
# Kueue's own, scraped through the PodMonitoring.
PENDING = "kueue_pending_workloads"
# Per LocalQueue, so per team namespace; Kueue's own ``namespace`` label, scraped under the
# collector's protected ``namespace``, reads as ``exported_namespace`` (to confirm live).
LOCAL_PENDING = "kueue_local_queue_pending_workloads"
TEAM_LABEL = "exported_namespace"
ADMITTED = "kueue_admitted_active_workloads"
ADMISSION_WAIT = "kueue_admission_wait_time_seconds_bucket"
QUEUE_USAGE = "kueue_cluster_queue_resource_usage"
QUEUE_QUOTA = "kueue_cluster_queue_nominal_quota"
KUEUE_UP = "kueue_build_info"
# The controllers' Deployments and namespaces (the release manifests' names).
CONTROLLERS = {
    "jobset-system": "jobset-controller-manager",
    "kueue-system": "kueue-controller-manager",
    "pathways-job-system": "pathways-job-controller-manager",
}


@dataclass(frozen=True)
class Scope:
    """Which series a query reads: the cluster's, and on a JobSet level the jobs named."""

    cluster: str

    @property
    def node(self) -> str:
        return f'{{{NODE_RESOURCE},cluster_name="{self.cluster}"}}'

    @property
    def scraped(self) -> str:
        return f'{{cluster="{self.cluster}"}}'

    def jobsets(self, extra: str = "") -> str:
        return f'{{cluster="{self.cluster}",{WORKER_JOB}{extra}}}'


def duty_cycle_per_jobset(scope: Scope, jobs: Sequence[str] = ()) -> str:
    """Mean TPU duty cycle of each JobSet's nodes (``jobs``: only these JobSets)."""
    only = f',{JOBSET_LABEL}=~"{"|".join(jobs)}"' if jobs else ""
    nodes = f'{{{NODE_RESOURCE},cluster_name="{scope.cluster}"{only}}}'
    return (
        f"avg by ({JOBSET_LABEL}) ({DUTY_CYCLE}{scope.node} * on (node_name) group_left "
        f"({JOBSET_LABEL}) ({ASSIGNED_JOBSETS}{nodes} == 1))"
    )


def mean_duty_cycle(scope: Scope) -> str:
    return f"avg({DUTY_CYCLE}{scope.node})"


def hbm_use(scope: Scope) -> str:
    """HBM in use per node, in percent of the node's HBM."""
    return (
        f"100 * sum by (node_name) ({HBM_USED}{scope.node}) / "
        f"sum by (node_name) ({HBM_TOTAL}{scope.node})"
    )


def idle_cost_per_hour(scope: Scope, chip_hour: float) -> str:
    """USD per hour of the TPU time not used: each chip's idle share times its price."""
    return f"sum((100 - {DUTY_CYCLE}{scope.node}) / 100) * {chip_hour:g}"


def slices(scope: Scope, metric: str) -> str:
    return f"sum by ({JOBSET_LABEL}) ({metric}{scope.jobsets()})"


def slices_not_ready(scope: Scope) -> str:
    """JobSets (not suspended, so admitted) with fewer worker slices ready than specified."""
    by = f"max by ({JOBSET_LABEL})"
    return (
        f"({by} ({SPECIFIED}{scope.jobsets()}) - {by} ({READY}{scope.jobsets()}) > 0) "
        f"and on ({JOBSET_LABEL}) ({by} ({SUSPENDED}{scope.jobsets()}) == 0)"
    )


def suspended_jobsets(scope: Scope) -> str:
    """JobSets Kueue holds (suspended: not admitted)."""
    return f"max by ({JOBSET_LABEL}) ({SUSPENDED}{scope.jobsets()}) > 0"


def pending_per_queue(scope: Scope) -> str:
    return f"sum by (cluster_queue, status) ({PENDING}{scope.scraped})"


def pending_per_team(scope: Scope) -> str:
    return f"sum by ({TEAM_LABEL}) ({LOCAL_PENDING}{scope.scraped})"


def admission_wait_p95(scope: Scope) -> str:
    return (
        "histogram_quantile(0.95, sum by (le, cluster_queue) "
        f"(rate({ADMISSION_WAIT}{scope.scraped}[10m])))"
    )


def tpu_quota(scope: Scope, metric: str) -> str:
    selector = f'{{cluster="{scope.cluster}",resource="google.com/tpu"}}'
    return f"sum by (cluster_queue) ({metric}{selector})"


def controllers_available(scope: Scope, namespaces: Sequence[str]) -> str:
    """The fewest available replicas of the controllers' Deployments."""
    names = "|".join(CONTROLLERS[n] for n in namespaces)
    selector = f'{{cluster="{scope.cluster}",deployment=~"{names}"}}'
    return f"min by (deployment) ({DEPLOYMENT_AVAILABLE}{selector})"


def kueue_absent(scope: Scope) -> str:
    """Kueue's metrics missing for 15 minutes: its controller or its scrape is down."""
    return f"absent_over_time({KUEUE_UP}{scope.scraped}[15m])"
