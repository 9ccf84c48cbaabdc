"""What a stack that creates its cluster watches it with: the controllers' PodMonitorings
(``ControllerMetrics``), and the dashboard and alert policies (``StackMonitoring``), mapped from
``observability``. ``build_observability`` returns the stack outputs it adds."""

from __future__ import annotations

from typing import Any

import pulumi

from components.addons.alerts import AlertsArgs, Threshold, alert_specs
from components.addons.dashboard import DashboardArgs, WorkloadLink, stack_dashboard
from components.addons.monitoring import (
    ControllerMetrics,
    ControllerMetricsArgs,
    StackMonitoring,
    StackMonitoringArgs,
)
from components.config.schema import StackConfig, WorkloadMode
from components.config.schema.observability import AlertConfig, TpuIdleAlert
from components.console_links import dashboards_url
from components.gke.cluster import ClusterTarget
from components.resolve.links import job_logs_url
from components.resolve.workload_specs import deployment_namespace
from components.stack.installs import Installs
from components.tpu.pricing import price_table

# The controllers' pods and reader roles (the release manifests': kubernetes-sigs/kueue v0.17.1
# config/default and config/components/rbac/metrics_reader_role.yaml; kubernetes-sigs/jobset
# v0.10.1 config/components/rbac/auth_proxy_client_clusterrole.yaml, prefix jobset-).
_SCRAPED = {
    "kueue": ("kueue-system", "kueue-metrics-reader", {"control-plane": "controller-manager"}),
    "jobset": ("jobset-system", "jobset-metrics-reader", {"control-plane": "controller-manager"}),
}


def workload_links(config: StackConfig) -> list[WorkloadLink]:
    """Each job of the stack with its Logs Explorer link."""
    return [
        WorkloadLink(entry.name, ns, job_logs_url(config, entry.name, ns))
        for _, entry in config.deployments()
        for ns in [deployment_namespace(entry)]
    ]


def controller_namespaces(config: StackConfig) -> list[str]:
    installed = []
    if config.addons.jobset.install:
        installed.append("jobset-system")
    if config.kueue_enabled:
        installed.append("kueue-system")
    if config.addons.pathways_job.install and config.needs_pathways_controller:
        installed.append("pathways-job-system")
    return installed


def idle_chip_hour(config: StackConfig) -> float | None:
    """USD per chip-hour of the stack's TPU pools when they all share one price (overrides
    first, then the list price); None when not priced or priced differently."""
    table = price_table()
    prices = set()
    for pool in config.tpu_pools:
        generation, capacity = pool.shape.generation.value, pool.capacity.type.value
        price = config.pricing.chip_hour(generation, capacity)
        if price is None:
            price = table.tpu_chip_hour(generation, capacity, config.gcp.region).value
        prices.add(price)
    return prices.pop() if len(prices) == 1 and None not in prices else None


def dashboard_args(config: StackConfig) -> DashboardArgs:
    return DashboardArgs(
        stack=pulumi.get_stack(),
        cluster=config.cluster.name,
        project=config.gcp.project,
        namespaces=sorted({*(t.name for t in config.teams), "default"}),
        workloads=tuple(workload_links(config)),
        kueue=config.queues_jobs,
        controllers=tuple(controller_namespaces(config)),
        idle_chip_hour=idle_chip_hour(config),
        volumes=any(w.volumes for w in config.workloads),
    )


def _threshold(alert: AlertConfig) -> Threshold | None:
    if not alert.enabled:
        return None
    percent = alert.duty_cycle_percent if isinstance(alert, TpuIdleAlert) else 0
    return Threshold(alert.for_minutes, percent)


def alerts_args(config: StackConfig) -> AlertsArgs:
    alerts, watched = config.observability.alerts, config.observability
    busy = (WorkloadMode.TRAINING, WorkloadMode.INFERENCE)
    return AlertsArgs(
        cluster=config.cluster.name,
        training_jobs=tuple(w.name for w in config.workloads if w.mode in busy),
        kueue=config.queues_jobs,
        scraped=watched.managed_prometheus and watched.scrape_controllers,
        controllers=tuple(controller_namespaces(config)),
        tpu_idle=_threshold(alerts.tpu_idle),
        slice_not_ready=_threshold(alerts.slice_not_ready),
        pending_too_long=_threshold(alerts.pending_too_long),
        controller_not_ready=_threshold(alerts.controller_not_ready),
    )


def stack_monitoring_args(config: StackConfig) -> StackMonitoringArgs:
    watched = config.observability
    return StackMonitoringArgs(
        project=config.gcp.project,
        cluster=config.cluster.name,
        dashboard=stack_dashboard(dashboard_args(config)) if watched.dashboard else None,
        alerts=tuple(alert_specs(alerts_args(config))),
        notification_channels=tuple(watched.notification_channels),
        labels={"stack": pulumi.get_stack().lower()[:63], "cluster": config.cluster.name},
        dashboards_link=dashboards_url(config.gcp.project),
    )


def scraped_installs(installs: Installs) -> dict[str, pulumi.Resource]:
    """The installs whose controllers are scraped, and what their PodMonitoring waits for (the
    release: its namespace and reader role): JobSet's install, Kueue's queues (after Kueue's)."""
    found = {"jobset": installs.jobset} if installs.jobset is not None else {}
    if installs.kueue is not None:
        found["kueue"] = installs.kueue
    return found


def build_observability(
    config: StackConfig,
    cluster: ClusterTarget,
    installs: Installs,
    within: pulumi.ResourceOptions | None = None,
) -> dict[str, Any]:
    """PodMonitorings of the installed controllers, then the dashboard and alerts (``within``:
    ``build_stack``'s options); outputs the dashboard's URL, and its title and where to find it
    (``dashboard``)."""
    watched, name = config.observability, config.cluster.name
    if watched.managed_prometheus and watched.scrape_controllers:
        for controller, install in scraped_installs(installs).items():
            namespace, role, selector = _SCRAPED[controller]
            ControllerMetrics(
                f"{name}-{controller}-metrics",
                ControllerMetricsArgs(
                    name=controller,
                    namespace=namespace,
                    reader_role=role,
                    selector=selector,
                    provider=cluster.provider,
                    interval_seconds=watched.scrape_interval_seconds,
                    install=(install,),
                ),
                within,
            )
    args = stack_monitoring_args(config)
    monitoring = StackMonitoring(f"{name}-monitoring", args, within)
    if monitoring.dashboard_url is None or args.dashboard is None:
        return {}
    return {
        "dashboard_url": monitoring.dashboard_url,
        # Known before deploy, unlike the URL (it holds the ID Cloud Monitoring gives it).
        "dashboard": f'"{args.dashboard.display_name}" at {dashboards_url(config.gcp.project)}',
    }
