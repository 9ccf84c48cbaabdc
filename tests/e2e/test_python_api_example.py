"""examples/python-api: a program built only from ``from components import ...`` plans under the
mock engine, with the resources docs/workloads.md promises."""

from __future__ import annotations

import json
import runpy

import pytest

from components.plan.engine import run_program
from components.plan.model import PlannedResource
from tests.conftest import PROJECT_ROOT
from tests.helpers import SIGTERM_WRAPPER, run_cli

EXAMPLE = PROJECT_ROOT / "examples" / "python-api"
CONFIG = {"gcp:project": "acme-ml", "gcp:region": "us-east5", "gcp:zone": "us-east5-a"}


@pytest.fixture(scope="module")
def planned() -> dict[str, PlannedResource]:
    resources, _ = run_program(
        lambda: runpy.run_path(str(EXAMPLE / "__main__.py")) and {},
        stack="example",
        project="pathways-python-api",
        config=CONFIG,
    )
    return {f"{r.type}::{r.name}": r for r in resources}


def test_the_program_uses_only_the_public_api():
    source = (EXAMPLE / "__main__.py").read_text()
    imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert imports == ["import pulumi", "from components import ("]


def test_the_cluster(planned):
    cluster = planned["gcp:container/cluster:Cluster::pathways"]
    assert cluster.inputs["name"] == "pathways"
    assert cluster.inputs["project"] == "acme-ml"
    assert cluster.inputs["location"] == "us-east5"
    assert cluster.inputs["nodeLocations"] == ["us-east5-a"]
    assert cluster.parent.endswith("tpu-pathways:cluster:GkeCluster::pathways")


def test_one_node_pool_per_slice_of_the_tpu_shape(planned):
    slices = [planned[f"gcp:container/nodePool:NodePool::v5p-{i}"] for i in range(2)]
    assert [s.inputs["name"] for s in slices] == ["v5p-0", "v5p-1"]
    for node_pool in slices:
        assert node_pool.inputs["nodeConfig"]["machineType"] == "ct5p-hightpu-4t"
        assert node_pool.inputs["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "2x2x2"}
        assert node_pool.inputs["nodeCount"] == 2
        assert node_pool.inputs["cluster"] == "pathways"
        assert node_pool.parent.endswith("tpu-pathways:nodepool:TpuNodePool::v5p")
    assert "gcp:container/nodePool:NodePool::v5p-2" not in planned


def test_the_pathways_job(planned):
    job = planned["kubernetes:pathways-job.pathways.domain/v1:PathwaysJob::train"]
    assert job.inputs["metadata"] == {"name": "train", "namespace": "research"}
    assert job.inputs["spec"]["workers"] == [
        {"type": "ct5p-hightpu-4t", "topology": "2x2x2", "numSlices": 2}
    ]
    assert job.inputs["spec"]["pathwaysDir"] == "gs://acme-ml-pathways-scratch/research/"
    head = job.inputs["spec"]["controller"]  # UserContainer(...).controller(...)
    assert (head["deploymentMode"], head["mainContainerName"]) == ("default", "main")
    pod = head["template"]["spec"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-nodepool": "cpu-np"}
    assert pod["serviceAccountName"] == "pathways"
    (main,) = pod["containers"]
    assert main["command"] == [
        *SIGTERM_WRAPPER,
        "python3",
        "-c",
        "import pathwaysutils; pathwaysutils.initialize()",
    ]
    assert (
        main["resources"]["requests"]
        == main["resources"]["limits"]
        == {
            "cpu": "8",
            "memory": "32Gi",
        }
    )
    assert main["volumeMounts"] == [{"name": "shared-tmp", "mountPath": "/tmp"}]
    controller = "urn:pulumi:example::pathways-python-api::tpu-pathways:installs:ReleaseManifest"
    assert any(d.startswith(controller) and d.endswith("::pathways-job") for d in job.dependencies)
    assert job.provider.endswith("pulumi:providers:kubernetes::pathways-k8s")


def test_the_head_pool_and_installs(planned):
    heads = planned["gcp:container/nodePool:NodePool::heads"]
    assert heads.inputs["name"] == "cpu-np"
    assert heads.inputs["nodeConfig"]["machineType"] == "n2-standard-64"
    assert heads.inputs["autoscaling"] == {"minNodeCount": 1, "maxNodeCount": 2}
    assert planned["kubernetes:yaml/v2:ConfigFile::jobset"].inputs["file"] == (
        "https://github.com/kubernetes-sigs/jobset/releases/download/v0.10.1/manifests.yaml"
    )


def test_the_workloads_page_shows_this_program():
    source = (EXAMPLE / "__main__.py").read_text()
    program = source[source.index("import pulumi") :]
    assert f"```python\n{program}```" in (PROJECT_ROOT / "docs" / "workloads.md").read_text()


# --- planned through the CLI: `plan --program DIR --config KEY=VALUE` ---------------------------

SETTINGS = ["--config", "gcp:project=acme-ml", "--config", "gcp:region=us-east5"]
SETTINGS += ["--config", "gcp:zone=us-east5-a"]


def test_the_cli_plans_the_example_with_its_config(capsys):
    code, out, err = run_cli(capsys, "plan", "--program", str(EXAMPLE), *SETTINGS)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == (
        "Plan for stack 'dev' of pathways-python-api: creates 39 resources (11 components); "
        "--verbose: every input, --json: all"
    )
    assert (
        "  + PathwaysJob research/train  workers=2 x ct5p-hightpu-4t 2x2x2  deploymentMode=default"
        in lines
    )
    assert next(line for line in lines if line.startswith("Total: ")) == (
        "Total: 16 TPU chips (v5p), 70.31 USD/hour, 51,324.68 USD/month "
        "(an estimate at list prices)"
    )


def test_the_cli_plan_of_the_example_as_json(capsys):
    code, out, _ = run_cli(
        capsys, "plan", "--program", str(EXAMPLE), "--stack", "staging", "--json", *SETTINGS
    )
    assert code == 0
    document = json.loads(out)
    assert (document["stack"], document["project"]) == ("staging", "pathways-python-api")
    (cluster,) = [r for r in document["resources"] if r["type"] == "gcp:container/cluster:Cluster"]
    assert cluster["inputs"]["project"] == "acme-ml"
    # 16 v5p chips x $4.20 + n2-standard-64 (64 x 0.031611 + 256 GiB x 0.004237) = $70.307776/h
    assert document["summary"]["cost"]["monthly"] == pytest.approx(70.307776 * 730)


def test_every_missing_config_value_is_named_in_one_run(capsys):
    code, out, err = run_cli(capsys, "plan", "--program", str(EXAMPLE), "--config", "gcp:project=a")
    assert (code, out) == (2, "")
    assert err == (
        "error: plan: 2 problems\n"
        "  - --config: the program requires gcp:region; give it with --config gcp:region=VALUE\n"
        "  - --config: the program requires gcp:zone; give it with --config gcp:zone=VALUE\n"
    )
    code, _, err = run_cli(capsys, "plan", "--program", str(EXAMPLE))
    assert (code, err.splitlines()[0]) == (2, "error: plan: 3 problems")
    assert "--config gcp:project=VALUE" in err


def _variant(tmp_path, *changes: tuple[str, str]):
    """A copy of the example program with ``(old, new)`` text changes (each must apply)."""
    source = (EXAMPLE / "__main__.py").read_text()
    for old, new in changes:
        assert old in source, old
        source = source.replace(old, new)
    (tmp_path / "__main__.py").write_text(source)
    (tmp_path / "Pulumi.yaml").write_text((EXAMPLE / "Pulumi.yaml").read_text())
    return tmp_path


def test_bad_args_get_the_error_report_and_exit_2(capsys, tmp_path):
    program = _variant(tmp_path, ("pools, slices=2)", "pools, slices=-1)"))
    code, out, err = run_cli(capsys, "plan", "--program", str(program), *SETTINGS)
    assert (code, out) == (2, "")
    assert err == (
        "error: TpuNodePoolArgs 'v5p': 1 problem\n  - slices: -1 is not allowed; at least 1\n"
    )


NO_CONTROLLER = (
    """controller = ReleaseManifest(
    "pathways-job",
    ReleaseManifestArgs(
        "https://github.com/google/pathways-job/releases/download/v0.1.4/install.yaml",
        "v0.1.4",
        cluster.provider,
        depends_on=[jobset.manifest],
    ),
)""",
    "controller = jobset  # no PathwaysJob controller",
)


def test_a_programs_job_gets_the_stack_preflight(capsys, tmp_path):
    # No controller install, the job in namespace default, a gs:// path nothing grants: the
    # stack-file path refuses all three, and so does the plan of the program.
    program = _variant(
        tmp_path,
        NO_CONTROLLER,
        ("namespace=team.namespace,", 'namespace="default",'),
        ('pathwaysutils.initialize()"]', 'pathwaysutils.initialize()", "gs://other-data/x"]'),
    )
    code, out, err = run_cli(capsys, "plan", "--program", str(program), *SETTINGS)
    assert (code, out) == (2, "")
    job = "  - PathwaysJob 'default/train': "
    assert err.splitlines() == [
        f"error: {program / '__main__.py'} (preflight): 3 problems",
        job + "namespace 'default' is a system namespace (Kubernetes, GKE or an install owns "
        "default, kube-system, kube-public, kube-node-lease, gmp-public, gmp-system, "
        "jobset-system, pathways-job-system, kueue-system and gke-*/kube-*/gmp-*); run it in a "
        "team namespace (TeamNamespace)",
        job + "the program creates its cluster but installs no PathwaysJob controller (a "
        "ReleaseManifest of https://github.com/google/pathways-job/releases/download/v0.1.4/"
        "install.yaml), so nothing would ever start the job",
        job + "gs://other-data/x (command) needs read access, but its pods run on the host "
        "network, so they act as the node service account "
        "pathways-nodes@acme-ml.iam.gserviceaccount.com for GCS, which has no object access to "
        "gs://other-data; grant it roles/storage.objectViewer on gs://other-data (a bucket IAM "
        "member: DataBucketGrants)",
    ]


def test_bad_config_syntax_names_the_argument(capsys):
    code, _, err = run_cli(
        capsys, "plan", "--program", str(EXAMPLE), "--config", "gcp:project", "--config", " a=b"
    )
    assert code == 2
    assert err == (
        "error: plan: 2 problems\n"
        "  - --config: 'gcp:project' is not KEY=VALUE (e.g. --config gcp:project=my-project)\n"
        "  - --config: ' a=b' is not KEY=VALUE (e.g. --config gcp:project=my-project)\n"
    )


def test_config_without_a_program_directory_is_refused(capsys):
    code, _, err = run_cli(capsys, "plan", "--stack", "dev", "--config", "gcp:project=a")
    assert code == 2
    assert "  - --config: only with --program DIR (a stack's config is its stack file)" in err


def test_a_directory_without_a_program_is_refused(capsys, tmp_path):
    code, _, err = run_cli(capsys, "plan", "--program", str(tmp_path))
    assert code == 2
    assert f"  - --program: {str(tmp_path)!r} has no __main__.py; give a Pulumi project" in err


def test_policy_is_for_stacks_not_program_directories(capsys):
    code, _, err = run_cli(capsys, "plan", "--program", str(EXAMPLE), "--policy", *SETTINGS)
    assert code == 2
    assert "  - --policy: not with --program DIR; it plans one program, not a stack file" in err


def test_a_bare_key_is_the_projects_own(capsys, tmp_path):
    (tmp_path / "Pulumi.yaml").write_text("name: mine\nruntime: python\nconfig:\n  size: 3\n")
    (tmp_path / "__main__.py").write_text(
        "import pulumi\n"
        "config = pulumi.Config()\n"
        "pulumi.export('greeting', config.require('greeting'))\n"
        "pulumi.export('size', config.require_int('size'))\n"
    )
    code, out, err = run_cli(capsys, "plan", "--program", str(tmp_path), "--config", "greeting=hi")
    assert (code, err) == (0, "")
    assert "  greeting: hi\n  size: 3\n" in out
