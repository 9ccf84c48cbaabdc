"""Nomination per team: the workers each team's (and workload's) JobSets may go to, the manager's
objects per worker set, and the plan's refusal, from Kueue's rules (research/28-multikueue.md),
of a set with a worker MultiKueue could not use. Messages are literal."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from components.errors import ConfigError
from components.plan.engine import plan_file
from components.resolve.tenancy.fleet import load_fleet
from components.resolve.tenancy.fleet_dispatch import dispatch_issues
from components.resolve.tenancy.fleet_sets import FleetQueue, WorkerSet, set_name

STACKS = Path(__file__).resolve().parents[4] / "stacks"
RIGHTS = (
    "the manager's rights in namespace {ns} (get, create, update, delete workloads; patch "
    "workloads/status; get, create, delete jobsets)"
)
STOPS_ALL = (
    "Kueue reads each Workload on every worker of the MultiKueueConfig and stops at the first "
    "refusal (readGroup), so nothing queued there is dispatched, not even to the other workers"
)


@pytest.fixture(scope="module")
def worker_outputs(example_plan):
    """The example workers' offline plans' outputs (planned once per session)."""
    return {name: example_plan(name).outputs for name in ("research-v5p", "dev")}


@pytest.fixture
def stacks(tmp_path):
    for name in ("research-v5p", "dev", "fleet"):
        shutil.copy(STACKS / f"Pulumi.{name}.yaml", tmp_path)
    return tmp_path


def fleet_values() -> dict:
    return yaml.safe_load((STACKS / "Pulumi.fleet.yaml").read_text())["config"]


def write_fleet(stacks: Path, config: dict) -> None:
    (stacks / "Pulumi.fleet.yaml").write_text(yaml.safe_dump({"config": config}))


def problems(stacks: Path, outputs) -> list[tuple[str, str]]:
    with pytest.raises(ConfigError) as caught:
        load_fleet("fleet", lambda w: outputs[w], stacks)
    return [(i.key, i.message) for i in caught.value.issues]


def test_the_example_fleet_nominates_each_team_to_the_workers_with_its_namespace(
    stacks, worker_outputs
):
    fleet = load_fleet("fleet", lambda w: worker_outputs[w], stacks)
    assert fleet.nominations.sets == (
        WorkerSet("mk-dev", ("dev",), ("pathways",)),
        WorkerSet("mk-research-v5p", ("research-v5p",), ("research",)),
    )
    assert fleet.nominations.queues == (
        FleetQueue("research", "multislice-queue", ("research-v5p",), False),
        FleetQueue("pathways", "multislice-queue", ("dev",), False),
    )
    assert fleet.nominations.placements(fleet.config) == {
        "research/v5p-train": ["research-v5p"],
        "pathways/v5e-notebook": ["dev"],
    }
    assert fleet.nominations.access_namespaces("dev") == ("pathways",)
    assert fleet.nominations.access_namespaces("research-v5p") == ("research",)


def test_the_fleet_before_nomination_per_team_is_refused(stacks, worker_outputs):
    # The shape of the fleet before this change: every team on both workers, v5p-train
    # "pinned" with worker: (which MultiKueue never saw).
    config = fleet_values()
    for team in config["tpu-pathways:teams"]:
        del team["workers"]
    config["tpu-pathways:workloads"][0]["worker"] = "research-v5p"
    write_fleet(stacks, config)
    assert problems(stacks, worker_outputs) == [
        (
            "workloads[0].worker",
            "renamed: use workers: [research-v5p] (a list: the workers it may go to)",
        )
    ]
    del config["tpu-pathways:workloads"][0]["worker"]
    write_fleet(stacks, config)
    assert problems(stacks, worker_outputs) == [
        (
            "teams[0].workers",
            "'dev' lacks namespace research, "
            + RIGHTS.format(ns="research")
            + ", LocalQueue research/multislice-queue: "
            + STOPS_ALL
            + "; research/v5p-train would not be dispatched; set teams[0].workers: "
            "[research-v5p]",
        ),
        (
            "teams[1].workers",
            "'research-v5p' lacks namespace pathways, "
            + RIGHTS.format(ns="pathways")
            + ", LocalQueue pathways/multislice-queue: "
            + STOPS_ALL
            + "; pathways/v5e-notebook would not be dispatched; set teams[1].workers: [dev]",
        ),
    ]


def test_a_workload_sent_to_a_worker_without_its_namespace_is_refused(stacks, worker_outputs):
    config = fleet_values()
    config["tpu-pathways:workloads"][0]["workers"] = ["dev"]
    write_fleet(stacks, config)
    assert problems(stacks, worker_outputs) == [
        (
            "workloads[0].workers",
            "'dev' lacks namespace research, "
            + RIGHTS.format(ns="research")
            + ", LocalQueue research/mk-dev: "
            + STOPS_ALL
            + "; research/v5p-train would not be dispatched; set workloads[0].workers to "
            "workers that have namespace research: [research-v5p]",
        )
    ]


def test_a_team_no_worker_has_the_namespace_of_is_told_so(stacks, worker_outputs):
    config = fleet_values()
    config["tpu-pathways:teams"].append({"name": "vision", "workers": ["dev"]})
    write_fleet(stacks, config)
    ((key, message),) = problems(stacks, worker_outputs)
    assert key == "teams[2].workers"
    assert message.startswith("'dev' lacks namespace vision, ")
    assert message.endswith(
        "; team vision's JobSets would not be dispatched; no worker has namespace vision: add "
        "team vision to a worker stack"
    )


def research_v5e(stacks: Path) -> dict:
    """research-v5e: dev's v5e slice with team research, in a project of its own."""
    other = yaml.safe_load((STACKS / "Pulumi.dev.yaml").read_text())
    other["config"]["tpu-pathways:gcp"] |= {"project": "tpu-pathways-research-v5e"}
    other["config"]["tpu-pathways:cluster"]["name"] = "pathways-research-v5e"
    other["config"]["tpu-pathways:teams"] = [{"name": "research"}]
    del other["config"]["tpu-pathways:workloads"]
    (stacks / "Pulumi.research-v5e.yaml").write_text(yaml.safe_dump(other))
    return plan_file("research-v5e", stacks).outputs


def test_a_worker_of_the_set_that_cannot_run_the_workload_is_refused(stacks, worker_outputs):
    outputs = {**worker_outputs, "research-v5e": research_v5e(stacks)}
    config = fleet_values()
    config["tpu-pathways:fleet"]["workers"] = ["research-v5p", "dev", "research-v5e"]
    config["tpu-pathways:teams"][0]["workers"] = ["research-v5p", "research-v5e"]
    config["tpu-pathways:workloads"][0]["pathwaysDir"] = "gs://research-shared/v5p-train"
    write_fleet(stacks, config)
    assert problems(stacks, outputs) == [
        (
            "workloads[0]",
            "'research-v5e', one of the workers it may go to, cannot run it (.pool: 'v5p' is "
            "not a TPU pool of this stack; pools: v5e): MultiKueue may dispatch it there; give "
            "it workers: [research-v5p]",
        )
    ]
    # one worker: its scratch bucket again (a pathwaysDir would be checked against its grants)
    config["tpu-pathways:workloads"][0]["workers"] = ["research-v5p"]
    del config["tpu-pathways:workloads"][0]["pathwaysDir"]
    write_fleet(stacks, config)
    fleet = load_fleet("fleet", lambda w: outputs[w], stacks)
    assert fleet.nominations.workloads[0] == FleetQueue(
        "research", "mk-research-v5p", ("research-v5p",), True
    )


@pytest.mark.parametrize(
    ("workers", "expected"),
    [
        (
            ["research-v5p", "elsewhere"],
            [
                (
                    "teams[0].workers[1]",
                    "'elsewhere' is not one of fleet.workers (research-v5p, dev): name workers "
                    "of this fleet, or add it to fleet.workers",
                )
            ],
        ),
        (
            ["research-v5p", "research-v5p"],
            [("teams[0].workers", "'research-v5p' listed more than once; name each worker once")],
        ),
        ([], [("teams[0].workers", "workers takes 1 to 20 entries (it has 0)")]),
        (
            ["research-v5p"] * 21,
            [("teams[0].workers", "workers takes 1 to 20 entries (it has 21)")],
        ),
    ],
)
def test_a_teams_workers_are_some_of_the_fleets(stacks, worker_outputs, workers, expected):
    config = fleet_values()
    config["tpu-pathways:teams"][0]["workers"] = workers
    write_fleet(stacks, config)
    assert problems(stacks, worker_outputs) == expected


def test_a_v0_19_manager_needs_workers_at_v0_18_or_later(stacks, worker_outputs):
    # The manager's Kueue is the program's default (a fleet sets no addons); a bump to v0.19
    # with workers still at v0.17.1 would be refused in the plan.
    fleet = load_fleet("fleet", lambda w: worker_outputs[w], stacks)
    issues, stopped = dispatch_issues(fleet.config, fleet.nominations, fleet.workers, "v0.19.2")
    assert stopped == {0, 1}
    assert [(i.key, i.message.split(": ")[0]) for i in issues] == [
        (
            "teams[0].workers",
            "'research-v5p' lacks Kueue v0.18 or later (it runs v0.17.1, the manager v0.19.2)",
        ),
        (
            "teams[1].workers",
            "'dev' lacks Kueue v0.18 or later (it runs v0.17.1, the manager v0.19.2)",
        ),
    ]
    issues, _ = dispatch_issues(fleet.config, fleet.nominations, fleet.workers, "v0.18.0")
    assert issues[0].message.startswith(
        "the manager lacks a Kueue with a row in the rights table (it runs v0.18.0): its "
        "client's calls on the workers are not known (known: v0.17, v0.19)"
    )


def test_set_names_are_dns_labels_of_the_sorted_workers():
    assert set_name(["research-v5p", "dev"]) == "mk-dev-research-v5p"
    long = [f"worker-{i:02d}-in-a-region-far-away" for i in range(3)]
    name = set_name(long)
    assert len(name) <= 63 and name.startswith("mk-worker-00-in-a-region-far-away-worker-01")
    assert name != set_name([*long[:2], "worker-02-in-a-region-far-away-b"])


@pytest.mark.parametrize(
    ("credentials", "expected"),
    [
        (
            {"lifetimeDays": 7, "renewBeforeDays": 7},
            (
                "fleet.managerTokens.renewBeforeDays",
                "7 is not allowed: must be less than lifetimeDays (7), or every `pulumi up` "
                "mints a new token",
            ),
        ),
        (
            {"lifetimeDays": 365},
            ("fleet.managerTokens.lifetimeDays", "365 is not allowed"),
        ),
    ],
)
def test_token_lifetimes_are_bounded(stacks, worker_outputs, credentials, expected):
    config = fleet_values()
    config["tpu-pathways:fleet"]["managerTokens"] = credentials
    write_fleet(stacks, config)
    (issue,) = problems(stacks, worker_outputs)
    assert issue[0] == expected[0] and issue[1].startswith(expected[1])
