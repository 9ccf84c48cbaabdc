"""Mermaid pictures of the PR comment: the flowchart of what changes and the Gantt of the
modeled `pulumi up` critical path, with names Mermaid would otherwise parse."""

from __future__ import annotations

from components.plan.critical_path import CriticalPath, Step
from components.plan.mermaid import (
    Changed,
    change_flowchart,
    fleet_flowchart,
    label,
    task_name,
    timeline_changed,
    timeline_gantt,
)

NODE_POOL = "gcp:container/nodePool:NodePool"
CLUSTER = "gcp:container/cluster:Cluster"
PATHWAYS_JOB = "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob"


def test_labels_write_every_special_character_as_an_entity_code():
    # " ends the label, # and ; make entity codes, ` could end the Markdown fence, <& are HTML
    assert label('a"b#c;d`e<f&g]h') == "a#34;b#35;c#59;d#96;e#60;f#38;g#93;h"
    assert label("v5e-0 (spot): 8 chips") == "v5e-0 (spot): 8 chips"


def test_gantt_task_names_keep_only_safe_characters():
    assert task_name("x: section; #1\nnext") == "x section 1 next"


def test_flowchart_of_a_change_cluster_pools_installs_workloads():
    changes = [
        Changed(NODE_POOL, 'v5e-"]; click n0 call alert() %%', "add"),
        Changed(CLUSTER, "c1", "update"),
        Changed("kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue", "cluster-queue", "replace"),
        Changed(PATHWAYS_JOB, "train", "remove"),
        Changed("tpu-pathways:tpu:TpuPool", "v5e", "add"),  # our grouping: not drawn
        Changed("pulumi:providers:kubernetes", "k8s", "replace"),  # a provider: not drawn
        Changed("gcp:storage/bucket:Bucket", "scratch", "add"),
    ]
    assert change_flowchart(changes, "c1") == [
        "```mermaid",
        "flowchart LR",
        '  cluster["update: GKE cluster c1"]',
        '  subgraph pools["node pools"]',
        '    n0["add: v5e-#34;#93;#59; click n0 call alert() #37;#37;"]',
        "  end",
        '  subgraph installs["installs and in-cluster objects"]',
        '    n1["replace: ClusterQueue cluster-queue"]',
        "  end",
        '  subgraph workloads["workloads"]',
        '    n2["remove: train"]',
        "  end",
        '  subgraph other["other cloud resources"]',
        '    n3["add: Bucket scratch"]',
        "  end",
        "  cluster --> pools",
        "  cluster --> installs",
        "  pools --> workloads",
        "  installs --> workloads",
        "  other -.- cluster",
        "  classDef update fill:#ddf4ff,stroke:#0969da,color:#1f2328",
        "  class cluster update",
        "  classDef add fill:#dafbe1,stroke:#1a7f37,color:#1f2328",
        "  class n0,n3 add",
        "  classDef replace fill:#fff1e5,stroke:#bc4c00,color:#1f2328",
        "  class n1 replace",
        "  classDef remove fill:#ffebe9,stroke:#cf222e,color:#1f2328",
        "  class n2 remove",
        "```",
    ]


def test_flowchart_workloads_hang_off_the_cluster_when_nothing_between_changes():
    lines = change_flowchart([Changed(PATHWAYS_JOB, "train", "replace")], None)
    assert lines[2] == '  cluster["GKE cluster of another stack"]'
    assert "  cluster --> workloads" in lines
    assert change_flowchart([Changed("tpu-pathways:tpu:TpuPool", "v5e", "add")], "c") == []


def test_flowchart_counts_what_it_leaves_out():
    # a group shows 8 nodes; the 9th node counts the rest
    pools = [Changed(NODE_POOL, f"p{i}", "add") for i in range(8)]
    pools += [Changed(NODE_POOL, "r1", "remove"), Changed(NODE_POOL, "r2", "remove")]
    lines = change_flowchart(pools, "c")
    assert '    n8["... 2 more: 2 remove"]' in lines
    assert sum(1 for line in lines if line.startswith("    n")) == 9


def step(index: int, label_: str, name: str, start: float, finish: float) -> Step:
    return Step(f"urn:{index}", "t", name, label_, start, finish, 0, 0, "s")


def path(total: float, *steps: Step) -> CriticalPath:
    times = {"low": total, "typical": total, "high": total}
    return CriticalPath(list(steps), times, times, {}, [])


BEFORE = path(
    1200,
    step(0, "GKE Standard cluster", "c", 0, 540),
    step(1, "TPU slice node pool", "section: v5p#0", 540, 1200),
)
AFTER = path(
    840,
    step(0, "GKE Standard cluster", "c", 0, 540),
    step(1, "CPU node pool", "cpu", 540, 840),
)


def test_gantt_of_the_critical_path_before_and_after():
    assert timeline_changed(BEFORE, AFTER)
    assert timeline_gantt(BEFORE, AFTER) == [
        "```mermaid",
        "gantt",
        "    title Modeled pulumi up, typical 20m00s to 14m00s",
        "    dateFormat X",
        "    axisFormat %M:%S",
        "    section before",
        "    1. GKE Standard cluster c :b0, 0, 540",
        "    2. TPU slice node pool section v5p 0 :b1, 540, 1200",
        "    section after",
        "    1. GKE Standard cluster c :a0, 0, 540",
        "    2. CPU node pool cpu :a1, 540, 840",
        "```",
    ]


def test_no_gantt_when_the_critical_path_is_the_same():
    assert not timeline_changed(BEFORE, BEFORE)
    assert not timeline_changed(None, AFTER)  # a new stack: nothing to compare with
    long = path(4000, step(0, "GKE Standard cluster", "c", 0, 4000))
    assert "    axisFormat %H:%M" in timeline_gantt(BEFORE, long)


def test_fleet_flowchart_shows_manager_workers_and_dispatch_edges():
    fleet = {
        "workers": {"research-v5p": "us-east5", "dev": "us-west4"},
        "placements": {
            "research/v5p-train": ["research-v5p"],
            "pathways/nb": ["research-v5p", "dev"],
        },
    }
    assert fleet_flowchart("pathways-fleet", fleet) == [
        "```mermaid",
        "flowchart LR",
        '  manager["MultiKueue manager pathways-fleet"]',
        '  w0["worker research-v5p (us-east5)"]',
        '  w1["worker dev (us-west4)"]',
        '  j0["research/v5p-train"]',
        "  manager --> j0",
        "  j0 -.->|dispatch| w0",
        '  j1["pathways/nb"]',
        "  manager --> j1",
        "  j1 -.->|dispatch| w0",
        "  j1 -.->|dispatch| w1",
        "```",
    ]
