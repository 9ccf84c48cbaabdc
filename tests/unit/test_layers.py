"""The layering of ``components/``: no import cycles, no import up or across the layers (read
from the folders: ``LAYERS``), and the pure layers load no provider SDK.

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
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "components"

# The rooms of the house and their layers: a room is a folder of ``components/`` ("" is the
# package's own top-level modules). A module imports its own room and rooms of a lower rank only;
# rooms of one rank are siblings that may not import each other (the config layer and the
# Pulumi components never meet outside ``stack/``).
LAYERS: dict[str, int] = {
    "": 0,  # foundation: errors, labels, model, tokens, files, vocabulary
    "tpu": 1,  # the TPU catalog
    "sdk": 1,  # the one home of private Pulumi SDK APIs (sdk/pulumi_private.py)
    "pathways": 2,  # the pure Pathways model
    "config": 3,  # the stack file read and validated key by key (pure)
    "gke": 3,  # Pulumi components taking typed Args
    "addons": 3,
    "workloads": 3,
    "resolve": 4,  # the config resolved: checks, preflight, specs, other stacks (pure)
    "stack": 5,  # the program: the only place resolved config meets components
    "plan": 6,  # tools
    "policy": 7,
    "cli": 8,
}
# Rooms a room may not import though its rank allows it: the resolve layer decides from config
# alone and never reaches a Pulumi component (the program maps its answers to their Args).
APART: dict[str, set[str]] = {"resolve": {"gke", "addons", "workloads"}}
# The entry points: the public API (lazy, by name) and ``python -m components``.
ENTRIES = {"components", "components.__main__"}
PURE_ROOMS = ("", "tpu", "pathways", "config", "resolve")
# The tool modules the policy pack (policy/tpu_pathways_policies.py) loads, with what they import.
PURE_TOOLS = ["components.plan.model", "components.policy.rules"]
SDKS = ("pulumi", "pulumi_gcp", "pulumi_kubernetes")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def room_of(path: Path) -> str:
    """The folder of ``components/`` a module file is in ("" for a top-level module)."""
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else ""


def rooms(package: Path) -> dict[str, str]:
    """Every module of the package and its room (the entry points left out)."""
    found = {module_name(p): room_of(p) for p in package.rglob("*.py")}
    return {name: room for name, room in found.items() if name not in ENTRIES}


def pure_modules(package: Path) -> list[str]:
    return sorted(m for m, room in rooms(package).items() if room in PURE_ROOMS) + PURE_TOOLS


def layer_violations(
    graph: dict[str, set[str]],
    room: dict[str, str],
    layers: dict[str, int],
    apart: dict[str, set[str]] | None = None,
) -> list[str]:
    """Imports from a room to a higher or sibling room (same rank, another folder), or to a
    room ``apart`` keeps it from."""
    found = []
    for module, targets in sorted(graph.items()):
        if module not in room:
            continue
        for target in sorted(targets):
            here, there = room[module], room.get(target, room[module])
            upward = layers[there] >= layers[here]
            if here != there and (upward or there in (apart or {}).get(here, ())):
                found.append(f"{module} ({here or 'foundation'}) imports {target} ({there})")
    return found


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


@cache  # the package's graph read once for the tests that check it (parsing it takes 0.4 s)
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


def test_layer_check_catches_an_upward_and_a_sibling_import():
    known = {"low.a", "mid.b", "side.c", "top.d"}
    graph = {
        "low.a": imported_modules("def f():\n    from top.d import x\n", known),
        "mid.b": imported_modules("import low.a\nimport side.c\n", known),
        "side.c": set(),
        "top.d": imported_modules("import mid.b\n", known),
    }
    room = {name: name.split(".")[0] for name in known}
    layers = {"low": 0, "mid": 1, "side": 1, "top": 2}
    assert layer_violations(graph, room, layers) == [
        "low.a (low) imports top.d (top)",
        "mid.b (mid) imports side.c (side)",
    ]


def test_every_folder_has_a_layer():
    assert set(rooms(PACKAGE).values()) == set(LAYERS)


def test_layer_check_catches_an_import_its_room_is_kept_apart_from():
    known = {"res.a", "comp.b", "conf.c"}
    graph = {"res.a": imported_modules("import comp.b\nimport conf.c\n", known)}
    room = {name: name.split(".")[0] for name in known}
    layers = {"conf": 1, "comp": 1, "res": 2}
    assert layer_violations(graph, room, layers) == []
    assert layer_violations(graph, room, layers, {"res": {"comp"}}) == [
        "res.a (res) imports comp.b (comp)"
    ]


def test_the_resolve_layer_sits_between_config_and_the_program():
    assert LAYERS["config"] < LAYERS["resolve"] < LAYERS["stack"]
    assert {"gke", "addons", "workloads"} <= APART["resolve"]
    for room in ("gke", "addons", "workloads"):  # and they import neither config nor resolve
        assert LAYERS[room] == LAYERS["config"] < LAYERS["resolve"]


def test_no_import_runs_up_or_across_the_layers():
    assert layer_violations(import_graph(PACKAGE), rooms(PACKAGE), LAYERS, APART) == []


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
    pure = pure_modules(PACKAGE)
    expected = {"components.vocabulary", "components.resolve.loader", "components.tpu.catalog"}
    assert expected | {"components.config.schema", "components.resolve.tenancy.fleet"} <= set(pure)
    assert first_sdk_import(pure) == {}


def test_the_probe_sees_a_provider_sdk():
    """The probe can fail: a resource layer does load the SDK. One module of the lowest such
    layer shows it (``components.stack.program`` would load every SDK, 2 CPU-s in a fresh
    interpreter, to show the same)."""
    module = "components.workloads.job"
    assert list(first_sdk_import(["components.labels", module])) == [module]
