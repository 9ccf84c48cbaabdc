"""Plan diffs: classification on hand-built plan pairs, secrets, rendering, the CLI end to end."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from components.plan import engine
from components.plan.diff import ABSENT, diff_plans
from components.plan.diff_render import MARKER, render_json, render_markdown, render_text
from components.plan.model import Plan
from components.tpu.pricing import PriceTable
from tests.examples import EXAMPLES_DIR
from tests.helpers import assert_error_report, run_cli

ROOT = Path(__file__).resolve().parents[3]
SNAPSHOT = ROOT / "tests" / "data" / "plan_diff_two_stacks.md"
NODE_POOL = "gcp:container/nodePool:NodePool"
PATHWAYS_JOB = "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob"
SECRET_SIG = "4dabf18193072939515e22adb298388d"

TABLE = PriceTable(
    {
        "hoursPerMonth": 730,
        "taken": "2026-01-01",
        "tpu": {
            "default": {
                "v5e": {"onDemand": 1.0, "spot": None},
                "v5p": {"onDemand": 4.0},
            }
        },
        "cpu": {"default": {"n2": {"vcpuHour": 0.03, "gibHour": 0.004}}},
    },
    source="test prices",
)


def res(
    name: str,
    type_: str = NODE_POOL,
    inputs: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
    stack: str = "s",
) -> dict[str, Any]:
    return {
        "urn": f"urn:pulumi:{stack}::tpu-pathways::{type_}::{name}",
        "type": type_,
        "name": name,
        "parent": None,
        "custom": True,
        "provider": None,
        "inputs": inputs or {},
        "dependencies": [],
        "options": options or {},
    }


def plan(*resources: dict[str, Any], stack: str = "s", tpu: dict | None = None) -> Plan:
    return Plan.load(
        {
            "stack": stack,
            "project": "tpu-pathways",
            "resources": list(resources),
            "outputs": {},
            "summary": {"tpu": tpu or {}, "resources": len(resources)},
        }
    )


def tpu_pool(name: str = "v5e-0", topology: str = "2x4", hosts: int = 2, **node_config) -> dict:
    return {
        "name": name,
        "cluster": "c",
        "location": "us-west4",
        "nodeLocations": ["us-west4-a"],
        "nodeCount": hosts,
        "placementPolicy": {"type": "COMPACT", "tpuTopology": topology},
        "nodeConfig": {"machineType": "ct5lp-hightpu-4t", **node_config},
    }


POOL_OPTIONS = {"deleteBeforeReplace": True, "ignoreChanges": ["placementPolicy.type"]}


def one(before: dict, after: dict):
    """The only resource change between two one-resource plans."""
    diff = diff_plans(plan(before), plan(after), TABLE)
    assert len(diff.resources) == 1, diff.resources
    return diff.resources[0]


def changed_paths(change) -> dict[str, Any]:
    return {c.path: c for c in change.changes}


# --- classification ---------------------------------------------------------------------------


def test_a_plan_against_itself_is_empty():
    document = plan(res("v5e-0", inputs=tpu_pool(), options=POOL_OPTIONS), res("b", "x:y:Z"))
    diff = diff_plans(document, copy.deepcopy(document), TABLE)
    assert diff.resources == []
    assert diff.unchanged == 2
    assert not diff.has_changes
    assert "no changes" in render_text([diff])


def test_the_real_dev_plan_against_itself_is_empty(plan_of, stack_values):
    document = Plan.load(json.loads(json.dumps(plan_of(stack_values(), "dev").to_dict())))
    diff = diff_plans(document, copy.deepcopy(document))
    assert diff.resources == []
    assert diff.unchanged == len(document.resources)


def test_added_and_removed_resources_are_matched_by_urn():
    kept = res("kept", "x:y:Z", {"a": 1})
    diff = diff_plans(plan(kept, res("old", "x:y:Z")), plan(kept, res("new", "x:y:Z")), TABLE)
    assert [(r.kind, r.name) for r in diff.resources] == [("remove", "old"), ("add", "new")]
    assert diff.counts == {"replace": 0, "remove": 1, "add": 1, "update": 0, "ignored": 0}


def test_in_place_change_is_an_update():
    before = tpu_pool()
    after = copy.deepcopy(before)
    after["management"] = {"autoRepair": False}
    change = one(res("p", inputs=before), res("p", inputs=after))
    assert change.kind == "update"
    assert changed_paths(change)["management"].after == {"autoRepair": False}


def test_provider_force_new_field_is_a_replace_and_delete_before_replace_is_flagged():
    after = tpu_pool(name="v5e-renamed")
    change = one(
        res("p", inputs=tpu_pool(), options=POOL_OPTIONS),
        res("p", inputs=after, options=POOL_OPTIONS),
    )
    assert change.kind == "replace"
    assert change.delete_before_replace
    reason = changed_paths(change)["name"].replace_reason
    assert "name" in reason and "ForceNew" in reason


def test_capacity_type_change_is_a_replace():
    # spot -> on-demand: nodeConfig.spot is ForceNew
    change = one(res("p", inputs=tpu_pool(spot=True)), res("p", inputs=tpu_pool()))
    assert change.kind == "replace"
    assert changed_paths(change)["nodeConfig.spot"].replace_reason


def test_tpu_topology_change_is_a_replace_and_the_node_count_rides_along():
    change = one(
        res("p", inputs=tpu_pool("v5e-0", "2x4", 2), options=POOL_OPTIONS),
        res("p", inputs=tpu_pool("v5e-0", "4x4", 4), options=POOL_OPTIONS),
    )
    assert change.kind == "replace"
    paths = changed_paths(change)
    assert "GKE" in paths["placementPolicy.tpuTopology"].replace_reason
    assert paths["nodeCount"].replace_reason is None  # a resize alone is in place


def test_block_appearing_forces_replacement_but_fields_inside_it_update_in_place():
    without = tpu_pool()
    del without["placementPolicy"]
    assert one(res("p", inputs=without), res("p", inputs=tpu_pool())).kind == "replace"
    scaled = copy.deepcopy(tpu_pool())
    scaled["autoscaling"] = {"totalMinNodeCount": 0, "totalMaxNodeCount": 2}
    rescaled = copy.deepcopy(scaled)
    rescaled["autoscaling"]["totalMaxNodeCount"] = 4
    assert one(res("p", inputs=scaled), res("p", inputs=rescaled)).kind == "update"


def test_machine_type_change_updates_in_place_but_recreates_the_nodes():
    before = tpu_pool()
    after = copy.deepcopy(before)
    after["nodeConfig"]["machineType"] = "ct5lp-hightpu-8t"
    change = one(res("p", inputs=before), res("p", inputs=after))
    assert change.kind == "update"
    assert change.recreates_nodes


def test_replace_on_changes_covers_the_changed_path():
    options = {"replaceOnChanges": ["spec"], "deleteBeforeReplace": True}
    job = {"metadata": {"name": "j", "labels": {"a": "1"}}, "spec": {"workers": [{"n": 1}]}}
    respec = copy.deepcopy(job)
    respec["spec"]["workers"][0]["n"] = 2
    relabel = copy.deepcopy(job)
    relabel["metadata"]["labels"]["a"] = "2"
    replaced = one(res("j", PATHWAYS_JOB, job, options), res("j", PATHWAYS_JOB, respec, options))
    assert replaced.kind == "replace"
    assert "replaceOnChanges 'spec'" in changed_paths(replaced)["spec.workers[0].n"].replace_reason
    updated = one(res("j", PATHWAYS_JOB, job, options), res("j", PATHWAYS_JOB, relabel, options))
    assert updated.kind == "update"


def test_replace_on_changes_star_means_any_change():
    options = {"replaceOnChanges": ["*"]}
    change = one(res("x", "x:y:Z", {"a": 1}, options), res("x", "x:y:Z", {"a": 2}, options))
    assert change.kind == "replace"


def test_kubernetes_object_renamed_is_a_replace():
    before = {"metadata": {"name": "a", "namespace": "n"}}
    after = {"metadata": {"name": "b", "namespace": "n"}}
    kind = "kubernetes:core/v1:ConfigMap"
    assert one(res("c", kind, before), res("c", kind, after)).kind == "replace"


def test_ignored_changes_are_listed_but_do_not_count():
    before, after = tpu_pool(), tpu_pool()
    after["placementPolicy"]["type"] = ""
    change = one(
        res("p", inputs=before, options=POOL_OPTIONS), res("p", inputs=after, options=POOL_OPTIONS)
    )
    assert change.kind == "ignored"
    assert changed_paths(change)["placementPolicy.type"].ignored
    diff = diff_plans(plan(res("p", inputs=before, options=POOL_OPTIONS)),
                      plan(res("p", inputs=after, options=POOL_OPTIONS)), TABLE)  # fmt: skip
    assert not diff.has_changes


def test_unknown_values_are_shown_as_unknown():
    known = res("x", "x:y:Z", {"endpoint": "1.2.3.4"})
    unknown = res("x", "x:y:Z", {"endpoint": "[unknown]"})
    assert changed_paths(one(known, unknown))["endpoint"].after == "[unknown]"
    text = render_text([diff_plans(plan(known), plan(unknown), TABLE)])
    assert '"1.2.3.4" -> [unknown]' in text
    same = res("x", "x:y:Z", {"endpoint": "[unknown]"})
    assert diff_plans(plan(same), plan(copy.deepcopy(same)), TABLE).resources == []


def test_secrets_are_never_revealed():
    leaked = "hunter2-do-not-show"
    wire_secret = {SECRET_SIG: "1b47061264138c4ac30d75fd1eb44270", "value": leaked}
    provider = "pulumi:providers:kubernetes"
    before = res("k", provider, {"kubeconfig": "[secret]", "token": "old"})
    after = res("k", provider, {"kubeconfig": wire_secret, "token": wire_secret})
    diff = diff_plans(plan(before), plan(after), TABLE)
    paths = changed_paths(diff.resources[0])
    assert "kubeconfig" not in paths  # [secret] -> [secret]: nothing the plan can show
    assert paths["token"].after == "[secret]"
    for output in (render_text([diff]), render_markdown([diff]), render_json([diff])):
        assert leaked not in output
        assert "[secret]" in output


def test_new_and_removed_stacks():
    document = plan(res("a", "x:y:Z"), res("b", "x:y:Z"))
    new = diff_plans(None, document, TABLE)
    assert new.new_stack and new.counts["add"] == 2
    gone = diff_plans(document, None, TABLE)
    assert gone.removed_stack and gone.counts["remove"] == 2


# --- Markdown ---------------------------------------------------------------------------------

CPU_POOL = {
    "name": "cpu-np",
    "nodeLocations": ["us-west4-a"],
    "autoscaling": {"minNodeCount": 1, "maxNodeCount": 3},
    "nodeConfig": {"machineType": "n2-standard-8"},
}


def two_stack_change() -> list:
    """dev: the v5e slice goes 2x4 -> 4x4 (replace) and its job is replaced; a bucket is added.
    research: a third on-demand v5p slice is added."""
    job_options = {"replaceOnChanges": ["spec"], "deleteBeforeReplace": True}

    def job(topology: str) -> dict:
        return {"metadata": {"name": "train"}, "spec": {"workers": [{"topology": topology}]}}

    dev_before = plan(
        res("cpu", inputs=CPU_POOL, stack="dev"),
        res("v5e-0", inputs=tpu_pool("v5e-0", "2x4", 2), options=POOL_OPTIONS, stack="dev"),
        res("train", PATHWAYS_JOB, job("2x4"), job_options, stack="dev"),
        stack="dev",
        tpu={"v5e": {"pools": 1, "slices": 1, "hosts": 2, "chips": 8}},
    )
    dev_after = plan(
        res("cpu", inputs=CPU_POOL, stack="dev"),
        res("v5e-0", inputs=tpu_pool("v5e-0", "4x4", 4), options=POOL_OPTIONS, stack="dev"),
        res("train", PATHWAYS_JOB, job("4x4"), job_options, stack="dev"),
        res("scratch", "gcp:storage/bucket:Bucket", {"name": "scratch"}, stack="dev"),
        stack="dev",
        tpu={"v5e": {"pools": 1, "slices": 1, "hosts": 4, "chips": 16}},
    )

    def v5p(index: int) -> dict:
        inputs = tpu_pool(f"v5p-{index}", "2x2x2", 2)
        inputs["nodeConfig"]["machineType"] = "ct5p-hightpu-4t"
        return res(f"v5p-{index}", inputs=inputs, options=POOL_OPTIONS, stack="research")

    research_before = plan(
        v5p(0), v5p(1), stack="research",
        tpu={"v5p": {"pools": 1, "slices": 2, "hosts": 4, "chips": 16}},
    )  # fmt: skip
    research_after = plan(
        v5p(0), v5p(1), v5p(2), stack="research",
        tpu={"v5p": {"pools": 1, "slices": 3, "hosts": 6, "chips": 24}},
    )  # fmt: skip
    return [
        diff_plans(dev_before, dev_after, TABLE),
        diff_plans(research_before, research_after, TABLE),
    ]


def test_two_stack_change_costs_by_hand():
    dev, research = two_stack_change()
    # dev: n2-standard-8 = 8 x 0.03 + 32 x 0.004 = $0.368/h; the v5e slice is on demand at $1:
    # 8 chips -> 16 chips: $8.368/h -> $16.368/h, +$8/h = +$5,840/month
    assert dev.cost_before["hourly"] == pytest.approx(8.368)
    assert dev.cost_after["hourly"] == pytest.approx(16.368)
    # research: 2 -> 3 slices of 8 v5p chips at $4: $64/h -> $96/h, +$23,360/month
    assert research.cost_before["monthly"] == pytest.approx(64 * 730)
    assert research.cost_after["monthly"] == pytest.approx(96 * 730)


def test_markdown_snapshot_of_a_two_stack_change():
    text = render_markdown(two_stack_change())
    if os.environ.get("UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(text)
    assert text == SNAPSHOT.read_text()


def test_markdown_is_one_comment_with_a_headline_per_stack():
    text = render_markdown(two_stack_change())
    assert text.startswith(MARKER + "\n")
    summaries = re.findall(r"<summary>(.*)</summary>", text)
    assert len(summaries) == 2
    assert summaries[0].startswith(
        "<b>dev</b>: replaces node pool v5e-0: destroys its TPU hosts and the workloads on them; "
        "replaces job train: it starts again from the beginning · 2 to replace, 1 to add"
    )
    assert "+$5,840.00/mo" in summaries[0]
    assert "+$23,360.00/mo" in summaries[1]


def test_markdown_drops_details_before_headlines_to_fit_one_comment():
    diffs = two_stack_change()
    full = render_markdown(diffs)
    shorter = render_markdown(diffs, max_chars=len(full) - 1)
    assert "placementPolicy.tpuTopology" not in shorter
    assert "<summary><b>dev</b>" in shorter
    tiny = render_markdown(diffs, max_chars=100)
    assert tiny.startswith(MARKER)
    assert "- **dev**: replaces node pool v5e-0: destroys its TPU hosts" in tiny
    assert "- **research**: 1 to add" in tiny


def cluster_replaced() -> list:
    """The issue's PR: the GKE cluster moves region (a replacement), its pools and job go too."""
    cluster = "gcp:container/cluster:Cluster"
    before = plan(
        res("pathways-dev", cluster, {"name": "pathways-dev", "location": "us-west4"}),
        res("v5e-0", inputs=tpu_pool("v5e-0", "2x4", 2), options=POOL_OPTIONS),
        res("scratch", "gcp:storage/bucket:Bucket", {"name": "scratch", "location": "US-WEST4"}),
    )
    moved = {**tpu_pool("v5e-0", "2x4", 2), "location": "us-east5", "nodeLocations": ["us-east5-a"]}
    after = plan(
        res("pathways-dev", cluster, {"name": "pathways-dev", "location": "us-east5"}),
        res("v5e-0", inputs=moved, options=POOL_OPTIONS),
        res("scratch", "gcp:storage/bucket:Bucket", {"name": "scratch", "location": "US-EAST5"}),
    )
    return [diff_plans(before, after, TABLE)]


def test_the_headline_names_a_cluster_replacement_and_what_it_destroys():
    (diff,) = cluster_replaced()
    assert [r.kind for r in diff.resources] == ["replace", "replace", "replace"]
    first = render_text([diff]).splitlines()[0]
    assert first.startswith(
        "Stack s: replaces GKE cluster pathways-dev: destroys every node pool and workload on "
        "it; replaces bucket scratch: deletes it with its objects (refused while it holds "
        "objects unless forceDestroy is on) · 3 to replace · "
    )
    markdown = render_markdown([diff])
    assert (
        "<summary><b>s</b>: replaces GKE cluster pathways-dev: destroys every node pool and "
        "workload on it; replaces bucket scratch"
    ) in markdown
    assert "**Warning: replaces GKE cluster pathways-dev: destroys every node pool" in markdown


def test_an_update_in_place_names_no_replacement():
    before = plan(res("v5e-0", inputs=tpu_pool("v5e-0", "2x4", 2), options=POOL_OPTIONS))
    labels = tpu_pool("v5e-0", "2x4", 2)
    labels["nodeConfig"]["labels"] = {"team": "a"}
    after = plan(res("v5e-0", inputs=labels, options=POOL_OPTIONS))
    text = render_text([diff_plans(before, after, TABLE)])
    assert "replaces" not in text.splitlines()[0]


# --- the CLI ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "no such file"),
        ("{not json", "is not JSON"),
        ('{"stack": "dev"}', "is not a plan document"),
    ],
)
def test_bad_diff_file_is_a_clear_error(tmp_path, capsys, content, expected):
    base = tmp_path / "base.json"
    if content is not None:
        base.write_text(content)
    code, out, err = run_cli(capsys, "plan", "--stack", "dev", "--diff", str(base))
    assert code == 2
    assert out == ""
    assert f"--diff: {base} " in err or f"--diff: cannot read {base}" in err
    assert expected in err and "plan --stack NAME --json" in err
    assert_error_report(err)


def test_bad_format_is_a_clear_error(tmp_path, capsys):
    base = tmp_path / "base.json"
    base.write_text(json.dumps(plan(stack="dev").to_dict()))
    code, _, err = run_cli(
        capsys, "plan", "--stack", "dev", "--diff", str(base), "--format", "html"
    )
    assert code == 2
    assert "--format: 'html' is not a diff format; allowed: text, markdown, json" in err


def test_base_plan_of_another_stack_is_refused(tmp_path, capsys):
    base = tmp_path / "base.json"
    base.write_text(json.dumps(plan(stack="serving").to_dict()))
    code, _, err = run_cli(capsys, "plan", "--stack", "dev", "--diff", str(base))
    assert code == 2 and "is the plan of stack 'serving', not 'dev'" in err


def stacks_copy(tmp_path: Path) -> Path:
    """A copy of stacks/ whose dev stack prices its spot v5e chips at $0.50 (the table has no
    spot price), so the cost delta of the TPU change is visible."""
    stacks = tmp_path / "stacks"
    shutil.copytree(EXAMPLES_DIR, stacks)
    dev = stacks / "Pulumi.dev.yaml"
    pricing = "  tpu-pathways:pricing:\n    tpuChipHour:\n      v5e:\n        spot: 0.5\n"
    dev.write_text(dev.read_text().replace("config:\n", "config:\n" + pricing, 1))
    return stacks


def diff_after_an_edit(tmp_path, capsys, edit: Callable[[str], str]) -> tuple[str, ...]:
    """Plan the dev stack (of ``stacks_copy``), ``edit`` its file's text, and return the `plan`
    arguments that diff it against the plan from before the edit."""
    stacks = stacks_copy(tmp_path)
    code, base_json, _ = run_cli(
        capsys, "plan", "--stack", "dev", "--stacks-dir", str(stacks), "--json"
    )
    assert code == 0
    base = tmp_path / "dev.json"
    base.write_text(base_json)
    dev = stacks / "Pulumi.dev.yaml"
    dev.write_text(edit(dev.read_text()))
    return ("--stack", "dev", "--stacks-dir", str(stacks), "--diff", str(base))


def _bigger_slice(text: str) -> str:
    assert "topology: 2x4" in text
    return text.replace("topology: 2x4", "topology: 4x4")


def _another_region(text: str) -> str:
    assert "region: us-west4\n" in text and "zone: us-west4-a\n" in text
    # another region (and so another zone): the bucket's location would change too
    return text.replace("us-west4", "us-east5").replace("us-east5-a", "us-east5-b")


def test_end_to_end_topology_change_replaces_the_slice(tmp_path, capsys):
    argv = diff_after_an_edit(tmp_path, capsys, _bigger_slice)
    code, out, err = run_cli(capsys, "plan", *argv, "--format", "json")
    assert code == 0, err
    (stack,) = json.loads(out)["stacks"]
    kinds = {r["name"]: r["kind"] for r in stack["resources"]}
    assert kinds["pathways-dev-v5e-0"] == "replace"  # the TPU node pool (the slice)
    assert all(k == "replace" for n, k in kinds.items() if r"v5e" in n)
    pool = next(r for r in stack["resources"] if r["name"] == "pathways-dev-v5e-0")
    assert pool["deleteBeforeReplace"] is True
    topology = next(c for c in pool["changes"] if c["path"] == "placementPolicy.tpuTopology")
    assert (topology["before"], topology["after"]) == ("2x4", "4x4")
    assert stack["capacity"]["v5e"]["before"]["chips"] == 8
    assert stack["capacity"]["v5e"]["after"]["chips"] == 16
    # 8 -> 16 spot chips at $0.50: +$4.00/h, the CPU pool unchanged
    before, after = stack["cost"]["before"]["hourly"], stack["cost"]["after"]["hourly"]
    assert after - before == pytest.approx(4.0)

    code, out, _ = run_cli(capsys, "plan", *argv, "--format", "markdown")
    assert code == 0
    headline = re.search(r"<summary>(.*)</summary>", out).group(1)
    assert "v5e chips 8 → 16" in headline
    assert "+$2,920.00/mo" in headline  # $4/h x 730 h
    assert "**pathways-dev-v5e-0** — deleted before its replacement is created" in out


def test_end_to_end_all_stacks_against_a_base_dir(tmp_path, capsys, monkeypatch):
    stacks = stacks_copy(tmp_path)
    base_dir = tmp_path / "base"
    base_dir.mkdir()
    code, out, _ = run_cli(capsys, "plan", "--stack", "dev", "--stacks-dir", str(stacks), "--json")
    (base_dir / "dev.json").write_text(out)
    gone = plan(res("old", "x:y:Z", stack="retired"), stack="retired")
    (base_dir / "retired.json").write_text(json.dumps(gone.to_dict()))
    planned = Counter()
    plan_read = engine.plan_read

    def counted(source, *args):
        planned[source.stack] += 1
        return plan_read(source, *args)

    monkeypatch.setattr(engine, "plan_read", counted)

    argv = ("--all", "--stacks-dir", str(stacks), "--diff-dir", str(base_dir))
    code, out, err = run_cli(capsys, "plan", *argv, "--format", "markdown")
    assert code == 0, err
    # Each stack file planned once: research-v5p is team-research's owner and a fleet worker,
    # dev a fleet worker too; their readers read their contracts from their stack files.
    assert planned == dict.fromkeys(
        ["dev", "fleet", "research-jobset", "research-v5p", "serving-v6e", "team-research"], 1
    )
    summaries = dict(re.findall(r"<summary><b>([^<]+)</b>: (.*)</summary>", out))
    assert sorted(summaries) == [
        "dev",
        "fleet",
        "research-jobset",
        "research-v5p",
        "retired",
        "serving-v6e",
        "team-research",
    ]
    assert summaries["dev"].startswith("no changes")
    assert summaries["research-v5p"].startswith("new stack")  # no base plan: all added
    assert summaries["retired"].startswith("stack removed, 1 to remove")


def test_zone_change_moves_every_tpu_host():
    """nodeLocations updates in place for the provider, but GKE recreates every node in the new
    zone: on a TPU pool that moves every host of the slice."""
    pools = [("v5e-0", 2), ("v5e-1", 2), ("v5p-0", 4)]

    def at(zone: str) -> dict:
        return plan(
            *[
                res(
                    n,
                    inputs={**tpu_pool(n, hosts=h), "nodeLocations": [zone]},
                    options=POOL_OPTIONS,
                )
                for n, h in pools
            ],
            res(
                "cpu",
                inputs={
                    "nodeCount": 3,
                    "nodeLocations": [zone],
                    "nodeConfig": {"machineType": "n2-standard-64"},
                },
            ),
        )

    diff = diff_plans(at("us-west4-a"), at("us-west4-b"), TABLE)
    kinds = {r.name: (r.kind, r.moves_tpu_hosts) for r in diff.resources}
    assert kinds == {
        "v5e-0": ("update", True),
        "v5e-1": ("update", True),
        "v5p-0": ("update", True),
        "cpu": ("update", False),  # moves too, but holds no TPU host
    }
    assert diff.moved_tpu_hosts == 8
    text = render_text([diff])
    assert "zone change: 8 TPU hosts move to another zone" in text.splitlines()[0]
    assert "[every node of the pool moves to the new zone]" in text
    markdown = render_markdown([diff])
    assert "zone change: 8 TPU hosts move to another zone" in markdown
    assert "**v5e-0** — **all 2 TPU hosts move to another zone**" in markdown
    (pool,) = [
        r for r in json.loads(render_json([diff]))["stacks"][0]["resources"] if r["name"] == "v5p-0"
    ]
    assert pool["movesTpuHosts"] == 4
    assert pool["changes"] == [
        {
            "path": "nodeLocations",
            "before": ["us-west4-a"],
            "after": ["us-west4-b"],
            "movesZone": True,
        }
    ]


def test_no_zone_change_no_flag():
    before = tpu_pool()
    after = copy.deepcopy(before)
    after["nodeConfig"]["machineType"] = "ct5lp-hightpu-8t"
    diff = diff_plans(plan(res("p", inputs=before)), plan(res("p", inputs=after)), TABLE)
    assert diff.moved_tpu_hosts == 0
    assert "zone change" not in render_text([diff])


def _zone_move(pool_inputs: dict[str, Any]):
    """The diff of one pool whose nodes move from zone a to zone b."""
    before = {**pool_inputs, "nodeLocations": ["us-west4-a"]}
    after = {**pool_inputs, "nodeLocations": ["us-west4-b"]}
    return diff_plans(plan(res("p", inputs=before)), plan(res("p", inputs=after)), TABLE)


def test_a_zone_move_of_a_tpu_pool_of_unknown_size_is_flagged_not_counted_as_one():
    """A host count the plan cannot know (here: unknown until deploy) is said to be unknown; it
    is neither one host (the old fallback) nor none (which would hide the move)."""
    pool = {**tpu_pool(), "nodeCount": "[unknown]"}
    diff = _zone_move(pool)
    (change,) = diff.resources
    assert (change.tpu_hosts, change.moves_tpu_hosts) == (None, True)
    assert (diff.moved_tpu_hosts, diff.unsized_tpu_moves) == (0, 1)
    (row,) = json.loads(render_json([diff]))["stacks"][0]["resources"]
    assert row["movesTpuHosts"] == "[unknown]"
    headline = render_text([diff]).splitlines()[0]
    assert "zone change: the TPU hosts of 1 pool of unknown size move to another zone" in headline
    assert "**p** — **all its TPU hosts move to another zone**" in render_markdown([diff])


def test_a_zone_move_counts_the_hosts_of_every_zone():
    """nodeCount is per zone: a pool in two zones holds twice as many hosts."""
    pool = {**tpu_pool(hosts=2), "nodeLocations": ["us-west4-a", "us-west4-c"]}
    before, after = copy.deepcopy(pool), copy.deepcopy(pool)
    after["nodeLocations"] = ["us-west4-b", "us-west4-c"]
    diff = diff_plans(plan(res("p", inputs=before)), plan(res("p", inputs=after)), TABLE)
    assert diff.moved_tpu_hosts == 4
    assert "zone change: 4 TPU hosts move to another zone" in render_text([diff])


def test_a_zone_move_of_a_flex_start_pool_moves_its_autoscaling_maximum():
    pool = tpu_pool(hosts=2)
    del pool["nodeCount"]
    pool.update(initialNodeCount=0, autoscaling={"totalMinNodeCount": 0, "totalMaxNodeCount": 4})
    assert _zone_move(pool).moved_tpu_hosts == 4


def test_end_to_end_zone_change_flags_the_slices_and_keeps_the_bucket(tmp_path, capsys):
    argv = diff_after_an_edit(tmp_path, capsys, _another_region)
    code, out, err = run_cli(capsys, "plan", *argv, "--format", "json")
    assert code == 0, err
    (stack,) = json.loads(out)["stacks"]
    by_name = {r["name"]: r for r in stack["resources"]}
    assert by_name["pathways-dev-v5e-0"]["movesTpuHosts"] == 2
    # the bucket is not replaced under its global name: the location change is ignored
    bucket = by_name["pathways-dev-scratch"]
    assert bucket["kind"] == "ignored"
    assert bucket["changes"] == [
        {"path": "location", "before": "US-WEST4", "after": "US-EAST5", "ignored": True}
    ]
    code, out, _ = run_cli(capsys, "plan", *argv, "--format", "markdown")
    assert "zone change: 2 TPU hosts move to another zone" in out


def test_a_grant_gaining_a_condition_is_a_new_grant():
    """role, member and condition are ForceNew on IAM members (the provider's
    IamMemberBaseSchema): conditioning a team's bucket grant replaces it."""
    token = "gcp:storage/bucketIAMMember:BucketIAMMember"
    grant = {"bucket": "b", "role": "roles/storage.objectUser", "member": "principal://x"}
    conditioned = {**grant, "condition": {"title": "t", "expression": "true"}}
    change = one(res("g", token, grant), res("g", token, conditioned))
    assert change.kind == "replace"
    assert changed_paths(change)["condition"].replace_reason == (
        "condition (ForceNew in the Google provider)"
    )
    reworded = {**conditioned, "condition": {"title": "t", "expression": "false"}}
    assert one(res("g", token, conditioned), res("g", token, reworded)).kind == "replace"


# --- containers: the fields that changed, not the whole list ---------------------------------


def job_with(container: dict, *more: dict) -> dict:
    return {
        "metadata": {"name": "train"},
        "spec": {"controller": {"template": {"spec": {"containers": [container, *more]}}}},
    }


MAIN = {
    "name": "main",
    "image": "img:1",
    "command": ["python3", "train.py"],
    "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
    "resources": {"limits": {"cpu": "4", "memory": "16Gi"}},
}
CONTAINERS = "spec.controller.template.spec.containers"


def test_a_changed_container_shows_the_fields_that_changed():
    after = copy.deepcopy(MAIN)
    after["image"] = "img:2"
    after["command"] = ["python3", "train.py", "--steps=10"]
    after["env"] = [{"name": "A", "value": "1"}, {"name": "C", "value": "3"}]
    after["resources"]["limits"]["memory"] = "32Gi"
    options = {"replaceOnChanges": ["spec"]}
    change = one(
        res("j", PATHWAYS_JOB, job_with(MAIN), options),
        res("j", PATHWAYS_JOB, job_with(after), options),
    )
    assert [(c.path, c.before, c.after) for c in change.changes] == [
        (f"{CONTAINERS}[main].command", ["python3", "train.py"], after["command"]),
        (f"{CONTAINERS}[main].env[C]", ABSENT, {"name": "C", "value": "3"}),
        (f"{CONTAINERS}[main].env[B]", {"name": "B", "value": "2"}, ABSENT),
        (f"{CONTAINERS}[main].image", "img:1", "img:2"),
        (f"{CONTAINERS}[main].resources.limits.memory", "16Gi", "32Gi"),
    ]
    assert change.kind == "replace"  # the rules still see the property: spec
    text = render_text([diff_plans(plan(res("j", PATHWAYS_JOB, job_with(MAIN), options)),
                                   plan(res("j", PATHWAYS_JOB, job_with(after), options)),
                                   TABLE)])  # fmt: skip
    assert (
        f'      ~ {CONTAINERS}[main].image: "img:1" -> "img:2"  '
        "[forces replacement: options.replaceOnChanges 'spec']"
    ) in text


def test_added_and_removed_containers_and_a_reordering():
    sidecar = {"name": "sidecar", "image": "s:1"}
    change = one(
        res("j", PATHWAYS_JOB, job_with(MAIN)), res("j", PATHWAYS_JOB, job_with(MAIN, sidecar))
    )
    assert [(c.path, c.before, c.after) for c in change.changes] == [
        (f"{CONTAINERS}[sidecar]", ABSENT, sidecar)
    ]
    swapped = one(
        res("j", PATHWAYS_JOB, job_with(MAIN, sidecar)),
        res("j", PATHWAYS_JOB, job_with(sidecar, MAIN)),
    )
    # same containers in another order: the list as a whole is what changed
    assert [c.path for c in swapped.changes] == [CONTAINERS]


SIDECAR = {"name": "sidecar", "image": "s:1"}
IMAGE_RULE = {"replaceOnChanges": [f"{CONTAINERS}[*].image"]}


@pytest.mark.parametrize(
    ("after", "path"),
    [(job_with(SIDECAR, MAIN), CONTAINERS), (job_with(MAIN), f"{CONTAINERS}[sidecar]")],
    ids=["reordered", "resized"],
)
def test_a_list_reordered_or_resized_above_a_replace_field_forces_replacement(after, path):
    """The change is at the list, above the rule's field: the field is compared as the list
    compares, whole (after the reordering index 0 holds another image; after the resize an
    image is gone)."""
    change = one(
        res("j", PATHWAYS_JOB, job_with(MAIN, SIDECAR), IMAGE_RULE),
        res("j", PATHWAYS_JOB, after, IMAGE_RULE),
    )
    assert [(c.path, c.replace_reason) for c in change.changes] == [
        (path, "options.replaceOnChanges 'spec.controller.template.spec.containers[*].image'")
    ]
    assert change.kind == "replace"


TAINT = {"key": "tpu-pathways/team", "value": "research", "effect": "NO_SCHEDULE"}


def test_a_block_above_a_force_new_field_replaces_only_if_that_field_changes():
    """nodeConfig.confidentialNodes appearing is a change above the ForceNew
    nodeConfig.confidentialNodes.confidentialInstanceType; beside it the taints list is resized
    (compared whole). Without that field the block updates in place; with it, the pool is
    replaced."""
    before = res("p", inputs=tpu_pool(taints=[TAINT]))
    two_taints = [TAINT, {**TAINT, "key": "tpu-pathways/pool"}]
    enabled = res("p", inputs=tpu_pool(confidentialNodes={"enabled": True}, taints=two_taints))
    updated = one(before, enabled)
    assert [(c.path, c.replace_reason) for c in updated.changes] == [
        ("nodeConfig.confidentialNodes", None),
        ("nodeConfig.taints", None),
    ]
    assert updated.kind == "update"
    typed = {"enabled": True, "confidentialInstanceType": "SEV"}
    replaced = one(before, res("p", inputs=tpu_pool(confidentialNodes=typed, taints=two_taints)))
    assert [(c.path, c.replace_reason) for c in replaced.changes] == [
        (
            "nodeConfig.confidentialNodes",
            "nodeConfig.confidentialNodes.confidentialInstanceType "
            "(ForceNew in the Google provider)",
        ),
        ("nodeConfig.taints", None),
    ]
    assert replaced.kind == "replace"


def test_list_item_selectors_do_not_hide_a_rule():
    # ignoreChanges and replaceOnChanges name properties; a [name] selector is not one
    options = {"ignoreChanges": [f"{CONTAINERS}[*].image"]}
    after = {**MAIN, "image": "img:2"}
    change = one(
        res("j", PATHWAYS_JOB, job_with(MAIN), options),
        res("j", PATHWAYS_JOB, job_with(after), options),
    )
    assert change.kind == "ignored"


# --- the research-v5p PR comment: Mermaid pictures -------------------------------------------


RESERVATION_LABEL = "tpu-pathways/reservation"


def test_research_v5p_change_renders_mermaid_pictures(tmp_path, capsys):
    """research-v5p moves its slices from the reservation to flex-start and bumps the image:
    the comment draws the replaced pools and job, and the dashboard updated (its idle-cost tile
    goes: v5p flex-start has no price), and the Gantt shows the modeled `pulumi up` getting
    shorter (flex-start pools are created empty)."""
    stacks = stacks_copy(tmp_path)
    argv = ("--stack", "research-v5p", "--stacks-dir", str(stacks))
    code, base_json, _ = run_cli(capsys, "plan", *argv, "--json")
    assert code == 0
    base = tmp_path / "research-v5p.json"
    base.write_text(base_json)
    research = stacks / "Pulumi.research-v5p.yaml"
    text = research.read_text()
    for old, new in (
        ("        reservation: research-v5p-reservation\n", "        flexStart: true\n"),
        ("tpu_pre_training:0.2.3", "tpu_pre_training:0.2.4"),
        (f"      nodeSelector:\n        {RESERVATION_LABEL}: research-v5p-reservation\n", ""),
    ):  # fmt: skip
        assert old in text
        text = text.replace(old, new)
    research.write_text(text)

    code, out, err = run_cli(capsys, "plan", *argv, "--diff", str(base), "--format", "markdown")
    assert code == 0, err
    flowchart = out[out.index("```mermaid\nflowchart LR") :]
    flowchart = flowchart[: flowchart.index("```\n", 4) + 3]
    assert flowchart.splitlines() == [
        "```mermaid",
        "flowchart LR",
        '  cluster["GKE cluster pathways-research (unchanged)"]',
        '  subgraph pools["node pools"]',
        '    n0["replace: pathways-research-v5p-0"]',
        '    n1["replace: pathways-research-v5p-1"]',
        '    n2["replace: pathways-research-v5p-nlp-0"]',
        "  end",
        '  subgraph workloads["workloads"]',
        '    n3["replace: pathways-research-research-llm-pretrain"]',
        "  end",
        '  subgraph other["other cloud resources"]',
        '    n4["update: Dashboard pathways-research-monitoring-dashboard"]',
        "  end",
        "  cluster --> pools",
        "  pools --> workloads",
        "  other -.- cluster",
        "  classDef replace fill:#fff1e5,stroke:#bc4c00,color:#1f2328",
        "  class n0,n1,n2,n3 replace",
        "  classDef update fill:#ddf4ff,stroke:#0969da,color:#1f2328",
        "  class n4 update",
        "```",
    ]
    gantt = out[out.index("```mermaid\ngantt") :]
    gantt = gantt[: gantt.index("```\n", 4) + 3]
    # durations.yaml typical figures: network 40 s, subnetwork 20 s, cluster 540 s, TPU slice
    # pool 600 s; after: flex-start pools take 60 s, so the installs' path is last: system pool
    # 240 s, JobSet 90 s, Kueue 90 s (it waits for JobSet), its configuration 1.5 s, then the
    # patch that pins Kueue's controller to the system pool and rolls it to read it, 55 s (its
    # rollout awaited), then its metrics scraping (the scraper's account, its token, the
    # PodMonitoring, 2 s each; longer than the queued job's 3 s):
    # 600 + 240 + 90 + 90 + 1.5 + 55 + 2 + 2 + 2 = 1082.5 s
    assert gantt.splitlines() == [
        "```mermaid",
        "gantt",
        "    title Modeled pulumi up, typical 20m00s to 18m02s",
        "    dateFormat X",
        "    axisFormat %M:%S",
        "    section before",
        "    1. VPC network pathways-research-net :b0, 0, 40",
        "    2. subnetwork pathways-research-net-subnet :b1, 40, 60",
        "    3. GKE Standard cluster pathways-research :b2, 60, 600",
        "    4. TPU slice node pool pathways-research-v5p-0 :b3, 600, 1200",
        "    section after",
        "    1. VPC network pathways-research-net :a0, 0, 40",
        "    2. subnetwork pathways-research-net-subnet :a1, 40, 60",
        "    3. GKE Standard cluster pathways-research :a2, 60, 600",
        "    4. CPU node pool pathways-research-system-np :a3, 600, 840",
        "    5. release manifest install pathways-research-jobset :a4, 840, 930",
        "    6. release manifest install pathways-research-kueue :a5, 930, 1020",
        "    7. ConfigMap patch pathways-research-kueue-config-config-map :a6, 1020, 1022",
        "    8. controller Deployment patch rollout awaited pathways-research-kueue-controller "
        ":a7, 1022, 1076",
        "    9. Kubernetes service account pathways-research-kueue-metrics-scraper :a8, 1076, 1078",
        "    10. Secret pathways-research-kueue-metrics-scraper-token :a9, 1078, 1080",
        "    11. PodMonitoring pathways-research-kueue-metrics-pod-monitoring :a10, 1080, 1082",
        "```",
    ]
    image = "us-docker.pkg.dev/cloud-tpu-images/maxtext-images/tpu_pre_training"
    assert (f'  - `{CONTAINERS}[main].image`: `"{image}:0.2.3"` → `"{image}:0.2.4"`') in out


def test_a_dashboards_json_is_compared_as_a_document():
    from components.plan.diff import property_changes

    before = json.dumps({"displayName": "d", "mosaicLayout": {"columns": 12, "tiles": [{"w": 6}]}})
    after = json.dumps({"displayName": "d", "mosaicLayout": {"columns": 12, "tiles": [{"w": 4}]}})
    assert property_changes({"dashboardJson": before}, {"dashboardJson": after}) == [
        ("dashboardJson.mosaicLayout.tiles[0].w", 6, 4)
    ]
    # any other string compares whole
    assert property_changes({"text": before}, {"text": after}) == [("text", before, after)]
