"""Every PathwaysJob the project emits validates against the upstream v0.1.4 CRD schema
(tests/data/pathwaysjob-v0.1.4-openapi-schema.json, extracted from the release's install.yaml),
and `plan --out` writes them as applicable manifests."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from components.cli import main as cli
from tests.examples import EXAMPLE_STACKS
from tests.helpers import uses_jobset_backend

PATHWAYS_JOB = "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob"
SCHEMA_FILE = (
    Path(__file__).resolve().parents[1] / "data" / "pathwaysjob-v0.1.4-openapi-schema.json"
)


def documents(plan) -> dict[str, dict]:
    return {r.inputs["metadata"]["name"]: r.inputs for r in plan.by_type(PATHWAYS_JOB)}


# --- the schema file is what upstream v0.1.4 says -------------------------------------------


def test_schema_file_names_its_source_and_has_the_known_limits():
    schema = json.loads(SCHEMA_FILE.read_text())
    assert "google/pathways-job" in schema["$comment"]
    assert "v0.1.4" in schema["$comment"] and "install.yaml" in schema["$comment"]
    spec = schema["properties"]["spec"]
    assert sorted(spec["required"]) == ["controller", "workers"]
    assert spec["properties"]["workers"]["maxItems"] == 1
    assert spec["properties"]["customComponents"]["maxItems"] == 4
    worker = spec["properties"]["workers"]["items"]
    assert sorted(worker["required"]) == ["numSlices", "topology", "type"]
    assert worker["properties"]["type"]["enum"] == [
        "tpu7x-standard-4t",
        "ct6e-standard-4t",
        "ct6e-standard-8t",
        "ct5p-hightpu-4t",
        "ct5lp-hightpu-4t",
        "ct5lp-hightpu-8t",
        "ct4p-hightpu-4t",
    ]
    assert worker["properties"]["numSlices"]["format"] == "int32"
    controller = spec["properties"]["controller"]
    assert controller["required"] == ["deploymentMode"]
    assert sorted(controller["properties"]["deploymentMode"]["enum"]) == [
        "colocate_head_with_workers",
        "default",
    ]
    assert "containers" in controller["properties"]["template"]["properties"]["spec"]["required"]


# --- what the stacks emit -------------------------------------------------------------------


@pytest.mark.parametrize("stack", [s for s in list(EXAMPLE_STACKS) if not uses_jobset_backend(s)])
def test_every_example_stack_job_is_valid(example_plan, pathwaysjob_schema_errors, stack):
    jobs = documents(example_plan(stack))
    assert jobs
    for name, document in jobs.items():
        assert pathwaysjob_schema_errors(document) == [], name


@pytest.fixture(scope="module")
def rich(plan_of, stack_values):
    """Every workload feature at once: modes, priority, Kueue label, custom components, elastic
    settings, worker node selectors, metrics, a shared service."""
    return plan_of(
        stack_values(
            cpuPool={"maxNodes": 4},  # three heads and a node for one client of the service
            tpuPools=[
                {"name": "v5e", "generation": "v5e", "topology": "2x4", "slices": 2},
                {
                    "name": "v6e",
                    "generation": "v6e",
                    "topology": "2x2",
                    "slices": 2,
                    "allowUnlistedZone": True,
                },
                {"name": "v5p", "accelerator": "v5p-16", "allowUnlistedZone": True},
            ],
            addons={"kueue": {"enabled": True}},
            teams=[{"name": "ml", "serviceAccount": "trainer"}],
            workloads=[
                {
                    "name": "train",
                    "team": "ml",
                    "pool": "v5e",
                    "slices": 2,
                    "image": "python:3.12",
                    "command": ["python3", "train.py", "--steps=10"],
                    "env": {"LIBTPU_INIT_ARGS": "--xla_tpu_enable_async_collective_fusion=true"},
                    "priority": "very-high",
                    "maxRestarts": 2,
                    "maxSliceRestarts": 3,
                    "elasticSlices": 1,
                    "terminationGracePeriodSeconds": 300,
                    "pathwaysVersion": "jax-0.6.0",
                    "pathwaysDir": "gs://tpu-pathways-dev-pathways-dev-pathways/ml/runs/train",
                    "nodeSelector": {"tpu-pathways/pool": "v5e"},
                    "enableMetricsCollection": True,
                    "customComponents": [
                        {"type": "pathways_server", "flags": ["--v=1"], "env": {"A": "1"}},
                        {"type": "worker", "image": "example.com/worker:1"},
                        {"type": "proxy_server", "flags": ["--x"]},
                        {"type": "colocated_python_sidecar", "image": "example.com/s:1"},
                    ],
                },
                {"name": "notebook", "team": "ml", "pool": "v5p", "mode": "headless"},
            ],
            sharedServices=[{"name": "shared", "team": "ml", "pool": "v6e", "slices": 2}],
        )
    )


@pytest.fixture(scope="module")
def colocated(plan_of, stack_values):
    """Inference (head colocated with the workers); Kueue cannot queue it, so it is off."""
    return plan_of(
        stack_values(
            tpuPools=[
                {
                    "name": "v6e",
                    "generation": "v6e",
                    "topology": "2x2",
                    "slices": 2,
                    "allowUnlistedZone": True,
                }
            ],
            addons={"kueue": {"enabled": False}},
            workloads=[
                {
                    "name": "infer",
                    "pool": "v6e",
                    "mode": "inference",
                    "image": "python:3.12",
                    "command": ["python3", "serve.py"],
                    "resources": {"cpu": "500m", "memory": "2Gi"},
                },
            ],
        )
    )


def test_colocated_inference_emits_a_valid_job(colocated, pathwaysjob_schema_errors):
    (document,) = documents(colocated).values()
    assert document["spec"]["controller"]["deploymentMode"] == "colocate_head_with_workers"
    assert pathwaysjob_schema_errors(document) == []


def test_every_feature_emits_valid_jobs(rich, pathwaysjob_schema_errors):
    jobs = documents(rich)
    assert set(jobs) == {"train", "notebook", "shared"}
    for name, document in jobs.items():
        assert pathwaysjob_schema_errors(document) == [], name


# --- the validator does reject bad documents ------------------------------------------------


def bad_variants() -> list:
    base_worker = {"type": "ct5p-hightpu-4t", "topology": "2x2x2", "numSlices": 2}

    def job(**spec_changes) -> dict:
        spec = {"workers": [base_worker], "controller": {"deploymentMode": "default"}}
        spec.update(spec_changes)
        return {
            "apiVersion": "pathways-job.pathways.domain/v1",
            "kind": "PathwaysJob",
            "metadata": {"name": "bad", "namespace": "default"},
            "spec": spec,
        }

    return [
        pytest.param(
            job(workers=[base_worker, {**base_worker, "type": "ct6e-standard-4t"}]),
            "spec.workers: ",
            "is too long",
            id="2-workers",
        ),
        pytest.param(
            job(controller={"deploymentMode": "colocate"}),
            "spec.controller.deploymentMode: ",
            "is not one of",
            id="bad-deployment-mode",
        ),
        pytest.param(
            job(workers=[{**base_worker, "type": "v5p-16"}]),
            "spec.workers.0.type: ",
            "is not one of",
            id="bad-worker-type",
        ),
        pytest.param(
            job(workers=[{**base_worker, "numSlices": 2**31}]),
            "spec.workers.0.numSlices: ",
            "int32",
            id="num-slices-int32",
        ),
        pytest.param(
            job(maxRestarts=-(2**31) - 1), "spec.maxRestarts: ", "int32", id="max-restarts-int32"
        ),
        pytest.param(
            job(workers=[{"type": "ct5p-hightpu-4t", "numSlices": 1}]),
            "spec.workers.0: ",
            "'topology' is a required property",
            id="no-topology",
        ),
        pytest.param(
            job(controller={}),
            "spec.controller: ",
            "'deploymentMode' is a required",
            id="no-deployment-mode",
        ),
        pytest.param(
            job(capacityNodeSelector="a: b"),
            "spec: ",
            "'capacityNodeSelector' was unexpected",
            id="unknown-spec-field",
        ),
        pytest.param(
            job(customComponents=[{"componentType": "worker"}, {"componentType": "worker"}]),
            "spec.customComponents: ",
            "duplicate",
            id="duplicate-component-type",
        ),
        pytest.param(
            job(customComponents=[{"componentType": "worker"}] * 5),
            "spec.customComponents: ",
            "is too long",
            id="five-components",
        ),
        pytest.param(
            job(controller={"deploymentMode": "default", "template": {"spec": {}}}),
            "spec.controller.template.spec: ",
            "'containers' is a required",
            id="template-without-containers",
        ),
        pytest.param(
            job(
                controller={
                    "deploymentMode": "default",
                    "template": {"spec": {"containers": [{"name": "main", "image": 3}]}},
                }
            ),
            "spec.controller.template.spec.containers.0.image: ",
            "not of type",
            id="container-image-not-a-string",
        ),
        pytest.param(
            job(
                controller={
                    "deploymentMode": "default",
                    "template": {
                        "spec": {
                            "containers": [
                                {"name": "main", "resources": {"limits": {"cpu": "lots"}}}
                            ]
                        }
                    },
                }
            ),
            "spec.controller.template.spec.containers.0.resources.limits.cpu: ",
            "does not match",
            id="bad-quantity",
        ),
    ]


@pytest.mark.parametrize(("document", "where", "what"), bad_variants())
def test_bad_documents_fail_validation(pathwaysjob_schema_errors, document, where, what):
    errors = pathwaysjob_schema_errors(document)
    assert any(e.startswith(where) and what in e for e in errors), errors


def test_a_valid_base_passes(pathwaysjob_schema_errors):
    # the bad variants differ from this valid document in one place each
    document = {
        "apiVersion": "pathways-job.pathways.domain/v1",
        "kind": "PathwaysJob",
        "metadata": {"name": "ok", "namespace": "default"},
        "spec": {
            "workers": [{"type": "ct5p-hightpu-4t", "topology": "2x2x2", "numSlices": 2}],
            "controller": {"deploymentMode": "default"},
            "maxRestarts": 2**31 - 1,
        },
    }
    assert pathwaysjob_schema_errors(document) == []
    broken = copy.deepcopy(document)
    broken["spec"]["maxRestarts"] = 2**31
    assert pathwaysjob_schema_errors(broken) != []


# --- plan --out -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stack", "files"),
    [
        ("dev", {"pathwaysjob-pathways-hello-train.yaml", "pathwaysjob-pathways-notebook.yaml"}),
        (
            "serving-v6e",
            {"pathwaysjob-serving-batch-infer.yaml", "pathwaysjob-default-shared-v6e.yaml"},
        ),
    ],
)
def test_plan_out_writes_the_pathways_jobs(
    tmp_path, capsys, pathwaysjob_schema_errors, stack, files
):
    out_dir = tmp_path / "manifests"
    code = cli.main(["plan", "--stack", stack, "--out", str(out_dir)])
    _, err = capsys.readouterr()
    assert code == 0, err
    written = {p.name for p in out_dir.glob("pathwaysjob-*.yaml")}
    assert written == files
    for name in files:
        document = yaml.safe_load((out_dir / name).read_text())
        assert document["apiVersion"] == "pathways-job.pathways.domain/v1"
        assert document["kind"] == "PathwaysJob"
        assert document["metadata"]["namespace"] in name
        assert document["metadata"]["name"] in name
        assert {"workers", "controller"} <= set(document["spec"])
        assert pathwaysjob_schema_errors(document) == [], name
