"""Every JobSet the JobSet backend renders validates against the CRD of the pinned JobSet release
(tests/data/jobset-v0.10.1-openapi-schema.json, from the release's manifests.yaml by
scripts/refresh_crd_schemas.py), strictly: unknown fields are errors, as on the API server."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from components.config.schema import JobSetAddon
from components.pathways.jobset import render_jobset
from tests.crd_schema import crd_schema_errors
from tests.jobset_shapes import NAMESPACE, SHAPES

SCHEMA_FILE = (
    Path(__file__).resolve().parents[1]
    / "data"
    / f"jobset-{JobSetAddon().version}-openapi-schema.json"
)


@pytest.fixture(scope="module")
def jobset_errors():
    return crd_schema_errors(json.loads(SCHEMA_FILE.read_text()))


def test_schema_file_is_the_pinned_release_with_the_fields_the_backend_uses():
    schema = json.loads(SCHEMA_FILE.read_text())
    assert "kubernetes-sigs/jobset" in schema["$comment"] and "v0.10.1" in schema["$comment"]
    assert "manifests.yaml" in schema["$comment"]
    spec = schema["properties"]["spec"]["properties"]
    assert spec["failurePolicy"]["properties"]["restartStrategy"]["enum"] == [
        "Recreate",
        "BlockingRecreate",
    ]
    assert spec["startupPolicy"]["properties"]["startupPolicyOrder"]["enum"] == [
        "AnyOrder",
        "InOrder",
    ]
    assert sorted(spec["network"]["properties"]) == [
        "enableDNSHostnames",
        "publishNotReadyAddresses",
        "subdomain",
    ]
    assert spec["coordinator"]["required"] == ["replicatedJob"]


@pytest.mark.parametrize("shape_name", sorted(SHAPES))
def test_rendered_jobsets_validate_against_the_crd(shape_name, jobset_errors):
    shape = SHAPES[shape_name]
    manifest = render_jobset(shape.name, NAMESPACE, shape.spec, **shape.render)
    assert jobset_errors(manifest) == []
    # plan --out writes YAML: plain types only (a str subclass would make safe_dump refuse it)
    assert yaml.safe_load(yaml.safe_dump(manifest)) == manifest


def test_the_check_catches_a_misplaced_field(jobset_errors):
    shape = SHAPES["v5p-16x2"]
    manifest = render_jobset(shape.name, NAMESPACE, shape.spec)
    broken = copy.deepcopy(manifest)
    broken["spec"]["replicatedJobs"][1]["replicas"] = "2"
    broken["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]["hostNetwrok"] = (
        True
    )
    errors = jobset_errors(broken)
    assert any("'2' is not of type 'integer'" in e for e in errors), errors
    assert any("hostNetwrok" in e for e in errors), errors
