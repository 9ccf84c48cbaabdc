"""The manager's queue names: a team's own queue of a worker set never takes another set's or
team's name, and worker sets whose names run together are refused. Expected values are
literals."""

from __future__ import annotations

import re

from components.config.schema.fleet import FleetStackConfig
from components.errors import ConfigIssue
from components.resolve.tenancy.fleet_sets import set_name, set_name_issues, team_queue_name

# A ClusterQueue's name (kueue v0.17.1 apis/kueue/v1beta2 ClusterQueueReference).
SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def test_team_queues_of_sets_and_teams_that_run_together_stay_apart():
    # The reviewer's pair: set [a-b] with team c and set [a] with team b-c (both mk-a-b-c
    # before), and set [a] with team b against the set [a, b] (both mk-a-b before).
    assert team_queue_name(set_name(["a-b"]), "c") == "mk-a-b.c"
    assert team_queue_name(set_name(["a"]), "b-c") == "mk-a.b-c"
    assert team_queue_name(set_name(["a"]), "b") == "mk-a.b"
    assert set_name(["a", "b"]) == "mk-a-b"


def test_a_long_team_queue_name_is_shortened_to_a_valid_clusterqueue_name():
    # The set's name is 55 characters: the 56 kept before the hash end in the dot.
    workers = ["w" * 40, "x" * 11]
    name = team_queue_name(set_name(workers), "research")
    assert len(name) == 62
    assert name.startswith("mk-" + "w" * 40 + "-" + "x" * 11 + "-")
    assert SUBDOMAIN.match(name)
    assert name != team_queue_name(set_name(workers), "researches")


def fleet(teams: list[dict]) -> FleetStackConfig:
    return FleetStackConfig.model_validate(
        {
            "environment": "staging",
            "workloadBackend": "jobset",
            "fleet": {
                "workers": ["a", "b", "a-b"],
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
