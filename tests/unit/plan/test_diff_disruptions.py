"""The PR headline names every disruptive change first: a CPU (head) pool whose nodes are
recreated with the jobs it interrupts, a controller version change, a replaced job; and memory
quantities in one unit on both sides of a change. Known answers are literals."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from components.plan.diff import diff_plans
from components.plan.diff_disruptions import same_unit
from components.plan.diff_render import headline, render_text
from components.plan.engine import plan_file
from tests.examples import EXAMPLES_DIR


def _changed_dev(tmp_path: Path, change) -> Path:
    """The example stacks with dev's file changed by ``change(config)``."""
    for path in EXAMPLES_DIR.glob("Pulumi.*.yaml"):
        (tmp_path / path.name).write_text(path.read_text())
    document = yaml.safe_load((tmp_path / "Pulumi.dev.yaml").read_text())
    change(document["config"])
    (tmp_path / "Pulumi.dev.yaml").write_text(yaml.safe_dump(document))
    return tmp_path


def test_a_recreated_cpu_pool_is_named_with_the_jobs_it_interrupts(tmp_path, example_plan):
    def bigger_heads(config):
        config["tpu-pathways:cpuPool"]["machineType"] = "n2-highmem-64"

    diff = diff_plans(example_plan("dev"), plan_file("dev", _changed_dev(tmp_path, bigger_heads)))
    assert headline(diff).startswith(
        "recreates the nodes of node pool pathways-dev-cpu-np: the pods on them restart "
        "(interrupts pathways/hello-train, pathways/notebook) · 3 to update · "
    )
    text = render_text([diff])
    assert '[memory].nominalQuota: "786050989425" (≈ 749636.6Mi) -> "1520340Mi"' in text


def test_a_controller_version_change_is_named(tmp_path, example_plan):
    def newer_controller(config):
        config["tpu-pathways:addons"] = {"pathwaysJob": {"version": "v0.1.5"}}

    diff = diff_plans(
        example_plan("dev"), plan_file("dev", _changed_dev(tmp_path, newer_controller))
    )
    assert "changes install pathways-dev-pathways-job v0.1.4 → v0.1.5: its controller restarts" in (
        headline(diff)
    )


@pytest.mark.parametrize(
    ("before", "after", "restated"),
    [
        ("786050989425", "1520340Mi", ("≈ 749636.6Mi", None)),
        ("1Gi", "1024Mi", (None, "= 1Gi")),
        ("1073741824", "2Gi", ("= 1Gi", None)),
        ("8", "16", (None, None)),  # one unit already
        ("100Gi", "200Gi", (None, None)),
        ("n2-standard-64", "1Gi", (None, None)),  # not a pair of quantities
        (3, "1Gi", (None, None)),
    ],
)
def test_quantities_are_shown_in_one_unit(before, after, restated):
    assert same_unit(before, after) == restated
