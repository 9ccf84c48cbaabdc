"""Console links (components.console_links): literal URLs, the form XPK 1.16 builds its own
Pathways log links in (xpk/core/pathways.py, urllib.parse.quote(filter, safe=''))."""

from __future__ import annotations

from components.console_links import dashboard_url, logs_query, logs_url


def test_the_logs_query_selects_the_jobs_head_and_workers():
    assert logs_query("p", "us-east5", "c", "nlp", "train").splitlines() == [
        'resource.type="k8s_container"',
        'resource.labels.project_id="p"',
        'resource.labels.location="us-east5"',
        'resource.labels.cluster_name="c"',
        'resource.labels.namespace_name="nlp"',
        'resource.labels.pod_name=~"^train-(pathways-head|worker)-"',
        "severity>=DEFAULT",
    ]


def test_the_logs_url_quotes_every_character_of_the_query():
    assert logs_url("p", "us-east5", "c", "nlp", "train") == (
        "https://console.cloud.google.com/logs/query;query=resource.type%3D%22k8s_container%22"
        "%0Aresource.labels.project_id%3D%22p%22%0Aresource.labels.location%3D%22us-east5%22"
        "%0Aresource.labels.cluster_name%3D%22c%22%0Aresource.labels.namespace_name%3D%22nlp%22"
        "%0Aresource.labels.pod_name%3D~%22%5Etrain-%28pathways-head%7Cworker%29-%22"
        "%0Aseverity%3E%3DDEFAULT;storageScope=project;duration=P1D?project=p"
    )


def test_the_dashboard_url_takes_the_resource_id_or_its_last_part():
    expected = (
        "https://console.cloud.google.com/monitoring/dashboards/builder/abc-123?project=p"
        "&f.rlabel.cluster_name.ClusterName=c"
    )
    assert dashboard_url("p", "projects/42/dashboards/abc-123", "c") == expected
    assert dashboard_url("p", "abc-123", "c") == expected
