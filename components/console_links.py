"""Links into the Google Cloud console: a workload's logs in Logs Explorer and a stack's
Cloud Monitoring dashboard. Pure: the plan's summary and the stack outputs build the same links.

URL forms (read 2026-11): Logs Explorer takes a URL-encoded query after ``;query=`` and a time
range after ``;duration=`` (console.cloud.google.com/logs/query; XPK 1.16
``xpk/core/pathways.py`` builds its Pathways log links this way, quoting the filter with
``urllib.parse.quote(..., safe='')``). A custom dashboard opens at
``monitoring/dashboards/builder/<DASHBOARD_ID>`` (XPK 1.16 ``xpk/commands/workload.py`` adds
``f.rlabel.cluster_name.ClusterName=<cluster>`` to preset the cluster filter).
"""

from __future__ import annotations

from urllib.parse import quote

CONSOLE = "https://console.cloud.google.com"


def logs_query(project: str, location: str, cluster: str, namespace: str, job: str) -> str:
    """The Logs Explorer query of one Pathways job's pods (its head and workers: JobSet names
    them ``<job>-pathways-head-...`` and ``<job>-worker-...``), one condition per line (the
    lines are ANDed)."""
    return "\n".join(
        (
            'resource.type="k8s_container"',
            f'resource.labels.project_id="{project}"',
            f'resource.labels.location="{location}"',
            f'resource.labels.cluster_name="{cluster}"',
            f'resource.labels.namespace_name="{namespace}"',
            f'resource.labels.pod_name=~"^{job}-(pathways-head|worker)-"',
            "severity>=DEFAULT",
        )
    )


def logs_url(project: str, location: str, cluster: str, namespace: str, job: str) -> str:
    """Logs Explorer on the job's pods, the last day."""
    query = quote(logs_query(project, location, cluster, namespace, job), safe="")
    return f"{CONSOLE}/logs/query;query={query};storageScope=project;duration=P1D?project={project}"


def dashboard_url(project: str, dashboard_id: str, cluster: str) -> str:
    """A custom dashboard, filtered to ``cluster``; ``dashboard_id`` is the Dashboard resource's
    id (``projects/<number>/dashboards/<ID>``) or its last part."""
    last = dashboard_id.rsplit("/", 1)[-1]
    return (
        f"{CONSOLE}/monitoring/dashboards/builder/{last}?project={project}"
        f"&f.rlabel.cluster_name.ClusterName={cluster}"
    )


def dashboards_url(project: str) -> str:
    """The list of the project's dashboards (where a dashboard not yet created will be)."""
    return f"{CONSOLE}/monitoring/dashboards?project={project}"
