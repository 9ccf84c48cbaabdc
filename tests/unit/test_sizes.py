"""Modules of ``components/`` stay at most ``MAX_MODULE_LINES`` lines and functions (methods and
nested functions too) at most ``MAX_FUNCTION_LINES``: a module or function past that is split
along its concepts, not by line count. A function's length runs from its first decorator to its
last line, read from the source with ``ast``."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "components"
MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 60


def function_lengths(source: str) -> list[tuple[str, int, int]]:
    """Every function of ``source`` (at any depth) as (qualified name, first line, lines)."""
    found: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([d.lineno for d in child.decorator_list] + [child.lineno])
                name = f"{prefix}{child.name}"
                found.append((name, first, child.end_lineno - first + 1))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def oversized(package: Path) -> list[str]:
    """The modules and functions of ``package`` over the limits, as readable lines."""
    found = []
    for path in sorted(package.rglob("*.py")):
        source = path.read_text()
        where = path.relative_to(package.parent)
        lines = len(source.splitlines())
        if lines > MAX_MODULE_LINES:
            found.append(f"{where}: {lines} lines (at most {MAX_MODULE_LINES})")
        found += [
            f"{where}:{first} {name}: {length} lines (at most {MAX_FUNCTION_LINES})"
            for name, first, length in function_lengths(source)
            if length > MAX_FUNCTION_LINES
        ]
    return found


def test_the_measure_counts_methods_nested_functions_and_decorators():
    source = (
        "class A:\n"
        "    @property\n"
        "    def b(self):\n"
        "        def c():\n"
        "            return 1\n"
        "        return c()\n"
        "async def d():\n"
        "    pass\n"
    )
    assert function_lengths(source) == [("A.b", 2, 5), ("A.b.c", 4, 2), ("d", 7, 2)]


def test_the_check_finds_a_long_module_and_a_long_function(tmp_path):
    package = tmp_path / "components"
    package.mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    (package / "long_function.py").write_text(f"def f():\n{body}")
    (package / "long_module.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    (package / "fine.py").write_text("def g():\n    return 1\n")
    assert oversized(package) == [
        f"components/long_function.py:1 f: {MAX_FUNCTION_LINES + 1} lines (at most 60)",
        f"components/long_module.py: {MAX_MODULE_LINES + 1} lines (at most 450)",
    ]


def test_no_module_or_function_of_components_is_over_the_limits():
    assert oversized(PACKAGE) == []
