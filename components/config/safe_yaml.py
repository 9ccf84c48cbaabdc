"""Reading a stack file's YAML safely: only what JSON can carry, nothing ambiguous, bounded.

The Pulumi engine hands a program its config as JSON strings, so a stack file may hold only
what JSON holds: mappings with unique keys, lists, strings, numbers, booleans and null. YAML
holds more, and each extra is a trap here:

- a duplicate key: YAML parsers keep the last value and drop the first without a word;
- an unquoted date (``pathwaysVersion: 2025-01-15``), ``!!binary``, ``!!set``, ``!!omap``:
  values JSON cannot encode (PyYAML makes ``datetime.date``/``bytes``/...);
- aliases: a self-referencing alias is a cycle; nested aliases (an "alias bomb", the
  billion-laughs attack) expand to billions of nodes when the value is JSON-encoded;
- very deep nesting: Python's recursion limit;
- keys YAML 1.1 reads as something other than text (``ON``/``YES``/``off`` as booleans, ``~``
  or ``NULL`` as null, ``1`` as a number): JSON keys are text, so they would be renamed
  (``true``) and two of them could collapse into one, losing a value;
- a merge key (``<<``) whose value is not a mapping or a list of mappings, and ``<<`` anywhere
  but as a key;
- ``.inf`` and ``.nan``, numbers JSON cannot carry;
- YAML 1.1's base-60 numbers (``maxNodes: 1:30`` is 90 to PyYAML), which Pulumi's Go YAML
  reader (YAML 1.2) reads as the text ``"1:30"``: the file would mean two things.

All of them are checked on the composed node graph, before any value is constructed, and
reported as config issues naming the key and the line. Every check is linear in the size of
the file (aliases are sized with memoisation, never expanded).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from components.config.grammars import hides_value
from components.errors import ConfigError, ConfigIssue, join_key, key_part

# libyaml's parser when PyYAML has it: ~9x faster on large stack files (benchmarks/README.md).
_BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_FILE_BYTES = 4 * 2**20
"""A stack file larger than this is refused before parsing (the benchmarks' 256-slice stack is
19 KB, the examples about 1 KB)."""
MAX_DEPTH = 40
"""Deepest nesting of mappings and lists (the example and benchmark stacks are 6 deep)."""
MAX_EXPANDED_NODES = 200_000
"""Nodes the document may have once every alias is expanded (the benchmarks' 256-slice stack
has 2,273)."""

_STR = "tag:yaml.org,2002:str"
_FLOAT = "tag:yaml.org,2002:float"
_MERGE = "tag:yaml.org,2002:merge"
_JSON_TAGS = {
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:int",
    _FLOAT,
    _STR,
    "tag:yaml.org,2002:seq",
    "tag:yaml.org,2002:map",
    _MERGE,
}
# What a key that is not text becomes once the document is JSON (every key is text there).
_KEY_READ_AS = {
    "tag:yaml.org,2002:null": "null",
    "tag:yaml.org,2002:bool": "true/false",
    "tag:yaml.org,2002:int": "a number",
    _FLOAT: "a number",
}
_WHAT = {
    "tag:yaml.org,2002:timestamp": "a date/time",
    "tag:yaml.org,2002:binary": "binary data (!!binary)",
    "tag:yaml.org,2002:set": "a set (!!set)",
    "tag:yaml.org,2002:omap": "an ordered map (!!omap)",
    "tag:yaml.org,2002:pairs": "a list of pairs (!!pairs)",
}


def load_yaml(text: str, source: str) -> Any:
    """The document of ``text``, or ConfigError naming every key that breaks the rules above."""
    if len(text) > MAX_FILE_BYTES:
        message = f"larger than {MAX_FILE_BYTES} bytes, the most a stack file may have"
        raise ConfigError([ConfigIssue("", message)], source)
    _check_depth(text, source)
    loader = _BASE_LOADER(text)
    try:
        node = _compose(loader, text, source)
        if node is None:
            return None
        issues = list(_check(node))
        if issues:
            raise ConfigError(issues, source)
        try:
            return loader.construct_document(node)
        except yaml.YAMLError as exc:  # the checks above leave none; a net, never a traceback
            raise ConfigError([_parse_issue(text, exc)], source) from None
    finally:
        loader.dispose()


def _check_depth(text: str, source: str) -> None:
    """Depth from the event stream (flat, no recursion): composing a very deep document
    exhausts the stack, libyaml's composer with a crash rather than an exception."""
    depth = 0
    loader = _BASE_LOADER(text)
    try:
        while (event := loader.get_event()) is not None:
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    line = event.start_mark.line + 1
                    raise ConfigError(
                        [ConfigIssue("", f"line {line}: nested more than {MAX_DEPTH} levels deep")],
                        source,
                    )
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError as exc:
        raise ConfigError([_parse_issue(text, exc)], source) from None
    finally:
        loader.dispose()


def _parse_issue(text: str, exc: yaml.YAMLError) -> ConfigIssue:
    """libyaml >= 0.2.6 (PyYAML 6.0.2+ wheels) stops at its own nesting limit (1,000 flow
    levels) while scanning ahead, before the parser's events reach ``MAX_DEPTH``: the same
    problem, so the same message."""
    mark = getattr(exc, "problem_mark", None)
    if "nesting depth" in str(getattr(exc, "problem", "")) and mark is not None:
        return ConfigIssue("", f"line {mark.line + 1}: nested more than {MAX_DEPTH} levels deep")
    return ConfigIssue("", f"not valid YAML: {_yaml_message(text, exc)}")


def _compose(loader: Any, text: str, source: str) -> Node | None:
    try:
        return loader.get_single_node()
    except RecursionError:
        raise ConfigError(
            [ConfigIssue("", f"nested more than {MAX_DEPTH} levels deep; flatten it")], source
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(
            [ConfigIssue("", f"not valid YAML: {_yaml_message(text, exc)}")], source
        ) from None


def _yaml_message(text: str, exc: yaml.YAMLError) -> str:
    """libyaml's messages lack the quoted line the pure-Python parser gives; ask that one."""
    try:
        yaml.safe_load(text)
    except yaml.YAMLError as pure:
        return str(pure)
    except RecursionError:
        pass
    return str(exc)


def _line(node: Node) -> int:
    return node.start_mark.line + 1


def _check(root: Node) -> Iterator[ConfigIssue]:
    issues = list(_walk(root, "", 0, set(), set()))
    if issues:  # depth and cycles are bounded now, so sizing below cannot recurse too deep
        yield from issues
        return
    size = _expanded_size(root, {}, set())
    if size is not None and size > MAX_EXPANDED_NODES:
        yield ConfigIssue(
            "",
            f"its aliases expand to {size} values, more than the {MAX_EXPANDED_NODES} allowed "
            "(nested aliases, an 'alias bomb'?); write the values out instead",
        )


def _walk(
    node: Node, key: str, depth: int, path: set[int], done: set[int], hidden: bool = False
) -> Iterator[ConfigIssue]:
    """Tags, duplicate keys, depth and cycles. An aliased node is checked once (``done``), so
    the walk is linear; a node met again on its own path is a cycle. ``hidden``: the node is
    under a credential-like key, so no message shows its value."""
    if id(node) in done:
        return
    if id(node) in path:
        yield ConfigIssue(key, f"line {_line(node)}: an alias refers to a value that contains it")
        return
    if depth > MAX_DEPTH:
        yield ConfigIssue(key, f"line {_line(node)}: nested more than {MAX_DEPTH} levels deep")
        return
    if node.tag not in _JSON_TAGS:
        yield ConfigIssue(key, _tag_problem(node, hidden))
        return
    if isinstance(node, ScalarNode):
        if problem := _scalar_problem(node):
            yield ConfigIssue(key, f"line {_line(node)}: {problem}")
        return
    path.add(id(node))
    try:
        if isinstance(node, SequenceNode):
            for i, item in enumerate(node.value):
                yield from _walk(item, join_key(key, f"[{i}]"), depth + 1, path, done, hidden)
        elif isinstance(node, MappingNode):
            yield from _mapping(node, key, depth, path, done, hidden)
    finally:
        path.discard(id(node))
        done.add(id(node))


def _mapping(
    node: MappingNode, key: str, depth: int, path: set[int], done: set[int], hidden: bool
) -> Iterator[ConfigIssue]:
    seen: dict[str, int] = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, ScalarNode) or key_node.tag not in _JSON_TAGS:
            yield ConfigIssue(key, f"line {_line(key_node)}: a key must be plain text")
            continue
        if key_node.tag == _MERGE:  # `<<: *base` merges, later keys win
            yield from _merge(key_node, value_node, key, depth, path, done, hidden)
            continue
        name = key_node.value
        child = join_key(key, key_part(name)) if name else join_key(key, "['']")
        if key_node.tag != _STR:
            yield ConfigIssue(child, _key_problem(key_node))
            continue
        if name in seen:
            yield ConfigIssue(
                child,
                f"duplicate key: first on line {seen[name]}, again on line {_line(key_node)}; "
                "YAML would silently keep only the last, so remove one",
            )
        else:
            seen[name] = _line(key_node)
        under = hidden or hides_value(name)  # the whole name: ``child`` may show it cut short
        yield from _walk(value_node, child, depth + 1, path, done, under)


def _merge(
    key_node: Node,
    node: Node,
    key: str,
    depth: int,
    path: set[int],
    done: set[int],
    hidden: bool,
) -> Iterator[ConfigIssue]:
    """A merge key's value: a mapping, or a list of mappings (aliases of them, usually)."""
    items = node.value if isinstance(node, SequenceNode) else [node]
    wrong = next((item for item in items if not isinstance(item, MappingNode)), None)
    if wrong is not None:
        what = "a list" if isinstance(wrong, SequenceNode) else "a single value"
        verb = "is" if wrong is node else "holds"
        yield ConfigIssue(
            join_key(key, "<<"),
            f"line {_line(key_node)}: a merge key takes a mapping or a list of mappings (e.g. "
            f"<<: *base), but its value {verb} {what} (line {_line(wrong)})",
        )
        return
    yield from _walk(node, key, depth + 1, path, done, hidden)


# Why a key YAML reads as something other than text loses data, by what it reads it as.
_KEY_LOSS = {
    "tag:yaml.org,2002:null": "~, null and an empty key would all become null",
    "tag:yaml.org,2002:bool": "ON and YES would both become true",
    "tag:yaml.org,2002:int": "1, 01 and 0x1 would all become 1",
    _FLOAT: "1.0 and 1.00 would both become 1.0",
}
_INT = "tag:yaml.org,2002:int"


def _key_problem(node: ScalarNode) -> str:
    text = _short(node.value)
    return (
        f"line {_line(node)}: YAML reads the key {text!r} as {_KEY_READ_AS[node.tag]}, not as a "
        f"name ({_KEY_LOSS[node.tag]}, and one value would be lost); quote it: "
        f'"{text}"'
    )


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:37] + "..."


def _scalar_problem(node: ScalarNode) -> str | None:
    if node.tag == _MERGE:
        return 'YAML reads << as a merge key, which only a key can be; quote it: "<<"'
    if node.tag in (_INT, _FLOAT) and ":" in node.value:
        return _sexagesimal_problem(node.value)
    if node.tag == _FLOAT and not _finite(node.value):
        text = _short(node.value)
        return f"{text!r} is not a finite number, which config cannot carry (JSON has none)"
    return None


def _sexagesimal_problem(text: str) -> str:
    """YAML 1.1's base-60 numbers (``1:30`` is 90): PyYAML reads one, Pulumi's Go YAML reader
    (YAML 1.2: no base 60) reads the text, so the file means two things."""
    value = _base60(text)
    number = (
        f" or write the number ({value:g})" if value is not None and math.isfinite(value) else ""
    )
    return (
        f"YAML 1.1 reads {_short(text)!r} as a base-60 number, Pulumi's YAML reader as the text "
        f'{_short(text)!r}; quote it ("{_short(text)}"){number}'
    )


def _base60(text: str) -> float | None:
    digits = text.replace("_", "").lower()
    sign = -1.0 if digits.startswith("-") else 1.0
    total = 0.0
    try:
        for part in digits.lstrip("+-").split(":"):
            total = total * 60 + float(part)
    except (ValueError, OverflowError):
        return None
    return sign * total


def _finite(text: str) -> bool:
    """Whether a YAML 1.1 float (``1_000.5``, ``.inf``) is finite."""
    digits = text.replace("_", "").lower()
    if digits.lstrip("+-") in (".inf", ".nan"):
        return False
    value = _base60(digits)
    return value is not None and math.isfinite(value)


def _tag_problem(node: Node, hidden: bool) -> str:
    what = _WHAT.get(node.tag, f"a value tagged {node.tag}")
    scalar = isinstance(node, ScalarNode) and node.tag in _WHAT and len(node.value) <= 80
    scalar = scalar and not hidden  # a credential's value is never echoed
    shown = f"{node.value!r} as " if scalar else "this as "
    hint = "only text, numbers, true/false, lists and mappings"
    quote = f'; if you mean the text, quote it: "{node.value}"' if scalar else ""
    if node.tag == "tag:yaml.org,2002:binary":
        quote = ""
    return (
        f"line {_line(node)}: YAML reads {shown}{what}, which config cannot carry ({hint}){quote}"
    )


def _expanded_size(node: Node, memo: dict[int, int], path: set[int]) -> int | None:
    """Values the node stands for once aliases are expanded; None on a cycle. Memoised, so
    shared (aliased) nodes are sized once: linear in the document, however large the result."""
    if id(node) in memo:
        return memo[id(node)]
    if id(node) in path:
        return None
    if isinstance(node, ScalarNode):
        return 1
    path.add(id(node))
    total = 1
    children = (
        node.value if isinstance(node, SequenceNode) else [n for pair in node.value for n in pair]
    )
    for child in children:
        size = _expanded_size(child, memo, path)
        if size is None:
            return None
        total += size
    path.discard(id(node))
    memo[id(node)] = total
    return total
