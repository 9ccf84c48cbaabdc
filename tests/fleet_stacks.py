"""The stack files the fleet tests write (tests/unit/resolve/tenancy/test_fleet_*.py and
test_manager_dedicated_attacks.py): a dev worker with a shared v5e 2x4 slice, a v5e 2x4 slice
dedicated to team alpha and alpha's CPU pool; a staging fleet on the JobSet backend whose
manager is in us-central1. Tests change them with keyword arguments, never in place."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path

import pytest
import yaml

from components.errors import ConfigError
from components.plan.render import manifest
from components.resolve.loader import reference_reader
from components.resolve.tenancy.fleet import load_fleet

V5E = "tpu-v5-lite-podslice-2x4-4t"
"""The Kueue flavor of the workers' v5e 2x4 pools."""
KEY = "tpu-pathways:"


def worker(name: str, **changes) -> dict:
    """Worker stack ``name``'s config; ``changes``: top-level keys replaced (without the
    ``tpu-pathways:`` prefix)."""
    config = {
        "environment": "dev",
        "gcp": {"project": f"tpu-{name}", "region": "us-west4", "zone": "us-west4-a"},
        "cluster": {"name": name, "deletionProtection": False, "kubernetesTokensViaDns": True},
        "cpuPool": {"machineType": "n2-standard-64", "minNodes": 1, "maxNodes": 3},
        "tpuPools": [
            {"name": "v5e", "generation": "v5e", "topology": "2x4", "slices": 1},
            {
                "name": "v5e-alpha",
                "generation": "v5e",
                "topology": "2x4",
                "slices": 1,
                "team": "alpha",
            },
        ],
        "teams": [{"name": "alpha"}, {"name": "beta"}],
        "teamCpuPools": [{"team": "alpha", "machineType": "n2-standard-64"}],
        "addons": {"kueue": {"enabled": True}},
    }
    return {KEY + k: copy.deepcopy(v) for k, v in (config | changes).items()}


def fleet(
    workers: Sequence[str],
    teams: Sequence[dict] = ({"name": "alpha"}, {"name": "beta"}),
    workloads: Sequence[dict] = (),
    **manager: str,
) -> dict:
    """A fleet stack's config on ``workers``; ``manager``: keys added to the manager's."""
    place = {"project": "tpu-pathways-fleet", "region": "us-central1", "zone": "us-central1-a"}
    config = {
        "environment": "staging",
        "workloadBackend": "jobset",
        "fleet": {"workers": list(workers), "manager": place | manager},
        "teams": [dict(t) for t in teams],
    }
    if workloads:
        config["workloads"] = [dict(w) for w in workloads]
    return {KEY + k: v for k, v in config.items()}


def write(stacks: Path, name: str, config: dict) -> None:
    """``stacks/Pulumi.<name>.yaml`` with ``config``."""
    (stacks / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump({"config": config}))


def refusal(stacks: Path) -> list[tuple[str, str]]:
    """(key, message) of each problem the fleet stack of ``stacks`` is refused with."""
    with pytest.raises(ConfigError) as caught:
        load_fleet("fleet", reference_reader(stacks), stacks)
    return [(i.key, i.message) for i in caught.value.issues]


def kueue_manifests(plan) -> list[dict]:
    """Every Kueue object of the plan, as its manifest."""
    return [
        m
        for r in plan.resources
        if r.is_kubernetes_object and (m := manifest(r))["apiVersion"].startswith("kueue.x-k8s.io/")
    ]


def kueue_objects(plan, kind: str) -> dict[str, dict]:
    """The plan's Kueue objects of ``kind`` by name (LocalQueues by namespace)."""
    return {
        m["metadata"]["name"] if kind != "LocalQueue" else m["metadata"]["namespace"]: m
        for r in plan.resources
        if r.is_kubernetes_object and (m := manifest(r))["kind"] == kind
    }


# Alpha's fleet on rvwa and rvwb (test_fleet_dedicated, test_manager_dedicated_attacks): one
# workload on alpha's dedicated pool.
DEDICATED_FLEET = fleet(
    ["rvwa", "rvwb"],
    workloads=[
        {
            "name": "a1",
            "team": "alpha",
            "pool": "v5e-alpha",
            "mode": "headless",
            "pathwaysDir": "gs://fleet-shared/a1",
        }
    ],
)


def write_all(stacks: Path, config: dict = DEDICATED_FLEET, **workers: dict) -> None:
    """The fleet stack (``config``) and its workers rvwa and rvwb (``worker``, or as given)."""
    for name in ("rvwa", "rvwb"):
        write(stacks, name, workers.get(name, worker(name)))
    write(stacks, "fleet", config)
