"""Stack config validation: every mistake names its key, the bad value and what is allowed."""

from __future__ import annotations

import re

import pytest

from components.errors import ConfigError
from components.stack.schema import CapacityType, Environment, ReleaseChannel
from tests.helpers import assert_error_report, run_cli


def only_issue(error: ConfigError) -> tuple[str, str]:
    assert len(error.issues) == 1, str(error)
    return error.issues[0].key, error.issues[0].message


# --- valid configs --------------------------------------------------------------------------


def test_dev_values_parse(stack_values, config_of):
    config = config_of(stack_values())
    assert config.environment is Environment.DEV
    assert config.gcp.zone == "us-west4-a"
    assert config.cluster.deletion_protection is False
    assert config.cluster.release_channel is ReleaseChannel.RAPID  # XPK's default
    assert config.cpu_pool.machine_type == "n2-standard-64"
    (pool,) = config.tpu_pools
    assert pool.capacity.type is CapacityType.SPOT
    assert pool.node_pool_names() == ["v5e-0"]


def test_defaults(stack_values, config_of):
    values = stack_values()
    del values["cpuPool"]
    del values["cluster"]["deletionProtection"]
    values["tpuPools"] = [{"name": "a", "accelerator": "v5litepod-16"}]
    config = config_of(values)
    assert config.cluster.deletion_protection is True
    assert config.cluster.regional is True
    assert config.cluster.network.mtu == 8896
    # XPK's CPU pool: cpu-np, n2-standard-64, autoscaling 1..20
    assert (config.cpu_pool.name, config.cpu_pool.machine_type) == ("cpu-np", "n2-standard-64")
    assert (config.cpu_pool.min_nodes, config.cpu_pool.max_nodes) == (1, 20)
    assert config.tpu_pools[0].capacity.type is CapacityType.ON_DEMAND
    assert config.tpu_pools[0].slices == 1


def test_config_is_immutable(stack_values, config_of):
    config = config_of(stack_values())
    with pytest.raises(ValueError):
        config.team = "other"


@pytest.mark.parametrize(
    ("capacity", "kind"),
    [
        ({}, CapacityType.ON_DEMAND),
        ({"onDemand": True}, CapacityType.ON_DEMAND),
        ({"spot": True}, CapacityType.SPOT),
        ({"spot": False}, CapacityType.ON_DEMAND),
        ({"reservation": "my-resv"}, CapacityType.RESERVATION),
        ({"reservation": "projects/other-proj/reservations/r1"}, CapacityType.RESERVATION),
        ({"flexStart": True}, CapacityType.FLEX_START),
    ],
)
def test_capacity_types(stack_values, config_of, capacity, kind):
    values = stack_values()
    values["tpuPools"][0]["capacity"] = capacity
    assert config_of(values).tpu_pools[0].capacity.type is kind


# --- TPU pool errors ------------------------------------------------------------------------


def test_bad_topology_names_key_value_and_valid_topologies(stack_values, config_error):
    values = stack_values()
    values["tpuPools"][0]["topology"] = "4x5"
    key, message = only_issue(config_error(values))
    assert key == "tpuPools[0].topology"
    assert message.startswith("'4x5' is not a v5e topology; valid: ")
    for topology in ("2x4", "4x4", "4x8", "8x8", "8x16", "16x16"):  # XPK's v5e topologies
        assert topology in message


def test_bad_topology_in_second_pool_is_located(stack_values, config_error):
    values = stack_values()
    values["tpuPools"].append({"name": "b", "generation": "v6e", "topology": "3x3"})
    key, message = only_issue(config_error(values))
    assert key == "tpuPools[1].topology"
    assert "'3x3'" in message
    assert "v6e" in message
    assert "2x2" in message


def test_unknown_generation(stack_values, config_error):
    values = stack_values()
    values["tpuPools"][0]["generation"] = "v3"
    key, message = only_issue(config_error(values))
    assert key == "tpuPools[0].generation"
    assert "'v3'" in message
    for generation in ("v4", "v5e", "v5p", "v6e", "tpu7x", "tpu7"):
        assert generation in message


def test_v4_and_ironwood_pools_are_accepted(config_of, stack_values):
    values = stack_values(
        tpuPools=[
            {"name": "v4", "accelerator": "v4-16"},
            {"name": "iw", "generation": "tpu7x", "topology": "2x2x1"},
        ]
    )
    pools = {p.name: p.shape for p in config_of(values).tpu_pools}
    assert (pools["v4"].topology, pools["v4"].machine_type, pools["v4"].hosts) == (
        "2x2x2",
        "ct4p-hightpu-4t",
        2,
    )
    assert (pools["iw"].machine_type, pools["iw"].accelerator_label) == (
        "tpu7x-standard-4t",
        "tpu7x",
    )


def test_a_multi_host_ironwood_pool_is_accepted(stack_values, config_of):
    # tpu7x-128 = 64 chips = 4x4x4 on 16 four-chip hosts; placed with a workload policy.
    values = stack_values(tpuPools=[{"name": "iw", "accelerator": "tpu7x-128"}])
    shape = config_of(values).tpu_pools[0].shape
    assert (shape.topology, shape.machine_type, shape.hosts) == ("4x4x4", "tpu7x-standard-4t", 16)
    assert shape.needs_workload_policy is True


def test_a_tpu_machine_type_for_the_cpu_pool_is_refused(stack_values, config_error):
    for machine in ("ct4p-hightpu-4t", "tpu7x-standard-4t", "ct5lp-hightpu-4t"):
        values = stack_values(cpuPool={"machineType": machine})
        key, message = only_issue(config_error(values))
        assert key == "cpuPool.machineType"
        assert message == (
            f"{machine!r} is a TPU machine type; use a CPU machine type such as n2-standard-64"
        )


def test_unknown_accelerator_hints_a_close_name(stack_values, config_error):
    values = stack_values()
    values["tpuPools"][0] = {"name": "v5e", "accelerator": "v5litpod-16"}
    key, message = only_issue(config_error(values))
    assert key == "tpuPools[0].accelerator"
    assert "'v5litpod-16'" in message
    assert "did you mean 'v5litepod-16'?" in message


def test_zero_slices(stack_values, config_error):
    values = stack_values()
    values["tpuPools"][0]["slices"] = 0
    key, message = only_issue(config_error(values))
    assert key == "tpuPools[0].slices"
    assert message.startswith("0 ")
    assert "greater than or equal to 1" in message


def test_two_capacity_types(stack_values, config_error):
    values = stack_values()
    values["tpuPools"][0]["capacity"] = {"spot": True, "reservation": "my-resv"}
    key, message = only_issue(config_error(values))
    assert key == "tpuPools[0].capacity"
    assert "got spot, reservation" in message
    assert "onDemand, spot, reservation, flexStart" in message


def test_bad_reservation_name(stack_values, config_error):
    values = stack_values()
    values["tpuPools"][0]["capacity"] = {"reservation": "Bad_Name"}
    key, message = only_issue(config_error(values))
    assert key == "tpuPools[0].capacity.reservation"
    assert "'Bad_Name'" in message
    assert "projects/<project>/reservations/<name>" in message


def test_accelerator_and_generation_both_given(stack_values, config_error):
    values = stack_values()
    values["tpuPools"][0]["accelerator"] = "v5litepod-8"
    key, message = only_issue(config_error(values))
    assert key == "tpuPools[0].accelerator"
    assert "accelerator" in message
    assert "generation+topology" in message
    assert "not both" in message


def test_generation_without_topology(stack_values, config_error):
    values = stack_values()
    del values["tpuPools"][0]["topology"]
    key, message = only_issue(config_error(values))
    assert key == "tpuPools[0].topology"
    assert "required" in message
    assert "accelerator" in message


def test_duplicate_pool_names(stack_values, config_error):
    values = stack_values()
    values["tpuPools"].append({"name": "v5e", "accelerator": "v6e-4"})
    error = config_error(values)
    assert {i.key for i in error.issues} == {"tpuPools[0].name", "tpuPools[1].name"}
    for issue in error.issues:
        assert "'v5e'" in issue.message
        assert "more than one pool" in issue.message


def test_tpu_pool_named_like_cpu_pool(stack_values, config_error):
    values = stack_values()
    values["tpuPools"][0]["name"] = "cpu-np"
    key, message = only_issue(config_error(values))
    assert key == "tpuPools[0].name"
    assert "'cpu-np'" in message
    assert "CPU pool" in message


def test_pool_name_must_be_a_dns_label(stack_values, config_error):
    values = stack_values()
    values["tpuPools"][0]["name"] = "V5E"
    key, message = only_issue(config_error(values))
    assert key == "tpuPools[0].name"
    assert "'V5E'" in message
    assert "lowercase" in message


# --- unknown keys ---------------------------------------------------------------------------


def test_unknown_top_level_key(stack_values, config_error):
    values = stack_values()
    values["tpuPool"] = values.pop("tpuPools")
    key, message = only_issue(config_error(values))
    assert key == "tpuPool"
    assert "unknown key 'tpuPool'; did you mean 'tpuPools'?" in message
    assert "Allowed keys: environment, team, gcp, cluster, cpuPool, systemPool, tpuPools" in message


def test_unknown_nested_key(stack_values, config_error):
    values = stack_values(cluster={"relaseChannel": "RAPID"})
    key, message = only_issue(config_error(values))
    assert key == "cluster.relaseChannel"
    assert "unknown key 'relaseChannel'; did you mean 'releaseChannel'?" in message
    assert "deletionProtection" in message  # lists the keys cluster accepts


def test_unknown_key_in_list_item(stack_values, config_error):
    values = stack_values()
    values["tpuPools"][0]["slice"] = 2
    key, message = only_issue(config_error(values))
    assert key == "tpuPools[0].slice"
    assert "did you mean 'slices'?" in message
    assert "topology" in message


def test_unknown_key_inside_list_item_model(stack_values, config_error):
    values = stack_values()
    values["tpuPools"][0]["capacity"] = {"spott": True}
    key, message = only_issue(config_error(values))
    assert key == "tpuPools[0].capacity.spott"
    assert "did you mean 'spot'?" in message
    assert "onDemand, spot, reservation, flexStart" in message


def test_unknown_key_without_close_match_lists_allowed(stack_values, config_error):
    values = stack_values(gcp={"zzzzzz": 1})
    key, message = only_issue(config_error(values))
    assert key == "gcp.zzzzzz"
    assert "did you mean" not in message
    assert "Allowed keys: project, region, zone." in message


# --- CPU pool -------------------------------------------------------------------------------


def test_cpu_pool_too_small_names_machines_that_fit(stack_values, config_error):
    values = stack_values(cpuPool={"machineType": "n2-standard-32"})
    key, message = only_issue(config_error(values))
    assert key == "cpuPool.machineType"
    assert "'n2-standard-32'" in message
    assert "head pod" in message
    # n2-standard-32: 32000m - (60 + 10 + 2*5 + 28*2.5)m reserved = 31850m allocatable
    assert re.search(r"\b(31850m|31\.85) CPU\b", message)
    assert "would: n2-standard-64" in message


def test_unknown_cpu_machine_type(stack_values, config_error):
    values = stack_values(cpuPool={"machineType": "n9-standard-32"})
    key, message = only_issue(config_error(values))
    assert key == "cpuPool.machineType"
    assert "'n9-standard-32'" in message
    assert "n2-standard" in message
    assert "custom" in message


def test_cpu_pool_max_below_min(stack_values, config_error):
    values = stack_values(cpuPool={"minNodes": 5, "maxNodes": 3})
    key, message = only_issue(config_error(values))
    assert key == "cpuPool.maxNodes"
    assert "3" in message
    assert "minNodes 5" in message


# --- GCP, cluster, network ------------------------------------------------------------------


def test_zone_not_in_region(stack_values, config_error):
    values = stack_values(gcp={"zone": "us-east5-a"})
    key, message = only_issue(config_error(values))
    assert key == "gcp.zone"
    assert "'us-east5-a'" in message
    assert "'us-west4'" in message
    assert "us-west4-X" in message


def test_bad_project_id(stack_values, config_error):
    values = stack_values(gcp={"project": "Bad"})
    key, message = only_issue(config_error(values))
    assert key == "gcp.project"
    assert "'Bad'" in message
    assert "GCP project ID" in message


def test_bad_release_channel_lists_allowed(stack_values, config_error):
    values = stack_values(cluster={"releaseChannel": "FAST"})
    key, message = only_issue(config_error(values))
    assert key == "cluster.releaseChannel"
    assert "'FAST'" in message
    for channel in ("RAPID", "REGULAR", "STABLE"):
        assert channel in message


def test_bad_environment_lists_allowed(stack_values, config_error):
    key, message = only_issue(config_error(stack_values(environment="prod")))
    assert key == "environment"
    assert "'prod'" in message
    assert "'dev', 'staging' or 'production'" in message


def test_overlapping_cidrs(stack_values, config_error):
    values = stack_values(cluster={"network": {"podsCidr": "10.0.0.0/16"}})
    key, message = only_issue(config_error(values))
    assert key == "cluster.network.podsCidr"
    assert "'10.0.0.0/16'" in message
    assert "overlaps nodesCidr '10.0.0.0/20'" in message


def test_cidr_with_host_bits(stack_values, config_error):
    values = stack_values(cluster={"network": {"servicesCidr": "10.8.0.1/20"}})
    key, message = only_issue(config_error(values))
    assert key == "cluster.network.servicesCidr"
    assert "'10.8.0.1/20'" in message
    assert "CIDR" in message


def test_mtu_above_maximum(stack_values, config_error):
    values = stack_values(cluster={"network": {"mtu": 9000}})
    key, message = only_issue(config_error(values))
    assert key == "cluster.network.mtu"
    assert message.startswith("9000 ")
    assert "8896" in message


def test_existing_network_needs_subnetwork(stack_values, config_error):
    values = stack_values(cluster={"network": {"existingNetwork": "shared-vpc"}})
    key, message = only_issue(config_error(values))
    assert key == "cluster.network.existingSubnetwork"
    assert "required" in message


def test_existing_cluster_name_needs_location(stack_values, config_error):
    values = stack_values(cluster={"existing": {"name": "xpk-cluster"}})
    key, message = only_issue(config_error(values))
    assert key == "cluster.existing.location"
    assert "required" in message


# --- missing keys, several errors, error text ----------------------------------------------


def test_missing_section(stack_values, config_error):
    values = stack_values()
    del values["gcp"]
    assert only_issue(config_error(values)) == ("gcp", "required key is missing")


def test_missing_nested_key(stack_values, config_error):
    values = stack_values()
    del values["gcp"]["project"]
    assert only_issue(config_error(values)) == ("gcp.project", "required key is missing")


def test_missing_key_in_list_item(stack_values, config_error):
    values = stack_values()
    del values["tpuPools"][0]["name"]
    assert only_issue(config_error(values)) == ("tpuPools[0].name", "required key is missing")


def test_wrong_type(stack_values, config_error):
    key, message = only_issue(config_error(stack_values(tpuPools="v5e")))
    assert key == "tpuPools"
    assert "'v5e'" in message
    assert "list" in message


def test_several_errors_reported_at_once(stack_values, config_error):
    values = stack_values(gcp={"zone": "us-east5-a"}, cluster={"relaseChannel": "RAPID"})
    values["tpuPools"][0]["topology"] = "4x5"
    values["tpuPools"].append({"name": "b", "accelerator": "v5p-16", "slices": 0})
    error = config_error(values)
    assert [i.key for i in error.issues] == [
        "gcp.zone",
        "cluster.relaseChannel",
        "tpuPools[0].topology",
        "tpuPools[1].slices",
    ]
    text = str(error)
    assert text.startswith("stack config: 4 problems\n")
    for issue in error.issues:
        assert f"\n  - {issue.key}: {issue.message}" in text


def test_cpu_pool_too_small_reported_with_tpu_errors(stack_values, config_error):
    values = stack_values(cpuPool={"machineType": "n2-standard-32"})
    values["tpuPools"][0]["topology"] = "4x5"
    error = config_error(values)
    assert {i.key for i in error.issues} == {"cpuPool.machineType", "tpuPools[0].topology"}


def test_single_problem_header(stack_values, config_error):
    error = config_error(stack_values(gcp={"zone": "us-east5-a"}))
    assert str(error).startswith("stack config: 1 problem\n  - gcp.zone: ")


# --- a bad config never reaches the engine (CLI) --------------------------------------------

BAD_STACK = """\
config:
  tpu-pathways:gcp:
    project: tpu-pathways-dev
    region: us-west4
    zone: us-west4-a
  tpu-pathways:cluster:
    name: pathways-dev
  tpu-pathways:tpuPools:
    - name: v5e
      generation: v5e
      topology: 4x5
"""


def test_cli_bad_config_exits_2_without_registering(tmp_path, capsys, registrations):
    (tmp_path / "Pulumi.bad.yaml").write_text(BAD_STACK)
    code, out, err = run_cli(capsys, "plan", "--stack", "bad", "--stacks-dir", str(tmp_path))
    assert code == 2
    assert out == ""
    assert registrations == []
    assert_error_report(err)
    assert err.startswith("error: Pulumi.bad.yaml (tpu-pathways:): 1 problem")
    assert "tpuPools[0].topology: '4x5' is not a v5e topology; valid: 2x4" in err


def test_cli_good_config_in_same_dir_registers(tmp_path, capsys, registrations):
    # The control for the test above: the same file with a valid topology plans.
    (tmp_path / "Pulumi.good.yaml").write_text(BAD_STACK.replace("4x5", "2x4"))
    code, out, err = run_cli(capsys, "plan", "--stack", "good", "--stacks-dir", str(tmp_path))
    assert (code, err) == (0, "")
    assert ("gcp:container/nodePool:NodePool", "pathways-dev-v5e-0") in registrations
    assert "Plan for stack 'good'" in out


def test_cli_invalid_yaml_exits_2(tmp_path, capsys, registrations):
    (tmp_path / "Pulumi.broken.yaml").write_text("config:\n  tpu-pathways:gcp: [unclosed\n")
    code, out, err = run_cli(capsys, "plan", "--stack", "broken", "--stacks-dir", str(tmp_path))
    assert code == 2
    assert out == ""
    assert registrations == []
    assert "not valid YAML" in err
    assert_error_report(err)


def test_cli_unknown_key_in_stack_file(tmp_path, capsys):
    text = BAD_STACK.replace("4x5", "2x4") + "  tpu-pathways:cpuPol:\n    minNodes: 1\n"
    (tmp_path / "Pulumi.typo.yaml").write_text(text)
    code, _, err = run_cli(capsys, "plan", "--stack", "typo", "--stacks-dir", str(tmp_path))
    assert code == 2
    assert "cpuPol: unknown key 'cpuPol'; did you mean 'cpuPool'?" in err


@pytest.mark.parametrize("cidr", ["0.0.0.0/0", "::/0"])
def test_authorized_network_everywhere_is_refused(stack_values, config_error, cidr):
    values = stack_values(cluster={"authorizedNetworks": [{"cidr": cidr}]})
    key, message = only_issue(config_error(values))
    assert key == "cluster.authorizedNetworks[0].cidr"
    assert message.startswith(f"'{cidr}' would open the control plane's IP endpoint to the whole")
