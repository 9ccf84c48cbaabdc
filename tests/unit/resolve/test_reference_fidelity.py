"""The contract the offline plan answers for another stack's StackReference (``reference_reader``,
from the stack file) is, for many owner configs, exactly what that stack's own program exports
(its own offline plan's ``shared_cluster`` output): team and dedicated TPU pools, team CPU pools,
buckets, DNS, Kueue on and off with quotas, shared services, jobs that hold node pools, no
installs, fleet workers (tests/fleet_stacks.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.plan.engine import plan_file
from components.resolve.loader import reference_reader
from tests.fleet_stacks import worker, write
from tests.owner_stacks import OWNER, write_stacks


def _with(**changes: Any) -> dict[str, Any]:
    return copy.deepcopy(OWNER | changes)


_JOB = {"name": "train", "team": "platform", "pool": "v5p", "mode": "headless"}
_V6E = {"name": "v6e", "generation": "v6e", "topology": "2x2", "slices": 3}
_INFERENCE = {
    "name": "inf1",
    "team": "platform",
    "pool": "v6e",
    "mode": "inference",
    "image": "us-docker.pkg.dev/example/serve:1",
    "command": ["python3", "serve.py"],
    "resources": {"cpu": "8", "memory": "32Gi"},
}
OWNERS: dict[str, dict[str, Any]] = {
    "plain": _with(),
    "kube-dns": _with(cluster={"name": "lab", "deletionProtection": False, "dns": "kubeDns"}),
    "no-kueue": _with(addons={"kueue": {"enabled": False}}),
    "quotas": _with(
        addons={
            "kueue": {
                "enabled": True,
                "teamQuotas": [{"team": "platform", "chips": {"v5p-16": 8}, "borrowingLimit": 0}],
            }
        }
    ),
    "dedicated": _with(
        teams=[{"name": "platform", "isolation": "shared"}, {"name": "alpha"}],
        tpuPools=[
            {"name": "v5p", "accelerator": "v5p-16", "slices": 2},
            {"name": "v5p-alpha", "accelerator": "v5p-16", "slices": 1, "team": "alpha"},
        ],
        teamCpuPools=[{"team": "alpha", "machineType": "n2-standard-64"}],
    ),
    "buckets": _with(
        scratchBucket={"name": "lab-scratch-x"},
        dataBuckets=[{"name": "lab-datasets", "access": "read"}],
    ),
    "jobs-and-service": _with(
        workloads=[_JOB],
        sharedServices=[{"name": "shared", "team": "platform", "pool": "v5p"}],
    ),
    "held-node-pools": _with(
        tpuPools=[_V6E], addons={"kueue": {"enabled": False}}, workloads=[_INFERENCE]
    ),
    "no-installs": _with(
        addons={"kueue": {"enabled": False}, "jobset": {"install": False}},
    ),
}


def _agree(directory, name: str) -> None:
    exported = plan_file(name, directory).outputs
    assert "shared_cluster" in exported
    assert reference_reader(directory)(name) == {"shared_cluster": exported["shared_cluster"]}


@pytest.mark.parametrize("case", sorted(OWNERS))
def test_an_owner_is_read_as_its_own_program_exports_it(case, tmp_path):
    write_stacks(tmp_path, {"lab": OWNERS[case]})
    _agree(tmp_path, "lab")


@pytest.mark.parametrize(
    "changes",
    [{}, {"tpu-pathways:addons": {"kueue": {"enabled": True, "version": "v0.15.0"}}}],
    ids=["worker", "worker-kueue-version"],
)
def test_a_fleet_worker_is_read_as_its_own_program_exports_it(changes, tmp_path):
    values = worker("w1") | changes
    write(tmp_path, "w1", values)
    _agree(tmp_path, "w1")


# --- an owner or worker in conflict with another stack (review) ---------------------------------
# Planned whole (until fb269cc) its read_stack refused the conflict, and so the plan of every stack
# that read it; read from its file alone, the conflict went unseen by its readers.

SECOND_OWNER = "Pulumi.lab.yaml (with the other stacks of "


def _refused(directory, stack: str) -> str:
    from components.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        plan_file(stack, directory)
    return str(caught.value)


def test_a_team_stack_on_an_owner_in_conflict_is_refused_naming_the_owners_file(tmp_path):
    # a second owner of cluster 'lab' in project tpu-pathways-lab
    vision = {"owner": "lab", "teams": [{"name": "vision"}]}
    write_stacks(tmp_path, {"lab": OWNER, "lab2": OWNER, "vision": vision})
    error = _refused(tmp_path, "vision")
    assert SECOND_OWNER in error
    assert "stacks 'lab' and 'lab2' would both own cluster 'lab'" in error


def test_a_fleet_on_a_worker_sharing_its_project_is_refused_naming_the_workers_file(tmp_path):
    from tests.fleet_stacks import fleet

    write(tmp_path, "w1", worker("w1"))
    place = {"project": "tpu-w1", "region": "us-west4", "zone": "us-west4-a"}
    write(tmp_path, "other", worker("other", gcp=place))
    write(tmp_path, "fleet", fleet(["w1"]))
    error = _refused(tmp_path, "fleet")
    assert "Pulumi.w1.yaml (with the other stacks of " in error
    assert "would each create a cluster in project 'tpu-w1'" in error
