"""The Pulumi YAML and TypeScript examples use the package as its schema says.

The YAML example's resources and properties are validated against the committed
``provider/schema.json`` turned into a JSON Schema (types, enums, required and unknown keys);
the TypeScript example is checked structurally (no TypeScript SDK can be generated here: that
needs the Pulumi CLI).
"""

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "provider" / "schema.json").read_text())
YAML_PROGRAM = yaml.safe_load((ROOT / "examples" / "yaml" / "Pulumi.yaml").read_text())
TS_DIR = ROOT / "examples" / "typescript"
PACKAGE = SCHEMA["name"]
# A Pulumi YAML interpolation: the whole value is one `${...}` (an output or config value).
INTERPOLATION = re.compile(r"^\$\{[^}]+\}$")

_SCALARS = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean"}


def json_schema(prop: dict[str, Any]) -> dict[str, Any]:
    """A package schema property as a JSON Schema; a non-plain property also takes `${...}`."""
    if "$ref" in prop:
        converted: dict[str, Any] = {"$ref": "#/$defs/" + prop["$ref"].rsplit(":", 1)[1]}
    elif prop.get("type") == "array":
        converted = {"type": "array", "items": json_schema(prop["items"])}
    elif prop.get("type") == "object":
        converted = {
            "type": "object",
            "additionalProperties": json_schema(prop["additionalProperties"]),
        }
    else:
        converted = {"type": _SCALARS[prop["type"]]}
    if not prop.get("plain"):
        converted = {"anyOf": [converted, {"type": "string", "pattern": INTERPOLATION.pattern}]}
    return converted


def object_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: json_schema(p) for name, p in properties.items()},
        "required": required,
        "additionalProperties": False,
    }


def type_schema(definition: dict[str, Any]) -> dict[str, Any]:
    if "enum" in definition:
        return {"enum": [e["value"] for e in definition["enum"]]}
    return object_schema(definition.get("properties", {}), definition.get("required", []))


def resource_validator(token: str) -> jsonschema.Draft202012Validator:
    resource = SCHEMA["resources"][token]
    schema = object_schema(resource["inputProperties"], resource.get("requiredInputs", []))
    schema["$defs"] = {t.rsplit(":", 1)[1]: type_schema(d) for t, d in SCHEMA["types"].items()}
    return jsonschema.Draft202012Validator(schema)


def full_token(type_name: str) -> str:
    """`tpu-pathways:Cluster` (YAML's short form) or the full `tpu-pathways:index:Cluster`."""
    parts = type_name.split(":")
    return type_name if len(parts) == 3 else f"{parts[0]}:index:{parts[1]}"


PACKAGE_RESOURCES = {
    name: resource
    for name, resource in YAML_PROGRAM["resources"].items()
    if resource["type"].startswith(f"{PACKAGE}:")
}


def test_the_yaml_example_uses_every_component_and_both_backends():
    tokens = {full_token(r["type"]) for r in PACKAGE_RESOURCES.values()}
    assert tokens == set(SCHEMA["resources"])
    backends = {
        r["properties"].get("backend", "pathwaysjob")
        for r in PACKAGE_RESOURCES.values()
        if r["type"].endswith(":PathwaysWorkload")
    }
    assert backends == {"pathwaysjob", "jobset"}


def test_the_yaml_example_adds_the_package_from_this_repository():
    assert YAML_PROGRAM["runtime"] == "yaml"
    source = YAML_PROGRAM["packages"][PACKAGE]
    assert (ROOT / "examples" / "yaml" / source / "PulumiPlugin.yaml").is_file()
    readme = (ROOT / "examples" / "yaml" / "README.md").read_text()
    assert "pulumi package add ../../provider" in readme


@pytest.mark.parametrize("name", sorted(PACKAGE_RESOURCES))
def test_the_yaml_example_resource_is_valid_against_the_schema(name):
    resource = PACKAGE_RESOURCES[name]
    validator = resource_validator(full_token(resource["type"]))
    errors = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(resource["properties"])]
    assert errors == []


def test_the_check_catches_a_misspelled_key_a_wrong_type_and_a_bad_enum():
    resource = PACKAGE_RESOURCES["train"]
    validator = resource_validator("tpu-pathways:index:PathwaysWorkload")
    bad = {**resource["properties"], "slice": 2, "slices": "two", "backend": "argo"}
    del bad["accelerator"]
    assert sorted(e.message for e in validator.iter_errors(bad)) == [
        "'accelerator' is a required property",
        "'argo' is not one of ['pathwaysjob', 'jobset']",
        "'two' is not of type 'integer'",
        "Additional properties are not allowed ('slice' was unexpected)",
    ]


def test_the_check_refuses_an_output_where_the_value_must_be_plain():
    validator = resource_validator("tpu-pathways:index:PathwaysWorkload")
    properties = {**PACKAGE_RESOURCES["train"]["properties"], "namespace": "${team.namespace}"}
    assert [e.message for e in validator.iter_errors(properties)] == []  # a string still
    properties = {**PACKAGE_RESOURCES["train"]["properties"], "slices": "${pool.slices}"}
    assert [e.message for e in validator.iter_errors(properties)] == [
        "'${pool.slices}' is not of type 'integer'"
    ]


# --- TypeScript ---------------------------------------------------------------------------


def _ts() -> str:
    return (TS_DIR / "index.ts").read_text()


def test_the_typescript_example_links_the_generated_sdk():
    package = json.loads((TS_DIR / "package.json").read_text())
    assert package["dependencies"]["@pulumi/tpu-pathways"] == "file:sdks/tpu-pathways"
    project = yaml.safe_load((TS_DIR / "Pulumi.yaml").read_text())
    assert project["runtime"]["name"] == "nodejs"
    assert (TS_DIR / project["packages"][PACKAGE] / "PulumiPlugin.yaml").is_file()
    assert "pulumi package add ../../provider" in (TS_DIR / "README.md").read_text()
    assert 'from "@pulumi/tpu-pathways"' in _ts()


def _constructions(text: str) -> list[tuple[str, list[str]]]:
    """Each `new tpu.X("name", { ... })`: X and the keys at the top level of its args."""
    found = []
    for match in re.finditer(r"new tpu\.(\w+)\(\s*\"[^\"]+\",\s*\{", text):
        depth, keys, i, key = 1, [], match.end(), ""
        while depth:
            char = text[i]
            if char in "{[(":
                depth += 1
            elif char in "}])":
                depth -= 1
            elif depth == 1 and char == ":" and key.strip().isidentifier():
                keys.append(key.strip())
            key = "" if char in ",{\n" else key + char
            if char == ":" or (depth == 1 and char == ","):
                key = ""
            i += 1
        found.append((match.group(1), keys))
    return found


def test_the_typescript_finder_reads_a_construction():
    text = 'new tpu.Cluster("a", {\n    gcp: { project: "p" },\n    tpuPools: [{ name: "x" }],\n});'
    assert _constructions(text) == [("Cluster", ["gcp", "tpuPools"])]


def test_the_typescript_example_uses_schema_resources_and_inputs():
    constructions = _constructions(_ts())
    assert [name for name, _ in constructions] == ["Cluster", "PathwaysWorkload"]
    for name, keys in constructions:
        resource = SCHEMA["resources"][f"{PACKAGE}:index:{name}"]
        assert set(keys) <= set(resource["inputProperties"]), name
        assert set(resource["requiredInputs"]) <= set(keys), name
