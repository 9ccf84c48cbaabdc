"""cluster.maintenance: the recurring window and the exclusions, their defaults per environment,
and every GKE limit refused at plan time with the key, the value and what is allowed."""

from __future__ import annotations

import pytest

from components.vocabulary import ExclusionScope

SATURDAY = "2025-01-04T00:00:00Z"


def test_dev_gets_the_weekend_window_and_no_exclusion(stack_values, config_of):
    config = config_of(stack_values())
    window = config.cluster.maintenance.window
    assert (window.start_time, window.end_time, window.recurrence) == (
        "2025-01-04T00:00:00Z",
        "2025-01-04T08:00:00Z",
        "FREQ=WEEKLY;BYDAY=SA,SU",
    )
    assert config.maintenance_exclusions == []


@pytest.mark.parametrize("environment", ["staging", "production"])
@pytest.mark.parametrize("channel", ["REGULAR", "STABLE"])
def test_staging_and_production_hold_back_minor_and_node_upgrades(
    stack_values, config_of, environment, channel
):
    values = stack_values(environment=environment, cluster={"releaseChannel": channel})
    (exclusion,) = config_of(values).maintenance_exclusions
    assert exclusion.name == "no-minor-or-node-upgrades"
    assert exclusion.scope is ExclusionScope.NO_MINOR_OR_NODE_UPGRADES
    assert exclusion.start_time == "2025-01-01T00:00:00Z"
    assert (exclusion.end_time, exclusion.until_end_of_support) == (None, True)


@pytest.mark.parametrize("environment", ["staging", "production"])
def test_staging_and_production_default_to_regular_and_its_exclusion(
    stack_values, config_of, environment
):
    config = config_of(stack_values(environment=environment))
    assert config.release_channel.value == "REGULAR"
    (exclusion,) = config.maintenance_exclusions
    assert exclusion.scope.value == "NO_MINOR_OR_NODE_UPGRADES"


def test_dev_defaults_to_rapid(stack_values, config_of):
    assert config_of(stack_values()).release_channel.value == "RAPID"


@pytest.mark.parametrize("environment", ["staging", "production"])
def test_rapid_gets_no_default_exclusion_as_xpk_adds_none_there(
    stack_values, config_of, environment
):
    values = stack_values(environment=environment, cluster={"releaseChannel": "RAPID"})
    assert config_of(values).maintenance_exclusions == []


def test_an_empty_list_turns_the_default_exclusion_off(stack_values, config_of):
    values = stack_values(environment="production", cluster={"maintenance": {"exclusions": []}})
    assert config_of(values).maintenance_exclusions == []


def test_a_daily_window_of_four_hours_is_enough(stack_values, config_of):
    window = {"endTime": "2025-01-04T04:00:00Z", "recurrence": "FREQ=DAILY"}
    config = config_of(stack_values(cluster={"maintenance": {"window": window}}))
    assert config.cluster.maintenance.window.recurrence == "FREQ=DAILY"


def exclusion(**fields):
    return {"name": "hold", "startTime": SATURDAY, **fields}


BAD = [
    pytest.param(
        {"window": {"endTime": "2025-01-04T03:00:00Z"}},
        "cluster.maintenance.window.endTime",
        "'2025-01-04T03:00:00Z' is 3 hours after startTime '2025-01-04T00:00:00Z'; a window "
        "lasts at least 4 hours (GKE counts only stretches that long)",
        id="window-too-short",
    ),
    pytest.param(
        {"window": {"endTime": "2025-01-04T05:00:00Z", "recurrence": "FREQ=WEEKLY;BYDAY=SA,SU"}},
        "cluster.maintenance.window.recurrence",
        "'FREQ=WEEKLY;BYDAY=SA,SU' with 5-hour windows allows 40 hours in 32 days; GKE needs at "
        "least 48: add days or lengthen the window",
        id="under-48-hours-in-32-days",
    ),
    pytest.param(
        {"window": {"recurrence": "FREQ=MONTHLY"}},
        "cluster.maintenance.window.recurrence",
        "'FREQ=MONTHLY' is not a supported RRULE; use FREQ=DAILY or FREQ=WEEKLY;BYDAY=<days> "
        "with days from MO,TU,WE,TH,FR,SA,SU",
        id="unsupported-rrule",
    ),
    pytest.param(
        {"window": {"recurrence": "FREQ=WEEKLY;BYDAY=SA,SAT"}},
        "cluster.maintenance.window.recurrence",
        "'FREQ=WEEKLY;BYDAY=SA,SAT' is not a supported RRULE",
        id="bad-day",
    ),
    pytest.param(
        {"window": {"startTime": "2025-01-04 00:00"}},
        "cluster.maintenance.window.startTime",
        "'2025-01-04 00:00' is not an RFC 3339 UTC time such as '2025-01-04T00:00:00Z'",
        id="not-rfc3339-utc",
    ),
    pytest.param(
        {"exclusions": [exclusion()]},
        "cluster.maintenance.exclusions[0].endTime",
        "give exactly one of endTime and untilEndOfSupport",
        id="exclusion-without-end",
    ),
    pytest.param(
        {"exclusions": [exclusion(scope="NO_UPGRADES", untilEndOfSupport=True)]},
        "cluster.maintenance.exclusions[0].untilEndOfSupport",
        "GKE ends a NO_UPGRADES exclusion at a fixed time (at most 30 days); use endTime, or "
        "scope NO_MINOR_UPGRADES / NO_MINOR_OR_NODE_UPGRADES",
        id="no-upgrades-until-end-of-support",
    ),
    pytest.param(
        {"exclusions": [exclusion(scope="NO_UPGRADES", endTime="2025-02-04T00:00:01Z")]},
        "cluster.maintenance.exclusions[0].endTime",
        "'2025-02-04T00:00:01Z' is 31 days after startTime; a NO_UPGRADES exclusion lasts at "
        "most 30 days",
        id="no-upgrades-over-30-days",
    ),
    pytest.param(
        {"exclusions": [exclusion(endTime="2025-01-03T00:00:00Z")]},
        "cluster.maintenance.exclusions[0].endTime",
        "'2025-01-03T00:00:00Z' is not after startTime",
        id="ends-before-it-starts",
    ),
    pytest.param(
        {"exclusions": [exclusion(scope="NO_PATCHES", untilEndOfSupport=True)]},
        "cluster.maintenance.exclusions[0].scope",
        "NO_UPGRADES",
        id="unknown-scope",
    ),
    pytest.param(
        {"exclusions": [exclusion(untilEndOfSupport=True), exclusion(untilEndOfSupport=True)]},
        "cluster.maintenance.exclusions",
        "names must be unique; repeated: ['hold']",
        id="repeated-name",
    ),
    pytest.param(
        {"exclusions": [exclusion(name=f"e{i}", untilEndOfSupport=True) for i in range(21)]},
        "cluster.maintenance.exclusions",
        "21 exclusions; GKE allows at most 20",
        id="over-20-exclusions",
    ),
    pytest.param(
        {"window": {"startTime": "2025-06-30T23:59:60Z"}},
        "cluster.maintenance.window.startTime",
        "'2025-06-30T23:59:60Z' is not a valid time: second must be in 0..59",
        id="leap-second",
    ),
    pytest.param(
        {"window": {"endTime": "2025-02-30T04:00:00Z"}},
        "cluster.maintenance.window.endTime",
        "'2025-02-30T04:00:00Z' is not a valid time: day is out of range for month",
        id="february-30",
    ),
    pytest.param(
        {"exclusions": [exclusion(startTime="2025-01-01T24:00:00Z", untilEndOfSupport=True)]},
        "cluster.maintenance.exclusions[0].startTime",
        "'2025-01-01T24:00:00Z' is not a valid time: months run 01-12, hours 00-23, minutes and "
        "seconds 00-59",
        id="hour-24",
    ),
]


@pytest.mark.parametrize(("maintenance", "key", "message"), BAD)
def test_gke_limits_are_refused_naming_the_key(
    stack_values, config_error, maintenance, key, message
):
    error = config_error(stack_values(cluster={"maintenance": maintenance}))
    assert [issue.key for issue in error.issues] == [key]
    assert message in error.issues[0].message


def test_an_existing_cluster_takes_no_maintenance_settings(stack_values, config_error):
    values = stack_values(
        cluster={
            "existing": {"kubeconfigContext": "ctx"},
            "maintenance": {"exclusions": []},
        },
        scratchBucket={"name": "shared-scratch", "create": False},
    )
    values["cluster"].pop("deletionProtection")
    error = config_error(values)
    assert [issue.key for issue in error.issues] == ["cluster.maintenance"]
