"""Each private or experimental Pulumi API the project uses (``components.sdk.pulumi_private``)
still exists and still behaves as the project relies on; one test per use.

Run them against the newest ``pulumi`` before widening pyproject's pin:
``pip install -U pulumi && python -m pytest tests/unit/sdk/test_pulumi_private.py`` (the
`newest-pulumi` job of ``.github/workflows/pr-plan.yml`` does).
"""

# No `from __future__ import annotations`: the analyzer reads the annotations as objects.
import asyncio
import re
import threading
import tomllib
from importlib.metadata import version
from pathlib import Path
from typing import NotRequired, TypedDict

import pulumi
import pytest
from google.protobuf import struct_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packaging.specifiers import SpecifierSet
from pulumi.runtime import mocks as sdk_mocks
from pulumi.runtime.proto import resource_pb2

from components.sdk import pulumi_private as sdk

ROOT = Path(__file__).resolve().parents[3]


class EchoMocks(pulumi.runtime.Mocks):
    def new_resource(self, args):
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args):
        return {}, []


def _mock_engine(monitor=None) -> None:
    pulumi.runtime.set_mocks(EchoMocks(), "proj", "stack", preview=True, monitor=monitor)


def test_sync_await_waits_for_a_coroutine_from_synchronous_code():
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert sdk.sync_await(answer()) == 42


def test_fresh_runtime_gives_each_run_a_new_root_stack():
    roots = []
    for _ in range(2):
        sdk.fresh_runtime()
        _mock_engine()
        sdk.run(lambda: None)
        roots.append(pulumi.runtime.get_root_resource())
    assert roots[0] is not None and roots[1] is not None
    assert roots[0] is not roots[1]


def test_fresh_runtime_clears_the_outputs_of_an_earlier_run():
    from pulumi.runtime import settings

    settings.SETTINGS.outputs.add("left over")  # a set since 3.238 (a deque before)
    assert len(settings.SETTINGS.outputs) >= 1
    sdk.fresh_runtime()
    assert len(settings.SETTINGS.outputs) == 0


def test_run_waits_for_every_registration_of_the_program():
    seen: list[str] = []

    class Recording(sdk.MockMonitor):
        def RegisterResource(self, request):
            seen.append(request.name)
            return super().RegisterResource(request)

    mocks = EchoMocks()
    sdk.fresh_runtime()
    pulumi.runtime.set_mocks(mocks, "proj", "stack", preview=True, monitor=Recording(mocks))
    sdk.run(lambda: [pulumi.ComponentResource("t:m:C", n) for n in ("a", "b")])
    # The monitor subclass saw the root stack and both components, all before run returned.
    assert sorted(seen) == ["a", "b", "proj-stack"]


def test_the_wire_markers_are_the_literal_strings_of_the_protocol():
    # pulumi/pulumi sdk/python/lib/pulumi/runtime/rpc.py (and every other SDK's).
    assert sdk.SIG_KEY == "4dabf18193072939515e22adb298388d"
    assert sdk.SECRET_SIG == "1b47061264138c4ac30d75fd1eb44270"
    assert sdk.RESOURCE_SIG == "5cf8f73096256a8f31e491e813e4eb8e"


# --- EchoingMockMonitor: the SDK monitor's answer, without its round trip ----------------------

UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # rpc.py UNKNOWN, the protocol's literal
_scalars = st.one_of(
    st.text(max_size=8),
    st.just(UNKNOWN),
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-(2**53), 2**53),
    st.booleans(),
    st.none(),
    st.builds(lambda v: {sdk.SIG_KEY: sdk.SECRET_SIG, "value": v}, st.text(max_size=4)),
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=12,
)
_inputs = st.dictionaries(st.text(max_size=6), _values, max_size=5)


def _request(values: dict, type_token: str = "gcp:compute/network:Network", name: str = "n"):
    inputs = struct_pb2.Struct()
    inputs.update(values)
    return resource_pb2.RegisterResourceRequest(type=type_token, name=name, object=inputs)


def _plain(value) -> bool:
    """Plain in the monitor's sense, worked out on the Python value (not on the wire)."""
    if isinstance(value, dict):
        return sdk.SIG_KEY not in value and all(map(_plain, value.values()))
    if isinstance(value, list):
        return all(map(_plain, value))
    return value is not None and value != UNKNOWN


@pytest.fixture
def sdk_answers(monkeypatch):
    """How many registrations the SDK's own ``RegisterResource`` answered."""
    calls = []
    original = sdk_mocks.MockMonitor.RegisterResource

    def counted(self, request):
        calls.append(request.name)
        return original(self, request)

    monkeypatch.setattr(sdk_mocks.MockMonitor, "RegisterResource", counted)
    return calls


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,  # the same cases in every run
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(values=_inputs)
def test_an_echoing_monitor_answers_as_the_sdks_monitor_does(values, sdk_answers):
    _mock_engine()
    expected = sdk.MockMonitor(EchoMocks()).RegisterResource(_request(values))
    sdk_answers.clear()
    found = sdk.EchoingMockMonitor(EchoMocks(), lambda _: True).RegisterResource(_request(values))
    # Plain inputs are answered without the SDK's path; the rest through it.
    assert sdk_answers == ([] if _plain(values) else ["n"])
    # EchoMocks gives "<name>-id": an echoing monitor sends the ID its mocks promise, "".
    assert (found.urn, found.object) == (expected.urn, expected.object)
    assert found.id == ("" if _plain(values) else "n-id")
    # Struct equality ignores the order of keys; a program reads its outputs in that order.
    assert _key_order(found.object) == _key_order(expected.object)


def _key_order(value):
    """The keys of a wire value in the order a program iterates them, all the way down."""
    if isinstance(value, struct_pb2.Struct):
        return [(key, _key_order(value[key])) for key in value]
    if isinstance(value, struct_pb2.ListValue):
        return [_key_order(item) for item in value]
    return None


def test_an_echoed_registration_is_what_the_sdk_keeps_for_its_urn():
    _mock_engine()
    values = {"name": "net", "labels": {"a": "b"}, "ports": [1, 2.5], "on": True}
    kept = []
    for monitor in (
        sdk.MockMonitor(_EmptyIdMocks()),
        sdk.EchoingMockMonitor(_EmptyIdMocks(), lambda _: True),
    ):
        urn = monitor.RegisterResource(_request(values)).urn
        kept.append(_get_resource(monitor, urn))
    assert kept[0] == kept[1]
    assert dict(kept[1]["state"]) == {
        "name": "net",
        "labels": {"a": "b"},
        "ports": [1, 2.5],
        "on": True,
    }


class _EmptyIdMocks(EchoMocks):
    def new_resource(self, args):
        return "", dict(args.inputs)


def _get_resource(monitor, urn: str):
    asked = struct_pb2.Struct()
    asked.update({"urn": urn})
    request = resource_pb2.ResourceInvokeRequest(tok="pulumi:pulumi:getResource", args=asked)
    return monitor.Invoke(request).__getattribute__("return")


# ExistsResource came after 3.261 (the oldest release of the window), which never asks it.
HAS_EXISTS = hasattr(resource_pb2, "ExistsResourceRequest")


@pytest.mark.skipif(not HAS_EXISTS, reason="this pulumi has no ExistsResource")
def test_an_echoed_registration_exists_as_the_sdks_does():
    _mock_engine()
    exists = resource_pb2.ExistsResourceRequest(id="", type="gcp:compute/network:Network")
    answers = []
    for monitor in (
        sdk.MockMonitor(_EmptyIdMocks()),
        sdk.EchoingMockMonitor(_EmptyIdMocks(), lambda _: True),
    ):
        monitor.RegisterResource(_request({"name": "a"}))
        answers.append(monitor.ExistsResource(exists).exists)  # asked before any getResource
    assert answers == [True, True]


def test_what_an_echoing_monitor_keeps_is_there_for_each_way_of_asking():
    _mock_engine()
    second = sdk.EchoingMockMonitor(_EmptyIdMocks(), lambda _: True)
    urn = second.RegisterResource(_request({"name": "b"})).urn
    kept = second.get_registered_resources()
    assert list(kept) == [urn]
    assert kept[urn].state == {"name": "b"}


def test_a_getresource_while_another_converts_the_kept_registrations_waits_for_them(
    monkeypatch,
):
    """The SDK keeps each registration as it answers it, so a getResource always finds it; an
    echoing monitor converts its own on the first getResource, which a second one, on another
    executor thread, must not overtake."""
    _mock_engine()
    monitor = sdk.EchoingMockMonitor(_EmptyIdMocks(), lambda _: True)
    first = monitor.RegisterResource(_request({"name": "a"}, name="a")).urn
    second = monitor.RegisterResource(_request({"name": "b"}, name="b")).urn
    converting, asked = threading.Event(), threading.Event()
    convert = sdk._rpc.deserialize_properties

    def slow(inputs):
        converting.set()
        asked.wait(0.5)  # the other thread asks meanwhile (and waits for the lock)
        return convert(inputs)

    monkeypatch.setattr(sdk._rpc, "deserialize_properties", slow)
    found = {}
    thread = threading.Thread(target=lambda: found.update(a=_get_resource(monitor, first)))
    thread.start()
    converting.wait(5)
    found["b"] = _get_resource(monitor, second)
    asked.set()
    thread.join(5)
    assert {k: dict(v["state"]) for k, v in found.items()} == {
        "a": {"name": "a"},
        "b": {"name": "b"},
    }


def test_a_later_registration_of_the_same_urn_through_the_sdk_is_the_one_kept():
    _mock_engine()
    monitor = sdk.EchoingMockMonitor(_EmptyIdMocks(), lambda _: True)
    urn = monitor.RegisterResource(_request({"name": "old"})).urn
    again = monitor.RegisterResource(_request({"name": "new", "gone": None}))  # not plain
    assert again.urn == urn
    assert dict(_get_resource(monitor, urn)["state"]) == {"name": "new"}


def test_an_echoing_monitor_answers_the_stack_as_the_sdk_does(sdk_answers):
    _mock_engine()
    monitor = sdk.EchoingMockMonitor(EchoMocks(), lambda _: True)
    monitor.RegisterResource(_request({}, "pulumi:pulumi:Stack", "proj-stack"))
    assert sdk_answers == ["proj-stack"]


def test_engine_config_reads_the_runtime_map_over_the_environment(monkeypatch):
    monkeypatch.setenv("PULUMI_CONFIG", '{"ns:env": "from-env", "ns:both": "env"}')
    token = sdk.set_engine_config({"ns:both": "runtime"})
    try:
        config = sdk.engine_config()
    finally:
        sdk.reset_engine_config(token)
    assert config["ns:env"] == "from-env"
    assert config["ns:both"] == "runtime"


class _ProbeArgs(TypedDict):
    name: str
    size: NotRequired[int]
    """How big."""


class Probe(pulumi.ComponentResource):
    """A probe component."""

    label: pulumi.Output[str]

    def __init__(self, name: str, args: _ProbeArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("probe:index:Probe", name, None, opts)
        if args["name"] == "bad":
            raise ValueError("bad name")
        self.label = pulumi.Output.from_input(f"{args['name']}-{args.get('size', 0)}")
        self.register_outputs({"label": self.label})


def _probe_provider():
    return sdk.component_provider()([Probe], "probe", None, "1.2.3")


def test_component_provider_builds_the_schema_of_typed_dict_args():
    import json

    schema = json.loads(_probe_provider().schema)
    resource = schema["resources"]["probe:index:Probe"]
    assert schema["version"] == "1.2.3"
    assert resource["requiredInputs"] == ["name"]  # NotRequired (since 3.237) is optional
    assert resource["inputProperties"]["size"] == {
        "type": "integer",
        "plain": True,
        "description": "How big.",
    }
    assert resource["properties"]["label"]["type"] == "string"


def test_component_init_error_wraps_what_the_constructor_raised():
    provider = _probe_provider()
    sdk.fresh_runtime()
    _mock_engine()
    caught: list[Exception] = []

    def program() -> None:
        try:
            provider.construct("p", "probe:index:Probe", {"name": "bad"}, None)
        except sdk.component_init_error() as exc:
            caught.append(exc)

    sdk.run(program)
    assert len(caught) == 1
    assert isinstance(caught[0].inner, ValueError)  # type: ignore[attr-defined]
    assert str(caught[0].inner) == "bad name"  # type: ignore[attr-defined]


def test_the_installed_pulumi_is_inside_the_window_these_tests_cover():
    assert version("pulumi") in SpecifierSet(sdk.PULUMI_WINDOW)


def test_pyproject_pins_pulumi_to_that_window():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = [d for d in project["dependencies"] if re.match(r"pulumi\s*[<>=!~]", d)]
    assert pins == [f"pulumi{sdk.PULUMI_WINDOW}"]


# --- nothing else reaches into Pulumi's private modules ---------------------------------------

_PRIVATE = re.compile(
    r"pulumi\.runtime\.(settings|stack|sync_await|config|rpc_manager)\b"
    r"|from pulumi\.runtime import [^\n]*\b(settings|config|stack)\b"
    r"|\b_sync_await\b|\brun_pulumi_func\b|\b_special_\w+"
    r"|\bmocks\.MockMonitor\b|pulumi\.provider\.(experimental|server)\b"
)
SCANNED = ("components", "provider", "benchmarks", "policy", "examples")
HOME = ROOT / "components" / "sdk" / "pulumi_private.py"


def private_uses(text: str) -> list[str]:
    return [m.group(0) for m in _PRIVATE.finditer(text)]


def test_the_scanner_finds_the_private_uses_it_looks_for():
    text = (
        "from pulumi.runtime.sync_await import _sync_await\n"
        "from pulumi.runtime import config as c\n"
        "settings = pulumi.runtime.settings.SETTINGS\n"
        "from pulumi.provider.experimental import component_provider_host\n"
    )
    assert len(private_uses(text)) == 5
    assert private_uses("pulumi.runtime.set_all_config({})\npulumi.runtime.rpc.UNKNOWN") == []


def test_private_pulumi_apis_are_used_only_in_their_module():
    found = {}
    for folder in SCANNED:
        for path in (ROOT / folder).rglob("*.py"):
            if path == HOME or ".venv" in path.parts or "venv" in path.parts:
                continue
            if uses := private_uses(path.read_text()):
                found[str(path.relative_to(ROOT))] = uses
    assert found == {}


@pytest.mark.parametrize(
    "name",
    ["fresh_runtime", "run", "sync_await", "engine_config", "EchoingMockMonitor", "plain_struct"],
)
def test_the_module_documents_each_use(name):
    assert callable(getattr(sdk, name))
    assert getattr(sdk, name).__doc__
