"""The layering of ``components/``: no import cycles, and the pure layers load no provider SDK.

The import graph is read from the source (every ``import`` of a ``components`` module, at module
level or inside a function; only ``if TYPE_CHECKING:`` blocks are left out, as they never run), so
a function-local import cannot hide a cycle. Purity is checked in a fresh interpreter, whose
``sys.modules`` holds only what the imports themselves loaded.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "components"

# Modules that must import no Pulumi SDK: the schema, the TPU catalog, the pure PathwaysJob model
# and the policy rules are read by the CLI, the policy pack (policy/tpu_pathways_policies.py: the
# plan model, the rules, the schema's enums) and the tests without a plan.
PURE = [
    "components.errors",
    "components.labels",
    "components.model",
    "components.tpu.catalog",
    "components.tpu.machines",
    "components.tpu.pricing",
    "components.tpu.quantities",
    "components.pathways.spec",
    "components.pathways.head_sizing",
    "components.pathways.controller_model",
    "components.pathways.gcs_access",
    "components.pathways.jobset",
    "components.pathways.jobset_pods",
    "components.pathways.scheduler_model",
    "components.pathways.preflight",
    "components.config.schema",
    "components.config.grammars",
    "components.config.safe_yaml",
    "components.config.checks",
    "components.config.shared_cluster",
    "components.config.workload_specs",
    "components.config.reference",
    "components.config.loader",
    "components.plan.model",
    "components.policy.rules",
]
SDKS = ("pulumi", "pulumi_gcp", "pulumi_kubernetes")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imported_modules(source: str, known: set[str]) -> set[str]:
    """The ``known`` modules a module's source imports anywhere but under TYPE_CHECKING."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if _type_checking_only(child):
                continue
            if isinstance(child, ast.Import):
                found.update(a.name for a in child.names if a.name in known)
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                for alias in child.names:
                    submodule = f"{child.module}.{alias.name}"
                    target = submodule if submodule in known else child.module
                    if target in known:
                        found.add(target)
            visit(child)

    visit(ast.parse(source))
    return found


def import_graph(package: Path) -> dict[str, set[str]]:
    paths = {module_name(p): p for p in package.rglob("*.py")}
    known = set(paths)
    return {
        name: imported_modules(path.read_text(), known) - {name} for name, path in paths.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_cycle_finder_finds_a_cycle_through_a_function_local_import():
    known = {"a", "b", "c"}
    graph = {
        "a": imported_modules("import b\n", known),
        "b": imported_modules("def f():\n    from c import x\n", known),
        "c": imported_modules("from a import y\n", known),
    }
    assert cycles(graph) == [["a", "b", "c"]]


def test_cycle_finder_ignores_type_checking_imports():
    known = {"a", "b"}
    graph = {
        "a": imported_modules("import b\n", known),
        "b": imported_modules(
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import a\n", known
        ),
    }
    assert cycles(graph) == []


def test_components_have_no_import_cycle():
    graph = import_graph(PACKAGE)
    assert "components.config.schema" in graph  # the graph covers the package
    assert cycles(graph) == []


def first_sdk_import(modules: list[str]) -> dict[str, list[str]]:
    """In a fresh interpreter, import ``modules`` in turn; the first that loaded an SDK module,
    with (up to three of) those modules, or {} when none did."""
    probe = (
        "import importlib, json, sys\n"
        f"sdks = {SDKS!r}\n"
        "loaded = {}\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "    sdk = sorted(m for m in sys.modules if m.split('.')[0] in sdks)\n"
        "    if sdk:\n"
        "        loaded[name] = sdk[:3]\n"
        "        break\n"
        "print(json.dumps(loaded))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_pure_layers_import_no_provider_sdk():
    assert first_sdk_import(PURE) == {}


@pytest.mark.parametrize("module", ["components.stack.program", "components.workloads.job"])
def test_the_probe_sees_a_provider_sdk(module):
    """The probe can fail: the resource layers do load the SDK."""
    assert list(first_sdk_import(["components.labels", module])) == [module]
