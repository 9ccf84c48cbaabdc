"""The example fleet stack plans offline: a CPU-only manager cluster, its workers' contracts read
from their stack files, no credential in plain text anywhere in the plan or its --out manifests."""

from __future__ import annotations

import shutil

import yaml

from components.plan.engine import plan_file
from components.policy.report import check_plan
from tests.examples import EXAMPLES_DIR
from tests.helpers import run_cli

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
STACKS = EXAMPLES_DIR
# What production protects on the manager, as on a cluster a stack owns.
PROTECTED = {
    "kubernetes:yaml/v2:ConfigFile",
    "kubernetes:scheduling.k8s.io/v1:PriorityClass",
    "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueCluster",
    "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueConfig",
    "kubernetes:kueue.x-k8s.io/v1beta2:AdmissionCheck",
    "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue",
    "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue",
    "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor",
}


def test_the_manager_is_one_cpu_only_cluster(example_plan):
    plan = example_plan("fleet")
    (cluster,) = plan.by_type(CLUSTER)
    assert cluster.inputs["name"] == "pathways-fleet"
    assert cluster.inputs["location"] == "us-central1"
    (pool,) = plan.by_type(NODE_POOL)
    assert pool.inputs["name"] == "system-np"
    assert pool.inputs["nodeConfig"]["machineType"] == "e2-standard-4"
    assert plan.summary["tpu"] == {}


def test_the_fleet_outputs_its_workers_sets_placements_and_tokens(example_plan):
    outputs = example_plan("fleet").outputs
    assert outputs["fleet"] == {
        "workers": {"research-v5p": "us-east5", "dev": "us-west4"},
        "worker_sets": {
            "mk-dev": {
                "workers": ["dev"],
                "teams": ["pathways"],
                "tpu_chips": {"tpu-v5-lite-podslice-2x4-4t": 8},
            },
            "mk-research-v5p": {
                "workers": ["research-v5p"],
                "teams": ["research"],
                "tpu_chips": {"tpu-v5p-slice-2x2x2-4t": 16},
            },
        },
        "placements": {"research/v5p-train": ["research-v5p"], "pathways/v5e-notebook": ["dev"]},
        "manager_tokens": {
            "kind": "TokenRequest of kueue-system/multikueue-manager on each worker, bound to "
            "Secret kueue-system/multikueue-manager-anchor",
            "lifetime_days": 14,
            "renew_before_days": 7,
            "expiry_output": "manager_token_expiry",
        },
    }
    # known once `pulumi up` has minted the tokens
    assert outputs["manager_token_expiry"] == "[unknown]"


def test_each_worker_is_reached_through_its_own_provider(example_plan):
    providers = {
        r.name for r in example_plan("fleet").resources if r.type == "pulumi:providers:kubernetes"
    }
    assert providers == {
        "pathways-fleet-k8s",
        "pathways-fleet-worker-research-v5p-k8s",
        "pathways-fleet-worker-dev-k8s",
    }


def test_the_worker_plans_are_unchanged_by_the_fleet(example_plan):
    # The fleet reads its workers; it adds nothing to their own stacks.
    assert plan_file("dev").resources == example_plan("dev").resources


def test_out_writes_no_token_or_kubeconfig_in_plain_text(tmp_path, capsys):
    out = tmp_path / "out"
    code, _, _ = run_cli(capsys, "plan", "--stack", "fleet", "--out", str(out))
    assert code == 0
    text = "\n".join(p.read_text() for p in out.rglob("*") if p.is_file())
    assert "multikueue-research-v5p" in text
    assert "token:" not in text and "certificate-authority-data" not in text


def test_a_production_fleet_protects_its_installs_and_kueue_objects(tmp_path, example_plan):
    for name in ("research-v5p", "dev"):
        shutil.copy(STACKS / f"Pulumi.{name}.yaml", tmp_path)
    fleet = yaml.safe_load((STACKS / "Pulumi.fleet.yaml").read_text())
    config = fleet["config"]
    config["tpu-pathways:environment"] = "production"
    config["tpu-pathways:fleet"]["manager"]["secretsEncryption"] = {
        "kmsKey": "projects/tpu-pathways-fleet/locations/us-central1/keyRings/gke/cryptoKeys/etcd"
    }
    (tmp_path / "Pulumi.fleet.yaml").write_text(yaml.safe_dump(fleet))
    plan = plan_file("fleet", tmp_path)
    protected = [r for r in plan.resources if r.type in PROTECTED]
    # 2 release manifests, 6 PriorityClasses (the teams' 5, the controllers'), 2
    # MultiKueueClusters, per worker set (2) its MultiKueueConfig, AdmissionCheck and
    # ClusterQueue, 2 LocalQueues, 3 ResourceFlavors
    assert len(protected) == 2 + 6 + 2 + 2 * 3 + 2 + 3
    assert all(r.options.get("protect") is True for r in protected)
    assert check_plan(plan, "production") == []
    # staging (the example) protects none of them
    staging = [r for r in example_plan("fleet").resources if r.type in PROTECTED]
    assert [r.name for r in staging if r.options.get("protect")] == []


def test_a_fleet_in_another_stacks_dir_is_checked_against_that_dir(tmp_path):
    # research-west exists only in tmp_path: the program run by `plan --stacks-dir` checks the
    # workers there, as the CLI's own read does, not in the project's stacks/.
    shutil.copy(STACKS / "Pulumi.dev.yaml", tmp_path)
    west = yaml.safe_load((STACKS / "Pulumi.research-v5p.yaml").read_text())
    west["config"]["tpu-pathways:gcp"] = {
        "project": "tpu-pathways-research-west",
        "region": "us-central1",
        "zone": "us-central1-a",
    }
    west["config"]["tpu-pathways:cluster"]["name"] = "pathways-research-west"
    (tmp_path / "Pulumi.research-west.yaml").write_text(yaml.safe_dump(west))
    fleet = yaml.safe_load((STACKS / "Pulumi.fleet.yaml").read_text())
    fleet["config"]["tpu-pathways:fleet"]["workers"] = ["research-west", "dev"]
    fleet["config"]["tpu-pathways:teams"][0]["workers"] = ["research-west"]
    (tmp_path / "Pulumi.fleet.yaml").write_text(yaml.safe_dump(fleet))
    assert plan_file("fleet", tmp_path).outputs["fleet"]["workers"] == {
        "research-west": "us-central1",
        "dev": "us-west4",
    }
