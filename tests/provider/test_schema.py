"""Pulumi's analyzer accepts the component package, and what it makes of it is the committed
``provider/schema.json``: a change to a component's args or outputs fails here until the schema
is regenerated. Also, the real plugin process serves that schema over gRPC."""

import json
import os
import select
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from tpu_pathways_provider import provider
from tpu_pathways_provider.schema import render

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "provider" / "schema.json"
REGENERATE = (
    "provider/schema.json is stale: run "
    "`cd provider && ../.venv/bin/python -m tpu_pathways_provider.schema > schema.json`"
)


@pytest.fixture(scope="module")
def schema() -> dict:
    return json.loads(SCHEMA.read_text())


def test_the_committed_schema_is_what_the_analyzer_makes_of_the_components():
    assert SCHEMA.read_text() == render(), REGENERATE


def test_the_package_has_the_four_components(schema):
    assert sorted(schema["resources"]) == [
        "tpu-pathways:index:Cluster",
        "tpu-pathways:index:PathwaysWorkload",
        "tpu-pathways:index:TeamTenant",
        "tpu-pathways:index:TpuSlicePool",
    ]
    assert schema["name"] == "tpu-pathways"
    assert schema["version"] == version("tpu-pathways")


def test_required_inputs_are_the_ones_without_a_default(schema):
    resources = schema["resources"]
    assert resources["tpu-pathways:index:TpuSlicePool"]["requiredInputs"] == [
        "clusterName",
        "gcp",
        "pool",
    ]
    assert resources["tpu-pathways:index:Cluster"]["requiredInputs"] == ["cluster", "gcp"]
    assert resources["tpu-pathways:index:PathwaysWorkload"]["requiredInputs"] == [
        "accelerator",
        "kubeconfig",
        "name",
        "namespace",
        "pathwaysDir",
    ]


def test_only_the_kubeconfig_takes_an_output(schema):
    """Every other input decides names or catalog lookups when the component is constructed."""
    not_plain = sorted(
        f"{token.rsplit(':', 1)[1]}.{name}"
        for token, resource in schema["resources"].items()
        for name, prop in resource["inputProperties"].items()
        if not prop.get("plain")
    )
    assert not_plain == ["PathwaysWorkload.kubeconfig", "TeamTenant.kubeconfig"]


def test_enums_are_the_project_values(schema):
    backend = schema["types"]["tpu-pathways:index:WorkloadBackend"]
    assert [e["value"] for e in backend["enum"]] == ["pathwaysjob", "jobset"]
    modes = schema["types"]["tpu-pathways:index:WorkloadMode"]
    assert [e["value"] for e in modes["enum"]] == ["training", "inference", "headless"]


def test_the_schema_names_no_provider_version():
    """No resource references into pulumi-gcp or pulumi-kubernetes: their installed versions
    would go into the schema and change it on every provider upgrade."""
    text = SCHEMA.read_text()
    assert "/gcp/" not in text and "/kubernetes/" not in text
    assert json.loads(text)["dependencies"] == []


def test_no_type_name_collides_with_generated_sdk_names(schema):
    """SDKs name a component's inputs <Component>Args and a type T's inputs TArgs."""
    types = {t.rsplit(":", 1)[1] for t in schema["types"]}
    components = {r.rsplit(":", 1)[1] for r in schema["resources"]}
    assert not {t for t in types if t.endswith("Args")}
    assert not types & components


def test_the_plugin_process_serves_the_committed_schema(tmp_path):
    """Start the plugin as Pulumi does (`python provider/ <engine address>`) and ask it."""
    import grpc
    from google.protobuf import empty_pb2
    from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc

    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    errors = tmp_path / "plugin.stderr"
    server = subprocess.Popen(
        [sys.executable, "-u", str(ROOT / "provider"), "127.0.0.1:1"],
        stdout=subprocess.PIPE,
        stderr=errors.open("w"),
        cwd=tmp_path,
        env=env,
    )
    try:
        ready, _, _ = select.select([server.stdout], [], [], 60)
        line = server.stdout.readline() if ready else b""
        assert line.strip().isdigit(), f"the plugin did not start: {errors.read_text()}"
        with grpc.insecure_channel(f"127.0.0.1:{int(line)}") as channel:
            stub = provider_pb2_grpc.ResourceProviderStub(channel)
            served = stub.GetSchema(provider_pb2.GetSchemaRequest(), timeout=30).schema
            info = stub.GetPluginInfo(empty_pb2.Empty(), timeout=30)
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert json.loads(served) == json.loads(SCHEMA.read_text())
    assert info.version == version("tpu-pathways")


def test_the_in_process_provider_serves_the_same_schema():
    assert json.loads(provider().schema) == json.loads(SCHEMA.read_text())
