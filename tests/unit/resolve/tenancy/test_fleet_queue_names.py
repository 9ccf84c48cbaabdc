"""The manager's queue names: a team's own queue of a worker set never takes another set's or
team's name, and worker sets whose names run together are refused. Expected values are
literals."""

from __future__ import annotations

import re

from components.config.schema.fleet import FleetStackConfig
from components.errors import ConfigIssue
from components.resolve.tenancy.fleet_sets import (
    set_name,
    set_name_issues,
    team_queue_name,
    team_queue_name_issues,
)

# A ClusterQueue's name (kueue v0.17.1 apis/kueue/v1beta2 ClusterQueueReference).
SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def test_team_queues_of_sets_and_teams_that_run_together_stay_apart():
    # The reviewer's pair: set [a-b] with team c and set [a] with team b-c (both mk-a-b-c
    # before), and set [a] with team b against the set [a, b] (both mk-a-b before).
    assert team_queue_name(set_name(["a-b"]), "c") == "mk-a-b.c"
    assert team_queue_name(set_name(["a"]), "b-c") == "mk-a.b-c"
    assert team_queue_name(set_name(["a"]), "b") == "mk-a.b"
    assert set_name(["a", "b"]) == "mk-a-b"


def test_a_long_team_queue_name_shortens_the_sets_part_and_keeps_the_team_whole():
    # The set's name is 55 characters: its part is cut to 54 with a hash of it, the team kept.
    workers = ["w" * 40, "x" * 11]
    name = team_queue_name(set_name(workers), "research")
    assert name == "mk-" + "w" * 40 + "-xxx-cb93b3.research"
    assert len(name) == 63
    assert SUBDOMAIN.match(name)
    assert team_queue_name(set_name(workers), "researches").endswith("-cb93b3.researches")


def test_the_reviewers_teams_whose_truncated_queue_names_met_now_stay_apart():
    # Before: both mk-wxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.tttttttttttttttttttttt-8c6f01 (the first
    # cut after the dot, ending in a hash shaped like the second team's name).
    worker_set = set_name(["w" + "x" * 29])
    assert team_queue_name(worker_set, "t" * 30) == (
        "mk-wxxxxxxxxxxxxxxxxxxxxx-c7f3ee.tttttttttttttttttttttttttttttt"
    )
    assert team_queue_name(worker_set, "tttttttttttttttttttttt-8c6f01") == (
        "mk-wxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.tttttttttttttttttttttt-8c6f01"
    )


def fleet(
    teams: list[dict], workers: tuple[str, ...] = ("a", "b", "a-b"), workloads: tuple = ()
) -> FleetStackConfig:
    return FleetStackConfig.model_validate(
        {
            "environment": "staging",
            "workloadBackend": "jobset",
            "workloads": list(workloads),
            "fleet": {
                "workers": list(workers),
                "manager": {"project": "p-fleet", "region": "us-central1", "zone": "us-central1-a"},
            },
            "teams": teams,
        }
    )


def test_worker_sets_whose_names_run_together_are_refused_naming_both():
    config = fleet([{"name": "x", "workers": ["a-b"]}, {"name": "y", "workers": ["b", "a"]}])
    message = (
        "the worker sets [a, b] and [a-b] would both be named 'mk-a-b' on the manager (its "
        "MultiKueueConfig, AdmissionCheck and ClusterQueue: 'mk-' and the sorted workers joined "
        "by '-'), so one would take the other's queue; choose workers whose names do not run "
        "together, or rename a worker stack"
    )
    assert set_name_issues(config) == [
        ConfigIssue("teams[1].workers", message),
        ConfigIssue("teams[0].workers", message),
    ]
    assert set_name_issues(fleet([{"name": "x", "workers": ["a-b"]}, {"name": "y"}])) == []


# Two worker names whose sets' names ("mk-" and the worker, 33 characters) share their first 25
# characters and the first 6 hex digits of their SHA-256: shortened to fit a 30-character team's
# queue name, both are mk-wwwwwwwwwwwwwwwwwwwwww-d352a6.
COLLIDING = ["wwwwwwwwwwwwwwwwwwwwwwac660000", "wwwwwwwwwwwwwwwwwwwwwwaega0000"]
TEAM = "t" * 30


def test_one_teams_queues_on_two_sets_whose_shortened_names_collide_are_refused_naming_both():
    workload = {"name": "w0", "team": TEAM, "pool": "v5e", "mode": "headless"}
    config = fleet(
        [{"name": TEAM, "workers": [COLLIDING[0]]}],
        workers=COLLIDING,
        workloads=(workload | {"workers": [COLLIDING[1]]},),
    )
    message = (
        f"the manager's queues of team '{TEAM}' on [{COLLIDING[0]}] and team '{TEAM}' on "
        f"[{COLLIDING[1]}] would both be named 'mk-wwwwwwwwwwwwwwwwwwwwww-d352a6.{TEAM}' (the "
        "worker set's name, shortened with a hash past 63 characters, a dot and the team's), so "
        "one would take the other's quota; choose other workers for one of them, or rename a "
        "worker stack"
    )
    assert set_name_issues(config) == []
    assert team_queue_name_issues(config) == [
        ConfigIssue("teams[0].workers", message),
        ConfigIssue("workloads[0].workers", message),
    ]
    # Each set alone is fine.
    assert team_queue_name_issues(fleet([{"name": TEAM}], workers=COLLIDING[:1])) == []
