"""The stack's dashboard in the plan's summary: its title and where it will be, beside each
job's Logs Explorer link (the preflight's summary gives those). A dashboard's own URL holds the
ID Cloud Monitoring gives it on creation (the stack output ``dashboard_url`` once deployed), so
the plan names the project's dashboard list and the title to open there. Pure."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from components.console_links import dashboards_url
from components.plan.model import PlannedResource
from components.tokens import DASHBOARD


def dashboard_link(resources: Iterable[PlannedResource]) -> str | None:
    """ "<title>" at <the project's dashboard list> (its own URL: dashboard_url after deploy)."""
    for resource in resources:
        if resource.type != DASHBOARD:
            continue
        project, text = resource.inputs.get("project"), resource.inputs.get("dashboardJson")
        try:
            title = json.loads(text)["displayName"]
        except (TypeError, ValueError, KeyError):
            continue
        where = dashboards_url(project) if isinstance(project, str) else "Cloud Monitoring"
        return f"{json.dumps(title)} at {where} (its own URL: output dashboard_url once deployed)"
    return None


def add_dashboard(jobs: Mapping[str, dict[str, Any]], resources: Iterable[PlannedResource]) -> None:
    """Each job of the summary gets the stack's dashboard beside its logs."""
    link = dashboard_link(resources)
    if link is None:
        return
    for job in jobs.values():
        job["dashboard"] = link
