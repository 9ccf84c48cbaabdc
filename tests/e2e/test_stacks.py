"""Every stack file in stacks/ plans end to end and provisions what the file asks for.

Expectations come from the stack file itself (read here as plain YAML) and, for TPU shapes,
from XPK 1.16's table (tests/data/xpk_1_16_tpu_shapes.json), never from the code under test.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.errors import ConfigError
from components.plan.engine import plan_file
from tests import plan_cache
from tests.examples import EXAMPLE_STACKS, EXAMPLES_DIR, SHIPPED_DIR, user_stacks
from tests.helpers import is_fleet_stack

TESTS = Path(__file__).resolve().parents[1]
STACKS_DIR = EXAMPLES_DIR
# Fleets build their manager from fleet.manager: tests/e2e/test_fleet_stack.py covers them.
STACK_FILES = [
    p
    for p in sorted(STACKS_DIR.glob("Pulumi.*.yaml"))
    if not is_fleet_stack(p.name.removeprefix("Pulumi.").removesuffix(".yaml"))
]
XPK_NAMES: dict[str, dict] = json.loads((TESTS / "data" / "xpk_1_16_tpu_shapes.json").read_text())[
    "names"
]
XPK_PREFIX = {"v5e": "v5litepod", "v5p": "v5p", "v6e": "v6e"}
MACHINE_PREFIX = {"v5e": "ct5lp-", "v5p": "ct5p-", "v6e": "ct6e-"}

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
CPU_COMPONENT = "tpu-pathways:nodepool:CpuNodePool"
TPU_COMPONENT = "tpu-pathways:nodepool:TpuNodePool"


def stack_name(path: Path) -> str:
    return path.name.removeprefix("Pulumi.").removesuffix(".yaml")


def file_values(path: Path) -> dict[str, Any]:
    config = yaml.safe_load(path.read_text())["config"]
    prefix = "tpu-pathways:"
    return {k.removeprefix(prefix): v for k, v in config.items() if k.startswith(prefix)}


def creates_nothing_cluster_wide(values: dict[str, Any]) -> bool:
    """A team stack (owner:) or a stack on a cluster made elsewhere (cluster.existing)."""
    return "owner" in values or "existing" in values["cluster"]


def expected_slice(pool: dict[str, Any]) -> tuple[str, int, str]:
    """(machine type, hosts, topology) of one slice of a pool, from XPK's table or GKE's rule
    for named machine types (hosts = chips / the machine's '-<N>t' chip count)."""
    if pool.get("machineType"):
        chips = math.prod(int(d) for d in pool["topology"].split("x"))
        per_host = int(re.fullmatch(r".*-(\d+)t", pool["machineType"]).group(1))
        return pool["machineType"], chips // per_host, pool["topology"]
    name = pool.get("accelerator") or f"{XPK_PREFIX[pool['generation']]}-{pool['topology']}"
    if name not in XPK_NAMES:
        pytest.fail(f"no known answer for TPU pool {pool}: extend expected_slice()")
    entry = XPK_NAMES[name]
    return entry["machine_type"], entry["vms_per_slice"], entry["topology"]


@pytest.fixture(scope="module", params=STACK_FILES, ids=stack_name)
def stack(request, example_plan):
    path: Path = request.param
    return file_values(path), example_plan(stack_name(path))


def test_there_are_stacks():
    assert len(STACK_FILES) >= 3


def test_stack_plans(stack):
    _, plan = stack
    assert plan.resources
    assert plan.outputs["kubeconfig"] == "[secret]"
    assert len({r.urn for r in plan.resources}) == len(plan.resources)


def test_cluster(stack):
    values, plan = stack
    clusters = plan.by_type(CLUSTER)
    if creates_nothing_cluster_wide(values):
        assert clusters == []
        return
    cluster_cfg = values["cluster"]
    (cluster,) = clusters
    gcp = values["gcp"]
    assert cluster.inputs["name"] == cluster_cfg["name"]
    assert cluster.inputs["project"] == gcp["project"]
    if cluster_cfg.get("regional", True):
        assert cluster.inputs["location"] == gcp["region"]
        assert cluster.inputs["nodeLocations"] == [gcp["zone"]]
    else:
        assert cluster.inputs["location"] == gcp["zone"]
    assert cluster.inputs["deletionProtection"] is cluster_cfg.get("deletionProtection", True)
    assert cluster.inputs["releaseChannel"]["channel"] == cluster_cfg.get("releaseChannel", "RAPID")
    assert ("privateClusterConfig" in cluster.inputs) is cluster_cfg.get("privateNodes", False)
    production = values.get("environment") == "production"
    assert cluster.options.get("protect", False) is production


def test_cpu_pool(stack):
    values, plan = stack
    if creates_nothing_cluster_wide(values):
        return
    cpu = values.get("cpuPool", {})
    pools = [r for r in plan.by_type(NODE_POOL) if f"${CPU_COMPONENT}::" in (r.parent or "")]
    # the shared CPU pool; the teams' own (teamCpuPools) run as their accounts, tainted
    # NoExecute (a pod bound to one of their nodes at creation is refused there too)
    dedicated = {p.get("name", f"{p['team']}-cpu"): p for p in values.get("teamCpuPools", [])}
    for pool in [p for p in pools if p.inputs["name"] in dedicated]:
        team = dedicated[pool.inputs["name"]]["team"]
        assert pool.inputs["nodeConfig"]["taints"] == [
            {"key": "tpu-pathways/dedicated-to", "value": team, "effect": "NO_EXECUTE"}
        ]
        assert f"-{team}-nodes@" in pool.inputs["nodeConfig"]["serviceAccount"]
    (pool,) = [p for p in pools if p.inputs["name"] not in {"system-np", *dedicated}]
    assert pool.inputs["name"] == cpu.get("name", "cpu-np")
    assert pool.inputs["nodeConfig"]["machineType"] == cpu.get("machineType", "n2-standard-64")
    assert pool.inputs["autoscaling"] == {
        "minNodeCount": cpu.get("minNodes", 1),
        "maxNodeCount": cpu.get("maxNodes", 20),
    }


def test_one_node_pool_per_slice(stack):
    values, plan = stack
    tpu_pools = [r for r in plan.by_type(NODE_POOL) if f"${TPU_COMPONENT}::" in (r.parent or "")]
    if creates_nothing_cluster_wide(values):
        assert tpu_pools == []
        return
    (cluster,) = plan.by_type(CLUSTER)
    by_name = {r.inputs["name"]: r for r in tpu_pools}
    expected_names = []
    production = values.get("environment") == "production"
    for pool in values.get("tpuPools", []):
        machine, hosts, topology = expected_slice(pool)
        capacity = pool.get("capacity", {})
        for index in range(pool.get("slices", 1)):
            name = f"{pool['name']}-{index}"
            expected_names.append(name)
            resource = by_name[name]
            inputs = resource.inputs
            assert resource.name == f"{values['cluster']['name']}-{name}"
            assert inputs["nodeConfig"]["machineType"] == machine
            assert inputs["nodeLocations"] == [values["gcp"]["zone"]]
            if capacity.get("flexStart"):
                assert "nodeCount" not in inputs
                assert inputs["autoscaling"]["totalMaxNodeCount"] == hosts
            else:
                assert inputs["nodeCount"] == hosts
            if hosts > 1:
                assert inputs["placementPolicy"] == {"type": "COMPACT", "tpuTopology": topology}
            else:
                assert "placementPolicy" not in inputs
            if capacity.get("spot"):
                assert inputs["nodeConfig"]["spot"] is True
            if capacity.get("reservation"):
                affinity = inputs["nodeConfig"]["reservationAffinity"]
                assert affinity["values"] == [capacity["reservation"]]
            assert cluster.urn in resource.dependencies
            assert resource.options.get("protect", False) is production
    assert sorted(by_name) == sorted(expected_names)


def test_tpu_summary(stack):
    values, plan = stack
    if creates_nothing_cluster_wide(values):
        return
    totals: dict[str, dict[str, int]] = {}
    for pool in values.get("tpuPools", []):
        machine, hosts, topology = expected_slice(pool)
        generation = next(g for g, prefix in MACHINE_PREFIX.items() if machine.startswith(prefix))
        row = totals.setdefault(generation, {"pools": 0, "slices": 0, "hosts": 0, "chips": 0})
        slices = pool.get("slices", 1)
        row["pools"] += 1
        row["slices"] += slices
        row["hosts"] += slices * hosts
        row["chips"] += slices * math.prod(int(d) for d in topology.split("x"))
    assert plan.summary["tpu"] == totals


def test_the_declared_examples_are_the_shipped_stack_files():
    """tests/examples.py names exactly the stack files git tracks in stacks/ (outside a git
    checkout: each declared one exists)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "stacks/Pulumi.*.yaml"],
            cwd=SHIPPED_DIR.parent,
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        listed = []
    declared = [f"stacks/Pulumi.{name}.yaml" for name in sorted(EXAMPLE_STACKS)]
    if listed:
        assert sorted(listed) == declared
    assert all((SHIPPED_DIR.parent / path).is_file() for path in declared)


@pytest.mark.parametrize("name", user_stacks())
def test_your_own_stack_file_plans(name):
    """A stack file of yours in stacks/ is planned too; it fails this test only, and only for
    its own problems."""
    try:  # (tests/e2e/test_user_stacks.py's inner run reads the plan its outer run made)
        plan_cache.plan_of_file(name, SHIPPED_DIR, lambda: plan_file(name, SHIPPED_DIR))
    except ConfigError as exc:
        pytest.fail(
            f"stacks/Pulumi.{name}.yaml is a stack file of your own (not one of the examples "
            f"tests/examples.py declares), and it does not plan yet:\n{exc}",
            pytrace=False,
        )
