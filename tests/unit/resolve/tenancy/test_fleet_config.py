"""Fleet stacks (tpu-pathways:fleet): the workers a fleet may name, the workers each team's and
workload's JobSets may go to, the workloads it may dispatch, and each worker set's quota as the
sum of its workers' chips."""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

from components.config.schema import StackConfig
from components.config.schema.fleet import FleetStackConfig
from components.errors import ConfigError
from components.plan.engine import plan_file
from components.resolve import stack_files
from components.resolve.tenancy.fleet import load_fleet
from components.resolve.tenancy.fleet_checks import NOT_IN_A_FLEET
from components.resolve.tenancy.ownership import classify_stacks
from components.stack.fleet import manager_flavors
from tests.examples import EXAMPLES_DIR

STACKS = EXAMPLES_DIR


@pytest.fixture(scope="module")
def worker_outputs(example_plan):
    """The example workers' offline plans' outputs (planned once per session)."""
    return {name: example_plan(name).outputs for name in ("research-v5p", "dev")}


@pytest.fixture
def stacks(tmp_path):
    for name in ("research-v5p", "dev", "team-research", "fleet"):
        shutil.copy(STACKS / f"Pulumi.{name}.yaml", tmp_path)
    return tmp_path


def fleet_values() -> dict:
    return yaml.safe_load((STACKS / "Pulumi.fleet.yaml").read_text())["config"]


def write_fleet(stacks: Path, config: dict, name: str = "fleet") -> None:
    (stacks / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump({"config": config}))


def on_workers(config: dict, workers: list[str]) -> dict:
    """``config`` dispatching to ``workers``: each team keeps those of its workers still there
    (none left: all of them, the default)."""
    config["tpu-pathways:fleet"]["workers"] = workers
    for team in config["tpu-pathways:teams"]:
        kept = [w for w in team.get("workers", []) if w in workers]
        if kept:
            team["workers"] = kept
        else:
            team.pop("workers", None)
    return config


def other_dev(stacks: Path, name: str = "dev-b", cpu_pool: dict | None = None) -> None:
    """A copy of dev (team pathways, one v5e slice) in a project and region of its own."""
    other = yaml.safe_load((STACKS / "Pulumi.dev.yaml").read_text())
    other["config"]["tpu-pathways:gcp"] = {
        "project": f"tpu-pathways-{name}",  # one cluster per project
        "region": "us-south1",  # a region with v5e (components/tpu/data/zones.json)
        "zone": "us-south1-a",
    }
    other["config"]["tpu-pathways:cluster"]["name"] = f"pathways-{name}"
    other["config"]["tpu-pathways:cpuPool"] |= cpu_pool or {}
    (stacks / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump(other))


def refusal(stacks: Path, worker_outputs, name: str = "fleet") -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_fleet(name, lambda w: worker_outputs[w], stacks)
    return caught.value


def test_the_example_fleet_places_each_workload(stacks, worker_outputs):
    fleet = load_fleet("fleet", lambda w: worker_outputs[w], stacks)
    assert fleet.regions == {"research-v5p": "us-east5", "dev": "us-west4"}
    assert {i: sorted(p) for i, p in fleet.placements.items()} == {
        0: ["research-v5p"],
        1: ["dev"],
    }


def test_one_validation_reads_each_stack_file_once(stacks, worker_outputs, monkeypatch):
    # The workers' files feed six checks (ownership, tokens, teams' service accounts and
    # groups, team quotas, the manager's cluster conflicts); each file is read once for all.
    reads: Counter[str] = Counter()
    read = stack_files.read_stack_file

    def counted(stack: str, stacks_dir: Path = stack_files.STACKS_DIR) -> dict[str, str]:
        reads[stack] += 1
        return read(stack, stacks_dir)

    for name, module in list(sys.modules.items()):  # each module that imported it by name
        if name.startswith("components.") and getattr(module, "read_stack_file", None) is read:
            monkeypatch.setattr(module, "read_stack_file", counted)
    load_fleet("fleet", lambda w: worker_outputs[w], stacks)
    assert reads == {"fleet": 1, "research-v5p": 1, "dev": 1, "team-research": 1}


def test_manager_quota_is_the_sum_of_the_workers_chips_per_flavor(stacks, worker_outputs):
    # A second v5p worker: research-v5p's pools (2 slices of v5p-16, 8 chips each) in another
    # region and cluster, so the v5p flavor sums 16 + 16 chips; dev adds 8 v5e chips.
    west = yaml.safe_load((STACKS / "Pulumi.research-v5p.yaml").read_text())
    west["config"]["tpu-pathways:gcp"] = {
        "project": "tpu-pathways-research-west",  # one cluster per project
        "region": "us-central1",
        "zone": "us-central1-a",
    }
    west["config"]["tpu-pathways:cluster"]["name"] = "pathways-research-west"
    (stacks / "Pulumi.research-west.yaml").write_text(yaml.safe_dump(west))
    config = fleet_values()
    config["tpu-pathways:fleet"]["workers"] = ["research-v5p", "research-west", "dev"]
    config["tpu-pathways:teams"][0]["workers"] = ["research-v5p", "research-west"]
    # two workers it may go to: one pathwaysDir for both
    config["tpu-pathways:workloads"][0]["pathwaysDir"] = "gs://research-shared/v5p-train"
    write_fleet(stacks, config)
    outputs = {**worker_outputs, "research-west": plan_file("research-west", stacks).outputs}
    fleet = load_fleet("fleet", lambda w: outputs[w], stacks)
    assert {f.name: f.chips for f in manager_flavors(fleet)} == {
        "tpu-v5-lite-podslice-2x4-4t": 8,
        "tpu-v5p-slice-2x2x2-4t": 32,
    }
    (research,) = (s for s in fleet.nominations.sets if s.name != "mk-dev")
    assert (research.name, research.workers) == (
        "mk-research-v5p-research-west",
        ("research-v5p", "research-west"),
    )
    assert {f.name: f.chips for f in manager_flavors(fleet, research)} == {
        "tpu-v5p-slice-2x2x2-4t": 32
    }


def test_a_workload_no_worker_can_run_is_refused_naming_each_workers_shapes(stacks, worker_outputs):
    config = fleet_values()
    config["tpu-pathways:workloads"][1]["pool"] = "v6e"
    write_fleet(stacks, config)
    error = refusal(stacks, worker_outputs)
    assert [(i.key, i.message) for i in error.issues] == [
        (
            "workloads[1]",
            "'v5e-notebook' (pool 'v6e', 1 slice(s)) fits no worker it may go to (dev: .pool: "
            "'v6e' is not a TPU pool of this stack; pools: v5e); they have dev: pool 'v5e' "
            "(v5e 2x4 x1)",
        )
    ]


@pytest.mark.parametrize(
    ("workers", "key", "message"),
    [
        pytest.param(
            ["research-v5p", "team-research"],
            "fleet.workers[1]",
            "'team-research': is a team stack (owner: research-v5p): it owns no cluster, it "
            "deploys onto its owner's; name 'research-v5p' instead; cluster owners: dev, "
            "research-v5p",
            id="a-team-stack",
        ),
        pytest.param(
            ["research-v5p", "nowhere"],
            "fleet.workers[1]",
            "'nowhere': no such stack in this project; cluster owners: dev, research-v5p",
            id="not-a-stack-of-the-project",
        ),
        pytest.param(
            ["dev", "research-v5p", "dev"],
            "fleet.workers",
            "'dev' listed more than once; name each worker once",
            id="listed-twice",
        ),
        # Kueue v0.17.1's MultiKueueConfig lists at most 20 clusters (spec.clusters maxItems).
        pytest.param(
            ["dev", "research-v5p"] * 10 + ["dev"],
            "fleet.workers",
            "workers takes 1 to 20 entries (it has 21)",
            id="more-than-a-multikueue-config-holds",
        ),
        pytest.param(
            ["fleet", "dev"],
            "fleet.workers[0]",
            "'fleet': is this fleet stack; name the cluster-owning stacks it dispatches to; "
            "cluster owners: dev, research-v5p",
            id="the-fleet-itself",
        ),
    ],
)
def test_a_worker_that_is_no_cluster_owner_is_refused(
    stacks, worker_outputs, workers, key, message
):
    config = on_workers(fleet_values(), workers)
    write_fleet(stacks, config)
    assert [(i.key, i.message) for i in refusal(stacks, worker_outputs).issues] == [(key, message)]


def test_a_fleet_naming_another_fleet_is_refused(stacks, worker_outputs):
    other = fleet_values()
    other["tpu-pathways:fleet"]["manager"] |= {
        "project": "tpu-pathways-fleet-b",
        "clusterName": "b",
    }
    write_fleet(stacks, other, "fleet-b")
    config = on_workers(fleet_values(), ["fleet-b"])
    write_fleet(stacks, config)
    error = refusal(stacks, worker_outputs)
    assert [i.key for i in error.issues] == ["fleet.workers[0]"]
    assert error.issues[0].message == (
        "'fleet-b': is a fleet stack; a worker must be a stack that owns its TPU cluster; "
        "cluster owners: dev, research-v5p"
    )


def test_a_pathwaysjob_backend_workload_in_a_fleet_is_refused(stacks, worker_outputs):
    config = fleet_values()
    config["tpu-pathways:workloads"][0]["backend"] = "pathwaysjob"
    write_fleet(stacks, config)
    error = refusal(stacks, worker_outputs)
    assert [i.key for i in error.issues] == ["workloads[0].backend"]
    assert error.issues[0].message.startswith(
        "'pathwaysjob' in a fleet: MultiKueue dispatches JobSets only"
    )


def test_a_workload_that_may_go_to_two_workers_needs_a_pathways_dir(stacks, worker_outputs):
    other_dev(stacks)
    config = fleet_values()
    config["tpu-pathways:fleet"]["workers"] = ["research-v5p", "dev", "dev-b"]
    config["tpu-pathways:teams"][1]["workers"] = ["dev", "dev-b"]
    write_fleet(stacks, config)
    outputs = {**worker_outputs, "dev-b": plan_file("dev-b", stacks).outputs}
    error = refusal(stacks, outputs)
    assert [(i.key, i.message) for i in error.issues] == [
        (
            "workloads[1].pathwaysDir",
            "is required for a workload that may go to more than one worker (dev, dev-b): "
            "MultiKueue chooses the worker at admission and one JobSet has one pathwaysDir; "
            "name a gs:// path every one of them can write, or name one worker in workers to "
            "use its scratch bucket",
        )
    ]
    config["tpu-pathways:workloads"][1]["pathwaysDir"] = "gs://fleet-shared/v5e-notebook"
    write_fleet(stacks, config)
    fleet = load_fleet("fleet", lambda w: outputs[w], stacks)
    assert sorted(fleet.placements[1]) == ["dev", "dev-b"]


def test_every_problem_is_reported_at_once(stacks, worker_outputs):
    config = on_workers(fleet_values(), ["fleet", "team-research"])
    config["tpu-pathways:workloadBackend"] = "pathwaysjob"
    write_fleet(stacks, config)
    error = refusal(stacks, worker_outputs)
    assert [i.key for i in error.issues] == [
        "fleet.workers[0]",
        "fleet.workers[1]",
        "workloadBackend",
    ]


def allow_tokens(stacks: Path, worker: str) -> None:
    """A copy of example stack ``worker`` whose cluster takes the manager's token."""
    values = yaml.safe_load((STACKS / f"Pulumi.{worker}.yaml").read_text())
    values["config"]["tpu-pathways:cluster"]["kubernetesTokensViaDns"] = True
    (stacks / f"Pulumi.{worker}.yaml").write_text(yaml.safe_dump(values))


def test_a_worker_without_kueue_is_refused(stacks, example_plan):
    # serving-v6e turns Kueue off (inference): MultiKueue would have nothing to dispatch to.
    allow_tokens(stacks, "serving-v6e")
    config = on_workers(fleet_values(), ["serving-v6e"])
    config["tpu-pathways:workloads"] = []
    write_fleet(stacks, config)
    outputs = {"serving-v6e": example_plan("serving-v6e").outputs}
    error = refusal(stacks, outputs)
    assert [i.key for i in error.issues] == ["fleet.workers[0]"]
    assert error.issues[0].message.startswith(
        "'serving-v6e' runs no Kueue (addons.kueue.enabled: true); MultiKueue dispatches"
    )


def test_a_workload_off_the_host_network_needs_the_workers_service_account(stacks, worker_outputs):
    # On research-v5p, team research runs as 'trainer'; the JobSet would name 'pathways', an
    # account that does not exist in the worker's namespace.
    worker = yaml.safe_load((STACKS / "Pulumi.research-v5p.yaml").read_text())
    worker["config"]["tpu-pathways:teams"][0]["serviceAccount"] = "trainer"
    (stacks / "Pulumi.research-v5p.yaml").write_text(yaml.safe_dump(worker))
    config = fleet_values()
    config["tpu-pathways:workloads"][0]["hostNetwork"] = False
    write_fleet(stacks, config)
    error = refusal(stacks, worker_outputs)
    assert [i.key for i in error.issues] == ["workloads[0]"]
    assert (
        "fits no worker it may go to (research-v5p: runs the pods of team 'research' as service "
        "account 'trainer', and the JobSet names the fleet's 'pathways' (teams[].serviceAccount): "
        "set the same in both)" in error.issues[0].message
    )
    # The same account in the fleet: placed, and the JobSet names it.
    config["tpu-pathways:teams"][0]["serviceAccount"] = "trainer"
    write_fleet(stacks, config)
    fleet = load_fleet("fleet", lambda w: worker_outputs[w], stacks)
    assert sorted(fleet.placements[0]) == ["research-v5p"]


def test_a_worker_without_tpu_pools_is_refused(stacks, worker_outputs):
    # Alone it would leave the manager's ClusterQueue an empty TPU flavor list (MinItems=1).
    cpu = yaml.safe_load((STACKS / "Pulumi.dev.yaml").read_text())
    cpu["config"]["tpu-pathways:gcp"] |= {"project": "tpu-pathways-cpu"}
    cpu["config"]["tpu-pathways:cluster"]["name"] = "pathways-cpu"
    del cpu["config"]["tpu-pathways:tpuPools"], cpu["config"]["tpu-pathways:workloads"]
    (stacks / "Pulumi.cpu-only.yaml").write_text(yaml.safe_dump(cpu))
    config = on_workers(fleet_values(), ["cpu-only"])
    config["tpu-pathways:workloads"] = []
    write_fleet(stacks, config)
    outputs = {"cpu-only": plan_file("cpu-only", stacks).outputs}
    assert [(i.key, i.message) for i in refusal(stacks, outputs).issues] == [
        (
            "fleet.workers[0]",
            "'cpu-only' has no TPU pools: a fleet dispatches TPU work; name stacks with "
            "tpuPools, or add them to this one",
        )
    ]


def test_a_worker_whose_dns_endpoint_takes_no_kubernetes_token_is_refused(
    stacks, worker_outputs, example_plan
):
    # research-jobset leaves kubernetesTokensViaDns unset: GKE answers the manager's
    # service-account token on the DNS-based endpoint with 401.
    shutil.copy(STACKS / "Pulumi.research-jobset.yaml", stacks)
    config = on_workers(fleet_values(), ["research-v5p", "research-jobset"])
    config["tpu-pathways:workloads"] = []
    write_fleet(stacks, config)
    outputs = {**worker_outputs, "research-jobset": example_plan("research-jobset").outputs}
    error = refusal(stacks, outputs)
    assert [(i.key, i.message) for i in error.issues] == [
        (
            "fleet.workers[1]",
            "'research-jobset': its cluster's DNS-based endpoint takes Google credentials only, "
            "and the manager reaches it with a Kubernetes service-account token (MultiKueue runs "
            "no exec plugin); set cluster.kubernetesTokensViaDns: true in "
            "Pulumi.research-jobset.yaml and deploy research-jobset before the fleet",
        )
    ]


def test_a_workload_two_of_its_workers_would_run_differently_is_refused(stacks, worker_outputs):
    # dev-b: dev's v5e slice in another region with its CPU pool named differently, so the head's
    # nodeSelector would differ between the two workers MultiKueue may choose.
    other_dev(stacks, cpu_pool={"name": "heads"})
    config = fleet_values()
    config["tpu-pathways:fleet"]["workers"] = ["research-v5p", "dev", "dev-b"]
    config["tpu-pathways:teams"][1]["workers"] = ["dev", "dev-b"]
    config["tpu-pathways:workloads"][1]["pathwaysDir"] = "gs://fleet-shared/v5e-notebook"
    write_fleet(stacks, config)
    outputs = {**worker_outputs, "dev-b": plan_file("dev-b", stacks).outputs}
    error = refusal(stacks, outputs)
    assert [i.key for i in error.issues] == ["workloads[1].workers"]
    assert error.issues[0].message.startswith(
        "the workers it may go to (dev, dev-b) would need different JobSets"
    )


def test_a_production_fleet_with_groups_takes_the_managers_kms_key_and_security_group(
    stacks, worker_outputs
):
    config = fleet_values()
    config["tpu-pathways:environment"] = "production"
    config["tpu-pathways:teams"][0]["group"] = "ml-research@example.com"
    write_fleet(stacks, config)
    assert [i.key for i in refusal(stacks, worker_outputs).issues] == [
        "fleet.manager.secretsEncryption",
        "teams[0].group",
    ]
    key = "projects/tpu-pathways-fleet/locations/us-central1/keyRings/gke/cryptoKeys/secrets"
    config["tpu-pathways:fleet"]["manager"]["secretsEncryption"] = {"kmsKey": key}
    config["tpu-pathways:fleet"]["manager"]["securityGroup"] = "gke-security-groups@example.com"
    write_fleet(stacks, config)
    fleet = load_fleet("fleet", lambda w: worker_outputs[w], stacks)
    assert fleet.manager.cluster.secrets_encryption.kms_key == key
    assert fleet.manager.cluster.security_group == "gke-security-groups@example.com"


def test_a_fleet_managers_kms_key_in_another_region_is_refused(stacks, worker_outputs):
    config = fleet_values()
    key = "projects/tpu-pathways-fleet/locations/global/keyRings/gke/cryptoKeys/secrets"
    config["tpu-pathways:fleet"]["manager"]["secretsEncryption"] = {"kmsKey": key}
    write_fleet(stacks, config)
    (issue,) = refusal(stacks, worker_outputs).issues
    assert issue.key == "fleet.manager.secretsEncryption.kmsKey"
    assert issue.message.startswith(
        f"{key!r} is in location 'global'; GKE encrypts Secrets only with a key in the "
        "cluster's location, so its key ring must be in the cluster's region 'us-central1'"
    )


def test_the_managers_problems_name_the_fleets_own_keys(stacks, worker_outputs):
    # The manager is validated as a stack config (gcp, cluster, systemPool); its problems are
    # reported at the fleet keys they come from, and their advice names those keys too.
    config = fleet_values()
    config["tpu-pathways:fleet"]["manager"] |= {
        "zone": "europe-west4-a",
        "machineType": "ct5lp-hightpu-4t",
    }
    write_fleet(stacks, config)
    assert [(i.key, i.message) for i in refusal(stacks, worker_outputs).issues] == [
        (
            "fleet.manager.zone",
            "'europe-west4-a' is not in region 'us-central1' (expected us-central1-X)",
        ),
        (
            "fleet.manager.machineType",
            "'ct5lp-hightpu-4t' is a TPU machine type; use a CPU machine type such as "
            "n2-standard-64",
        ),
    ]
    config = fleet_values()
    config["tpu-pathways:teams"][0]["group"] = "ml-research@example.com"
    write_fleet(stacks, config)
    assert [(i.key, i.message) for i in refusal(stacks, worker_outputs).issues] == [
        (
            "teams[0].group",
            "'ml-research@example.com' matches nobody unless the cluster has Google Groups for "
            "RBAC: set fleet.manager.securityGroup to gke-security-groups@<your domain>",
        ),
    ]


def test_a_workload_of_a_team_the_fleet_does_not_declare_is_refused(stacks, worker_outputs):
    # dev has a namespace 'pathways'; the fleet's JobSet would still need one on the manager.
    config = fleet_values()
    config["tpu-pathways:teams"] = [{"name": "research"}]
    write_fleet(stacks, config)
    assert [(i.key, i.message) for i in refusal(stacks, worker_outputs).issues] == [
        (
            "workloads[1].team",
            "'pathways' is not a team of this fleet (research); the JobSet is queued in its "
            "team's namespace on the manager: add the team to teams or use one of them",
        )
    ]


def test_two_fleet_workloads_with_one_jobset_name_are_refused(stacks, worker_outputs):
    config = fleet_values()
    config["tpu-pathways:teams"].append({"name": "research-x"})
    pinned = {"pool": "v5p", "workers": ["research-v5p"], "mode": "headless"}
    config["tpu-pathways:workloads"] = [
        {"name": "nb", "team": "research", **pinned},
        {"name": "nb", "team": "research", **pinned},
        {"name": "x-nb", "team": "research", **pinned},
        {"name": "nb", "team": "research-x", **pinned},
    ]
    write_fleet(stacks, config)
    assert [(i.key, i.message) for i in refusal(stacks, worker_outputs).issues] == [
        ("workloads[0].name", "'nb' is used twice in namespace 'research'"),
        ("workloads[1].name", "'nb' is used twice in namespace 'research'"),
        (
            "workloads[3]",
            "its team and name join to 'research-x-nb', as those of workloads[2] do; the "
            "resources would share one name, so rename one of them",
        ),
    ]


# --- the manager is a cluster the fleet owns: checked against every other cluster ------------


def test_a_manager_on_one_of_its_workers_clusters_is_refused(stacks, worker_outputs):
    config = fleet_values()
    config["tpu-pathways:fleet"]["manager"] |= {
        "project": "tpu-pathways-research",
        "clusterName": "pathways-research",
    }
    write_fleet(stacks, config)
    error = refusal(stacks, worker_outputs)
    assert [(i.key, i.message) for i in error.issues] == [
        (
            "fleet.manager.clusterName",
            "stacks 'fleet' (its fleet.manager) and 'research-v5p' would both own cluster "
            "'pathways-research' in project 'tpu-pathways-research'; 'research-v5p' is a worker "
            "of fleet 'fleet', and MultiKueue does not let the manager cluster also be a worker: "
            "give fleet.manager a project and clusterName of its own",
        )
    ]


def test_a_manager_on_another_owners_cluster_is_refused_in_both_plans(stacks, worker_outputs):
    shutil.copy(STACKS / "Pulumi.serving-v6e.yaml", stacks)
    config = fleet_values()
    config["tpu-pathways:fleet"]["manager"] |= {
        "project": "tpu-pathways-serving",
        "clusterName": "pathways-serving",
    }
    write_fleet(stacks, config)
    message = (
        "stacks 'fleet' (its fleet.manager) and 'serving-v6e' would both own cluster "
        "'pathways-serving' in project 'tpu-pathways-serving'; a fleet's manager is a CPU-only "
        "cluster of its own (it runs no TPU work and takes no team stacks): give fleet.manager "
        "a project and clusterName of its own"
    )
    error = refusal(stacks, worker_outputs)
    assert [(i.key, i.message) for i in error.issues] == [("fleet.manager.clusterName", message)]
    # The owner's own plan reports it at its own key.
    owner = classify_stacks(stacks).conflicts_of("serving-v6e")
    assert [(i.key, i.message) for i in owner] == [("cluster.name", message)]


def test_a_manager_in_another_owners_project_is_refused(stacks, worker_outputs):
    config = fleet_values()
    config["tpu-pathways:fleet"]["manager"]["project"] = "tpu-pathways-dev"
    write_fleet(stacks, config)
    error = refusal(stacks, worker_outputs)
    assert [(i.key, i.message) for i in error.issues] == [
        (
            "fleet.manager.project",
            "stacks 'dev' and 'fleet' (its fleet.manager) would each create a cluster in project "
            "'tpu-pathways-dev': a team's Workload Identity grant (its bucket prefix) would then "
            "hold for the same namespace in the other cluster too; give each cluster its own "
            "project",
        )
    ]


def test_two_fleets_on_one_manager_cluster_are_refused(stacks, worker_outputs):
    other = on_workers(fleet_values(), ["research-v5p"])
    write_fleet(stacks, other, "fleet-b")
    config = on_workers(fleet_values(), ["dev"])
    del config["tpu-pathways:workloads"][0]  # research-v5p's
    write_fleet(stacks, config)
    (issue,) = refusal(stacks, worker_outputs).issues
    assert issue.key == "fleet.manager.clusterName"
    assert issue.message.startswith(
        "stacks 'fleet' (its fleet.manager) and 'fleet-b' (its fleet.manager) would both own "
        "cluster 'pathways-fleet' in project 'tpu-pathways-fleet';"
    )


def test_a_worker_of_two_fleets_is_refused_in_both(stacks, worker_outputs):
    # Each manager's MultiKueue garbage collector would delete the other's jobs on dev.
    other = on_workers(fleet_values(), ["dev"])
    other["tpu-pathways:fleet"]["manager"] |= {"project": "tpu-pathways-fleet-b"}
    write_fleet(stacks, other, "fleet-b")
    expected = [
        (
            "fleet.workers",
            "'dev' is a worker of fleets 'fleet' and 'fleet-b': each fleet's manager would "
            "delete the jobs the other dispatched there (MultiKueue's garbage collector removes "
            "the worker's Workloads of the same origin that its manager did not create), and "
            "both would own its multikueue-manager account; name each worker in one fleet",
        )
    ]
    for fleet in ("fleet", "fleet-b"):
        issues = refusal(stacks, worker_outputs, fleet).issues
        assert [(i.key, i.message) for i in issues] == expected


def test_a_stack_reaching_the_manager_through_cluster_existing_is_refused(stacks):
    lab = {
        "tpu-pathways:gcp": {
            "project": "tpu-pathways-fleet",
            "region": "us-central1",
            "zone": "us-central1-a",
        },
        "tpu-pathways:cluster": {"existing": {"name": "pathways-fleet"}},
    }
    write_fleet(stacks, lab, "lab")
    assert [(i.key, i.message) for i in classify_stacks(stacks).conflicts_of("lab")] == [
        (
            "cluster.existing",
            "stack 'lab' targets cluster 'pathways-fleet', the manager cluster of fleet stack "
            "'fleet', which runs no TPU work and takes no team stacks; add its workloads to that "
            "fleet's tpu-pathways:workloads, or make it a team stack of a cluster owner",
        )
    ]


# --- nothing a fleet stack is given is ignored ------------------------------------------------


def test_every_key_of_a_stack_that_a_fleet_lacks_is_refused_with_a_reason():
    stack_keys = {f.alias for f in StackConfig.model_fields.values()}
    fleet_keys = {f.alias for f in FleetStackConfig.model_fields.values()}
    assert (
        stack_keys - fleet_keys
        == set(NOT_IN_A_FLEET)
        == {
            "gcp",
            "cluster",
            "systemPool",
            "cpuPool",
            "tpuPools",
            "teamCpuPools",
            "scratchBucket",
            "dataBuckets",
            "addons",
            "owner",
            "pathwaysVersion",
            "waitForRunning",
            "pricing",
            "secrets",
            "sharedServices",
            "lustre",
            "homeDirs",
            "observability",
        }
    )


def test_secrets_and_shared_services_in_a_fleet_are_refused_saying_why(stacks, worker_outputs):
    config = fleet_values()
    config["tpu-pathways:secrets"] = {"HF_TOKEN": {"secure": "v1:abc"}}
    config["tpu-pathways:sharedServices"] = [{"name": "shared", "team": "research", "pool": "v5p"}]
    config["tpu-pathways:teams"][0]["nam"] = "typo"  # reported with them, all at once
    write_fleet(stacks, config)
    error = refusal(stacks, worker_outputs)
    assert [(i.key, i.message) for i in error.issues[:2]] == [
        (
            "secrets",
            "not a key of a fleet stack: a fleet takes no config secrets: MultiKueue creates "
            "only the JobSet on the worker it picks, not the Secret a {configSecret: NAME} would "
            "become on the manager; use {secretKeyRef: {name, key}} to a Secret that exists in "
            "the team's namespace on each worker",
        ),
        (
            "sharedServices",
            "not a key of a fleet stack: a shared service is a long-running Pathways deployment "
            "its clients reach in its own cluster, which MultiKueue would only choose at "
            "admission; declare it in a worker stack (or a team stack on one)",
        ),
    ]
    assert [i.key for i in error.issues[2:]] == ["teams[0].nam"]


def test_a_config_secret_in_a_fleet_workloads_env_is_refused(stacks, worker_outputs):
    config = fleet_values()
    config["tpu-pathways:workloads"][0]["env"] = {
        "HF_TOKEN": {"configSecret": "hf"},
        "CACHE_KEY": {"secretKeyRef": {"name": "cache", "key": "key"}},
    }
    write_fleet(stacks, config)
    error = refusal(stacks, worker_outputs)
    assert [i.key for i in error.issues] == ["workloads[0].env.HF_TOKEN"]
    assert error.issues[0].message.startswith(
        "{configSecret: hf}: a fleet takes no config secrets: MultiKueue creates only the JobSet"
    )


def test_pod_quotas_on_a_fleet_team_are_refused(stacks, worker_outputs):
    config = fleet_values()
    config["tpu-pathways:teams"][0]["resourceQuota"] = {"tpuChips": 32, "loadBalancers": 1}
    write_fleet(stacks, config)
    error = refusal(stacks, worker_outputs)
    assert [(i.key, i.message) for i in error.issues] == [
        (
            "teams[0].resourceQuota.tpuChips",
            "32 would bound the team's pods on the manager, where none run (MultiKueue creates "
            "the JobSet and so its pods on a worker); set it in the worker stacks' "
            "teams[].resourceQuota, or bound queued chips with their addons.kueue.teamQuotas",
        )
    ]


def test_the_team_label_goes_to_the_manager(stacks, worker_outputs):
    config = fleet_values()
    config["tpu-pathways:team"] = "ml-platform"
    write_fleet(stacks, config)
    assert load_fleet("fleet", lambda w: worker_outputs[w], stacks).manager.team == "ml-platform"
