"""Every example stack plans with ``workloadBackend: jobset``, except where a workload's colocated
(``inference``) mode is refused with a clear message; switched, a stack that owns its cluster
installs no PathwaysJob controller and every JobSet validates against the pinned JobSet CRD.
Which stacks are refused is read from the stack files (their workloads' ``mode``), never from the
code under test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from components.errors import ConfigError
from components.plan.diff import diff_plans
from components.plan.engine import plan_file
from components.plan.render import manifest
from tests.crd_schema import crd_schema_errors
from tests.examples import EXAMPLE_STACKS
from tests.helpers import STACKS_DIR, stack_file_values

JOBSET = "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"
PATHWAYS_JOB = "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob"
CONTROLLER_URL = "https://github.com/google/pathways-job/releases/download/v0.1.4/install.yaml"
SCHEMA = Path(__file__).resolve().parents[1] / "data" / "jobset-v0.10.1-openapi-schema.json"
STACKS = list(EXAMPLE_STACKS)


@pytest.fixture(scope="module")
def switched(tmp_path_factory) -> Path:
    """A copy of stacks/ with every stack file set to the JobSet backend."""
    directory = tmp_path_factory.mktemp("stacks")
    for path in STACKS_DIR.glob("Pulumi.*.yaml"):
        document = yaml.safe_load(path.read_text())
        document["config"]["tpu-pathways:workloadBackend"] = "jobset"
        (directory / path.name).write_text(yaml.safe_dump(document))
    return directory


@pytest.fixture(scope="module")
def jobset_errors():
    return crd_schema_errors(json.loads(SCHEMA.read_text()))


def colocated(stack: str) -> list[int]:
    """Indexes of the stack file's inference workloads."""
    workloads = stack_file_values(stack).get("workloads", [])
    return [i for i, w in enumerate(workloads) if w.get("mode") == "inference"]


def test_one_example_stack_is_refused_and_the_rest_plan():
    assert [s for s in STACKS if colocated(s)] == ["serving-v6e"]


@pytest.mark.parametrize("stack", [s for s in STACKS if colocated(s)])
def test_colocated_workloads_are_refused_naming_the_workload_key_and_way_out(switched, stack):
    with pytest.raises(ConfigError) as caught:
        plan_file(stack, switched)
    workloads = stack_file_values(stack)["workloads"]
    assert [i.key for i in caught.value.issues] == [
        f"workloads[{i}].mode" for i in colocated(stack)
    ]
    for index, issue in zip(colocated(stack), caught.value.issues, strict=True):
        assert f"workload {workloads[index]['name']!r} runs as a JobSet" in issue.message
        assert "XPK 1.16 dropped colocated mode" in issue.message
        assert f"set workloads[{index}].backend: pathwaysjob" in issue.message
        assert "use mode training or headless" in issue.message


@pytest.mark.parametrize("stack", [s for s in STACKS if not colocated(s)])
def test_every_other_stack_plans_as_jobsets(switched, jobset_errors, stack):
    plan = plan_file(stack, switched)
    values = stack_file_values(stack)
    jobs = len(values.get("workloads", [])) + len(values.get("sharedServices", []))
    jobsets = plan.by_type(JOBSET)
    assert len(jobsets) == jobs
    assert plan.by_type(PATHWAYS_JOB) == []
    installs = {r.inputs.get("file") for r in plan.by_type("kubernetes:yaml/v2:ConfigFile")}
    assert CONTROLLER_URL not in installs
    for jobset in jobsets:
        assert jobset_errors(manifest(jobset)) == [], jobset.name
        assert jobset.options.get("replaceOnChanges") == ["spec"]
        assert jobset.options.get("deleteBeforeReplace") is True


def test_switching_a_stack_shows_each_job_removed_and_added(switched, example_plan):
    """plan --diff keys resources by URN, and the URN carries the type: the PathwaysJob goes and
    the JobSet of the same logical name comes; the controller install goes with them."""
    diff = diff_plans(example_plan("dev"), plan_file("dev", switched))
    kinds = {(c.kind, c.type, c.urn.rpartition("::")[2]) for c in diff.resources}
    for name in ("pathways-dev-pathways-hello-train", "pathways-dev-pathways-notebook"):
        assert ("remove", PATHWAYS_JOB, name) in kinds
        assert ("add", JOBSET, name) in kinds
    assert ("remove", "kubernetes:yaml/v2:ConfigFile", "pathways-dev-pathways-job") in kinds
