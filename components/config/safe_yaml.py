"""Reading a stack file's YAML safely, as the Pulumi CLI reads it: only what JSON can carry,
nothing two YAML readers would read differently, bounded.

The Pulumi CLI reads the stack file with gopkg.in/yaml.v3 v3.0.1 and hands the program every
config value as text (structured values as JSON). This module parses with PyYAML, checks the
composed node graph, and builds the document from the values the Pulumi CLI reads
(``components.config.scalar_readings``, ``components.config.yaml_v3``), so the offline plan
sees what `pulumi up` sees. Refused, as config issues naming the key and the line:

- a duplicate key (compared as written, as yaml.v3 does: ``x`` and ``"x"`` are one key): YAML
  parsers keep one value and drop the other, or (yaml.v3) fail;
- a scalar the two readers read as different values (``1e3`` is 1000 to Pulumi and text to
  YAML 1.1; ``0.10`` is passed to the program as ``"0.1"`` at the top level), dates,
  ``.inf``/``.nan``, YAML 1.1's base-60 numbers, keys that are not text to Pulumi (``1``,
  ``true``, ``~``), explicit tags other than ``!!str`` and ``!``; ``on``/``yes``/``off`` are read
  as Pulumi reads them, as text;
- ``!!binary``, ``!!set``, ``!!omap``: values JSON cannot encode;
- aliases: a self-referencing alias is a cycle; nested aliases (an "alias bomb", the
  billion-laughs attack) expand to billions of nodes when the value is JSON-encoded;
- very deep nesting: Python's recursion limit;
- a merge key (``<<``) whose value is not a mapping or a list of mappings, and ``<<`` anywhere
  but as a key.

Every check is linear in the size of the file (aliases are sized with memoisation, never
expanded).
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from components.config.grammars import hides_value
from components.config.scalar_readings import MERGE, STR, Place, read_scalar
from components.config.yaml_v3 import MAYBE_NOT_TEXT
from components.errors import ConfigError, ConfigIssue, join_key, key_part

# libyaml's parser when PyYAML has it: ~9x faster on large stack files (benchmarks/README.md).
_BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_FILE_BYTES = 4 * 2**20
"""A stack file larger than this is refused before parsing (the benchmarks' 256-slice stack is
19 KB, the examples about 1 KB)."""
MAX_DEPTH = 40
"""Deepest nesting of mappings and lists (the example and benchmark stacks are 6 deep)."""
MAX_ALIAS_GROWTH = 200_000
"""Nodes expanding its aliases may add to the document (an alias repeats what it names; a
document without aliases adds none, however large: a 10,000-workload stack has 250,000
nodes)."""

CONFIG_KEY = "config"
"""The stack file's key whose entries are the config values (`tpu-pathways:<key>: ...`)."""

_JSON_TAGS = {
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    STR,
    "tag:yaml.org,2002:seq",
    "tag:yaml.org,2002:map",
    MERGE,
}
_WHAT = {
    "tag:yaml.org,2002:timestamp": "a date/time",
    "tag:yaml.org,2002:binary": "binary data (!!binary)",
    "tag:yaml.org,2002:set": "a set (!!set)",
    "tag:yaml.org,2002:omap": "an ordered map (!!omap)",
    "tag:yaml.org,2002:pairs": "a list of pairs (!!pairs)",
}


def load_yaml(text: str, source: str) -> Any:
    """The document of ``text`` with the values the Pulumi CLI reads, or ConfigError naming
    every key that breaks the rules above."""
    if len(text) > MAX_FILE_BYTES:
        message = f"larger than {MAX_FILE_BYTES} bytes, the most a stack file may have"
        raise ConfigError([ConfigIssue("", message)], source)
    scanned = _scan(text, source)
    loader = _Loader(text)
    try:
        node = _compose(loader, text, source)
        if node is None:
            return None
        walk = _Walk(scanned)
        issues = list(walk.check(node))
        if issues:
            raise ConfigError(issues, source)
        loader.readings = walk.readings
        try:
            return loader.construct_document(node)
        except yaml.YAMLError as exc:  # the checks above leave none; a net, never a traceback
            raise ConfigError([_parse_issue(text, exc)], source) from None
    finally:
        loader.dispose()


class _Loader(_BASE_LOADER):  # type: ignore[misc, valid-type]
    """PyYAML's structure (mappings, lists, merges, aliases) with the scalars as the Pulumi CLI
    reads them (``readings``, by node, from the walk)."""

    readings: dict[int, Any]

    def construct_object(self, node: Node, deep: bool = False) -> Any:
        if isinstance(node, ScalarNode):
            return self.readings[id(node)]
        return super().construct_object(node, deep=deep)


@dataclass
class _Scanned:
    """What the event stream tells and the composed nodes no longer do, by position."""

    tags: dict[int, str] = field(default_factory=dict)
    """The tags written on scalars (a node does not tell a written ``!!str`` from a resolved
    one)."""
    flow_questions: set[int] = field(default_factory=set)
    """Unquoted text with a '?' inside ``[ ]`` or ``{ }``: libyaml 0.2.5 (PyYAML) reads it
    whole, gopkg.in/yaml.v3's scanner (scannerc.go, yaml_parser_scan_plain_scalar) ends the
    text at the '?' and then fails to load the file."""


def _scan(text: str, source: str) -> _Scanned:
    """Tags, '?' in flow text, and the depth, from the event stream (flat, no recursion:
    composing a very deep document exhausts the stack, libyaml's composer with a crash rather
    than an exception)."""
    scanned = _Scanned()
    depth = flow = 0
    flows: list[bool] = []
    loader = _BASE_LOADER(text)
    try:
        while (event := loader.get_event()) is not None:
            if isinstance(event, yaml.ScalarEvent):
                if event.tag is not None:
                    scanned.tags[event.start_mark.index] = event.tag
                if flow and not event.style and "?" in event.value:
                    scanned.flow_questions.add(event.start_mark.index)
            elif isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                flows.append(bool(event.flow_style))
                flow += flows[-1]
                if depth > MAX_DEPTH:
                    line = event.start_mark.line + 1
                    raise ConfigError(
                        [ConfigIssue("", f"line {line}: nested more than {MAX_DEPTH} levels deep")],
                        source,
                    )
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
                flow -= flows.pop()
    except yaml.YAMLError as exc:
        raise ConfigError([_parse_issue(text, exc)], source) from None
    finally:
        loader.dispose()
    return scanned


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
    except (RecursionError, ValueError):  # PyYAML's constructors raise ValueError on `0x_`
        pass
    return str(exc)


def _line(node: Node) -> int:
    return node.start_mark.line + 1


class _Level(enum.Enum):
    """Where a node is in the stack file: its scalars are read by ``Place``."""

    ROOT = "root"  # the document
    CONFIG = "config"  # the `config:` mapping
    TOP = "top"  # a config value: tpu-pathways:<key>: <this>
    NESTED = "nested"  # anything inside a config value (or another root key)


@dataclass
class _Walk:
    """Tags, duplicate keys, depth, cycles and every scalar's reading. An aliased collection
    is checked once per level (``done``), so the walk is linear; a node met again on its own
    path is a cycle. A scalar is read wherever it appears (an alias may put it at the top level and
    inside a value), each time in constant time."""

    scanned: _Scanned
    readings: dict[int, Any] = field(default_factory=dict)
    path: set[int] = field(default_factory=set)
    done: set[tuple[int, _Level]] = field(default_factory=set)

    def check(self, root: Node) -> Iterator[ConfigIssue]:
        issues = list(self.walk(root, "", 0, _Level.ROOT, False))
        if issues:  # depth and cycles are bounded now, so sizing below cannot recurse too deep
            yield from issues
            return
        size = _expanded_size(root, {}, set())
        growth = None if size is None else size - _distinct_nodes(root)
        if growth is not None and growth > MAX_ALIAS_GROWTH:
            yield ConfigIssue(
                "",
                f"its aliases expand to {size} values, adding {growth}, more than the "
                f"{MAX_ALIAS_GROWTH} aliases may add (nested aliases, an 'alias bomb'?); write "
                "the values out instead",
            )

    def walk(
        self, node: Node, key: str, depth: int, level: _Level, hidden: bool
    ) -> Iterator[ConfigIssue]:
        """``hidden``: the node is under a credential-like key, so no message shows its
        value."""
        if (id(node), level) in self.done:
            return
        if id(node) in self.path:
            yield ConfigIssue(
                key, f"line {_line(node)}: an alias refers to a value that contains it"
            )
            return
        if depth > MAX_DEPTH:
            yield ConfigIssue(key, f"line {_line(node)}: nested more than {MAX_DEPTH} levels deep")
            return
        if isinstance(node, ScalarNode):
            place = Place.TOP if level is _Level.TOP else Place.NESTED
            yield from self.scalar(node, key, place, hidden)
            return
        if node.tag not in _JSON_TAGS:
            yield ConfigIssue(key, _tag_problem(node, hidden))
            return
        self.path.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                for i, item in enumerate(node.value):
                    child = join_key(key, f"[{i}]")
                    yield from self.walk(item, child, depth + 1, _Level.NESTED, hidden)
            elif isinstance(node, MappingNode):
                yield from self.mapping(node, key, depth, level, hidden)
        finally:
            self.path.discard(id(node))
            self.done.add((id(node), level))

    def scalar(
        self, node: ScalarNode, key: str, place: Place, hidden: bool
    ) -> Iterator[ConfigIssue]:
        tag = self.scanned.tags.get(node.start_mark.index)
        if tag is not None and node.tag not in _JSON_TAGS:  # !!binary, !!timestamp, !custom
            yield ConfigIssue(key, _tag_problem(node, hidden))
            return
        if node.start_mark.index in self.scanned.flow_questions:
            shown = "" if hidden or len(node.value) > 40 else f': "{node.value}"'
            yield ConfigIssue(key, f"line {_line(node)}: {_FLOW_QUESTION}{shown}")
            return
        if node.tag == STR and (node.style or node.value[:1] not in MAYBE_NOT_TEXT):
            self.readings[id(node)] = node.value  # text to both readers: most scalars
            return
        reading = read_scalar(node, tag, place, hidden)
        if reading.problem is not None:
            yield ConfigIssue(key, f"line {_line(node)}: {reading.problem}")
        else:
            self.readings[id(node)] = reading.value

    def mapping(
        self, node: MappingNode, key: str, depth: int, level: _Level, hidden: bool
    ) -> Iterator[ConfigIssue]:
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode):
                yield ConfigIssue(key, f"line {_line(key_node)}: a key must be plain text")
                continue
            name = key_node.value
            child = join_key(key, key_part(name)) if name else join_key(key, "['']")
            if name in seen:  # as yaml.v3 compares keys: as written (`1` and "1" are one)
                yield ConfigIssue(
                    child,
                    f"duplicate key: first on line {seen[name]}, again on line "
                    f"{_line(key_node)}; YAML would keep only one, so remove one",
                )
                continue
            seen[name] = _line(key_node)
            if key_node.tag == MERGE:  # `<<: *base` merges; the mapping's own keys win
                yield from self.merge(key_node, value_node, key, depth, level, hidden)
                continue
            if name == "<<":
                yield ConfigIssue(child, f"line {_line(key_node)}: {_QUOTED_MERGE}")
                continue
            problems = list(self.scalar(key_node, child, Place.KEY, hidden))
            if problems:
                yield from problems
                continue
            under = hidden or _hides(name)  # the whole name: ``child`` may show it cut short
            yield from self.walk(value_node, child, depth + 1, _child_level(level, name), under)

    def merge(
        self, key_node: Node, node: Node, key: str, depth: int, level: _Level, hidden: bool
    ) -> Iterator[ConfigIssue]:
        """A merge key's value: a mapping, or a list of mappings (aliases of them, usually)."""
        items = node.value if isinstance(node, SequenceNode) else [node]
        wrong = next((item for item in items if not isinstance(item, MappingNode)), None)
        if wrong is not None:
            what = "a list" if isinstance(wrong, SequenceNode) else "a single value"
            verb = "is" if wrong is node else "holds"
            yield ConfigIssue(
                join_key(key, "<<"),
                f"line {_line(key_node)}: a merge key takes a mapping or a list of mappings "
                f"(e.g. <<: *base), but its value {verb} {what} (line {_line(wrong)})",
            )
            return
        for item in items:  # each merged mapping's entries sit where this mapping's do
            yield from self.walk(item, key, depth + 1, level, hidden)


_FLOW_QUESTION = (
    "inside [ ] or { }, Pulumi's YAML reader ends unquoted text at a '?' and then cannot load "
    "the file; quote the text"
)
# A stack file repeats its key names (name, image, pool...): each is judged once.
_hides = functools.lru_cache(maxsize=4096)(hides_value)
# pulumi/pulumi LoadProjectStackBytes writes the file out and reads it again (yaml.v3): the
# writer leaves the text << unquoted, and the reader takes that for a merge key.
_QUOTED_MERGE = (
    "a key that is the text << becomes a merge key when Pulumi writes the file out and reads "
    "it again (its load fails, or merges the value); rename the key"
)


def _child_level(level: _Level, name: str) -> _Level:
    if level is _Level.ROOT:
        return _Level.CONFIG if name == CONFIG_KEY else _Level.NESTED
    return _Level.TOP if level is _Level.CONFIG else _Level.NESTED


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


def _distinct_nodes(root: Node) -> int:
    """Nodes of the document as written, each aliased node once."""
    seen = {id(root)}
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, SequenceNode):
            children = node.value
        elif isinstance(node, MappingNode):
            children = [n for pair in node.value for n in pair]
        else:
            continue
        for child in children:
            if id(child) not in seen:
                seen.add(id(child))
                stack.append(child)
    return len(seen)


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
