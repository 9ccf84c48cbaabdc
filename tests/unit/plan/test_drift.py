"""The drift report: which resources of which stacks differ, from the preview's JSON digest."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from components.plan.drift import MARKER, render, stack_drift

ROOT = Path(__file__).resolve().parents[3]
URN = "urn:pulumi:dev::tpu-pathways::"
# A PreviewDigest (pulumi/pulumi pkg/display/json.go) of a preview with --refresh.
DIGEST = {
    "steps": [
        {"op": "same", "urn": URN + "pulumi:pulumi:Stack::tpu-pathways-dev"},
        {
            "op": "update",
            "urn": URN + "tpu-pathways:nodepool:TpuNodePool$gcp:container/nodePool:NodePool"
            "::pathways-dev-v5e-0",
            "diffReasons": ["nodeConfig"],
            "detailedDiff": {"nodeConfig.labels": {"kind": "update"}},
        },
        {
            "op": "refresh",
            "urn": URN + "gcp:storage/bucket:Bucket::pathways-dev-scratch",
            "detailedDiff": {"labels.team": {"kind": "delete"}},
        },
        {"op": "refresh", "urn": URN + "gcp:compute/network:Network::pathways-dev"},
        {"op": "create", "urn": URN + "kubernetes:core/v1:Namespace::pathways-dev-research"},
        {"op": "same", "urn": URN + "gcp:container/cluster:Cluster::pathways-dev"},
    ],
    "changeSummary": {"same": 2, "update": 1, "create": 1},
    "diagnostics": [],
}


def test_drifted_resources_are_the_changed_steps_and_refreshes_that_say_what_differs():
    drift = stack_drift("dev", 7, DIGEST)
    assert [(r.op, r.type, r.name, r.keys) for r in drift.resources] == [
        (
            "update",
            "gcp:container/nodePool:NodePool",
            "pathways-dev-v5e-0",
            ("nodeConfig", "nodeConfig.labels"),
        ),
        ("refresh", "gcp:storage/bucket:Bucket", "pathways-dev-scratch", ("labels.team",)),
        ("create", "kubernetes:core/v1:Namespace", "pathways-dev-research", ()),
    ]
    assert drift.drifted and not drift.failed


def test_the_report_lists_each_drifted_stack_its_resources_and_the_clean_ones():
    failed = {"diagnostics": [{"severity": "error", "message": "permission denied"}]}
    text = render(
        [
            stack_drift("dev", 7, DIGEST),
            stack_drift("serving", 0, {"steps": [{"op": "same", "urn": URN + "x:y:Z::a"}]}),
            stack_drift("research", 255, failed),
        ]
    )
    assert text.startswith(MARKER + "\n## Drift: 1 of 3 stacks differ from their program\n")
    assert "### `dev`: 3 resources" in text
    assert (
        "| update | `gcp:container/nodePool:NodePool` | `pathways-dev-v5e-0` | "
        "`nodeConfig`, `nodeConfig.labels` |"
    ) in text
    assert (
        "| create | `kubernetes:core/v1:Namespace` | `pathways-dev-research` | (not reported) |"
        in text
    )
    assert "pathways-dev\n" not in text  # the network whose refresh changed nothing
    assert "### `research`: the preview failed (exit 255): permission denied" in text
    assert text.rstrip().endswith("No drift: `serving`.")


def test_the_command_reads_the_workflow_results_and_says_whether_anything_drifted(tmp_path):
    (tmp_path / "dev.json").write_text(json.dumps(DIGEST))
    (tmp_path / "dev.status").write_text("7\n")
    (tmp_path / "serving.json").write_text(json.dumps({"steps": []}))
    (tmp_path / "serving.status").write_text("0\n")

    def report() -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "components", "drift-report", str(tmp_path)],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )

    done = report()
    assert done.returncode == 1
    assert "### `dev`: 3 resources" in done.stdout
    (tmp_path / "dev.status").write_text("0\n")
    (tmp_path / "dev.json").write_text(json.dumps({"steps": DIGEST["steps"][:1]}))
    done = report()
    assert (done.returncode, done.stdout.splitlines()[1]) == (
        0,
        "## Drift: 0 of 2 stacks differ from their program",
    )


def test_a_folder_without_results_is_a_usage_error(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "components", "drift-report", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert "holds no <stack>.status file" in done.stderr
