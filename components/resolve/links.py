"""The console links of a stack's jobs (``console_links`` filled in from the stack): the plan's
summary and the stack outputs give the same ones. Pure."""

from __future__ import annotations

from components.config.schema import StackConfig
from components.console_links import logs_url


def job_logs_url(config: StackConfig, name: str, namespace: str) -> str:
    """Logs Explorer on job ``name``'s pods in ``namespace`` of the stack's cluster."""
    return logs_url(
        config.gcp.project, config.cluster_location, config.cluster.name, namespace, name
    )
