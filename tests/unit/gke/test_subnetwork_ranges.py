"""The dedicated teams' Pod ranges against the secondary ranges an existing subnetwork has
(``gke.subnetwork_ranges``): literal ranges in, literal problems out."""

from __future__ import annotations

from components.errors import ConfigIssue
from components.gke.subnetwork_ranges import (
    RangeClaim,
    SecondaryRange,
    range_issues,
    unchecked_note,
)

NLP = RangeClaim(
    "nlp-pods", "10.64.0.0/16", "teamCpuPools[0].podsRange", "teamCpuPools[0].podsCidr"
)
CV = RangeClaim("cv-pods", "10.65.0.0/16", "teamCpuPools[1].podsRange", "teamCpuPools[1].podsCidr")
ASR = RangeClaim(
    "asr-pods", "10.66.0.0/16", "teamCpuPools[2].podsRange", "teamCpuPools[2].podsCidr"
)
SHARED = [
    SecondaryRange("gke-pods", "10.4.0.0/14"),
    SecondaryRange("nlp-pods", "10.64.0.0/16"),
    SecondaryRange("cv-pods", "10.65.0.0/16"),
]


def test_ranges_the_subnetwork_has_with_their_addresses_pass():
    assert range_issues("shared-subnet", [NLP, CV], SHARED) == []


def test_a_missing_range_names_the_ranges_the_subnetwork_has():
    found = [SecondaryRange("a", "10.1.0.0/16"), SecondaryRange("b", "10.2.0.0/16")]
    assert range_issues("shared-subnet", [NLP], found) == [
        ConfigIssue(
            "teamCpuPools[0].podsRange",
            "'nlp-pods' is not a secondary range of subnetwork 'shared-subnet' (it has: "
            "a=10.1.0.0/16, b=10.2.0.0/16); add it there first, or name one of those",
        )
    ]


def test_a_subnetwork_without_secondary_ranges():
    assert range_issues("shared-subnet", [NLP], []) == [
        ConfigIssue(
            "teamCpuPools[0].podsRange",
            "'nlp-pods' is not a secondary range of subnetwork 'shared-subnet' (it has none); "
            "add it there first, or name one of those",
        )
    ]


def test_other_addresses_are_reported_on_the_cidr_with_what_gcp_has():
    found = [SecondaryRange("nlp-pods", "10.64.0.0/16")]
    wrong = RangeClaim(
        "nlp-pods", "10.65.0.0/16", "teamCpuPools[0].podsRange", "teamCpuPools[0].podsCidr"
    )
    assert range_issues("shared-subnet", [wrong], found) == [
        ConfigIssue(
            "teamCpuPools[0].podsCidr",
            "secondary range 'nlp-pods' of subnetwork 'shared-subnet' has 10.64.0.0/16, but "
            "teamCpuPools[0].podsCidr says 10.65.0.0/16: the team's Pathways ports would admit "
            "the wrong Pods; set it to 10.64.0.0/16",
        )
    ]


def test_a_narrower_range_inside_the_real_one_is_other_addresses():
    found = [SecondaryRange("nlp-pods", "10.64.0.0/14")]
    assert [i.key for i in range_issues("shared-subnet", [NLP], found)] == [
        "teamCpuPools[0].podsCidr"
    ]


def test_several_teams_every_problem_in_the_teams_order():
    found = [SecondaryRange("cv-pods", "10.99.0.0/16"), SecondaryRange("nlp-pods", "10.64.0.0/16")]
    issues = range_issues("shared-subnet", [NLP, CV, ASR], found)
    assert [(i.key, i.message.split(":")[0]) for i in issues] == [
        (
            "teamCpuPools[1].podsCidr",
            "secondary range 'cv-pods' of subnetwork 'shared-subnet' has 10.99.0.0/16, but "
            "teamCpuPools[1].podsCidr says 10.65.0.0/16",
        ),
        (
            "teamCpuPools[2].podsRange",
            "'asr-pods' is not a secondary range of subnetwork 'shared-subnet' (it has",
        ),
    ]


def test_one_range_written_two_ways_is_one_range():
    found = [SecondaryRange("v6-pods", "fd20::/64")]
    claim = RangeClaim("v6-pods", "fd20:0:0:0::/64", "name", "cidr")
    assert range_issues("shared-subnet", [claim], found) == []


def test_the_note_of_a_preview_without_the_ranges():
    assert unchecked_note("shared-subnet", [NLP, CV]) == (
        "checked at deploy time, not in this preview (no secondary ranges of subnetwork "
        "'shared-subnet' here: the offline plan looks nothing up in GCP): "
        "teamCpuPools[0].podsRange 'nlp-pods' with 10.64.0.0/16, teamCpuPools[1].podsRange "
        "'cv-pods' with 10.65.0.0/16. `pulumi preview` and `pulumi up` compare them with the "
        "subnetwork's; on a mismatch `pulumi up` stops before it creates anything"
    )
