"""What a stack that owns its cluster watches: Managed Service for Prometheus and GKE's metric
packages on the cluster, Kueue's and JobSet's controller metrics scraped, one Cloud Monitoring
dashboard and the alerts (each optional) with the channels they notify."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field, StrictBool, StrictInt, field_validator

from components.config.schema.base import pattern
from components.model import ConfigModel


class SystemComponent(StrEnum):
    """GKE metric packages (pulumi-gcp 10.2 ``ClusterMonitoringConfigArgs.enable_components``;
    GKE "Configure metrics collection": SYSTEM_COMPONENTS carries the node and container metrics,
    the TPU ones among them; JOBSET the kube_jobset_* state metrics from 1.32.1-gke.1357001)."""

    SYSTEM_COMPONENTS = "SYSTEM_COMPONENTS"
    APISERVER = "APISERVER"
    SCHEDULER = "SCHEDULER"
    CONTROLLER_MANAGER = "CONTROLLER_MANAGER"
    STORAGE = "STORAGE"
    HPA = "HPA"
    POD = "POD"
    DAEMONSET = "DAEMONSET"
    DEPLOYMENT = "DEPLOYMENT"
    STATEFULSET = "STATEFULSET"
    KUBELET = "KUBELET"
    CADVISOR = "CADVISOR"
    DCGM = "DCGM"
    JOBSET = "JOBSET"


DEFAULT_COMPONENTS = [
    SystemComponent.SYSTEM_COMPONENTS,
    SystemComponent.POD,
    SystemComponent.DEPLOYMENT,
    SystemComponent.JOBSET,
]
NotificationChannel = Annotated[
    str,
    pattern(
        r"projects/[a-z][-a-z0-9]{4,28}[a-z0-9]/notificationChannels/[0-9]{1,30}",
        "a notification channel such as 'projects/my-project/notificationChannels/123456'",
    ),
]


class AlertConfig(ConfigModel):
    """One alert policy: on or off, and how long its condition must hold before it fires."""

    enabled: StrictBool = True
    """Create the alert policy."""
    for_minutes: StrictInt = Field(ge=1, le=1440)
    """Minutes the condition must hold."""


class TpuIdleAlert(AlertConfig):
    """TPU chips idle while a training job holds them: money spent on nothing."""

    for_minutes: StrictInt = Field(30, ge=1, le=1440)
    """Minutes the duty cycle must stay under the threshold."""
    duty_cycle_percent: StrictInt = Field(5, ge=1, le=100)
    """The duty cycle (percent of time the TensorCores were busy) under which a job is idle."""


class SliceNotReadyAlert(AlertConfig):
    """A job's worker slices not all ready after Kueue admitted it (or, without Kueue, after it
    was created)."""

    for_minutes: StrictInt = Field(20, ge=1, le=1440)
    """Minutes the slices may take to become ready."""


class PendingTooLongAlert(AlertConfig):
    """A job waiting in Kueue (not admitted) for too long."""

    for_minutes: StrictInt = Field(120, ge=1, le=10080)
    """Minutes a job may wait for admission."""


class ControllerNotReadyAlert(AlertConfig):
    """The JobSet, Kueue or PathwaysJob controller without a ready replica (jobs stop being
    admitted, started and restarted)."""

    for_minutes: StrictInt = Field(10, ge=1, le=1440)
    """Minutes without a ready replica."""


class AlertsConfig(ConfigModel):
    """The stack's alert policies, each optional."""

    tpu_idle: TpuIdleAlert = TpuIdleAlert()
    """TPU idle while a training workload holds the slices."""
    slice_not_ready: SliceNotReadyAlert = SliceNotReadyAlert()
    """Slices not ready after admission."""
    pending_too_long: PendingTooLongAlert = PendingTooLongAlert()
    """A workload pending in Kueue too long (needs Kueue)."""
    controller_not_ready: ControllerNotReadyAlert = ControllerNotReadyAlert()
    """A controller with no ready replica."""


class ObservabilityConfig(ConfigModel):
    """Metrics, the stack's Cloud Monitoring dashboard and its alerts (stacks that own their
    cluster)."""

    managed_prometheus: StrictBool = True
    """Managed Service for Prometheus on the cluster (scrapes PodMonitorings; PromQL in the
    dashboard and the alerts)."""
    system_components: list[SystemComponent] = Field(DEFAULT_COMPONENTS, min_length=1)
    """GKE metric packages; SYSTEM_COMPONENTS (node and TPU metrics) is required, DEPLOYMENT and
    JOBSET feed the dashboard and the alerts."""
    scrape_controllers: StrictBool = True
    """Scrape Kueue's and JobSet's controller metrics (PodMonitorings, HTTPS with a bearer
    token)."""
    scrape_interval_seconds: StrictInt = Field(30, ge=10, le=300)
    """How often the controllers are scraped."""
    dashboard: StrictBool = True
    """Create the stack's Cloud Monitoring dashboard."""
    alerts: AlertsConfig = AlertsConfig()
    """Alert policies."""
    notification_channels: list[NotificationChannel] = Field([], max_length=16)
    """Cloud Monitoring notification channels every alert notifies (created outside the stack:
    projects/<project>/notificationChannels/<id>); none: alerts show in the console only."""
    gcs_fuse_metrics: StrictBool = True
    """Cloud Storage FUSE volumes export their metrics (disableMetrics: false)."""

    @field_validator("system_components")
    @classmethod
    def _system_first(cls, components: list[SystemComponent]) -> list[SystemComponent]:
        if SystemComponent.SYSTEM_COMPONENTS not in components:
            raise ValueError(
                "must include SYSTEM_COMPONENTS (GKE collects no other package without it, and "
                "it carries the TPU metrics the dashboard shows)"
            )
        if len(set(components)) != len(components):
            raise ValueError("lists a package more than once")
        return components

    @property
    def any_alert(self) -> bool:
        alerts = self.alerts
        return any(
            a.enabled
            for a in (
                alerts.tpu_idle,
                alerts.slice_not_ready,
                alerts.pending_too_long,
                alerts.controller_not_ready,
            )
        )
