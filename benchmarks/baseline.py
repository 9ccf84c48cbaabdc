"""The bare baseline: the project's resources registered under the mock engine, no project logic.

    python benchmarks/baseline.py SHAPE.json > /dev/null                  # the typed floor
    python benchmarks/baseline.py --independent SHAPE.json > /dev/null    # the independent floor

SHAPE.json is written by ``run.py`` from the project's own ``plan --json`` output: for each
resource its type, name, custom flag, inputs, and the indexes of its parent, provider and
dependencies, in plan order. This script registers exactly those resources:

* with the real provider SDK classes, found from each type token by rule (``sdk_class``), so it
  imports the same SDK modules and pays the same per-resource SDK costs (argument translation,
  serialisation, typed outputs, stack capture);
* with the project's own input values, copied from the plan;
* CRD kinds as ``kubernetes.apiextensions.CustomResource``, the project's component types as
  plain ``pulumi.ComponentResource``;
* with the same parent / provider / ``depends_on`` structure, so the engine waits alike;
* under ``pulumi.runtime.set_mocks`` with a mock that echoes inputs as outputs and a monitor
  that records every registration (request object to a dict), as the project's plan engine
  does, and prints the records as JSON.

That is the **typed floor**. With ``--independent`` it registers the same resources as plain
registrations instead (``register_plain``), the **independent floor**: ``pulumi.CustomResource``
(``pulumi.ProviderResource`` for a provider) with the same type token, name, parent, provider,
``depends_on`` and the plan's input dict as written (wire names), and ``pulumi.ComponentResource``
for components (``remote=True`` for a package's own components such as
``kubernetes:yaml/v2:ConfigFile``). It pays only what any program must to register those
resources: no SDK class's argument translation, typed outputs or per-property resolvers. It
imports the same SDK modules as the typed floor (a program that uses these providers loads them;
the project must, to use their typed classes), so the two differ only in how they register. The
typed floor costs about 1.3x the independent one; what the project adds shows against both.

It does not import the ``components`` package: no config model or validation, catalog, component
code, output wiring, ordering, cost summary or rendering. That difference is what the benchmark
measures. As a process it is the floor of the project's CLI: cyclic GC disabled and, once its
output is flushed, ``os._exit`` (no interpreter teardown), exactly as ``components/__main__.py``
ends; it prints its records as compact JSON (the C encoder: the least a program that reports its
registrations can pay). ``run.py`` also imports this module to run the same registrations
in-process (``run_shape``).
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    gc.disable()  # before the SDK imports, as the project's CLI does for its one-shot process

import importlib
import importlib.util
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pulumi
from google.protobuf import json_format
from pulumi.runtime import mocks


def _private_sdk() -> Any:
    """The project's one module of private Pulumi APIs (``components/sdk/pulumi_private.py``,
    which imports only ``pulumi``), loaded from its file: the ``components`` package itself
    stays unimported."""
    path = Path(__file__).resolve().parents[1] / "components" / "sdk" / "pulumi_private.py"
    spec = importlib.util.spec_from_file_location("_baseline_pulumi_private", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sdk = _private_sdk()

# How the plan JSON shows a value known only after deploy, and a secret.
UNKNOWN, SECRET = "[unknown]", "[secret]"
STACK_TYPE = "pulumi:pulumi:Stack"
PROJECT_PACKAGE = "tpu-pathways:"  # the project's own (local) component types
# Inputs whose wire name is not the constructor's keyword (the positional resource name takes
# ``name`` in pulumi's own classes).
_RENAMED_INPUTS = {"pulumi:pulumi:StackReference": {"name": "stack_name"}}


class UnknownTypeError(LookupError):
    """A custom resource type the baseline cannot map to an SDK class."""


def _module_attr(module: str, attr: str) -> type | None:
    try:
        return getattr(importlib.import_module(module), attr, None)
    except ImportError:
        return None


def _kubernetes_module(api: str) -> str | None:
    """``core/v1``, ``apps/v1``, ``scheduling.k8s.io/v1``, ``yaml/v2`` -> SDK module path.

    Built-in API groups are dotless or end in ``.k8s.io`` (SIG CRDs use ``.x-k8s.io``, other
    CRDs their own domain); the SDK names the module after the group's first label.
    """
    group, _, version = api.rpartition("/")
    k8s_io = group.endswith(".k8s.io") and not group.endswith(".x-k8s.io")
    if not group or ("." in group and not k8s_io):
        return None
    return f"pulumi_kubernetes.{group.split('.')[0]}.{version}"


def sdk_class(type_token: str) -> type | None:
    """The SDK class that registers ``type_token``, derived from the token; None if none.

    * ``pulumi:providers:PKG`` -> ``pulumi_PKG.Provider``
    * ``pulumi:pulumi:NAME`` -> ``pulumi.NAME`` (``StackReference``)
    * ``gcp:MODULE/resource:Class`` -> ``pulumi_gcp.MODULE.Class``
    * ``kubernetes:GROUP/VERSION:Kind`` -> ``pulumi_kubernetes.GROUP.VERSION.Kind`` for built-in
      groups and the SDK's own components (``yaml/v2:ConfigFile``); None for CRD kinds.
    * ``PKG:MODULE/resource:Class`` -> ``pulumi_PKG.MODULE.Class`` for any other package.
    """
    package, _, rest = type_token.partition(":")
    module, _, name = rest.rpartition(":")
    if package == "pulumi" and module == "providers":
        return _module_attr(f"pulumi_{name}", "Provider")
    if package == "pulumi" and module == "pulumi":
        return getattr(pulumi, name, None)
    if package == "kubernetes":
        path = _kubernetes_module(module)
        return _module_attr(path, name) if path else None
    if "/" not in module:
        return None
    return _module_attr(f"pulumi_{package.replace('-', '_')}.{module.split('/')[0]}", name)


def _is_kubernetes_crd(type_token: str) -> bool:
    return type_token.startswith("kubernetes:")


# A Python dynamic resource (pulumi.dynamic.Resource): registered as a plain CustomResource of
# its type token, its props as the program sent them (the serialized provider among them).
DYNAMIC_PREFIX = "pulumi-python:dynamic"


def _is_dynamic(type_token: str) -> bool:
    return type_token.startswith(DYNAMIC_PREFIX)


def resolve_types(type_tokens: set[str], custom: dict[str, bool]) -> dict[str, type | None]:
    """The class of every type (imports its SDK module); raises on an unmappable custom type."""
    classes = {t: sdk_class(t) for t in sorted(type_tokens)}
    unknown = [
        t
        for t, cls in classes.items()
        if cls is None and custom[t] and not (_is_kubernetes_crd(t) or _is_dynamic(t))
    ]
    if unknown:
        raise UnknownTypeError(f"no SDK class for custom resource type(s) {', '.join(unknown)}")
    return classes


class EchoMocks(mocks.Mocks):
    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        return "", dict(args.inputs)

    def call(self, args: mocks.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        return {}, []


class Recorder(sdk.EchoingMockMonitor):
    """The floor's engine: the one the project's plan runs under (the SDK's mock monitor, a
    registration of plain inputs answered with a copy of them), recording every registration."""

    def __init__(self, resource_mocks: mocks.Mocks) -> None:
        # EchoMocks answer every registration with its inputs alone and no ID.
        super().__init__(resource_mocks, lambda type_token: True)
        self.records: list[dict[str, Any]] = []

    def RegisterResource(self, request):
        response = super().RegisterResource(request)
        if request.type != STACK_TYPE:
            self._keep(response.urn, request, request.object)
        return response

    def ReadResource(self, request):
        """A read (a team stack's StackReference), recorded as the project's engine does."""
        response = super().ReadResource(request)
        self._keep(response.urn, request, request.properties)
        return response

    def _keep(self, urn: str, request: Any, inputs: Any) -> None:
        self.records.append(
            {
                "urn": urn,
                "type": request.type,
                "parent": request.parent or None,
                "provider": request.provider or None,
                "inputs": json_format.MessageToDict(inputs),
                "dependencies": sorted(set(request.dependencies)),
            }
        )


def program_value(value: Any) -> Any:
    """A plan value as a program passes it: '[unknown]' an output not known until the cloud
    creates its resource, '[secret]' a secret again."""
    if isinstance(value, dict):
        return {k: program_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [program_value(v) for v in value]
    if value == UNKNOWN:
        return _unknown()
    if value == SECRET:
        return pulumi.Output.secret(value)
    return value


def _unknown() -> pulumi.Output[Any]:
    """An output the engine does not know yet (in a preview, what another resource's output
    is until that resource exists): on the wire, the SDK's unknown sentinel."""

    async def value() -> None:
        return None

    async def known() -> bool:
        return False

    return pulumi.Output(set(), value(), known())


def keyword(type_token: str, name: str) -> str:
    """A wire (camelCase) input name as the constructor's keyword argument."""
    renamed = _RENAMED_INPUTS.get(type_token, {})
    return renamed.get(name) or re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def register(
    entry: dict[str, Any], cls: type | None, opts: pulumi.ResourceOptions
) -> pulumi.Resource:
    type_token, name = entry["type"], entry["name"]
    if cls is None and not entry["custom"]:  # the project's own component types
        component = pulumi.ComponentResource(type_token, name, None, opts)
        component.register_outputs({})
        return component
    if _is_dynamic(type_token):
        props = {k: program_value(v) for k, v in entry["inputs"].items()}
        return pulumi.CustomResource(type_token, name, props, opts)
    # Top-level names become keyword arguments; nested values stay the plain dicts the plan
    # holds (the SDK accepts dicts for its Args types and translates them the same way).
    args = {keyword(type_token, k): program_value(v) for k, v in entry["inputs"].items()}
    if cls is not None:
        return cls(name, **args, opts=opts)
    _, api_version, kind = type_token.split(":")  # a CRD kind: kubernetes:<group/version>:<Kind>
    args.update(api_version=api_version, kind=kind)
    return _custom_resource()(name, **args, opts=opts)


def register_plain(entry: dict[str, Any], opts: pulumi.ResourceOptions) -> pulumi.Resource:
    """The independent floor's registration: the plan's type token, name and input dict, through
    the SDK's plain resource classes (no typed class of any package)."""
    type_token, name = entry["type"], entry["name"]
    props = program_value(entry["inputs"])
    if entry["custom"]:
        package, module, rest = type_token.split(":", 2)
        if (package, module) == ("pulumi", "providers"):
            return pulumi.ProviderResource(rest, name, props, opts)
        if type_token == "pulumi:pulumi:StackReference":  # a read: only the SDK class does one
            return pulumi.StackReference(name, props.get("name"), opts)
        return pulumi.CustomResource(type_token, name, props, opts)
    remote = not type_token.startswith(PROJECT_PACKAGE)  # kubernetes:yaml/v2:ConfigFile
    component = pulumi.ComponentResource(type_token, name, props, opts, remote=remote)
    if not remote:
        component.register_outputs({})
    return component


def _custom_resource() -> type:
    return importlib.import_module("pulumi_kubernetes.apiextensions").CustomResource


def classes_of(shape: list[dict[str, Any]]) -> dict[str, type | None]:
    custom = {entry["type"]: entry["custom"] for entry in shape}
    classes = resolve_types(set(custom), custom)
    if any(cls is None and custom[t] and not _is_dynamic(t) for t, cls in classes.items()):
        _custom_resource()
    return classes


def program(shape: list[dict[str, Any]], classes: dict[str, type | None] | None) -> None:
    """Register ``shape`` in plan order: through ``classes`` (the typed floor), or as plain
    registrations when ``classes`` is None (the independent floor)."""
    made: list[pulumi.Resource] = []
    for entry in shape:  # plan order: parents, providers and dependencies come first
        parent, provider = entry["parent"], entry["provider"]
        opts = pulumi.ResourceOptions(
            parent=made[parent] if parent is not None else None,
            provider=made[provider] if provider is not None else None,
            depends_on=[made[i] for i in entry["dependencies"]],
        )
        if classes is None:
            made.append(register_plain(entry, opts))
        else:
            made.append(register(entry, classes[entry["type"]], opts))


def run_shape(shape: list[dict[str, Any]], independent: bool = False) -> list[dict[str, Any]]:
    """Register ``shape`` under a fresh mock engine (a preview); return the records. The typed
    floor, or with ``independent`` the independent floor (plain registrations)."""
    classes = classes_of(shape)  # both floors import the SDK modules of every type in the plan
    resource_mocks = EchoMocks()
    monitor = Recorder(resource_mocks)
    sdk.fresh_runtime()  # a fresh runtime per run, as pulumi.runtime.test does
    pulumi.runtime.set_mocks(
        resource_mocks, project="baseline", stack="baseline", preview=True, monitor=monitor
    )
    sdk.run(lambda: program(shape, None if independent else classes))
    return monitor.records


def main(argv: list[str]) -> int:
    """``[--independent] SHAPE.json``: register the shape's resources, print the records."""
    independent = argv[:1] == ["--independent"]
    with open(argv[-1]) as handle:
        shape = json.load(handle)
    records = run_shape(shape, independent)
    sys.stdout.write(json.dumps({"resources": records}))
    return 0 if len(records) == len(shape) else 1


if __name__ == "__main__":
    status = main(sys.argv[1:])
    sys.stdout.flush()
    os._exit(status)  # the project's CLI leaves the same way (components/__main__.py)
