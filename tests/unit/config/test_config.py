"""Stack config validation: every mistake names its key, the bad value and what is allowed."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from components.errors import ConfigError
from components.vocabulary import CapacityType, Environment, ReleaseChannel
from tests.helpers import assert_error_report, deep_merge, run_cli

Change = Callable[[dict[str, Any]], None]


def only_issue(error: ConfigError) -> tuple[str, str]:
    assert len(error.issues) == 1, str(error)
    return error.issues[0].key, error.issues[0].message


# --- valid configs --------------------------------------------------------------------------


def test_dev_values_parse(stack_values, config_of):
    config = config_of(stack_values())
    assert config.environment is Environment.DEV
    assert config.gcp.zone == "us-west4-a"
    assert config.cluster.deletion_protection is False
    assert config.release_channel is ReleaseChannel.RAPID  # XPK's default, in dev
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


# --- one mistake: its key, its value and what is allowed ---------------------------------


def _pool(**fields: Any) -> Change:
    """Set fields of the first TPU pool."""
    return lambda values: values["tpuPools"][0].update(fields)


def _merge(**overrides: Any) -> Change:
    """Deep-merge overrides into the values, as ``stack_values(**overrides)`` does."""
    return lambda values: values.update(deep_merge(values, overrides))


def _workload(**fields: Any) -> Change:
    """Add one training workload on the dev pool with these fields."""
    workload = {"name": "train", "pool": "v5e", "image": "python:3.12", "command": ["python"]}
    return lambda values: values.update(workloads=[{**workload, **fields}])


def _service(**fields: Any) -> Change:
    """Add one shared service on the dev pool with these fields."""
    return lambda values: values.update(
        sharedServices=[{"name": "shared", "pool": "v5e", **fields}]
    )


def _delete(*path: str | int) -> Change:
    def change(values: dict[str, Any]) -> None:
        *parents, last = path
        target: Any = values
        for step in parents:
            target = target[step]
        del target[last]

    return change


# One mistake each: (id, change to the dev values, the key reported, fragments of its message).
ONE_MISTAKE: list[tuple[str, Change, str, tuple[str, ...]]] = [
    # TPU pools
    (
        "bad topology",
        _pool(topology="4x5"),
        "tpuPools[0].topology",
        # XPK's v5e topologies
        ("'4x5' is not a v5e topology; valid: ", "2x4", "4x4", "4x8", "8x8", "8x16", "16x16"),
    ),
    (
        "bad topology in the second pool",
        lambda v: v["tpuPools"].append(
            {"name": "b", "generation": "v6e", "topology": "3x3", "allowUnlistedZone": True}
        ),
        "tpuPools[1].topology",
        ("'3x3'", "v6e", "2x2"),
    ),
    (
        "unknown generation",
        _pool(generation="v3"),
        "tpuPools[0].generation",
        ("'v3'", "v4", "v5e", "v5p", "v6e", "tpu7x", "tpu7"),
    ),
    (
        "unknown accelerator",
        lambda v: v["tpuPools"].__setitem__(0, {"name": "v5e", "accelerator": "v5litpod-16"}),
        "tpuPools[0].accelerator",
        ("'v5litpod-16'", "did you mean 'v5litepod-16'?"),
    ),
    (
        "zero slices",
        _pool(slices=0),
        "tpuPools[0].slices",
        ("0 is not allowed: slices must be from 1 to 256",),
    ),
    (
        "two capacity types",
        _pool(capacity={"spot": True, "reservation": "my-resv"}),
        "tpuPools[0].capacity",
        ("got spot, reservation", "onDemand, spot, reservation, flexStart"),
    ),
    (
        "bad reservation name",
        _pool(capacity={"reservation": "Bad_Name"}),
        "tpuPools[0].capacity.reservation",
        ("'Bad_Name'", "projects/<project>/reservations/<name>"),
    ),
    (
        "accelerator and generation",
        _pool(accelerator="v5litepod-8"),
        "tpuPools[0].accelerator",
        ("accelerator", "generation+topology", "not both"),
    ),
    (
        "generation without topology",
        _delete("tpuPools", 0, "topology"),
        "tpuPools[0].topology",
        ("required", "accelerator"),
    ),
    (
        "pool named like the CPU pool",
        _pool(name="cpu-np"),
        "tpuPools[0].name",
        ("'cpu-np'", "CPU pool"),
    ),
    ("pool name not a DNS label", _pool(name="V5E"), "tpuPools[0].name", ("'V5E'", "lowercase")),
    # unknown keys
    (
        "unknown top-level key",
        lambda v: v.__setitem__("tpuPool", v.pop("tpuPools")),
        "tpuPool",
        (
            "unknown key 'tpuPool'; did you mean 'tpuPools'?",
            "Allowed keys: environment, team, gcp, cluster, cpuPool, systemPool, tpuPools",
        ),
    ),
    (
        "unknown nested key",
        _merge(cluster={"relaseChannel": "RAPID"}),
        "cluster.relaseChannel",
        # and the keys cluster accepts
        ("unknown key 'relaseChannel'; did you mean 'releaseChannel'?", "deletionProtection"),
    ),
    (
        "unknown key in a list item",
        _pool(slice=2),
        "tpuPools[0].slice",
        ("did you mean 'slices'?", "topology"),
    ),
    (
        "unknown key in a list item's model",
        _pool(capacity={"spott": True}),
        "tpuPools[0].capacity.spott",
        ("did you mean 'spot'?", "onDemand, spot, reservation, flexStart"),
    ),
    (
        "unknown key without a close match",
        _merge(gcp={"zzzzzz": 1}),
        "gcp.zzzzzz",
        ("Allowed keys: project, region, zone.",),
    ),
    # CPU pool
    (
        "unknown CPU machine type",
        _merge(cpuPool={"machineType": "n9-standard-32"}),
        "cpuPool.machineType",
        ("'n9-standard-32'", "n2-standard", "custom"),
    ),
    (
        "CPU pool max below min",
        _merge(cpuPool={"minNodes": 5, "maxNodes": 3}),
        "cpuPool.maxNodes",
        ("3", "minNodes 5"),
    ),
    # GCP, cluster, network
    (
        "zone not in region",
        _merge(gcp={"zone": "us-east5-a"}),
        "gcp.zone",
        ("'us-east5-a'", "'us-west4'", "us-west4-X"),
    ),
    ("bad project ID", _merge(gcp={"project": "Bad"}), "gcp.project", ("'Bad'", "GCP project ID")),
    (
        "bad release channel",
        _merge(cluster={"releaseChannel": "FAST"}),
        "cluster.releaseChannel",
        ("'FAST'", "RAPID", "REGULAR", "STABLE"),
    ),
    (
        "bad environment",
        _merge(environment="prod"),
        "environment",
        ("'prod' is not allowed: environment is one of dev, staging or production",),
    ),
    (
        "overlapping CIDRs",
        _merge(cluster={"network": {"podsCidr": "10.0.0.0/16"}}),
        "cluster.network.podsCidr",
        ("'10.0.0.0/16'", "overlaps nodesCidr '10.0.0.0/20'"),
    ),
    (
        "CIDR with host bits",
        _merge(cluster={"network": {"servicesCidr": "10.8.0.1/20"}}),
        "cluster.network.servicesCidr",
        ("'10.8.0.1/20'", "CIDR"),
    ),
    (
        "MTU above the maximum",
        _merge(cluster={"network": {"mtu": 9000}}),
        "cluster.network.mtu",
        ("9000 is not allowed", "8896"),
    ),
    (
        "existing network without subnetwork",
        _merge(cluster={"network": {"existingNetwork": "shared-vpc"}}),
        "cluster.network.existingSubnetwork",
        ("required",),
    ),
    (
        "existing cluster without location",
        _merge(cluster={"existing": {"name": "xpk-cluster"}}),
        "cluster.existing.location",
        ("required",),
    ),
    # missing keys, wrong types
    ("missing section", _delete("gcp"), "gcp", ("required key is missing",)),
    ("missing nested key", _delete("gcp", "project"), "gcp.project", ("required key is missing",)),
    (
        "missing key in a list item",
        _delete("tpuPools", 0, "name"),
        "tpuPools[0].name",
        ("required key is missing",),
    ),
    ("wrong type", _merge(tpuPools="v5e"), "tpuPools", ("'v5e'", "list")),
    # prices, names and values of hostile size or shape
    (
        "price override that overflows",
        _merge(pricing={"tpuChipHour": {"v5e": {"onDemand": 1e308}}}),
        "pricing.tpuChipHour.v5e.onDemand",
        ("1e+308 is not a chip-hour price", "from 0 to 1000"),
    ),
    (
        "infinite price override",
        _merge(pricing={"tpuChipHour": {"v5e": {"spot": "inf"}}}),
        "pricing.tpuChipHour.v5e.spot",
        ("inf is not a chip-hour price", "from 0 to 1000"),
    ),
    (
        "env name over the bound",
        _workload(env={"A" * 300: "x"}),
        f"workloads[0].env['{'A' * 40}...(300 characters)']",
        ("has 300 characters; at most 256",),
    ),
    (
        "env name a YAML reader made of ON",
        _workload(env={"false": "x"}),
        "workloads[0].env.false",
        ("'false' is not allowed as a name", "quote the name"),
    ),
    (
        "secret name a YAML reader made of NULL",
        _merge(secrets={"null": "x"}),
        "secrets.null",
        ("'null' is not allowed as a name",),
    ),
    (
        "number under a credential name",
        _workload(env={"HF_TOKEN": 123456}),
        "workloads[0].env.HF_TOKEN",
        ("a number (value not shown) is not allowed", "{configSecret: NAME}"),
    ),
    # ranges GCP or GKE refuse (issue 22)
    (
        "IPv6 pod range",
        _merge(cluster={"network": {"podsCidr": "fd00::/64"}}),
        "cluster.network.podsCidr",
        ("'fd00::/64' is an IPv6 range", "are IPv4", "'10.0.0.0/20'"),
    ),
    (
        "loopback node range",
        _merge(cluster={"network": {"nodesCidr": "127.0.0.0/20"}}),
        "cluster.network.nodesCidr",
        ("'127.0.0.0/20' overlaps loopback (127.0.0.0/8)", "GCP refuses", "10.0.0.0/8"),
    ),
    (
        "link-local service range",
        _merge(cluster={"network": {"servicesCidr": "169.254.0.0/20"}}),
        "cluster.network.servicesCidr",
        ("'169.254.0.0/20' overlaps link-local (169.254.0.0/16)",),
    ),
    (
        "multicast pod range",
        _merge(cluster={"network": {"podsCidr": "224.0.0.0/14"}}),
        "cluster.network.podsCidr",
        ("overlaps multicast (224.0.0.0/4)",),
    ),
    (
        "'this network' node range",
        _merge(cluster={"network": {"nodesCidr": "0.0.0.0/20"}}),
        "cluster.network.nodesCidr",
        ("overlaps 'this network' (0.0.0.0/8)",),
    ),
    (
        "broadcast address in a range",
        _merge(cluster={"network": {"servicesCidr": "255.255.255.0/24"}}),
        "cluster.network.servicesCidr",
        ("overlaps the broadcast address (255.255.255.255/32)",),
    ),
    (
        "subnet range under GCP's minimum",
        _merge(cluster={"network": {"servicesCidr": "10.8.0.0/30"}}),
        "cluster.network.servicesCidr",
        ("'10.8.0.0/30' is smaller than a /29, GCP's smallest subnet range",),
    ),
    (
        "node range too small for the pools",  # 3 CPU + 3 system + 2 v5e hosts
        _merge(cluster={"network": {"nodesCidr": "10.0.0.0/29"}}),
        "cluster.network.nodesCidr",
        (
            "'10.0.0.0/29' has 4 node addresses (8 less the 4 GCP keeps in every subnet) but the "
            "pools may scale to 8 nodes; use a /28 or larger",
        ),
    ),
    (
        "pod range too small for the pools",
        _merge(cluster={"network": {"podsCidr": "10.4.0.0/24"}}),
        "cluster.network.podsCidr",
        (
            "'10.4.0.0/24' holds the Pod ranges of 1 node(s) (GKE gives each node a /24 at its "
            "default of 110 Pods per node) but the pools may scale to 8 nodes; use a /21",
        ),
    ),
    (
        "authorized networks that add up to the internet",
        _merge(cluster={"authorizedNetworks": [{"cidr": "0.0.0.0/1"}, {"cidr": "128.0.0.0/1"}]}),
        "cluster.authorizedNetworks",
        ("together these ranges cover 0.0.0.0/0", "whole internet", "DNS endpoint"),
    ),
    (
        "IPv6 authorized networks that add up to the internet",
        _merge(cluster={"authorizedNetworks": [{"cidr": "2002::/17"}, {"cidr": "2002:8000::/17"}]}),
        "cluster.authorizedNetworks",
        ("together these ranges cover 0.0.0.0/0 (2002::/17 (0.0.0.0/1 written as IPv6, 6to4)",),
    ),
    (
        "more authorized networks than GKE allows",
        _merge(cluster={"authorizedNetworks": [{"cidr": f"192.0.2.{i}/32"} for i in range(51)]}),
        "cluster.authorizedNetworks",
        ("51 ranges; GKE allows at most 50 authorized networks", "100 private"),
    ),
    (
        "existing network name with spaces",
        _merge(cluster={"network": {"existingNetwork": "my vpc", "existingSubnetwork": "s"}}),
        "cluster.network.existingNetwork",
        ("'my vpc' is not a VPC network name", "1-63 lowercase", "projects/<project>/global"),
    ),
    (
        "empty existing subnetwork name",
        _merge(cluster={"network": {"existingNetwork": "vpc", "existingSubnetwork": ""}}),
        "cluster.network.existingSubnetwork",
        ("'' is not a subnetwork name",),
    ),
    (
        "existing network path with a bad project",
        _merge(
            cluster={
                "network": {
                    "existingNetwork": "projects/Host/global/networks/vpc",
                    "existingSubnetwork": "s",
                }
            }
        ),
        "cluster.network.existingNetwork",
        ("'Host' is not a GCP project ID",),
    ),
    # names GCP or Kubernetes refuse or reserve (issue 22)
    (
        "project ID containing google",
        _merge(gcp={"project": "my-google-lab"}),
        "gcp.project",
        ("contains 'google'", "google, null, undefined, ssl"),
    ),
    (
        "bucket name close to google",
        _merge(scratchBucket={"name": "team-g00gle-scratch"}),
        "scratchBucket.name",
        ("'team-g00gle-scratch' is not a bucket name", "such as 'g00gle'"),
    ),
    (
        "reservation name longer than a label value",
        _pool(capacity={"reservation": "r" * 70}),
        "tpuPools[0].capacity.reservation",
        ("is not a reservation name (1-63 lowercase",),
    ),
    (
        "shared reservation in an invalid project",
        _pool(capacity={"reservation": "projects/Not_A_Project/reservations/r"}),
        "tpuPools[0].capacity.reservation",
        ("'Not_A_Project' is not a GCP project ID",),
    ),
    (
        "system pool named like a slice's node pool",
        _merge(systemPool={"name": "v5e-0"}),
        "systemPool.name",
        ("'v5e-0' is also the GKE node pool name of a slice of tpuPools[0]",),
    ),
    (
        "team named after a GKE-managed namespace",
        _merge(teams=[{"name": "gmp-public"}]),
        "teams[0].name",
        ("'gmp-public' is a system namespace", "gke-*/kube-*/gmp-*"),
    ),
    (
        "team quota for kube-system",
        _merge(addons={"kueue": {"teamQuotas": [{"team": "kube-system", "chips": {}}]}}),
        "addons.kueue.teamQuotas[0].team",
        ("'kube-system' is a system namespace",),
    ),
    (
        "team service account named default",
        _merge(teams=[{"name": "nlp", "serviceAccount": "default"}]),
        "teams[0].serviceAccount",
        ("'default' is the service account every pod of the namespace runs as",),
    ),
    # sizes Linux or the API server refuse (issue 22)
    (
        "NUL in a command argument",
        _workload(command=["python", "-c", "print(1)\x00rm -rf /"]),
        "workloads[0].command[2]",
        ("contains a NUL character", "\\x00"),
    ),
    (
        "command argument over Linux's limit",
        _workload(command=["python", "x" * 140_000]),
        "workloads[0].command[1]",
        ("is 140000 bytes", "over 131071 bytes (MAX_ARG_STRLEN)"),
    ),
    (
        "command arguments over the total bound",
        _workload(command=["python", *["x" * 100_000] * 3]),
        "workloads[0].command",
        ("the arguments total 300006 bytes; at most 262144",),
    ),
    (
        "flags of 1.6 MB",
        _workload(customComponents=[{"type": "worker", "flags": ["--x=" + "y" * 80_000] * 20}]),
        "workloads[0].customComponents[0].flags",
        ("the flags total 1600080 bytes; at most 262144",),
    ),
    (
        "NUL in a config secret",
        _merge(secrets={"pin": "12\x0034"}),
        "secrets.pin",
        ("contains a NUL character", "(value not shown)"),
    ),
    # values in the stack file's own terms, and no class of the schema named (review)
    (
        "null text",
        _merge(cluster={"name": None}),
        "cluster.name",
        ("null is not allowed: name is text, not null",),
    ),
    (
        "null number",
        _pool(slices=None),
        "tpuPools[0].slices",
        ("null is not allowed: slices is a whole number",),
    ),
    (
        "true for a mapping",
        _merge(addons={"jobset": True}),
        "addons.jobset",
        ("true is not allowed: jobset is a mapping with the keys version, manifestUrl",),
    ),
    (
        "mapping shown as YAML",
        _workload(env={"W": {"foo": "bar", "b": [None, True]}}),
        "workloads[0].env.W",
        ("{foo: 'bar', b: [null, true]} is not allowed: an env value is text",),
    ),
    (
        "text for secretsEncryption",
        _merge(cluster={"secretsEncryption": "x"}),
        "cluster.secretsEncryption",
        (
            "'x' is not allowed: secretsEncryption is a mapping with the keys kmsKey (e.g. "
            "secretsEncryption: {kmsKey: ...})",
        ),
    ),
    (
        "text for a secretKeyRef",
        _workload(env={"X": {"secretKeyRef": "a"}}),
        "workloads[0].env.X.secretKeyRef",
        (
            "text (value not shown) is not allowed: secretKeyRef is a mapping with the keys "
            "name, key (e.g. secretKeyRef: {name: ...})",
        ),
    ),
    (
        "number for a team",
        _merge(teams=[1]),
        "teams[0]",
        (
            "1 is not allowed: each teams entry is a mapping with the keys name, "
            "serviceAccount, group, resourceQuota, isolation, priorityClasses, buckets (e.g. "
            "teams: [{name: ...}])",
        ),
    ),
    (
        "text for the pools",
        _merge(tpuPools="v5e"),
        "tpuPools",
        ("'v5e' is not allowed: tpuPools is a list (e.g. tpuPools: [...])",),
    ),
    (
        "number in a command",
        _workload(command=[5]),
        "workloads[0].command[0]",
        ('5 is not allowed: each command entry is text; quote it: command: ["5"]',),
    ),
    # settings of an install that does not happen (review)
    (
        "Kueue version with Kueue off",
        _merge(addons={"kueue": {"enabled": False, "version": "v0.18.0"}}),
        "addons.kueue.version",
        (
            "'v0.18.0' is not used: addons.kueue.enabled is false, so this stack installs no "
            "Kueue; remove it",
        ),
    ),
    (
        "JobSet manifest without the install",
        _merge(addons={"jobset": {"install": False, "allowAnyManifestHost": True}}),
        "addons.jobset.allowAnyManifestHost",
        (
            "true is not used: addons.jobset.install is false, so this stack installs no "
            "JobSet; remove it",
        ),
    ),
    (
        "unknown config secret of a shared service",
        _service(customComponents=[{"type": "proxy_server", "env": {"K": {"configSecret": "x"}}}]),
        "sharedServices[0].customComponents[0].env.K",
        ("configSecret 'x' is not an entry of `secrets`",),
    ),
]


@pytest.mark.parametrize(
    ("change", "key", "fragments"),
    [case[1:] for case in ONE_MISTAKE],
    ids=[case[0] for case in ONE_MISTAKE],
)
def test_one_mistake_names_its_key_value_and_what_is_allowed(
    stack_values, config_error, change, key, fragments
):
    values = stack_values()
    change(values)
    reported_key, message = only_issue(config_error(values))
    assert reported_key == key
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def _config_model_names() -> set[str]:
    from pydantic import BaseModel

    from components.config.schema import StackConfig  # every model is reachable from it

    seen: set[str] = set()
    pending: list[type] = [StackConfig, BaseModel]
    while pending:
        model = pending.pop()
        seen.add(model.__name__)
        pending += model.__subclasses__()
    return seen - {"BaseModel"}


@pytest.mark.parametrize(
    "change",
    [
        _merge(cluster={"network": "x"}),
        _merge(cluster={"maintenance": 5}),
        _merge(cluster={"existing": [1]}),
        _merge(cluster={"secretsEncryption": "x"}),
        _merge(scratchBucket=True),
        _merge(waitForRunning="yes"),
        _merge(pricing=7),
        _merge(addons={"kueue": "on", "pathwaysJob": [1]}),
        _merge(teams=[{"name": "ml", "resourceQuota": "none"}]),
        _workload(resources="8", env={"X": {"secretKeyRef": "a"}}),
        _service(customComponents=["proxy_server"]),
    ],
    ids=[
        "network",
        "maintenance",
        "existing",
        "secretsEncryption",
        "scratchBucket",
        "waitForRunning",
        "pricing",
        "addons",
        "resourceQuota",
        "resources-and-secretKeyRef",
        "customComponents",
    ],
)
def test_a_wrong_type_for_a_mapping_names_no_class_of_the_schema(
    stack_values, config_error, change
):
    values = stack_values()
    change(values)
    error = config_error(values)
    classes = _config_model_names()
    assert {"SecretsEncryptionConfig", "SecretKeySelector", "NetworkConfig"} <= classes
    for issue in error.issues:
        assert "is a mapping" in issue.message, issue
        assert "instance of" not in issue.message, issue
        assert not [name for name in classes if name in issue.message], issue


def test_unknown_key_without_a_close_match_suggests_none(stack_values, config_error):
    _, message = only_issue(config_error(stack_values(gcp={"zzzzzz": 1})))
    assert "did you mean" not in message


@pytest.mark.parametrize("machine", ["ct4p-hightpu-4t", "tpu7x-standard-4t", "ct5lp-hightpu-4t"])
def test_a_tpu_machine_type_for_the_cpu_pool_is_refused(stack_values, config_error, machine):
    key, message = only_issue(config_error(stack_values(cpuPool={"machineType": machine})))
    assert key == "cpuPool.machineType"
    assert message == (
        f"{machine!r} is a TPU machine type; use a CPU machine type such as n2-standard-64"
    )


# --- TPU pools ------------------------------------------------------------------------------


def test_v4_and_ironwood_pools_are_accepted(config_of, stack_values):
    values = stack_values(
        tpuPools=[
            {"name": "v4", "accelerator": "v4-16", "allowUnlistedZone": True},
            {"name": "iw", "generation": "tpu7x", "topology": "2x2x1", "allowUnlistedZone": True},
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
    values = stack_values(
        tpuPools=[{"name": "iw", "accelerator": "tpu7x-128", "allowUnlistedZone": True}]
    )
    shape = config_of(values).tpu_pools[0].shape
    assert (shape.topology, shape.machine_type, shape.hosts) == ("4x4x4", "tpu7x-standard-4t", 16)
    assert shape.needs_workload_policy is True


def test_duplicate_pool_names(stack_values, config_error):
    values = stack_values()
    values["tpuPools"].append({"name": "v5e", "accelerator": "v6e-4", "allowUnlistedZone": True})
    error = config_error(values)
    assert {i.key for i in error.issues} == {"tpuPools[0].name", "tpuPools[1].name"}
    for issue in error.issues:
        assert "'v5e'" in issue.message
        assert "more than one pool" in issue.message


def test_cpu_pool_too_small_names_machines_that_fit(stack_values, config_error):
    values = stack_values(cpuPool={"machineType": "n2-standard-32"})
    key, message = only_issue(config_error(values))
    assert key == "cpuPool.machineType"
    assert "'n2-standard-32'" in message
    assert "head pod" in message
    # n2-standard-32: 32000m - (60 + 10 + 2*5 + 28*2.5)m reserved = 31850m allocatable
    assert re.search(r"\b(31850m|31\.85) CPU\b", message)
    assert "would: n2-standard-64" in message


# --- several errors, error text ------------------------------------------------------------


def test_several_errors_reported_at_once(stack_values, config_error):
    values = stack_values(gcp={"zone": "us-east5-a"}, cluster={"relaseChannel": "RAPID"})
    values["tpuPools"][0]["topology"] = "4x5"
    values["tpuPools"].append(
        {"name": "b", "accelerator": "v5p-16", "slices": 0, "allowUnlistedZone": True}
    )
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


def test_cli_top_level_null_is_reported_as_null(tmp_path, capsys, registrations):
    # Pulumi hands a top-level null to the program as '': the file is where null still shows.
    text = BAD_STACK.replace("4x5", "2x4")
    text += "  tpu-pathways:team: null\n  tpu-pathways:environment: ~\n"
    text += "  tpu-pathways:pathwaysVersion:\n"
    (tmp_path / "Pulumi.nulls.yaml").write_text(text)
    code, out, err = run_cli(capsys, "plan", "--stack", "nulls", "--stacks-dir", str(tmp_path))
    assert (code, out, registrations) == (2, "", [])
    because = (
        "null is not allowed: Pulumi passes a top-level null to the program as empty text (''); "
        "remove the key to take its default, or give it a value"
    )
    assert err == (
        f"error: {tmp_path / 'Pulumi.nulls.yaml'}: 3 problems\n"
        f"  - tpu-pathways:team: {because}\n"
        f"  - tpu-pathways:environment: {because}\n"
        f"  - tpu-pathways:pathwaysVersion: {because}\n"
    )


@pytest.mark.parametrize("cidr", ["0.0.0.0/0", "::/0"])
def test_authorized_network_everywhere_is_refused(stack_values, config_error, cidr):
    values = stack_values(cluster={"authorizedNetworks": [{"cidr": cidr}]})
    key, message = only_issue(config_error(values))
    assert key == "cluster.authorizedNetworks[0].cidr"
    assert message.startswith(f"'{cidr}' would open the control plane's IP endpoint to the whole")


# --- sizes GKE and the API server refuse (issue 22) ------------------------------------------


def test_a_cluster_over_gkes_node_limit_is_refused_with_every_size_it_breaks(
    stack_values, config_error
):
    # v4-4096: 512 hosts a slice; 256 slices (131,072 hosts) + 3 CPU + 3 system nodes.
    values = stack_values(
        tpuPools=[
            {"name": "big", "accelerator": "v4-4096", "slices": 256, "allowUnlistedZone": True}
        ]
    )
    issues = {issue.key: issue.message for issue in config_error(values).issues}
    assert issues["tpuPools"].startswith(
        "the pools may scale to 131078 nodes (CPU pools' maxNodes plus the hosts of every TPU "
        "slice), over GKE's limit of 15000 nodes per Standard cluster"
    )
    assert issues["cluster.network.nodesCidr"].startswith(
        "'10.0.0.0/20' has 4092 node addresses (4096 less the 4 GCP keeps in every subnet)"
    )
    assert "holds the Pod ranges of 1024 node(s)" in issues["cluster.network.podsCidr"]
    assert issues["systemPool.machineType"].startswith(
        "the JobSet controller is sized for the 131078 nodes the pools may scale to and asks for "
        "157294 MiB of memory, but 'e2-standard-16'"
    )


def test_a_system_pool_too_small_for_the_jobset_controller_is_refused(stack_values, config_error):
    # 180 slices of 64 hosts + 3 + 2 nodes: 11525 nodes, 13830 MiB for the JobSet controller.
    values = stack_values(
        systemPool={"machineType": "e2-standard-4", "maxNodes": 2},
        tpuPools=[{"name": "v5e", "accelerator": "v5litepod-256", "slices": 180}],
        cluster={
            "network": {
                "nodesCidr": "10.64.0.0/16",
                "podsCidr": "10.128.0.0/9",
                "servicesCidr": "10.8.0.0/20",
            }
        },
    )
    key, message = only_issue(config_error(values))
    assert key == "systemPool.machineType"
    assert message.startswith(
        "the JobSet controller is sized for the 11525 nodes the pools may scale to and asks for "
        "13830 MiB of memory, but 'e2-standard-4' leaves "
    )
    assert message.endswith(
        "so the controller would never be scheduled; use a system pool machine type with more "
        "memory, or fewer nodes"
    )


def test_a_pathwaysjob_over_the_object_limit_is_refused_with_its_size(stack_values, config_error):
    # Every part within its own bound (32 KiB per env value, 256 KiB per list), the whole over
    # the API server's 1.5 MiB.
    arg, value = "a" * 120_000, "v" * 32_000
    env = {f"V{i}": value for i in range(7)}
    components = [
        {"type": kind, "flags": [f"--f={arg}", f"--g={arg}"], "env": env}
        for kind in ("pathways_server", "worker", "proxy_server", "colocated_python_sidecar")
    ]
    workload = {
        "name": "big",
        "pool": "v5e",
        "image": "python:3.12",
        "command": ["python", arg, arg],
        "env": env,
        "customComponents": components,
    }
    key, message = only_issue(config_error(stack_values(workloads=[workload])))
    assert key == "workloads[0]"
    assert re.fullmatch(
        r"the PathwaysJob would be about (\d+) bytes \(its spec is \d+\), over the API server's "
        r"object limit of 1572864 bytes \(1\.5 MiB\), and so would the JobSet the controller makes "
        r"of it; shorten command, flags and env \(put large data in a file on the scratch bucket "
        r"or a ConfigMap\)",
        message,
    ), message
    assert int(re.match(r"\D+(\d+)", message)[1]) > 2_000_000


def test_derived_names_that_fit_are_unchanged_and_long_ones_stay_distinct():
    from components.vocabulary import default_bucket_name, node_account_id

    # the example stacks' names fit: unchanged
    assert node_account_id("pathways-research") == "pathways-research-nodes"
    assert (
        default_bucket_name("tpu-pathways-research", "pathways-research")
        == "tpu-pathways-research-pathways-research-pathways"
    )
    # 40-character cluster names that share 24: a 30-character account ID each, not one
    assert node_account_id("a" * 39 + "x") == "aaaaaaaaaaaaaaaaa-bf691d-nodes"
    assert node_account_id("a" * 39 + "y") == "aaaaaaaaaaaaaaaaa-7d4b39-nodes"
    assert len(default_bucket_name("p" * 30, "c" * 40)) == 63


# --- team ResourceQuotas the team's own workloads could never fit -----------------------------

_QUOTA_JOB = {"name": "train", "pool": "v5e", "image": "example.com/t:1", "command": ["t"]}


@pytest.mark.parametrize(
    ("quota", "expected"),
    [
        (
            {"cpu": 1000},
            [
                "teams[0].resourceQuota.cpu: 1000 would refuse the team's Pathways worker pods, "
                "which request no CPU or memory (a quota on requests refuses every pod that does "
                "not make one); remove it and bound pods or tpuChips instead"
            ],
        ),
        (
            # v5e 2x4 on 4-chip hosts: 2 hosts, 8 chips, 3 pods with the head
            {"tpuChips": 4, "pods": 2},
            [
                "teams[0].resourceQuota.tpuChips: 4 is less than workload 'train' needs at once "
                "(8: its head and 2 worker pod(s) on 1 slice(s) of pool 'v5e'); it would never "
                "start",
                "teams[0].resourceQuota.pods: 2 is less than workload 'train' needs at once "
                "(3: its head and 2 worker pod(s) on 1 slice(s) of pool 'v5e'); it would never "
                "start",
            ],
        ),
    ],
)
def test_a_team_quota_its_own_workloads_cannot_fit_is_refused(
    stack_values, config_error, quota, expected
):
    values = stack_values(
        teams=[{"name": "pathways", "resourceQuota": quota}], workloads=[_QUOTA_JOB]
    )
    assert [str(i) for i in config_error(values).issues] == expected


def test_a_team_quota_that_fits_its_workloads_is_accepted(stack_values, config_of):
    quota = {"tpuChips": 8, "pods": 3}
    values = stack_values(
        teams=[{"name": "pathways", "resourceQuota": quota}], workloads=[_QUOTA_JOB]
    )
    assert config_of(values).teams[0].resource_quota.tpu_chips == 8
