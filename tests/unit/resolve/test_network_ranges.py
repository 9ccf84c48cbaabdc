"""The ranges the stack takes in its VPC, in one list (``resolve.network_ranges``), and the
checks that read it: a team's Pod range and a Managed Lustre peering range each against every
other, and a dedicated team's Pod range on an existing subnetwork."""

from __future__ import annotations

from components.resolve.network_ranges import taken_ranges
from components.resolve.tenancy.pod_ranges import team_pods_cidrs

TEAMS = [{"name": "pathways"}, {"name": "nlp"}]
NLP_POOL = {"team": "nlp", "machineType": "n2-standard-64"}
LUSTRE = {"name": "ckpt", "teams": ["pathways"], "capacityGib": 18000}
EXISTING = {"existingNetwork": "shared-vpc", "existingSubnetwork": "shared-subnet"}


def issues_of(error) -> dict[str, str]:
    return {i.key: i.message for i in error.issues}


def test_every_range_the_stack_takes_is_listed_with_its_key(config_of, stack_values):
    values = stack_values(
        teams=TEAMS,
        teamCpuPools=[NLP_POOL, {"team": "pathways", "machineType": "n2-standard-64"}],
        lustre=[{**LUSTRE, "peeringRange": "172.16.0.0/20"}, {**LUSTRE, "name": "scratch"}],
        addons={"kueue": {"enabled": True}},
    )
    listed = [(r.key, r.cidr, r.default) for r in taken_ranges(config_of(values))]
    assert listed == [
        ("cluster.network.nodesCidr", "10.0.0.0/20", False),
        ("cluster.network.podsCidr", "10.4.0.0/14", False),
        ("cluster.network.servicesCidr", "10.8.0.0/20", False),
        ("teamCpuPools[0].podsCidr", "10.16.0.0/16", True),
        ("teamCpuPools[1].podsCidr", "10.17.0.0/16", True),
        ("lustre[0].peeringRange", "172.16.0.0/20", False),  # lustre[1]: Google picks one
    ]


def test_a_lustre_peering_range_over_a_teams_default_pod_range_is_refused(
    config_error, stack_values
):
    values = stack_values(
        teams=TEAMS,
        teamCpuPools=[NLP_POOL],
        lustre=[{**LUSTRE, "peeringRange": "10.16.0.0/20"}],
        addons={"kueue": {"enabled": True}},
    )
    issues = issues_of(config_error(values))
    assert issues["lustre[0].peeringRange"] == (
        "'10.16.0.0/20' overlaps the default teamCpuPools[0].podsCidr '10.16.0.0/16'"
    )
    assert "teamCpuPools[0].podsCidr" not in issues  # one clash, reported once


def test_two_lustre_peering_ranges_may_not_overlap(config_error, stack_values):
    values = stack_values(
        teams=[{"name": "pathways"}],
        lustre=[
            {**LUSTRE, "peeringRange": "172.16.0.0/20"},
            {**LUSTRE, "name": "scratch", "peeringRange": "172.16.8.0/21"},
        ],
    )
    assert issues_of(config_error(values))["lustre[1].peeringRange"] == (
        "'172.16.8.0/21' overlaps lustre[0].peeringRange '172.16.0.0/20'"
    )


def test_on_an_existing_subnetwork_a_dedicated_team_names_its_range_and_its_addresses(
    config_error, stack_values
):
    values = stack_values(
        cluster={"network": EXISTING},
        teams=TEAMS,
        teamCpuPools=[NLP_POOL, {**NLP_POOL, "team": "pathways", "podsCidr": "10.64.0.0/16"}],
        addons={"kueue": {"enabled": True}},
    )
    issues = issues_of(config_error(values))
    ranges = {key: message for key, message in issues.items() if key.startswith("teamCpuPools")}
    assert ranges == {
        "teamCpuPools[0].podsRange": (
            "required on the existing subnetwork 'shared-subnet' "
            "(cluster.network.existingSubnetwork), to which the stack adds no range: the name of "
            "the secondary range the pools of team 'nlp' give their Pods addresses from; add it "
            "to the subnetwork first"
        ),
        "teamCpuPools[0].podsCidr": (
            "required on the existing subnetwork 'shared-subnet' "
            "(cluster.network.existingSubnetwork): the addresses of the secondary range "
            "podsRange names, the only Pods the Pathways ports of the pools of team 'nlp' admit "
            "(the default ranges are for a subnetwork the stack creates)"
        ),
        "teamCpuPools[1].podsRange": (
            "required on the existing subnetwork 'shared-subnet' "
            "(cluster.network.existingSubnetwork), to which the stack adds no range: the name of "
            "the secondary range the pools of team 'pathways' give their Pods addresses from; "
            "add it to the subnetwork first"
        ),
    }


def test_on_an_existing_subnetwork_the_named_range_is_used_and_no_default(config_of, stack_values):
    values = stack_values(
        cluster={"network": EXISTING},
        teams=TEAMS,
        teamCpuPools=[{**NLP_POOL, "podsRange": "nlp-pods", "podsCidr": "10.64.0.0/16"}],
        addons={"kueue": {"enabled": True}},
    )
    config = config_of(values)
    assert team_pods_cidrs(config) == {"nlp": "10.64.0.0/16"}
    # the subnetwork's primary range is its own, not cluster.network.nodesCidr
    assert [r.key for r in taken_ranges(config)] == [
        "cluster.network.podsCidr",
        "cluster.network.servicesCidr",
        "teamCpuPools[0].podsCidr",
    ]


def test_two_teams_may_not_name_one_secondary_range(config_error, stack_values):
    """Different podsCidr, one range name (the review of 2026-11-27): both teams' Pods would
    take addresses from it, and each firewall would admit the wrong ones."""
    values = stack_values(
        cluster={"network": EXISTING},
        teams=TEAMS,
        teamCpuPools=[
            {**NLP_POOL, "podsRange": "shared", "podsCidr": "10.64.0.0/16"},
            {**NLP_POOL, "team": "pathways", "podsRange": "shared", "podsCidr": "10.65.0.0/16"},
        ],
        addons={"kueue": {"enabled": True}},
    )
    issues = issues_of(config_error(values))
    assert {k: v for k, v in issues.items() if k.startswith("teamCpuPools")} == {
        "teamCpuPools[1].podsRange": (
            "'shared' is teamCpuPools[0].podsRange already: each dedicated team's Pods need a "
            "secondary range of their own"
        )
    }


def test_a_range_name_on_the_subnetwork_the_stack_creates_is_refused(config_error, stack_values):
    values = stack_values(
        teams=TEAMS,
        teamCpuPools=[{**NLP_POOL, "podsRange": "nlp-pods"}],
        addons={"kueue": {"enabled": True}},
    )
    assert issues_of(config_error(values))["teamCpuPools[0].podsRange"] == (
        "'nlp-pods' names a range of an existing subnetwork, allowed only with "
        "cluster.network.existingSubnetwork; the subnetwork the stack creates gets the range "
        "pods-nlp: remove podsRange"
    )


def test_a_range_name_that_is_not_a_gce_name_is_refused(config_error, stack_values):
    values = stack_values(
        cluster={"network": EXISTING},
        teams=TEAMS,
        teamCpuPools=[{**NLP_POOL, "podsRange": "NLP_pods", "podsCidr": "10.64.0.0/16"}],
    )
    assert issues_of(config_error(values))["teamCpuPools[0].podsRange"] == (
        "'NLP_pods' is not a secondary range name (1-63 lowercase letters, digits or hyphens, "
        "starting with a letter and not ending with a hyphen)"
    )
