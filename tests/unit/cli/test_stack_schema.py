"""The stack file's JSON Schema (``docs/schema/stack.schema.json``): current, used by every
example stack's modeline, accepting them and flagging the mistakes an editor should."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from components.cli.stack_schema import MODELINE, SCHEMA_PATH, render

ROOT = Path(__file__).resolve().parents[3]
STACKS = sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads((ROOT / SCHEMA_PATH).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_committed_schema_is_current():
    assert (ROOT / SCHEMA_PATH).read_text() == render(), (
        "docs/schema/stack.schema.json is stale: run "
        "`python -m components stack-schema --out docs/schema/stack.schema.json`"
    )


def test_the_command_writes_it(tmp_path):
    out = tmp_path / "nested" / "stack.schema.json"
    done = subprocess.run(
        [sys.executable, "-m", "components", "stack-schema", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert out.read_text() == (ROOT / SCHEMA_PATH).read_text()


@pytest.mark.parametrize("path", STACKS, ids=lambda p: p.name)
def test_every_example_stack_names_the_schema_on_its_first_line(path):
    assert path.read_text().splitlines()[0] == MODELINE
    # the modeline's path, relative to the stack file, is the committed schema
    target = MODELINE.split("$schema=", 1)[1]
    assert (path.parent / target).resolve() == (ROOT / SCHEMA_PATH).resolve()


@pytest.mark.parametrize("path", STACKS, ids=lambda p: p.name)
def test_every_example_stack_is_valid_under_it(path, validator):
    errors = [e.message for e in validator.iter_errors(yaml.safe_load(path.read_text()))]
    assert errors == []


def _dev() -> dict:
    return yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())


def _messages(validator, document) -> list[str]:
    return sorted(e.message for e in validator.iter_errors(document))


def test_a_misspelled_key_is_flagged(validator):
    document = _dev()
    document["config"]["tpu-pathways:cluster"]["nmae"] = "pathways-dev"
    assert _messages(validator, document) == [
        "Additional properties are not allowed ('nmae' was unexpected)"
    ]


def test_an_unknown_key_of_the_namespace_is_flagged_and_other_namespaces_are_not(validator):
    document = _dev()
    document["config"]["gcp:project"] = "elsewhere"
    document["config"]["tpu-pathways:tpuPool"] = []
    assert _messages(validator, document) == [
        "'tpu-pathways:tpuPool' does not match any of the regexes: '^(?!tpu-pathways:)[^:]+:.+$'"
    ]


def test_a_wrong_type_and_a_missing_section_are_flagged(validator):
    document = _dev()
    document["config"]["tpu-pathways:tpuPools"][0]["slices"] = "two"
    del document["config"]["tpu-pathways:gcp"]
    assert _messages(validator, document) == [
        "'tpu-pathways:gcp' is a required property",
        "'two' is not of type 'integer'",
    ]


def test_secrets_must_be_encrypted_values(validator):
    document = _dev()
    document["config"]["tpu-pathways:secrets"] = {"token": {"secure": "v1:abc"}}
    assert _messages(validator, document) == []
    plain = copy.deepcopy(document)
    plain["config"]["tpu-pathways:secrets"] = {"token": "in the clear"}
    assert _messages(validator, plain) == ["'in the clear' is not of type 'object'"]


def test_a_fleet_stack_is_checked_against_the_fleet_keys(validator):
    document = yaml.safe_load((ROOT / "stacks" / "Pulumi.fleet.yaml").read_text())
    document["config"]["tpu-pathways:tpuPools"] = []  # a stack's key, not a fleet's
    assert _messages(validator, document) == [
        "'tpu-pathways:tpuPools' does not match any of the regexes: '^(?!tpu-pathways:)[^:]+:.+$'"
    ]


def test_field_docs_become_descriptions(validator):
    pools = validator.schema["$defs"]["TpuPoolConfig"]["properties"]
    assert pools["slices"]["description"] == (
        "Number of slices (a multislice of N is N node pools)."
    )
