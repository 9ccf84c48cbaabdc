"""Contract: every dashboard the example stacks create is a valid Monitoring API v1 Dashboard, and
every alert policy a valid PromQL policy.

The dashboard schema is tests/data/monitoring-v1-dashboard-schema.json: field names, required
fields and enum values written down from the API's discovery document (its source inside), not
the models under test; the tests below show it refuses what the API refuses (an enum value it
does not know, a field it does not have), so a pass means something. No network."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path

import jsonschema
import pytest

from components.resolve.tenancy.ownership import owner_stacks
from components.tokens import ALERT_POLICY, DASHBOARD

SCHEMA = Path(__file__).resolve().parents[1] / "data" / "monitoring-v1-dashboard-schema.json"
CLUSTER_STACKS = owner_stacks()  # the stacks that create a cluster: each gets a dashboard


@cache
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def problems(document: dict) -> list[str]:
    return sorted(
        f"{'.'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
        for e in validator().iter_errors(document)
    )


def dashboard_of(plan) -> dict:
    (dashboard,) = plan.by_type(DASHBOARD)
    return json.loads(dashboard.inputs["dashboardJson"])


def test_every_cluster_stack_is_an_example():
    assert sorted(CLUSTER_STACKS) == ["dev", "research-jobset", "research-v5p", "serving-v6e"]


@pytest.mark.parametrize("stack", CLUSTER_STACKS)
def test_each_cluster_stacks_dashboard_is_valid_against_the_api_schema(example_plan, stack):
    dashboard = dashboard_of(example_plan(stack))
    assert problems(dashboard) == []
    tiles = dashboard["mosaicLayout"]["tiles"]
    cells = [
        (x, y)
        for t in tiles
        for x in range(t["xPos"], t["xPos"] + t["width"])
        for y in range(t["yPos"], t["yPos"] + t["height"])
    ]
    assert len(cells) == len(set(cells))  # no two tiles overlap
    assert all(x < 12 for x, _ in cells)  # inside the 12 columns


def test_the_schema_refuses_an_aligner_the_api_does_not_have(example_plan):
    dashboard = dashboard_of(example_plan("dev"))
    broken = copy.deepcopy(dashboard)
    query = next(
        w["xyChart"]["dataSets"][0]["timeSeriesQuery"]
        for w in (t["widget"] for t in broken["mosaicLayout"]["tiles"])
        if "xyChart" in w and "timeSeriesFilter" in w["xyChart"]["dataSets"][0]["timeSeriesQuery"]
    )
    query["timeSeriesFilter"]["aggregation"]["perSeriesAligner"] = "ALIGN_AVERAGE"
    assert any("'ALIGN_AVERAGE' is not one of" in p for p in problems(broken))


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        (("mosaicLayout", "columns"), 13, "13 is greater than the maximum of 12"),
        (("dashboardFilters", 0, "filterType"), "CLUSTER", "'CLUSTER' is not one of"),
        (("mosaicLayout", "tiles", 0, "widget", "chart"), {}, "Additional properties"),
        (("mosaicLayout", "tiles", 0, "xPos"), -1, "-1 is less than the minimum of 0"),
    ],
)
def test_the_schema_refuses_what_the_api_refuses(example_plan, path, value, expected):
    broken = copy.deepcopy(dashboard_of(example_plan("dev")))
    node = broken
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    assert any(expected in p for p in problems(broken)), problems(broken)


def test_the_dashboard_shows_tpu_kueue_and_idle_cost_tiles(example_plan):
    dashboard = dashboard_of(example_plan("dev"))
    titles = [t["widget"]["title"] for t in dashboard["mosaicLayout"]["tiles"]]
    assert dashboard["displayName"] == "tpu-pathways dev (pathways-dev)"
    assert {
        "TPU duty cycle (%)",
        "Idle TPU time (USD per hour)",
        "Pending in Kueue",
        "TPU duty cycle per workload (%)",
        "TensorCore utilization per node (%)",
        "HBM in use per node (%)",
        "Worker slices ready / requested per workload",
        "Kueue admission wait, 95th percentile (s)",
        "Cloud Storage FUSE errors per second",
    } <= set(titles)
    idle = next(
        t["widget"]["scorecard"]["timeSeriesQuery"]["prometheusQuery"]
        for t in dashboard["mosaicLayout"]["tiles"]
        if t["widget"]["title"] == "Idle TPU time (USD per hour)"
    )
    # dev's v5e pool is spot: $0.244926 per chip-hour (prices.yaml)
    assert idle == (
        'sum((100 - kubernetes_io:node_accelerator_duty_cycle{monitored_resource="k8s_node",'
        'cluster_name="pathways-dev"}) / 100) * 0.244926'
    )


def test_a_stack_without_kueue_has_no_kueue_tiles_nor_pending_alert(example_plan):
    plan = example_plan("serving-v6e")  # addons.kueue.enabled: false
    titles = [t["widget"]["title"] for t in dashboard_of(plan)["mosaicLayout"]["tiles"]]
    assert not [t for t in titles if "Kueue" in t]
    names = sorted(r.name for r in plan.by_type(ALERT_POLICY))
    assert names == [
        "pathways-serving-monitoring-controllers-not-ready",
        "pathways-serving-monitoring-slices-not-ready",
        "pathways-serving-monitoring-tpu-idle",
    ]


def test_alert_policies_are_promql_with_literal_durations(example_plan):
    policies = {r.name: r.inputs for r in example_plan("research-v5p").by_type(ALERT_POLICY)}
    idle = policies["pathways-research-monitoring-tpu-idle"]
    assert idle["severity"] == "WARNING"
    assert idle["combiner"] == "OR"
    assert idle["userLabels"] == {"stack": "research-v5p", "cluster": "pathways-research"}
    (condition,) = idle["conditions"]
    promql = condition["conditionPrometheusQueryLanguage"]
    assert promql["duration"] == "1800s"  # alerts.tpuIdle.forMinutes default 30
    assert promql["evaluationInterval"] == "60s"
    assert promql["disableMetricValidation"] is True
    assert promql["query"].endswith(" < 5")  # alerts.tpuIdle.dutyCyclePercent default 5
    assert 'jobset_name=~"llm-pretrain"' in promql["query"]
    pending = policies["pathways-research-monitoring-pending-too-long"]
    assert [c["conditionPrometheusQueryLanguage"]["duration"] for c in pending["conditions"]] == [
        "7200s",
        "7200s",
    ]
    controllers = policies["pathways-research-monitoring-controllers-not-ready"]
    assert controllers["severity"] == "CRITICAL"
    assert controllers["conditions"][0]["conditionPrometheusQueryLanguage"]["query"] == (
        'min by (deployment) (kube_deployment_status_replicas_available{cluster="pathways-research"'
        ',deployment=~"jobset-controller-manager|kueue-controller-manager|'
        'pathways-job-controller-manager"}) < 1'
    )
