"""`python -m components`: plan and shapes commands, exit codes and messages."""

from __future__ import annotations

import contextlib
import io
import json
import re

import pytest

from components.cli import main as cli
from tests.examples import EXAMPLES_DIR
from tests.helpers import assert_error_report, run_cli

STACKS_DIR = EXAMPLES_DIR

RESOURCE_KEYS = {"urn", "type", "name", "parent", "custom", "provider", "inputs", "dependencies"}


@pytest.fixture(scope="module")
def dev_json():
    # one --json run of the dev stack, shared by the JSON tests (capsys is per test)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["plan", "--stack", "dev", "--json"])
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())


def test_plan_text_has_the_tpu_summary(capsys):
    code, out, err = run_cli(capsys, "plan", "--stack", "dev")
    assert code == 0, err
    assert out.startswith("Plan for stack 'dev' of tpu-pathways: ")
    assert "TPU summary:" in out
    # dev: one v5e 2x4 slice = 1 pool, 1 slice, 2 hosts, 8 chips
    assert re.search(r"^\s+v5e\s+1\s+1\s+2\s+8\s*$", out, re.MULTILINE), out
    assert "kubeconfig: [secret]" in out
    assert err == ""


def test_plan_json_document(dev_json):
    assert {"stack", "project", "resources", "outputs", "summary"} <= set(dev_json)
    assert dev_json["stack"] == "dev"
    assert dev_json["project"] == "tpu-pathways"
    assert dev_json["resources"]
    for resource in dev_json["resources"]:
        assert set(resource) >= RESOURCE_KEYS, resource["urn"]
    assert dev_json["summary"]["tpu"] == {"v5e": {"pools": 1, "slices": 1, "hosts": 2, "chips": 8}}
    assert dev_json["summary"]["resources"] == len(dev_json["resources"])
    assert dev_json["outputs"]["kubeconfig"] == "[secret]"


def test_plan_json_node_pool(dev_json):
    (pool,) = [r for r in dev_json["resources"] if r["name"] == "pathways-dev-v5e-0"]
    assert pool["type"] == "gcp:container/nodePool:NodePool"
    assert pool["inputs"]["nodeCount"] == 2
    (cluster,) = [r for r in dev_json["resources"] if r["type"] == "gcp:container/cluster:Cluster"]
    assert cluster["urn"] in pool["dependencies"]


def test_plan_out_writes_manifests(capsys, tmp_path):
    out_dir = tmp_path / "out"
    code, _, err = run_cli(capsys, "plan", "--stack", "dev", "--out", str(out_dir))
    assert code == 0
    # dev: its team namespace and service account, two PathwaysJobs, Kueue's objects (on by
    # default in a stack that owns its cluster) and its configuration, the patches that pin each
    # controller to the system pool at the controllers' PriorityClass (JobSet's also sets its
    # memory, Kueue's rolls it to read its configuration), and the JobSet, PathwaysJob and Kueue
    # release manifests; the admission policies every team namespace shares (pods, Jobs,
    # JobSets, NetworkPolicies, Services) and their bindings; the team's NetworkPolicy and
    # ResourceQuotas (pods and chips; CPU and memory); Kueue's and JobSet's metrics
    # scraping (a PodMonitoring, the scraper's account, token, reader binding and the
    # collector's read of the token), and the dashboard in a directory of its own that
    # `kubectl apply -f DIR` does not read
    assert sorted(p.name for p in out_dir.iterdir()) == [
        "clusterqueue-cluster-queue.yaml",
        "clusterrolebinding-jobset-system-metrics-scraper.yaml",
        "clusterrolebinding-kueue-system-metrics-scraper.yaml",
        "localqueue-pathways-multislice-queue.yaml",
        "monitoring",
        "namespace-pathways.yaml",
        "networkpolicy-pathways-team-network.yaml",
        "patch-configmap-kueue-system-kueue-manager-config.yaml",
        "patch-deployment-jobset-system-jobset-controller-manager.yaml",
        "patch-deployment-kueue-system-kueue-controller-manager.yaml",
        "patch-deployment-pathways-job-system-pathways-job-controller-manager.yaml",
        "pathwaysjob-pathways-hello-train.yaml",
        "pathwaysjob-pathways-notebook.yaml",
        "podmonitoring-jobset-system-jobset-controller.yaml",
        "podmonitoring-kueue-system-kueue-controller.yaml",
        "priorityclass-high.yaml",
        "priorityclass-low.yaml",
        "priorityclass-medium.yaml",
        "priorityclass-tpu-pathways-controllers.yaml",
        "priorityclass-very-high.yaml",
        "priorityclass-very-low.yaml",
        "release-manifests.txt",
        "resourceflavor-cpu-cpu-np.yaml",
        "resourceflavor-tpu-v5-lite-podslice-2x4-4t.yaml",
        "resourcequota-pathways-pathways-compute.yaml",
        "resourcequota-pathways-pathways-quota.yaml",
        "role-jobset-system-gmp-collector-reads-scraper-token.yaml",
        "role-kueue-system-gmp-collector-reads-scraper-token.yaml",
        "rolebinding-jobset-system-gmp-collector-reads-scraper-token.yaml",
        "rolebinding-kueue-system-gmp-collector-reads-scraper-token.yaml",
        "secret-jobset-system-metrics-scraper-token.yaml",
        "secret-kueue-system-metrics-scraper-token.yaml",
        "serviceaccount-jobset-system-metrics-scraper.yaml",
        "serviceaccount-kueue-system-metrics-scraper.yaml",
        "serviceaccount-pathways-pathways.yaml",
        "validatingadmissionpolicy-tpu-pathways-team-jobs.yaml",
        "validatingadmissionpolicy-tpu-pathways-team-jobsets.yaml",
        "validatingadmissionpolicy-tpu-pathways-team-network-policies.yaml",
        "validatingadmissionpolicy-tpu-pathways-team-pods.yaml",
        "validatingadmissionpolicy-tpu-pathways-team-services.yaml",
        "validatingadmissionpolicybinding-tpu-pathways-team-jobs.yaml",
        "validatingadmissionpolicybinding-tpu-pathways-team-jobsets.yaml",
        "validatingadmissionpolicybinding-tpu-pathways-team-network-policies.yaml",
        "validatingadmissionpolicybinding-tpu-pathways-team-pods.yaml",
        "validatingadmissionpolicybinding-tpu-pathways-team-services.yaml",
    ]
    assert err.splitlines()[-1] == (
        f"wrote 45 files to {out_dir}: 39 Kubernetes objects, 4 server-side patches, "
        "release-manifests.txt (the 3 release manifests installed by URL), Cloud Monitoring "
        "dashboard JSON to import (monitoring/dashboard-pathways-dev-monitoring-dashboard.json)"
    )
    dashboard = json.loads(
        (out_dir / "monitoring" / "dashboard-pathways-dev-monitoring-dashboard.json").read_text()
    )
    assert dashboard["displayName"] == "tpu-pathways dev (pathways-dev)"
    urls = (out_dir / "release-manifests.txt").read_text().splitlines()[1:]
    assert [line.split()[1] for line in urls] == [
        "https://github.com/kubernetes-sigs/jobset/releases/download/v0.10.1/manifests.yaml",
        "https://github.com/kubernetes-sigs/kueue/releases/download/v0.17.1/manifests.yaml",
        "https://github.com/google/pathways-job/releases/download/v0.1.4/install.yaml",
    ]


def test_unknown_stack_lists_available_stacks(capsys):
    code, out, err = run_cli(capsys, "plan", "--stack", "nope")
    assert code == 2
    assert out == ""
    assert "unknown stack 'nope'; available: " in err
    for path in STACKS_DIR.glob("Pulumi.*.yaml"):
        assert path.name.removeprefix("Pulumi.").removesuffix(".yaml") in err
    assert_error_report(err)


def test_unknown_stack_in_other_dir(capsys, tmp_path):
    for name in ("beta", "alpha"):
        (tmp_path / f"Pulumi.{name}.yaml").write_text("config: {}\n")
    code, _, err = run_cli(capsys, "plan", "--stack", "gamma", "--stacks-dir", str(tmp_path))
    assert code == 2
    assert "unknown stack 'gamma'; available: alpha, beta" in err


def test_missing_stack_argument_is_a_usage_error(capsys):
    try:
        code = cli.main(["plan"])
    except SystemExit as exc:  # argparse's own usage error
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert "--stack" in err
    assert_error_report(err)


def test_shapes_one_name_json(capsys):
    code, out, _ = run_cli(capsys, "shapes", "v5litepod-16", "--json")
    assert code == 0
    row = json.loads(out)
    assert row["accelerator"] == "v5litepod-16"
    assert row["generation"] == "v5e"
    assert row["topology"] == "4x4"
    assert row["machineType"] == "ct5lp-hightpu-4t"
    assert row["acceleratorLabel"] == "tpu-v5-lite-podslice"
    assert (row["hosts"], row["chipsPerHost"], row["chips"]) == (4, 4, 16)
    assert row["multiHost"] is True
    assert row["pathwaysInstanceType"] == "tpuv5e:4x4"


def test_shapes_v5p_uses_the_tpuv5_prefix(capsys):
    code, out, _ = run_cli(capsys, "shapes", "v5p-16", "--json")
    assert code == 0
    row = json.loads(out)
    assert (row["topology"], row["hosts"]) == ("2x2x2", 2)
    assert row["pathwaysInstanceType"] == "tpuv5:2x2x2"


def test_shapes_unknown_name_suggests(capsys):
    code, out, err = run_cli(capsys, "shapes", "v5litpod-16")
    assert code == 2
    assert out == ""
    assert "'v5litpod-16' is not a known TPU accelerator; did you mean 'v5litepod-16'?" in err
    assert_error_report(err)


def test_shapes_nonsense_name_gives_examples(capsys):
    code, _, err = run_cli(capsys, "shapes", "nope")
    assert code == 2
    assert "'nope' is not a known TPU accelerator" in err
    assert "v5litepod-16" in err


def test_shapes_table(capsys):
    code, out, _ = run_cli(capsys, "shapes")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["accelerator", "topology"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert rows["v6e-4"][1:3] == ["2x2", "ct6e-standard-4t"]
    assert rows["v5litepod-16"][1:4] == ["4x4", "ct5lp-hightpu-4t", "4"]
    assert rows["v4-8"][1:] == [
        "2x2x1",
        "ct4p-hightpu-4t",
        "1",
        "4",
        "4",
        "tpuv4:2x2x1",
        "yes",
        "no",
        "us-central2-b",  # the zones that offer v4 (components/tpu/data/zones.json)
    ]
    assert rows["tpu7-8"][-5:] == ["tpu7:2x2x1", "no", "no", "none", "listed"]
    assert len(lines) == 1 + 1675  # every shape once


def test_shapes_table_columns_are_aligned(capsys):
    _, out, _ = run_cli(capsys, "shapes")
    lines = out.splitlines()
    header = lines[0]
    # each column starts where its header starts, on every line (the longest names included)
    starts = [header.index(h) for h in ("topology", "machine type", "pathways instance")]
    assert starts == [16, 26, 71]
    for line in lines[1:]:
        for start in starts:
            assert line[start - 2 : start] == "  " and line[start] != " ", line
    # numbers are right-aligned under their header's last character
    hosts_end = header.index("hosts") + len("hosts")
    assert all(line[hosts_end - 1].isdigit() for line in lines[1:])
    assert header == (
        "accelerator     topology  machine type       hosts  chips/host  chips  "
        "pathways instance  controller v0.1.4  pathwaysutils  zones"
    )


def test_shapes_json_lists_every_accepted_name(capsys):
    code, out, _ = run_cli(capsys, "shapes", "--json")
    assert code == 0
    rows = json.loads(out)
    assert len(rows) == 1675
    names = [n for row in rows for n in row["names"]]
    assert len(names) == len(set(names)) == 2028  # XPK's 2,020 and 8 machine-qualified names
    by_name = {row["accelerator"]: row for row in rows}
    assert by_name["v5p-8"]["names"] == ["v5p-8", "v5p-2x2x1"]
    assert by_name["v5litepod-8-8t"]["names"] == ["v5litepod-8-8t", "v5litepod-2x4-8t"]
    assert by_name["v4-4x8x4"]["names"] == ["v4-4x8x4"]
    assert by_name["tpu7x-8"]["tensorcoresPerChip"] == 2


def test_shapes_v4_and_ironwood_json(capsys):
    _, out, _ = run_cli(capsys, "shapes", "v4-16", "--json")
    row = json.loads(out)
    assert (row["topology"], row["machineType"], row["acceleratorLabel"]) == (
        "2x2x2",
        "ct4p-hightpu-4t",
        "tpu-v4-podslice",
    )
    assert (row["hosts"], row["pathwaysInstanceType"], row["pathwaysSupported"]) == (
        2,
        "tpuv4:2x2x2",
        True,
    )
    assert row["pathwaysutilsSupported"] is False
    _, out, _ = run_cli(capsys, "shapes", "tpu7x-128", "--json")
    row = json.loads(out)
    assert (row["topology"], row["machineType"], row["hosts"]) == ("4x4x4", "tpu7x-standard-4t", 16)
    assert (row["pathwaysSupported"], row["pathwaysutilsSupported"]) == (True, True)


def test_shapes_suggestion_stays_in_the_generation(capsys):
    code, _out, err = run_cli(capsys, "shapes", "v4-17")
    assert code == 2
    assert "'v4-17' is not a known TPU accelerator; did you mean 'v4-16'?" in err
    assert "v6e" not in err


def test_plan_out_to_an_unwritable_place_is_a_clean_error(capsys, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    code, out, err = run_cli(capsys, "plan", "--stack", "dev", "--out", str(blocker / "manifests"))
    assert code == 2
    assert out == ""  # refused before the plan runs
    assert f"--out: cannot use '{blocker / 'manifests'}'" in err
    assert_error_report(err)


def test_a_stack_file_that_is_not_utf8_is_a_clean_error(capsys, tmp_path):
    (tmp_path / "Pulumi.x.yaml").write_bytes(b'config:\n  tpu-pathways:team: "\xff\xfe"\n')
    code, _, err = run_cli(capsys, "plan", "--stack", "x", "--stacks-dir", str(tmp_path))
    assert code == 2
    assert "cannot read it as UTF-8 text" in err
    assert_error_report(err)


def test_stacks_of_a_directory_that_does_not_exist_is_an_error(capsys, tmp_path):
    missing = tmp_path / "nope"
    code, out, err = run_cli(capsys, "stacks", "--stacks-dir", str(missing))
    assert (code, out) == (2, "")
    assert err == (
        f"error: stacks: 1 problem\n  - --stacks-dir: {str(missing)!r} is not a directory of "
        "stack files\n"
    )


def test_out_into_a_non_empty_directory_is_refused_before_planning(capsys, tmp_path):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "old.yaml").write_text("kept\n")
    code, out, err = run_cli(capsys, "plan", "--stack", "dev", "--out", str(out_dir))
    assert (code, out) == (2, "")  # no plan printed first
    assert err == (
        f"error: plan: 1 problem\n  - --out: {str(out_dir)!r} already exists and is not an empty "
        "directory; nothing is overwritten, so give a new directory (or remove the old output "
        "first)\n"
    )


def test_shapes_of_one_generation_with_a_chip_count(capsys):
    code, out, err = run_cli(capsys, "shapes", "v6e", "--chips", "8")
    assert (code, err) == (0, "")
    assert [line.split()[0] for line in out.splitlines()] == ["accelerator", "v6e-8-8t", "v6e-8"]


def test_shapes_between_chip_counts(capsys):
    code, out, _ = run_cli(capsys, "shapes", "v5p", "--min-chips", "64", "--max-chips", "128")
    assert code == 0
    rows = [line.split() for line in out.splitlines()[1:]]
    assert {row[5] for row in rows} == {"64", "128"}
    assert {row[0] for row in rows} >= {"v5p-128", "v5p-256"}
    assert all(row[0].startswith("v5p-") for row in rows)


def test_shapes_filter_that_matches_nothing_lists_the_chip_counts(capsys):
    code, out, err = run_cli(capsys, "shapes", "v6e", "--chips", "3")
    assert (code, out) == (2, "")
    assert err == (
        "error: shapes: 1 problem\n  - --chips 3: no v6e shape matches; chip counts there are: "
        "1, 4, 8, 16, 32, 64, 128, 256\n"
    )


def test_shapes_chip_filter_with_one_name_is_refused(capsys):
    code, _, err = run_cli(capsys, "shapes", "v5p-16", "--max-chips", "4")
    assert code == 2
    assert "  - --max-chips 4: filters a listing, not the one shape 'v5p-16' names" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--min-chips", "64", "--max-chips", "8"],
            "  - --min-chips 64 --max-chips 8: --min-chips 64 is more than --max-chips 8, so no "
            "shape can match; give a --min-chips no larger than --max-chips\n",
        ),
        (
            ["v5p", "--chips", "4", "--min-chips", "8"],
            "  - --chips 4 --min-chips 8: --chips 4 is less than --min-chips 8, so no shape can "
            "match; give --chips alone\n",
        ),
        (
            ["--chips", "16", "--max-chips", "8"],
            "  - --chips 16 --max-chips 8: --chips 16 is more than --max-chips 8, so no shape can "
            "match; give --chips alone\n",
        ),
    ],
)
def test_shapes_chip_bounds_that_exclude_each_other_are_a_usage_error(capsys, argv, message):
    code, out, err = run_cli(capsys, "shapes", *argv)
    assert (code, out) == (2, "")
    assert err == "error: shapes: 1 problem\n" + message


@pytest.mark.parametrize("name", ["", "  "])
def test_shapes_of_a_blank_name_is_refused_not_the_whole_catalog(capsys, name):
    code, out, err = run_cli(capsys, "shapes", name)
    assert (code, out) == (2, "")
    assert err == (
        f"error: shapes: 1 problem\n  - name: {name!r} names nothing; give an accelerator name "
        "or a generation\n"
    )


def test_plan_from_a_stacks_dir_that_does_not_exist_names_the_directory(capsys, tmp_path):
    missing = tmp_path / "nope"
    code, out, err = run_cli(capsys, "plan", "--stack", "dev", "--stacks-dir", str(missing))
    assert (code, out) == (2, "")
    assert err == (
        f"error: plan: 1 problem\n  - --stacks-dir: {str(missing)!r} is not a directory of "
        "stack files\n"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["plan", "--stack", "dev", "--out", ""],
        ["plan", "--stack", "dev", "--stacks-dir", " "],
        ["plan", "--stack", "dev", "--diff", ""],
        ["stacks", "--stacks-dir", ""],
    ],
)
def test_a_blank_path_is_a_usage_error_not_the_current_directory(capsys, argv):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"error: argument {argv[-2]}: {argv[-1]!r} names no file or directory" in err
    assert_error_report(err)


@pytest.mark.parametrize("value", ["0", "-4", "eight"])
def test_shapes_chip_count_must_be_a_whole_number_from_1(capsys, value):
    with pytest.raises(SystemExit) as exc:
        cli.main(["shapes", "--chips", value])
    assert exc.value.code == 2
    assert f"argument --chips: invalid chip count value: '{value}'" in capsys.readouterr().err


# --- flags that would be dropped or fail after the plan printed ------------------------------


@pytest.mark.parametrize("flag", [["--policy"], ["--out", "OUT"]])
def test_critical_path_refuses_what_it_would_drop(flag, tmp_path, capsys):
    args = [str(tmp_path / "out") if a == "OUT" else a for a in flag]
    assert cli.main(["plan", "--stack", "dev", "--critical-path", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert (
        f"--critical-path: prints the modeled deploy time instead of the plan, so {flag[0]} "
        f"would do nothing with it; run {flag[0]} on its own"
    ) in captured.err


def test_a_program_directory_with_a_syntax_error_is_a_clean_error(tmp_path, capsys):
    (tmp_path / "Pulumi.yaml").write_text("name: mine\nruntime: python\n")
    (tmp_path / "__main__.py").write_text("def (\n")
    assert cli.main(["plan", "--program", str(tmp_path)]) == 2
    assert "--program: __main__.py is not Python (invalid syntax, line 1)" in (
        capsys.readouterr().err
    )


def test_a_program_looking_up_an_unknown_tpu_is_a_clean_error(tmp_path, capsys):
    (tmp_path / "Pulumi.yaml").write_text("name: mine\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(
        "from components import resolve_accelerator\nresolve_accelerator('v9-16')\n"
    )
    assert cli.main(["plan", "--program", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "'v9-16' is not a known TPU accelerator" in err
    assert "Traceback" not in err
