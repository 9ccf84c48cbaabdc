"""The bare baseline: the project's resources registered under the mock engine, no project logic.

    python benchmarks/baseline.py SHAPE.json [--minimal]

SHAPE.json is written by ``run.py`` from the project's own ``plan --json`` output: for each
resource its type, name, custom flag, inputs, and the indexes of its parent, provider and
dependencies, in plan order. This script registers exactly those resources:

* with the real provider SDK constructors (``pulumi_gcp``, ``pulumi_kubernetes``), so it
  imports the same SDK modules and pays the same per-resource SDK costs (argument translation,
  serialisation, typed outputs, stack capture);
* with the project's own input values, copied from the plan (default), or with only each
  constructor's required arguments (``--minimal``);
* CRD kinds as ``kubernetes.apiextensions.CustomResource``, the project's component types as
  plain ``pulumi.ComponentResource``;
* with the same parent / provider / ``depends_on`` structure, so the engine waits alike;
* under ``pulumi.runtime.set_mocks`` with a mock that echoes inputs as outputs and a monitor
  that records every registration (request object to a dict), as components/plan/engine.py
  does, and prints the records as JSON.

It does not import the ``components`` package: no config model or validation, catalog, component
code, output wiring, ordering, cost summary or rendering. That difference is what the benchmark
measures. Like ``python -m components`` (components/__main__.py), it runs with the cyclic GC
disabled.
"""

import gc
import sys

gc.disable()  # as components/__main__.py does for the one-shot CLI

import json  # noqa: E402
import re  # noqa: E402
from typing import Any  # noqa: E402

import pulumi  # noqa: E402
import pulumi_gcp as gcp  # noqa: E402
import pulumi_kubernetes as k8s  # noqa: E402
from google.protobuf import json_format  # noqa: E402
from pulumi.runtime import mocks  # noqa: E402
from pulumi.runtime.stack import run_pulumi_func  # noqa: E402
from pulumi.runtime.sync_await import _sync_await  # noqa: E402

# How the plan JSON shows a value known only after deploy, and a secret.
UNKNOWN, SECRET = "[unknown]", "[secret]"
CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"  # a remote component: registered by its class

# The SDK class of each type, with its required arguments (for --minimal). Classes are named,
# not imported here: the SDK packages load submodules lazily, and the baseline should load just
# the submodules its types need, as the project does.
_CLASSES: dict[str, tuple[str, dict[str, Any]]] = {
    "gcp:compute/network:Network": ("gcp.compute.Network", {}),
    "gcp:compute/subnetwork:Subnetwork": (
        "gcp.compute.Subnetwork",
        {"network": "net", "ip_cidr_range": "10.0.0.0/20"},
    ),
    "gcp:compute/firewall:Firewall": ("gcp.compute.Firewall", {"network": "net"}),
    "gcp:compute/router:Router": ("gcp.compute.Router", {"network": "net"}),
    "gcp:compute/routerNat:RouterNat": (
        "gcp.compute.RouterNat",
        {
            "router": "router",
            "nat_ip_allocate_option": "AUTO_ONLY",
            "source_subnetwork_ip_ranges_to_nat": "ALL_SUBNETWORKS_ALL_IP_RANGES",
        },
    ),
    "gcp:compute/resourcePolicy:ResourcePolicy": ("gcp.compute.ResourcePolicy", {}),
    "gcp:container/cluster:Cluster": ("gcp.container.Cluster", {}),
    "gcp:container/nodePool:NodePool": ("gcp.container.NodePool", {"cluster": "cluster"}),
    "gcp:projects/iAMMember:IAMMember": (
        "gcp.projects.IAMMember",
        {"project": "p", "role": "roles/viewer", "member": "user:a@example.com"},
    ),
    "gcp:serviceaccount/account:Account": ("gcp.serviceaccount.Account", {"account_id": "sa"}),
    "gcp:storage/bucket:Bucket": ("gcp.storage.Bucket", {"location": "US"}),
    "gcp:storage/bucketIAMMember:BucketIAMMember": (
        "gcp.storage.BucketIAMMember",
        {"bucket": "b", "role": "roles/storage.objectUser", "member": "user:a@example.com"},
    ),
    "pulumi:providers:kubernetes": ("k8s.Provider", {}),
    "kubernetes:core/v1:Namespace": ("k8s.core.v1.Namespace", {}),
    "kubernetes:core/v1:ServiceAccount": ("k8s.core.v1.ServiceAccount", {}),
    "kubernetes:scheduling.k8s.io/v1:PriorityClass": (
        "k8s.scheduling.v1.PriorityClass",
        {"value": 1},
    ),
    CONFIG_FILE: ("k8s.yaml.v2.ConfigFile", {"file": "https://example.com/manifests.yaml"}),
}
_ROOTS = {"gcp": gcp, "k8s": k8s}


class EchoMocks(mocks.Mocks):
    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        return "", dict(args.inputs)

    def call(self, args: mocks.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        return {}, []


class Recorder(mocks.MockMonitor):
    def __init__(self, resource_mocks: mocks.Mocks) -> None:
        super().__init__(resource_mocks)
        self.records: list[dict[str, Any]] = []

    def RegisterResource(self, request):
        response = super().RegisterResource(request)
        if request.type != "pulumi:pulumi:Stack":
            self.records.append(
                {
                    "urn": response.urn,
                    "type": request.type,
                    "parent": request.parent or None,
                    "provider": request.provider or None,
                    "inputs": json_format.MessageToDict(request.object),
                    "dependencies": sorted(set(request.dependencies)),
                }
            )
        return response


def sdk_class(dotted: str) -> type:
    root, *attrs = dotted.split(".")
    value: Any = _ROOTS[root]
    for attr in attrs:
        value = getattr(value, attr)
    return value


def program_value(value: Any) -> Any:
    """A plan value as a program passes it: '[unknown]' left out, '[secret]' a secret again."""
    if isinstance(value, dict):
        return {k: program_value(v) for k, v in value.items() if v != UNKNOWN}
    if isinstance(value, list):
        return [program_value(v) for v in value if v != UNKNOWN]
    if value == SECRET:
        return pulumi.Output.secret(value)
    return value


def keyword(name: str) -> str:
    """A wire (camelCase) input name as the constructor's keyword argument."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def constructor_args(entry: dict[str, Any], minimal: bool) -> dict[str, Any]:
    known = _CLASSES.get(entry["type"])
    if minimal:
        return dict(known[1]) if known else {}
    # Top-level names become keyword arguments; nested values stay the plain dicts the plan
    # holds (the SDK accepts dicts for its Args types and translates them the same way).
    return {keyword(k): program_value(v) for k, v in entry["inputs"].items()}


def register(entry: dict[str, Any], opts: pulumi.ResourceOptions, minimal: bool) -> Any:
    type_token, name = entry["type"], entry["name"]
    if not entry["custom"] and type_token != CONFIG_FILE:
        component = pulumi.ComponentResource(type_token, name, None, opts)
        component.register_outputs({})
        return component
    args = constructor_args(entry, minimal)
    known = _CLASSES.get(type_token)
    if known is not None:
        return sdk_class(known[0])(name, **args, opts=opts)
    if type_token.startswith("kubernetes:"):  # a CRD kind: kubernetes:<group/version>:<Kind>
        _, api_version, kind = type_token.split(":")
        args.update(api_version=api_version, kind=kind)
        return k8s.apiextensions.CustomResource(name, **args, opts=opts)
    return pulumi.CustomResource(type_token, name, entry["inputs"], opts)


def program(shape: list[dict[str, Any]], minimal: bool) -> None:
    made: list[Any] = []
    for entry in shape:  # plan order: parents, providers and dependencies come first
        parent, provider = entry["parent"], entry["provider"]
        opts = pulumi.ResourceOptions(
            parent=made[parent] if parent is not None else None,
            provider=made[provider] if provider is not None else None,
            depends_on=[made[i] for i in entry["dependencies"]],
        )
        made.append(register(entry, opts, minimal))


def main(argv: list[str]) -> int:
    shape_path, minimal = argv[0], "--minimal" in argv[1:]
    with open(shape_path) as handle:
        shape = json.load(handle)
    resource_mocks = EchoMocks()
    monitor = Recorder(resource_mocks)
    pulumi.runtime.set_mocks(
        resource_mocks, project="baseline", stack="baseline", preview=True, monitor=monitor
    )
    _sync_await(run_pulumi_func(lambda: program(shape, minimal)))
    sys.stdout.write(json.dumps({"resources": monitor.records}, indent=2, sort_keys=True))
    return 0 if len(monitor.records) == len(shape) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
