"""The plain `plan` view of the example stacks: scannable at 120 columns, grouped by deployment
stage, outputs readable, and a closing total (issue 20)."""

from __future__ import annotations

import re

import pytest

from components.cli.main import main
from components.plan.render import render_text
from tests.examples import EXAMPLE_STACKS


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_every_line_fits_120_columns_but_a_single_long_word(example_plan, stack):
    for line in render_text(example_plan(stack)).splitlines():
        # a line longer than 120 columns holds one word (a name or URL) and nothing else
        assert len(line) <= 120 or len(line.split()) == 1, line


def test_the_stages_come_in_deployment_order(example_plan):
    lines = render_text(example_plan("dev")).splitlines()
    headings = [line for line in lines if line.endswith(":") and not line.startswith(" ")]
    assert headings[:6] == [
        "Cluster, network and identity:",
        "Node pools:",
        "Installs (JobSet, PathwaysJob, Kueue and their controller patches):",
        "Namespaces and queues:",
        "Buckets, file systems and who may use them:",
        "Workloads (pods as the PathwaysJob controller v0.1.4 or the JobSet makes them):",
    ]
    installs = lines[lines.index(headings[2]) + 1 : lines.index(headings[3]) - 1]
    assert installs == [
        "  + ConfigFile pathways-dev-jobset",
        "      file=https://github.com/kubernetes-sigs/jobset/releases/download/v0.10.1/manifests.yaml",
        "  + ConfigFile pathways-dev-kueue",
        "      file=https://github.com/kubernetes-sigs/kueue/releases/download/v0.17.1/manifests.yaml",
        "  + ConfigMapPatch kueue-system/kueue-manager-config",
        "  + DeploymentPatch kueue-system/kueue-controller-manager",
        "  + ConfigFile pathways-dev-pathways-job",
        "      file=https://github.com/google/pathways-job/releases/download/v0.1.4/install.yaml",
        "  + DeploymentPatch jobset-system/jobset-controller-manager",
        "  + DeploymentPatch pathways-job-system/pathways-job-controller-manager",
    ]


def test_node_pools_show_the_inputs_that_matter(example_plan):
    text = render_text(example_plan("dev"))
    assert (
        "  + NodePool pathways-dev-v5e-0 (name v5e-0)  machineType=ct5lp-hightpu-4t  nodeCount=2  "
        "tpuTopology=2x4  spot=true"
    ) in text.splitlines()
    assert "oauthScopes" not in text  # every input: --verbose
    assert "oauthScopes" in render_text(example_plan("dev"), verbose=True)


def test_a_workload_is_shown_over_several_lines(example_plan):
    lines = render_text(example_plan("dev")).splitlines()
    start = lines.index(
        "  + PathwaysJob pathways/hello-train  workers=1 x ct5lp-hightpu-4t 2x4  "
        "deploymentMode=default"
    )
    assert lines[start + 1 : start + 3] == [
        "      image    us-docker.pkg.dev/cloud-tpu-images/maxtext-images/tpu_pre_training:0.2.3",
        '      command  python3 -c "import pathwaysutils, jax; pathwaysutils.initialize(); '
        'print(jax.devices())"',
    ]


def test_outputs_are_one_entry_per_line_when_long(example_plan):
    lines = render_text(example_plan("dev")).splitlines()
    start = lines.index("  shared_cluster:")
    assert lines[start + 1 : start + 3] == [
        "    cluster_location: us-west4",
        "    cluster_name: pathways-dev",
    ]
    assert "    pathways/notebook:" in lines
    assert '  tpu_node_pools: {"v5e": ["v5e-0"]}' in lines


def test_the_last_lines_say_what_is_created_chips_and_cost(example_plan):
    lines = render_text(example_plan("dev")).splitlines()
    lines = lines[: lines.index("Next steps (docs/getting-started.md, step 4):") - 2]
    assert lines[-6:] == [
        "Creates 75 resources: 1 Account, 1 Network, 1 Subnetwork, 1 Cluster, 1 IAMMember, 3 "
        "Firewall, 3 ManagedZone, 6",
        "  RecordSet, 3 NodePool, 3 ConfigFile, 1 ConfigMapPatch, 3 DeploymentPatch, 6 "
        "PriorityClass, 1 ClusterQueue, 1",
        "  Namespace, 1 LocalQueue, 2 ResourceFlavor, 3 ServiceAccount, 2 Secret, 2 "
        "PodMonitoring, 2 ClusterRoleBinding, 2 Role,",
        "  2 RoleBinding, 5 ValidatingAdmissionPolicy, 5 ValidatingAdmissionPolicyBinding, 2 "
        "ResourceQuota, 1 NetworkPolicy, 1",
        "  Bucket, 3 BucketIAMMember, 2 PathwaysJob, 4 AlertPolicy, 1 Dashboard",
        "Total: 8 TPU chips (v5e), 5.60 USD/hour, 4,090.36 USD/month (an estimate at list prices)",
    ]


def test_a_team_stack_shows_the_owner_it_reads(example_plan):
    lines = render_text(example_plan("team-research")).splitlines()
    assert "  = StackReference research-v5p (read, not created)" in lines


def _count(line: str, phrase: str) -> int:
    match = re.search(rf"{phrase} (\d+) resources", line)
    assert match, line
    return int(match[1])


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_one_count_at_the_top_and_the_bottom(example_plan, stack):
    lines = render_text(example_plan(stack)).splitlines()
    bottom = next(line for line in lines if line.startswith("Creates "))
    assert _count(lines[0], "creates") == _count(bottom, "Creates")


def test_the_deploy_time_and_next_steps_close_the_plan(example_plan):
    lines = render_text(example_plan("dev")).splitlines()
    (deploy,) = [line for line in lines if line.startswith("Deploy time")]
    assert re.fullmatch(
        r"Deploy time \(modeled `pulumi up`\): about \d+m\d\ds \(low \d+m\d\ds, high \d+m\d\ds\); "
        r"--critical-path: the chain",
        deploy,
    )
    assert lines[-4:] == [
        "Next steps (docs/getting-started.md, step 4):",
        "  pulumi stack select dev --create  # once: the stack in your Pulumi backend",
        "  pulumi preview -s dev             # what would change, with credentials",
        "  pulumi up -s dev                  # create it",
    ]


def test_no_empty_section(capsys, tmp_path):
    # A program that exports nothing has no Outputs section (not an empty header).
    (tmp_path / "Pulumi.yaml").write_text("name: bare\nruntime: python\n")
    (tmp_path / "__main__.py").write_text(
        "import pulumi_gcp as gcp\n"
        "gcp.storage.Bucket('b', name='bare-b', location='US', uniform_bucket_level_access=True)\n"
    )
    assert main(["plan", "--program", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Outputs:" not in out
    assert "\n\n\n" not in out
    assert "(in your program's directory):" in out
