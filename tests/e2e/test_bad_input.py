"""Bad input, tried systematically: generated malformed stack configs, workload specs and CLI
arguments must end in a clean error that names the key, never in a traceback, and must not
start the engine (so nothing is registered)."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components.cli import main as cli
from components.config.schema import StackConfig
from components.errors import ConfigError
from components.pathways.spec import PathwaysJobSpec
from components.plan import engine
from components.resolve.checks import parse_stack_config
from components.resolve.workload_specs import user_pod_template
from tests.examples import EXAMPLES_DIR
from tests.helpers import assert_error_report, ends_within

BASE: dict[str, Any] = {
    "environment": "dev",
    "gcp": {"project": "tpu-pathways-dev", "region": "us-west4", "zone": "us-west4-a"},
    "cluster": {"name": "pathways-dev", "deletionProtection": False},
    # three heads (train, notebook, shared) and a node for one client of the shared service
    "cpuPool": {"machineType": "n2-standard-64", "minNodes": 1, "maxNodes": 4},
    "tpuPools": [
        {"name": "v5e", "generation": "v5e", "topology": "2x4", "capacity": {"spot": True}},
        {"name": "v5p", "accelerator": "v5p-16", "slices": 2, "allowUnlistedZone": True},
    ],
    "addons": {"kueue": {"enabled": True}},
    "workloads": [
        {
            "name": "train",
            "pool": "v5p",
            "slices": 2,
            "image": "python:3.12",
            "command": ["python", "-c", "pass"],
            "priority": "high",
        },
        {"name": "notebook", "pool": "v5e", "mode": "headless"},
    ],
    "sharedServices": [{"name": "shared", "pool": "v5e"}],
}

SETTINGS = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,  # the same cases in every CI run
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

weird_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.text(alphabet=st.characters(min_codepoint=0x80, max_codepoint=0x2FFF), max_size=20),
    st.just("x" * 5000),
    st.just(""),
    st.sampled_from(["4x5", "v5litepod-17", "n2-standard-3", "RAPID ", "-bad-", "UPPER"]),
)
weird_values = st.one_of(
    weird_scalars,
    st.lists(weird_scalars, max_size=3),
    st.dictionaries(st.text(max_size=8), weird_scalars, max_size=3),
)


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key path of a nested dict/list config."""
    found = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*prefix, index))
    return found


def _containers(node: Any, prefix: tuple = ()) -> list[tuple]:
    found = [prefix] if isinstance(node, dict) else []
    if isinstance(node, dict):
        for key, value in node.items():
            found += _containers(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _containers(value, (*prefix, index))
    return found


def _get(node: Any, path: tuple) -> Any:
    for part in path:
        node = node[part]
    return node


@st.composite
def mutated_configs(draw) -> dict[str, Any]:
    """The base config with 1-3 mutations: a value replaced by a wrong one, a key deleted or an
    unknown key added, anywhere in the tree."""
    config = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(1, 3))):
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "add":
            path = draw(st.sampled_from(_containers(config)))
            key = draw(st.one_of(st.text(min_size=1, max_size=12), st.just("topolgy")))
            _get(config, path)[key] = draw(weird_values)
            continue
        paths = _paths(config)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = _get(config, path[:-1])
        if action == "delete":
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(weird_values)
    return config


@pytest.fixture
def engine_spy(monkeypatch):
    """Counts engine runs: invalid input must be rejected before the engine starts."""
    calls = []
    real = engine.run_program

    def spy(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "run_program", spy)
    return calls


def _run_cli(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = cli.main(argv)
        except SystemExit as exc:  # argparse's own usage errors
            code = exc.code if isinstance(exc.code, int) else 2
    return code, err.getvalue()


def _write_stack(directory: Path, values: dict[str, Any], dumper=yaml.SafeDumper) -> None:
    config = {f"tpu-pathways:{key}": value for key, value in values.items()}
    (directory / "Pulumi.fuzz.yaml").write_text(yaml.dump({"config": config}, Dumper=dumper))


@SETTINGS
@given(values=mutated_configs())
def test_malformed_stack_configs_end_in_clean_errors(values, tmp_path_factory, engine_spy):
    directory = tmp_path_factory.mktemp("stacks")
    _write_stack(directory, values)
    runs_before = len(engine_spy)
    code, stderr = _run_cli(["plan", "--stack", "fuzz", "--stacks-dir", str(directory), "--json"])
    assert code in (0, 2), stderr
    if code == 2:
        assert_error_report(stderr)
        assert len(engine_spy) == runs_before, "the engine ran for a rejected config"
        problems = [line for line in stderr.splitlines() if line.startswith("  - ")]
        assert problems, stderr
        for line in problems:
            key, _, message = line[4:].partition(": ")
            assert key and message, f"issue without a key: {line!r}"


@SETTINGS
@given(values=mutated_configs())
def test_validation_raises_only_config_errors(values):
    try:
        parse_stack_config(values)
    except ConfigError as exc:
        assert exc.issues
        assert all(issue.key for issue in exc.issues), exc


def test_known_bad_configs_name_their_keys():
    cases = {
        ("tpuPools", 0, "topology"): ("4x5", "tpuPools[0].topology"),
        ("tpuPools", 1, "slices"): (0, "tpuPools[1].slices"),
        ("workloads", 0, "name"): ("a" * 23, "workloads[0].name"),
        ("cluster", "relaseChannel"): ("RAPID", "cluster.relaseChannel"),
    }
    for path, (value, key) in cases.items():
        values = copy.deepcopy(BASE)
        _get(values, path[:-1])[path[-1]] = value
        with pytest.raises(ConfigError) as caught:
            parse_stack_config(values)
        assert key in [issue.key for issue in caught.value.issues], caught.value


spec_values = st.recursive(
    weird_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(
            st.sampled_from(
                [
                    "workers",
                    "controller",
                    "type",
                    "topology",
                    "numSlices",
                    "deploymentMode",
                    "customComponents",
                    "componentType",
                    "maxRestarts",
                    "template",
                    "other",
                ]
            ),
            children,
            max_size=4,
        ),
    ),
    max_leaves=12,
)


@SETTINGS
@given(data=st.dictionaries(st.text(max_size=12), spec_values, max_size=5))
def test_malformed_pathwaysjob_specs_end_in_clean_errors(data):
    try:
        PathwaysJobSpec.parse(data)
    except ConfigError as exc:
        assert exc.issues


@SETTINGS
@given(
    argv=st.lists(
        st.one_of(
            st.sampled_from(["plan", "shapes", "--stack", "--json", "--out", "--diff", "dev", ""]),
            st.text(max_size=15),
        ),
        max_size=5,
    )
)
def test_arbitrary_cli_arguments_end_in_a_clean_report(argv, tmp_path_factory):
    if "--out" in argv:  # keep generated output out of the work tree
        argv = [a for a in argv if a != "--out"]
    code, stderr = _run_cli(argv)
    assert code in (0, 1, 2), stderr
    if code == 2:
        assert_error_report(stderr)


# --- Hostile YAML: what JSON cannot carry is refused by key and line -------------------------

GOOD_STACK = "dev"


def _stacks_dir_with(tmp_path: Path, name: str, text: str) -> Path:
    """A stacks directory with the example dev stack and one more stack file."""
    directory = tmp_path / "stacks"
    directory.mkdir()
    source = Path(__file__).resolve().parents[2] / "stacks" / f"Pulumi.{GOOD_STACK}.yaml"
    (directory / source.name).write_text(source.read_text())
    (directory / f"Pulumi.{name}.yaml").write_text(text)
    return directory


def _alias_bomb(levels: int = 12) -> str:
    lines = ["config:", '  tpu-pathways:a: &a ["x","x","x","x","x","x","x","x","x"]']
    for i in range(1, levels):
        prev = "a" if i == 1 else f"b{i - 1}"
        lines.append(f"  tpu-pathways:b{i}: &b{i} [{', '.join([f'*{prev}'] * 9)}]")
    return "\n".join(lines) + "\n"


HOSTILE_YAML = {
    "date": (
        "config:\n  tpu-pathways:workloads:\n    - name: x\n      pathwaysVersion: 2025-01-15\n",
        ["tpu-pathways:workloads[0].pathwaysVersion", "line 4", "date", 'quote it: "2025-01-15"'],
    ),
    "date-in-env": (
        "config:\n  tpu-pathways:workloads:\n    - env:\n        DAY: 2025-01-15\n",
        ["tpu-pathways:workloads[0].env.DAY", "line 4", "date"],
    ),
    "binary": (
        "config:\n  tpu-pathways:team: !!binary aGVsbG8=\n",
        ["tpu-pathways:team", "line 2", "binary"],
    ),
    "set": ("config:\n  tpu-pathways:team: !!set {a, b}\n", ["tpu-pathways:team", "set"]),
    "self-alias": (
        "config:\n  tpu-pathways:tpuPools: &p [*p]\n",
        ["tpu-pathways:tpuPools[0]", "contains it"],
    ),
    "duplicate-key": (
        "config:\n  tpu-pathways:cluster:\n    name: a\n    regional: true\n    name: b\n",
        ["tpu-pathways:cluster.name", "duplicate key", "line 3", "line 5"],
    ),
    "duplicate-namespaced-key": (
        "config:\n  tpu-pathways:team: a\n  tpu-pathways:team: b\n",
        ["config.tpu-pathways:team", "line 2", "line 3"],
    ),
    "deep-nesting": (
        "config:\n  tpu-pathways:x: " + "[" * 100_000 + "]" * 100_000 + "\n",
        ["line 2", "nested more than"],
    ),
    "alias-bomb": (_alias_bomb(), ["aliases expand to", "alias bomb"]),
    "merge-of-a-number": (
        "config:\n  tpu-pathways:gcp:\n    <<: 5\n",
        ["tpu-pathways:gcp.<<", "line 3", "a mapping or a list of mappings", "is a single value"],
    ),
    "merge-of-a-list-with-a-number": (
        "config:\n  tpu-pathways:gcp:\n    <<: [{region: us-east5}, 7]\n",
        ["tpu-pathways:gcp.<<", "line 3", "holds a single value"],
    ),
    "merge-of-an-aliased-list": (
        "config:\n  tpu-pathways:x: &l [1, 2]\n  tpu-pathways:gcp:\n    <<: *l\n",
        ["tpu-pathways:gcp.<<", "line 4", "holds a single value (line 2)"],
    ),
    "merge-key-as-a-value": (
        "config:\n  tpu-pathways:team: <<\n",
        ["tpu-pathways:team", "line 2", 'quote it: "<<"'],
    ),
    "boolean-env-names": (  # yaml.v3 booleans; ON and YES are text to Pulumi (and read so)
        "config:\n  tpu-pathways:workloads:\n    - env:\n        true: a\n        TRUE: b\n",
        [
            "tpu-pathways:workloads[0].env.true: line 4: YAML reads the key 'true' as true/false",
            "tpu-pathways:workloads[0].env.TRUE: line 5",
            'quote it: "TRUE"',
        ],
    ),
    "null-and-number-keys": (
        "config:\n  tpu-pathways:secrets:\n    NULL: {secure: x}\n    ~: {secure: y}\n    1: z\n",
        ["secrets.NULL: line 3", "as null", "secrets.~: line 4", "secrets.1: line 5", "a number"],
    ),
    "number-key-says-what-numbers-lose": (
        "config:\n  tpu-pathways:secrets:\n    1: z\n",
        [
            "tpu-pathways:secrets.1: line 3: YAML reads the key '1' as a number, not as a name "
            '(1, 01 and 0x1 would all become 1, and one value would be lost); quote it: "1"'
        ],
    ),
    "null-key-says-what-nulls-lose": (
        "config:\n  tpu-pathways:secrets:\n    ~: z\n",
        [
            "tpu-pathways:secrets.~: line 3: YAML reads the key '~' as null, not as a name (~, "
            "null and an empty key would all become null, and one value would be lost); quote "
            'it: "~"'
        ],
    ),
    "sexagesimal-number": (
        "config:\n  tpu-pathways:cpuPool:\n    maxNodes: 1:30\n",
        [
            "tpu-pathways:cpuPool.maxNodes: line 3: YAML 1.1 reads '1:30' as a base-60 number, "
            "Pulumi's YAML reader as the text '1:30'; quote it (\"1:30\") or write the number (90)"
        ],
    ),
    "sexagesimal-float": (
        "config:\n  tpu-pathways:x: -1:30.5\n",
        ["tpu-pathways:x: line 2: YAML 1.1 reads '-1:30.5' as a base-60 number", "(-90.5)"],
    ),
    "infinite-price": (
        "config:\n  tpu-pathways:pricing:\n    tpuChipHour: {v5e: {onDemand: .inf}}\n",
        ["tpu-pathways:pricing.tpuChipHour.v5e.onDemand: line 3", "'.inf' is not a finite"],
    ),
    "overflowing-number": (
        "config:\n  tpu-pathways:x: 1.0e+999\n",
        ["tpu-pathways:x: line 2", "not a finite number"],
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_YAML))
def test_hostile_yaml_is_refused_by_key_and_line(case, tmp_path):
    text, expected = HOSTILE_YAML[case]
    directory = _stacks_dir_with(tmp_path, "bad", text)
    code, stderr = _run_cli(["plan", "--stack", "bad", "--stacks-dir", str(directory)])
    assert code == 2, stderr
    assert_error_report(stderr)
    for fragment in expected:
        assert fragment in stderr, (fragment, stderr)


@pytest.mark.parametrize("case", sorted(HOSTILE_YAML))
def test_one_broken_stack_file_does_not_break_stacks(case, tmp_path, capsys):
    directory = _stacks_dir_with(tmp_path, "bad", HOSTILE_YAML[case][0])
    code = cli.main(["stacks", "--stacks-dir", str(directory), "--github-output"])
    out, err = capsys.readouterr()
    assert code == 2
    assert 'owners=["dev"]' in out  # the good stack is still listed
    assert "stack 'bad' left out" in err


def test_one_broken_stack_file_does_not_break_plan_all(tmp_path, capsys):
    directory = _stacks_dir_with(tmp_path, "bad", HOSTILE_YAML["alias-bomb"][0])
    base = tmp_path / "base"
    base.mkdir()
    code = cli.main(
        [
            "plan",
            "--all",
            "--diff-dir",
            str(base),
            "--stacks-dir",
            str(directory),
            "--format",
            "json",
        ]
    )
    out, _ = capsys.readouterr()
    document = json.loads(out)
    stacks = {d["stack"]: d for d in document["stacks"]}
    assert code == 1
    assert "alias bomb" in stacks["bad"]["error"]
    assert "error" not in stacks[GOOD_STACK]


def test_yaml_anchors_and_merge_keys_still_work(tmp_path):
    """Aliases within budget and `<<` merges are plain YAML that stack files may use."""
    from components.resolve.stack_files import read_stack_file

    text = (
        "config:\n"
        "  tpu-pathways:gcp: &g {project: tpu-pathways-dev, region: us-east5, zone: us-east5-b}\n"
        "  tpu-pathways:other:\n    <<: *g\n    zone: us-east5-a\n"
    )
    directory = _stacks_dir_with(tmp_path, "ok", text)
    raw = read_stack_file("ok", directory)
    assert json.loads(raw["tpu-pathways:other"]) == {
        "project": "tpu-pathways-dev",
        "region": "us-east5",
        "zone": "us-east5-a",
    }


def test_long_stack_name_is_a_clean_error(tmp_path):
    code, stderr = _run_cli(["plan", "--stack", "a" * 5000])
    assert code == 2
    assert "--stack" in stderr and "not a stack name" in stderr
    assert_error_report(stderr)


# --- --diff documents: the plan document schema, size and depth ----------------------------


def _plan_document() -> dict[str, Any]:
    return {
        "stack": "dev",
        "project": "tpu-pathways",
        "resources": [
            {
                "urn": "urn:pulumi:dev::tpu-pathways::pulumi:pulumi:Stack::x",
                "type": "pulumi:pulumi:Stack",
                "name": "x",
                "parent": None,
                "custom": False,
                "provider": None,
                "inputs": {},
                "dependencies": [],
                "options": {},
            }
        ],
        "outputs": {},
        "summary": {"tpu": {}, "resources": 1},
    }


def _broken(change) -> dict[str, Any]:
    document = _plan_document()
    change(document)
    return document


WRONG_SHAPES = {
    "options-not-a-mapping": _broken(lambda d: d["resources"][0].update(options=5)),
    "summary-not-a-mapping": _broken(lambda d: d.update(summary="x")),
    "resource-without-inputs": _broken(lambda d: d["resources"][0].pop("inputs")),
    "ignore-changes-not-strings": _broken(
        lambda d: d["resources"][0].update(options={"ignoreChanges": [1]})
    ),
    "tpu-summary-not-counts": _broken(lambda d: d["summary"].update(tpu={"v5e": "x"})),
    "resources-not-a-list": _broken(lambda d: d.update(resources={"a": 1})),
}


@pytest.mark.parametrize("case", sorted(WRONG_SHAPES))
def test_diff_documents_of_the_wrong_shape_are_refused(case, tmp_path):
    base = tmp_path / "base.json"
    base.write_text(json.dumps(WRONG_SHAPES[case]))
    code, stderr = _run_cli(["plan", "--stack", "dev", "--diff", str(base)])
    assert code == 2, stderr
    assert "is not a plan document" in stderr
    assert_error_report(stderr)


def test_a_well_formed_diff_document_is_accepted(tmp_path):
    base = tmp_path / "base.json"
    base.write_text(json.dumps(_plan_document()))
    code, stderr = _run_cli(["plan", "--stack", "dev", "--diff", str(base)])
    assert code == 0, stderr


def test_deeply_nested_diff_document_is_refused(tmp_path):
    base = tmp_path / "base.json"
    base.write_text("[" * 200_000 + "]" * 200_000)
    code, stderr = _run_cli(["plan", "--stack", "dev", "--diff", str(base)])
    assert code == 2
    assert "nested too deeply" in stderr


def test_moderately_nested_diff_document_is_refused_by_depth(tmp_path):
    document = _plan_document()
    deep: Any = "x"
    for _ in range(100):
        deep = {"a": deep}
    document["outputs"] = {"deep": deep}
    base = tmp_path / "base.json"
    base.write_text(json.dumps(document))
    code, stderr = _run_cli(["plan", "--stack", "dev", "--diff", str(base)])
    assert code == 2
    assert "levels deep" in stderr


def test_diff_reads_a_bounded_amount(monkeypatch, tmp_path):
    from components.cli import diff as diff_cli

    code, stderr = _run_cli(["plan", "--stack", "dev", "--diff", "/dev/zero"])
    assert code == 2
    assert "--diff: /dev/zero is not a regular file" in stderr
    big = tmp_path / "big.json"
    big.write_text(" " * 2000)
    monkeypatch.setattr(diff_cli, "MAX_PLAN_BYTES", 1000)
    code, stderr = _run_cli(["plan", "--stack", "dev", "--diff", str(big)])
    assert code == 2
    assert "is larger than 1000 bytes, the most a plan may have" in stderr


# --- Property: generated YAML with dates, binaries, aliases, duplicates and nesting ---------

_ANCHORS = ["a0", "a1", "a2"]
yaml_scalars = st.one_of(
    st.sampled_from(
        [
            "2025-01-15",
            "2025-01-15T10:00:00Z",
            "!!binary aGVsbG8=",
            "!!set {a, b}",
            "!!omap [a: 1]",
            "!!str 2025-01-15",
            "~",
            "true",
            "0x1F",
            ".nan",
            "-.inf",
            "12e3",
            '"quoted"',
            "v5p",
            "4x4",
            "''",
        ]
    ),
    st.sampled_from([f"*{a}" for a in _ANCHORS]),  # aliases (some defined, some not)
    st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True),
    st.integers(min_value=-(2**65), max_value=2**65).map(str),
)


def _flow(children):
    keys = st.sampled_from(["name", "pool", "slices", "env", "image", "x", "<<"])
    anchored = st.tuples(st.sampled_from(["", *(f"&{a} " for a in _ANCHORS)]), children)
    return st.one_of(
        st.lists(children, max_size=4).map(lambda items: f"[{', '.join(items)}]"),
        st.lists(st.tuples(keys, children), max_size=4).map(
            lambda pairs: "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
        ),
        anchored.map(lambda pair: pair[0] + pair[1]),
    )


yaml_fragments = st.recursive(yaml_scalars, _flow, max_leaves=20)


# The BASE stack as block YAML, written once (every generated file starts with it)
_BASE_LINES = yaml.safe_dump(
    {"config": {f"tpu-pathways:{key}": value for key, value in BASE.items()}}, sort_keys=False
).splitlines()


@st.composite
def hostile_stack_files(draw) -> str:
    """The BASE stack as block YAML plus extra top-level keys whose values are generated
    fragments: duplicates of BASE keys, dates, binaries, aliases, deep nesting."""
    lines = list(_BASE_LINES)
    extra_keys = st.sampled_from([*BASE, "team", "pathwaysVersion", "other"])
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        fragment = draw(yaml_fragments)
        depth = draw(st.sampled_from([0, 0, 0, 5, 45, 3000]))
        fragment = "[" * depth + fragment + "]" * depth
        lines.append(f"  tpu-pathways:{draw(extra_keys)}: {fragment}")
    return "\n".join(lines) + "\n"


@SETTINGS
@given(text=hostile_stack_files())
def test_generated_hostile_yaml_ends_in_a_clean_report(text, tmp_path_factory):
    directory = _stacks_dir_with(tmp_path_factory.mktemp("hostile"), "fuzz", text)
    code, stderr = _run_cli(["plan", "--stack", "fuzz", "--stacks-dir", str(directory), "--json"])
    assert code in (0, 2), stderr
    if code == 2:
        assert_error_report(stderr)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()) as err:
        code = cli.main(["stacks", "--stacks-dir", str(directory)])
    assert code in (0, 2)
    if err.getvalue():
        assert_error_report(err.getvalue())
    # The good stack is never hidden by the bad one, unless the two conflict (both own one
    # cluster): that refuses the whole list with a report of its own.
    if not err.getvalue().startswith("error: stacks: "):
        assert GOOD_STACK in out.getvalue()


# --- Free text against the real grammars, quantities, strict counts --------------------------


def _with(change) -> dict[str, Any]:
    values = copy.deepcopy(BASE)
    change(values)
    return values


def _train(values: dict[str, Any]) -> dict[str, Any]:
    return values["workloads"][0]


def _issue_keys(values: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(ConfigError) as caught:
        parse_stack_config(values)
    return {issue.key: issue.message for issue in caught.value.issues}


REFUSED = {
    "image-with-newline": (
        lambda v: _train(v).update(image="python:3.12\nevil"),
        "workloads[0].image",
        "not a container image reference",
    ),
    "image-with-space": (
        lambda v: _train(v).update(image="python 3.12"),
        "workloads[0].image",
        "not a container image reference",
    ),
    "image-uppercase-path": (
        lambda v: _train(v).update(image="gcr.io/Project/img"),
        "workloads[0].image",
        "not a container image reference",
    ),
    "component-image": (
        lambda v: _train(v).update(customComponents=[{"type": "worker", "image": "a b"}]),
        "workloads[0].customComponents[0].image",
        "not a container image reference",
    ),
    "pathways-dir-newline": (
        lambda v: _train(v).update(pathwaysDir="gs://tpu-pathways-dev-pathways-dev-pathways/a\nb"),
        "workloads[0].pathwaysDir",
        "control characters",
    ),
    "pathways-dir-not-gcs": (
        lambda v: _train(v).update(pathwaysDir="/tmp/x"),
        "workloads[0].pathwaysDir",
        "not a Cloud Storage path",
    ),
    "pathways-dir-bad-bucket": (
        lambda v: _train(v).update(pathwaysDir="gs://Bad_Bucket!/x"),
        "workloads[0].pathwaysDir",
        "not a bucket name",
    ),
    "node-selector-key": (
        lambda v: _train(v).update(nodeSelector={"not a key!": "x"}),
        "workloads[0].nodeSelector",
        "not a label key",
    ),
    "node-selector-prefix": (
        lambda v: _train(v).update(nodeSelector={"Bad_Prefix/name": "x"}),
        "workloads[0].nodeSelector",
        "invalid prefix",
    ),
    "node-selector-value": (
        lambda v: _train(v).update(nodeSelector={"a": "x" * 64}),
        "workloads[0].nodeSelector.a",
        "not a label value",
    ),
    "flag-newline": (
        lambda v: _train(v).update(
            customComponents=[{"type": "worker", "flags": ["--a=1\n--b=2"]}]
        ),
        "workloads[0].customComponents[0].flags[0]",
        "control characters",
    ),
    "env-5mb": (
        lambda v: _train(v).update(env={"BIG": "x" * 5_000_000}),
        "workloads[0].env.BIG",
        "at most 32768",
    ),
    "env-total": (
        lambda v: _train(v).update(env={f"V{i}": "x" * 30_000 for i in range(10)}),
        "workloads[0].env",
        "total",
    ),
    "pathways-version-newline": (
        lambda v: _train(v).update(pathwaysVersion="latest\nx"),
        "workloads[0].pathwaysVersion",
        "image tag",
    ),
    "cpu-garbage": (
        lambda v: _train(v).update(resources={"cpu": "8 cores"}),
        "workloads[0].resources.cpu",
        "not a CPU quantity",
    ),
    "memory-half-byte": (
        lambda v: _train(v).update(resources={"memory": "0.5"}),
        "workloads[0].resources.memory",
        "below one byte",
    ),
    "memory-fraction-of-byte": (
        lambda v: _train(v).update(resources={"memory": "1.5"}),
        "workloads[0].resources.memory",
        "whole number of bytes",
    ),
    "memory-unicode-digits": (
        lambda v: _train(v).update(resources={"memory": "\u0663Gi"}),
        "workloads[0].resources.memory",
        "not a memory quantity",
    ),
    "slices-true": (lambda v: _train(v).update(slices=True), "workloads[0].slices", "whole number"),
    "slices-string": (
        lambda v: _train(v).update(slices="2"),
        "workloads[0].slices",
        "slices is a whole number (write slices: 2, unquoted)",
    ),
    "pool-slices-true": (
        lambda v: v["tpuPools"][1].update(slices=True),
        "tpuPools[1].slices",
        "whole number",
    ),
    "max-nodes-float": (
        lambda v: v["cpuPool"].update(maxNodes=3.0),
        "cpuPool.maxNodes",
        "maxNodes is a whole number (write maxNodes: 3, unquoted)",
    ),
    "bool-as-string": (
        lambda v: v["cluster"].update(deletionProtection="no"),
        "cluster.deletionProtection",
        "'no' is not allowed: deletionProtection is true or false (unquoted)",
    ),
    # issue 22: accepted though GCP, GKE, Linux or the API server refuse it
    "command-nul": (
        lambda v: _train(v).update(command=["sh", "-c", "echo\x00"]),
        "workloads[0].command[2]",
        "NUL",
    ),
    "command-arg-1.6mb": (
        lambda v: _train(v).update(command=["x", "y" * 1_600_000]),
        "workloads[0].command[1]",
        "MAX_ARG_STRLEN",
    ),
    "flag-nul": (
        lambda v: _train(v).update(customComponents=[{"type": "worker", "flags": ["--a=\x00"]}]),
        "workloads[0].customComponents[0].flags[0]",
        "control characters",
    ),
    "flag-140kb": (
        lambda v: _train(v).update(
            customComponents=[{"type": "worker", "flags": ["--a=" + "b" * 140_000]}]
        ),
        "workloads[0].customComponents[0].flags[0]",
        "MAX_ARG_STRLEN",
    ),
    "nodes-range-ipv6": (
        lambda v: v["cluster"].update(network={"nodesCidr": "2001:db8::/64"}),
        "cluster.network.nodesCidr",
        "IPv6",
    ),
    "pods-range-link-local": (
        lambda v: v["cluster"].update(network={"podsCidr": "169.254.0.0/16"}),
        "cluster.network.podsCidr",
        "link-local",
    ),
    "services-range-slash-32": (
        lambda v: v["cluster"].update(network={"servicesCidr": "10.8.0.1/32"}),
        "cluster.network.servicesCidr",
        "/29",
    ),
    "existing-network-newline": (
        lambda v: v["cluster"].update(
            network={"existingNetwork": "vpc\nx", "existingSubnetwork": "s"}
        ),
        "cluster.network.existingNetwork",
        "not a VPC network name",
    ),
    "existing-subnetwork-100-chars": (
        lambda v: v["cluster"].update(
            network={"existingNetwork": "vpc", "existingSubnetwork": "s" * 100}
        ),
        "cluster.network.existingSubnetwork",
        "not a subnetwork name",
    ),
    "authorized-101-private": (
        lambda v: v["cluster"].update(
            privateNodes=True,
            authorizedNetworks=[{"cidr": f"10.{i}.0.0/16"} for i in range(101)],
        ),
        "cluster.authorizedNetworks",
        "at most 100",
    ),
    "authorized-quarters": (
        lambda v: v["cluster"].update(
            authorizedNetworks=[{"cidr": f"{q}.0.0.0/2"} for q in (0, 64, 128, 192)]
        ),
        "cluster.authorizedNetworks",
        "0.0.0.0/0",
    ),
    "team-gke-managed": (
        lambda v: v.update(teams=[{"name": "gke-managed-x"}]),
        "teams[0].name",
        "system namespace",
    ),
    "team-gmp-system": (
        lambda v: v.update(teams=[{"name": "gmp-system"}]),
        "teams[0].name",
        "system namespace",
    ),
    "team-default-service-account": (
        lambda v: v.update(teams=[{"name": "pathways", "serviceAccount": "default"}]),
        "teams[0].serviceAccount",
        "every pod",
    ),
    "project-with-google": (
        lambda v: v["gcp"].update(project="googler-lab"),
        "gcp.project",
        "'google'",
    ),
    "bucket-g00gle": (
        lambda v: v.update(scratchBucket={"name": "g00gle-data"}),
        "scratchBucket.name",
        "g00gle",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_free_text_and_counts_are_checked_against_their_grammars(case):
    change, key, fragment = REFUSED[case]
    issues = _issue_keys(_with(change))
    matching = [k for k in issues if k.startswith(key)]
    assert matching, issues
    assert any(fragment in issues[k] for k in matching), issues


@pytest.mark.parametrize(
    "image",
    [
        "python:3.12",
        "ubuntu",
        "localhost:5000/team/trainer:v1",
        "us-docker.pkg.dev/my-project/repo/trainer:v1.2-rc_3",
        "gcr.io/p/img@sha256:" + "a" * 64,
        "gcr.io/p/img:v1@sha256:" + "0" * 64,
        "[::1]:5000/img",
        "registry.example.com/a__b/c--d/e.f",
    ],
)
def test_valid_image_references_are_accepted(image):
    config = parse_stack_config(_with(lambda v: _train(v).update(image=image)))
    assert config.workloads[0].image == image


def test_valid_node_selector_and_pathways_dir_are_accepted():
    # The grammar only: no node of the stack carries the selector, which the preflight refuses.
    config = StackConfig.model_validate(
        _with(
            lambda v: _train(v).update(
                nodeSelector={"cloud.google.com/reservation-name": "res-1", "team": ""},
                pathwaysDir="gs://tpu-pathways-dev-pathways-dev-pathways/pathways/train/run.1",
            )
        )
    )
    assert config.workloads[0].node_selector["cloud.google.com/reservation-name"] == "res-1"


def test_quantities_are_normalised_in_the_manifest():
    config = parse_stack_config(
        _with(lambda v: _train(v).update(resources={"cpu": " 8\n", "memory": "\t32Gi "}))
    )
    template = user_pod_template(config, config.workloads[0])
    resources = template["spec"]["containers"][0]["resources"]
    assert resources["requests"] == {"cpu": "8", "memory": "32Gi"}
    assert resources["limits"] == {"cpu": "8", "memory": "32Gi"}


@pytest.mark.parametrize(
    "namespace",
    [
        "default",
        "kube-system",
        "kube-public",
        "kube-node-lease",
        "jobset-system",
        "pathways-job-system",
        "kueue-system",
        "gke-managed-system",
        "gke-gmp-system",
    ],
)
def test_system_namespaces_are_refused_as_teams(namespace):
    issues = _issue_keys(_with(lambda v: v.update(teams=[{"name": namespace}])))
    assert "system namespace" in issues["teams[0].name"]


def _existing(v: dict[str, Any], **settings: Any) -> None:
    v["cluster"] = {"name": "pathways-dev", **settings}
    v["scratchBucket"] = {"create": False, "name": "owner-bucket"}


@pytest.mark.parametrize(
    ("existing", "key"),
    [
        ({"kubeconfigContext": ""}, "cluster.existing.kubeconfigContext"),
        ({"kubeconfigContext": "   "}, "cluster.existing.kubeconfigContext"),
        ({"name": "owner", "location": ""}, "cluster.existing.location"),
    ],
)
def test_existing_cluster_needs_a_real_context_or_location(existing, key):
    issues = _issue_keys(_with(lambda v: _existing(v, existing=existing)))
    assert key in issues, issues


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("privateNodes", True),
        ("authorizedNetworks", [{"cidr": "10.0.0.0/8"}]),
        ("kubernetesTokensViaDns", True),
        ("deletionProtection", False),
        ("releaseChannel", "STABLE"),
    ],
)
def test_existing_cluster_refuses_settings_that_cannot_apply(setting, value):
    issues = _issue_keys(
        _with(lambda v: _existing(v, existing={"kubeconfigContext": "owner"}, **{setting: value}))
    )
    assert "cannot apply to an existing cluster" in issues[f"cluster.{setting}"]


# --- Joined-name collisions and --out --------------------------------------------------------


def test_workloads_whose_joined_names_collide_are_refused():
    def change(v):
        v["teams"] = [{"name": "a"}, {"name": "a-b"}]
        v["workloads"] = [
            {"name": "b-c", "team": "a", "pool": "v5e", "mode": "headless"},
            {"name": "c", "team": "a-b", "pool": "v5e", "mode": "headless"},
        ]
        v["sharedServices"] = []
        v["addons"] = {}

    issues = _issue_keys(_with(change))
    assert "'a-b-c'" in issues["workloads[1]"] and "workloads[0]" in issues["workloads[1]"]


def test_service_accounts_whose_joined_names_collide_are_refused():
    def change(v):
        v["teams"] = [
            {"name": "a", "serviceAccount": "b-c"},
            {"name": "a-b", "serviceAccount": "c"},
        ]
        v["workloads"], v["sharedServices"] = [], []

    assert "'a-b-c'" in _issue_keys(_with(change))["teams[1]"]


def test_cpu_pool_named_like_a_tpu_slice_is_refused():
    issues = _issue_keys(_with(lambda v: v["cpuPool"].update(name="v5p-1")))
    assert "GKE node pool name of a slice of tpuPools[1]" in issues["cpuPool.name"]


def test_duplicate_urns_fail_the_plan_instead_of_dropping_one():
    import pulumi

    def program():
        pulumi.ComponentResource("tpu-pathways:test:Thing", "same")
        pulumi.ComponentResource("tpu-pathways:test:Thing", "same")
        return {}

    with pytest.raises(ConfigError, match="same name"):
        engine.run_program(program, "dup")


def test_out_never_overwrites(tmp_path, capsys):
    out = tmp_path / "manifests"
    out.mkdir()
    keep = out / "namespace-pathways.yaml"
    keep.write_text("mine\n")
    code = cli.main(["plan", "--stack", "dev", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert "--out" in err and "nothing is overwritten" in err
    assert keep.read_text() == "mine\n"
    assert sorted(p.name for p in out.iterdir()) == ["namespace-pathways.yaml"]


def test_out_into_a_new_or_empty_directory_writes(tmp_path, capsys):
    out = tmp_path / "empty"
    out.mkdir()
    assert cli.main(["plan", "--stack", "dev", "--out", str(out)]) == 0
    assert any(out.iterdir())


# --- Look-alike config keys ------------------------------------------------------------------


def _typo_stack(tmp_path: Path, key: str, value: str) -> Path:
    source = Path(__file__).resolve().parents[2] / "stacks" / "Pulumi.dev.yaml"
    directory = tmp_path / "s"
    directory.mkdir()
    (directory / "Pulumi.typo.yaml").write_text(source.read_text() + f"  {key}:\n{value}")
    return directory


def test_a_key_without_namespace_beside_its_namespaced_twin_is_refused(tmp_path):
    """Pulumi (since v3.44) reads a bare key as the project's, so the file sets
    tpu-pathways:workloads twice and Pulumi keeps one of them at random."""
    directory = _typo_stack(tmp_path, "workloads", "    - name: lost\n")
    code, stderr = _run_cli(["plan", "--stack", "typo", "--stacks-dir", str(directory)])
    assert code == 2
    assert_error_report(stderr)
    assert (
        "  - workloads: Pulumi reads 'workloads' as 'tpu-pathways:workloads', which the file "
        "also sets, and keeps one of the two values at random; remove one"
    ) in stderr


@pytest.mark.parametrize(
    ("key", "namespace", "right"),
    [
        ("tpu-pathway:secrets", "tpu-pathway", "tpu-pathways:secrets"),
        ("tpu_pathways:teams", "tpu_pathways", "tpu-pathways:teams"),
        ("Tpu-Pathways:workloads", "Tpu-Pathways", "tpu-pathways:workloads"),
        ("tpu-pathwayz:secrets", "tpu-pathwayz", "tpu-pathways:secrets"),
    ],
)
def test_a_misspelled_namespace_is_refused_without_showing_values(key, namespace, right, tmp_path):
    directory = _typo_stack(tmp_path, key, f"    hfToken: {PLAINTEXT}\n")
    code, stderr = _run_cli(["plan", "--stack", "typo", "--stacks-dir", str(directory)])
    assert code == 2
    assert_error_report(stderr)
    assert (
        f"  - {key}: the namespace {namespace!r} is a misspelling of 'tpu-pathways', so this "
        f"program would never read the key; write it as '{right}'"
    ) in stderr
    assert PLAINTEXT not in stderr


def test_the_engine_refuses_a_misspelled_namespace(monkeypatch):
    from pulumi.runtime import config as runtime_config

    from components.stack.entry import load_from_engine

    monkeypatch.setattr(runtime_config, "get_config_env", lambda: {})
    token = runtime_config.CONFIG.set({"tpu-pathway:secrets": json.dumps({"a": PLAINTEXT})})
    try:
        with pytest.raises(ConfigError) as caught:
            load_from_engine()
    finally:
        runtime_config.CONFIG.reset(token)
    # Reported with the rest of the config's problems (it has nothing else).
    assert [i.key for i in caught.value.issues] == ["tpu-pathway:secrets", "gcp", "cluster"]
    assert PLAINTEXT not in str(caught.value)


def test_other_namespaces_pass_through_as_written():
    from components.resolve.stack_files import namespaced

    config = {"gcp:project": "p", "kubernetes:context": "c", "team": "t"}
    assert namespaced(config) == (
        {"gcp:project": "p", "kubernetes:context": "c", "tpu-pathways:team": "t"},
        [],
    )


# --- Secrets ---------------------------------------------------------------------------------

CIPHERTEXT = "v1:Zm9vYmFyYmF6cXV4Y2lwaGVydGV4dA=="
PLAINTEXT = "hf_s3cr3t_value_that_must_not_leak"


def _secret_stack(tmp_path: Path, secrets_block: str, env_block: str) -> Path:
    source = Path(__file__).resolve().parents[2] / "stacks" / "Pulumi.dev.yaml"
    text = source.read_text().replace(
        "      resources:\n        cpu:", env_block + "      resources:\n        cpu:", 1
    )
    directory = tmp_path / "s"
    directory.mkdir(exist_ok=True)
    (directory / "Pulumi.sec.yaml").write_text(text + secrets_block)
    return directory


SECRETS_BLOCK = f"  tpu-pathways:secrets:\n    hfToken:\n      secure: {CIPHERTEXT}\n"
ENV_BLOCK = (
    "      env:\n"
    "        HF_TOKEN: {configSecret: hfToken}\n"
    "        DB_PASSWORD: {secretKeyRef: {name: db-creds, key: password}}\n"
    "      customComponents:\n"
    "        - type: proxy_server\n"
    "          env:\n"
    "            API_KEY: {configSecret: hfToken}\n"
)


def test_secure_values_plan_offline_as_secret_references(tmp_path, capsys):
    directory = _secret_stack(tmp_path, SECRETS_BLOCK, ENV_BLOCK)
    out = tmp_path / "manifests"
    code = cli.main(
        ["plan", "--stack", "sec", "--stacks-dir", str(directory), "--json", "--out", str(out)]
    )
    stdout, stderr = capsys.readouterr()
    assert code == 0, stderr
    plan = json.loads(stdout)
    secret = next(
        r
        for r in plan["resources"]
        if r["type"] == "kubernetes:core/v1:Secret"
        and r["inputs"]["metadata"]["namespace"] == "pathways"
    )
    assert secret["inputs"]["metadata"] == {
        "name": "hello-train-config-secrets",
        "namespace": "pathways",
    }
    assert secret["inputs"]["stringData"] == "[secret]"
    job = next(r for r in plan["resources"] if r["inputs"].get("kind") == "PathwaysJob")
    assert secret["urn"] in job["dependencies"]
    container = job["inputs"]["spec"]["controller"]["template"]["spec"]["containers"][0]
    # In the order `pulumi up` gives them: Pulumi hands a mapping over as JSON with its keys
    # sorted (Go's encoding/json), whatever their order in the file.
    assert container["env"] == [
        {
            "name": "DB_PASSWORD",
            "valueFrom": {"secretKeyRef": {"key": "password", "name": "db-creds"}},
        },
        {
            "name": "HF_TOKEN",
            "valueFrom": {"secretKeyRef": {"key": "hfToken", "name": "hello-train-config-secrets"}},
        },
    ]
    component = job["inputs"]["spec"]["customComponents"][0]
    assert component["customEnv"] == [
        {
            "name": "API_KEY",
            "valueFrom": {"secretKeyRef": {"key": "hfToken", "name": "hello-train-config-secrets"}},
        }
    ]
    written = "".join(p.read_text() for p in out.rglob("*") if p.is_file())
    assert CIPHERTEXT not in stdout and CIPHERTEXT not in written
    assert "stringData: '[secret]'" in written


def test_a_config_secret_value_is_a_pulumi_secret_when_decrypted(engine_spy):
    """Under `pulumi up` the engine hands over the decrypted value: it must stay secret."""
    values = _with(
        lambda v: (
            _train(v).update(env={"HF_TOKEN": {"configSecret": "hfToken"}}),
            v.update(secrets={"hfToken": PLAINTEXT}),
        )
    )
    plan = engine.plan_stack(parse_stack_config(values), "sec")
    document = json.dumps(plan.to_dict())
    assert PLAINTEXT not in document
    secret = plan.get("kubernetes:core/v1:Secret", "pathways-dev-pathways-train-config-secrets")
    assert secret.inputs["stringData"] == "[secret]"


def test_secrets_never_reach_a_diff(tmp_path, capsys):
    directory = _secret_stack(tmp_path, SECRETS_BLOCK, ENV_BLOCK)
    base = tmp_path / "base.json"
    assert cli.main(["plan", "--stack", "sec", "--stacks-dir", str(directory), "--json"]) == 0
    base.write_text(capsys.readouterr().out)
    changed = SECRETS_BLOCK.replace(CIPHERTEXT, CIPHERTEXT[:-4] + "AAA=")
    directory = _secret_stack(tmp_path, changed, ENV_BLOCK)
    for fmt in ("text", "markdown", "json"):
        code = cli.main(
            [
                "plan",
                "--stack",
                "sec",
                "--stacks-dir",
                str(directory),
                "--diff",
                str(base),
                "--format",
                fmt,
            ]
        )
        out = capsys.readouterr().out
        assert code == 0
        assert CIPHERTEXT[:-4] not in out


@pytest.mark.parametrize(
    "name", ["HF_TOKEN", "API_KEY", "DB_PASSWORD", "my_secret_thing", "GOOGLE_CREDENTIALS", "KEY"]
)
def test_plain_values_under_credential_names_are_refused(name):
    issues = _issue_keys(_with(lambda v: _train(v).update(env={name: "plain"})))
    message = issues[f"workloads[0].env.{name}"]
    assert "looks like a credential" in message
    assert "configSecret" in message and "secretKeyRef" in message
    assert "plain" not in message.replace("plain text", "")


def test_plain_credentials_in_component_env_are_refused():
    issues = _issue_keys(
        _with(
            lambda v: _train(v).update(
                customComponents=[{"type": "worker", "env": {"HF_TOKEN": "x"}}]
            )
        )
    )
    assert "looks like a credential" in issues["workloads[0].customComponents[0].env.HF_TOKEN"]


@pytest.mark.parametrize(
    "name", ["XLA_FLAGS", "KEYBOARD", "TOKENIZERS_PARALLELISM", "LIBTPU_INIT_ARGS"]
)
def test_ordinary_names_keep_plain_values(name):
    config = parse_stack_config(_with(lambda v: _train(v).update(env={name: "1"})))
    assert config.workloads[0].env == {name: "1"}


def test_unknown_config_secret_is_refused():
    issues = _issue_keys(
        _with(lambda v: _train(v).update(env={"HF_TOKEN": {"configSecret": "missing"}}))
    )
    assert "not an entry of `secrets`" in issues["workloads[0].env.HF_TOKEN"]


def test_a_plain_value_under_secrets_is_refused_without_showing_it(tmp_path):
    block = f"  tpu-pathways:secrets:\n    hfToken: {PLAINTEXT}\n"
    directory = _secret_stack(tmp_path, block, "")
    code, stderr = _run_cli(["plan", "--stack", "sec", "--stacks-dir", str(directory)])
    assert code == 2
    assert "tpu-pathways:secrets.hfToken: is plain text in the stack file" in stderr
    assert PLAINTEXT not in stderr


def test_a_secure_value_outside_secrets_is_refused(tmp_path):
    env = f"      env:\n        HF_TOKEN:\n          secure: {CIPHERTEXT}\n"
    directory = _secret_stack(tmp_path, "", env)
    code, stderr = _run_cli(["plan", "--stack", "sec", "--stacks-dir", str(directory)])
    assert code == 2
    assert "tpu-pathways:workloads[0].env.HF_TOKEN: an encrypted (secure) value" in stderr


def test_engine_refuses_unencrypted_secrets(monkeypatch):
    import pulumi
    from pulumi.runtime import config as runtime_config

    from components.stack.entry import load_from_engine

    monkeypatch.setattr(runtime_config, "get_config_env", lambda: {})
    monkeypatch.setattr(pulumi.runtime, "is_config_secret", lambda key: False)
    token = runtime_config.CONFIG.set({"tpu-pathways:secrets": '{"a": "plain"}'})
    try:
        with pytest.raises(ConfigError, match="stored in plain text") as caught:
            load_from_engine()
    finally:
        runtime_config.CONFIG.reset(token)
    assert '"plain"' not in str(caught.value)


def test_non_text_secret_values_are_not_echoed():
    issues = _issue_keys(_with(lambda v: v.update(secrets={"pin": 123456})))
    assert "value not shown" in issues["secrets.pin"]
    assert "123456" not in issues["secrets.pin"]


# --- Property: --diff bases that match the schema but hold odd values never crash the diff --

_DIFF_BASE = Path(__file__).resolve().parents[1] / "data" / "plan-dev-base.json"


_DIFF_BASE_TEXT = _DIFF_BASE.read_text()
_DIFF_BASE_PATHS = _paths(json.loads(_DIFF_BASE_TEXT))  # read and walked once, not per example


@st.composite
def mutated_plan_documents(draw) -> dict[str, Any]:
    """A real plan document with values swapped or deleted. The base is a saved plan (refresh:
    `python -m components plan --stack dev --json > tests/data/plan-dev-base.json`)."""
    document = json.loads(_DIFF_BASE_TEXT)
    paths = _DIFF_BASE_PATHS
    for step in range(draw(st.integers(min_value=1, max_value=4))):
        if step:  # the paths after the last change
            paths = _paths(document)
            if not paths:
                break
        path = draw(st.sampled_from(paths))
        parent = _get(document, path[:-1])
        if draw(st.booleans()) and isinstance(parent, dict):
            parent.pop(path[-1], None)
        else:
            parent[path[-1]] = draw(weird_values)
    return document


@SETTINGS
@given(document=mutated_plan_documents())
def test_mutated_diff_bases_end_in_a_diff_or_a_clean_error(document, tmp_path_factory):
    """What `plan --diff` does with a base, without re-planning the stack every time."""
    from components.cli.diff import load_plan_document
    from components.plan.diff import diff_plans
    from components.plan.diff_render import render
    from components.plan.model import Plan

    base = tmp_path_factory.mktemp("diff") / "base.json"
    base.write_text(json.dumps(document))
    try:
        before = load_plan_document(base, "--diff")
    except ConfigError as exc:
        assert exc.issues
        return
    current = Plan.load(json.loads(_DIFF_BASE_TEXT))
    for fmt in ("text", "markdown", "json"):
        render([diff_plans(before, current)], fmt)


def test_a_stack_file_is_read_with_a_bound(tmp_path, monkeypatch):
    from components.resolve import stack_files as stack_file

    directory = tmp_path / "s"
    directory.mkdir()
    (directory / "Pulumi.zero.yaml").symlink_to("/dev/zero")
    code, stderr = _run_cli(["plan", "--stack", "zero", "--stacks-dir", str(directory)])
    assert code == 2
    assert "Pulumi.zero.yaml: 1 problem\n  - is not a regular file" in stderr
    (directory / "Pulumi.loop.yaml").symlink_to(directory / "Pulumi.loop.yaml")
    code, stderr = _run_cli(["plan", "--stack", "loop", "--stacks-dir", str(directory)])
    assert code == 2
    assert "Pulumi.loop.yaml: 1 problem\n  - cannot be read: Too many levels of symbolic links" in (
        stderr
    )
    (directory / "Pulumi.big.yaml").write_text("config: {}\n" + "#" * 2000 + "\n")
    monkeypatch.setattr(stack_file, "MAX_FILE_BYTES", 1000)
    code, stderr = _run_cli(["plan", "--stack", "big", "--stacks-dir", str(directory)])
    assert code == 2
    assert "larger than 1000 bytes" in stderr


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (lambda v: v["scratchBucket"].update(name="goog-scratch"), "scratchBucket.name"),
        (lambda v: v["scratchBucket"].update(name="my-google-scratch"), "scratchBucket.name"),
        (lambda v: v["cluster"].update(name="google-tpus"), "scratchBucket"),
    ],
)
def test_bucket_names_follow_cloud_storage_rules(change, key):
    def apply(v):
        v.setdefault("scratchBucket", {})
        change(v)

    issues = _issue_keys(_with(apply))
    assert "not a bucket name" in issues[key], issues


# --- Round two: inputs that ended in tracebacks, hangs, or lost or leaked values -------------

ROOT = Path(__file__).resolve().parents[2]


def _bounded_cli(capfd, *argv: str, timeout: float = 120) -> tuple[int, str, str]:
    """Exit code, stdout and stderr (everything written to fds 1 and 2) of ``python -m
    components ARGV`` run in this process; a hang ends the test instead of stalling the run
    (``ends_within``). These inputs once hung or traced back; what they test is the refusal,
    not the process around it (tests/e2e/test_cli_process.py runs real processes)."""
    with ends_within(timeout):
        code = cli.main(list(argv))
    out, err = capfd.readouterr()
    return code, out, err


def _unknown_service_secret(values: dict[str, Any]) -> None:
    component = {"type": "worker", "env": {"FOO": {"configSecret": "nope"}}}
    values["sharedServices"][0]["customComponents"] = [component]


def test_a_shared_services_unknown_config_secret_is_refused_before_the_engine_runs(
    tmp_path, engine_spy
):
    _write_stack(tmp_path, _with(_unknown_service_secret))
    code, stderr = _run_cli(["plan", "--stack", "fuzz", "--stacks-dir", str(tmp_path)])
    assert code == 2
    assert_error_report(stderr)
    assert (
        "  - sharedServices[0].customComponents[0].env.FOO: configSecret 'nope' is not an entry "
        "of `secrets` (known: none)"
    ) in stderr
    assert engine_spy == []


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_lone_surrogates_in_a_diff_base_are_written_as_escapes(fmt, tmp_path, capsys):
    document = _plan_document()
    resource = document["resources"][0]
    resource.update(name="x\ud800", urn=resource["urn"] + "\udcff", inputs={"k\udc80": "v"})
    base = tmp_path / "base.json"
    base.write_text(json.dumps(document))  # as JSON escapes: \ud800
    code = cli.main(["plan", "--stack", "dev", "--diff", str(base), "--format", fmt])
    out, err = capsys.readouterr()
    assert code == 0, err
    out.encode("utf-8")  # what a terminal, a file or a PR comment is given
    if fmt == "json":
        (stack,) = json.loads(out)["stacks"]
        removed = next(r for r in stack["resources"] if r["kind"] == "remove")
        assert removed["name"] == "x\\ud800"
        assert removed["urn"].endswith("::x\\udcff")
    else:
        assert "x\\ud800" in out


def _not_python(tmp_path: Path, case: str) -> Path:
    path = tmp_path / f"program-{case}"
    if case == "yaml":
        path.write_text("config:\n  tpu-pathways:team: a\n")
    elif case == "nul-bytes":
        path.write_bytes(b"x = 1\x00\n")
    elif case == "latin-1":
        path.write_bytes(b"x = '\xe9'\n")
    elif case == "directory":
        path.mkdir()
    elif case == "fifo":
        os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    ("case", "fragment"),
    [
        ("yaml", "is not a Python program (SyntaxError: invalid syntax"),
        ("nul-bytes", "is not a Python program (SyntaxError: source code string cannot contain"),
        ("latin-1", "is not a Python program (UnicodeDecodeError:"),
        ("directory", "has no __main__.py; give a Pulumi project directory"),
        ("fifo", "is not a regular file; give a Pulumi program"),
        ("missing", "cannot be read: No such file or directory"),
    ],
)
def test_a_program_that_is_not_python_is_a_clean_error(case, fragment, tmp_path):
    program = _not_python(tmp_path, case)
    for extra in ([], ["--diff", str(tmp_path / "base.json")]):
        code, stderr = _run_cli(["plan", "--stack", "dev", "--program", str(program), *extra])
        assert code == 2
        assert_error_report(stderr)
        assert f"  - --program: {str(program)!r} {fragment}" in stderr


@pytest.mark.parametrize("option", ["--diff", "--diff-dir"])
def test_a_fifo_as_a_diff_base_is_refused_not_waited_on(option, tmp_path, capfd):
    fifo = tmp_path / "dev.json"
    os.mkfifo(fifo)
    target = fifo if option == "--diff" else tmp_path
    code, _, err = _bounded_cli(capfd, "plan", "--stack", "dev", option, str(target))
    assert code == 2, err
    assert f"  - {option}: {fifo} is not a regular file; give a file written by" in err
    assert "Traceback" not in err


def test_a_fifo_in_a_diff_dir_fails_its_stack_only(tmp_path, capfd):
    # The stack whose base is a FIFO and one other (all the example stacks: 2.6 CPU-s, the same)
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    for name in ("dev", "serving-v6e"):
        shutil.copy(EXAMPLES_DIR / f"Pulumi.{name}.yaml", stacks)
    bases = tmp_path / "bases"
    bases.mkdir()
    os.mkfifo(bases / "dev.json")
    argv = ("plan", "--all", "--stacks-dir", str(stacks), "--diff-dir", str(bases))
    code, out, err = _bounded_cli(capfd, *argv, "--format", "json")
    assert code == 1, err
    planned = {d["stack"]: d for d in json.loads(out)["stacks"]}
    assert sorted(planned) == ["dev", "serving-v6e"]
    assert "dev.json is not a regular file" in planned["dev"]["error"]
    assert "error" not in planned["serving-v6e"]


def _long_env_name_stack(directory: Path, length: int) -> None:
    name = "A" * (length - len("_TOKEN")) + "_TOKEN"  # the credential check's worst case
    values = _with(lambda v: _train(v).update(env={name: "x"}))
    # libyaml's emitter where PyYAML has it: the pure-Python one takes seconds over a 4 MiB key
    _write_stack(directory, values, getattr(yaml, "CSafeDumper", yaml.SafeDumper))


@pytest.mark.parametrize("length", [200_000, 4 * 2**20 - 2000])
def test_very_long_env_names_are_refused_quickly(length, tmp_path, capfd):
    """Once ~25 s (200,000 characters) and hours (4 MiB) in a quadratic pattern; now bounded
    first. The timeout is generous: the point is that it ends, with a short report."""
    _long_env_name_stack(tmp_path, length)
    argv = ("plan", "--stack", "fuzz", "--stacks-dir", str(tmp_path))
    code, _, err = _bounded_cli(capfd, *argv, timeout=120)
    assert code == 2, err[:2000]
    assert "Traceback" not in err
    assert f"has {length} characters; at most 256" in err
    assert len(err) < 2000


@pytest.mark.parametrize(
    ("price", "shown"),
    [(1e308, "1e+308"), (float("nan"), "nan"), (-1.0, "-1.0"), (1000.5, "1000.5")],
)
def test_absurd_price_overrides_are_refused_with_the_allowed_range(price, shown):
    issues = _issue_keys(
        _with(lambda v: v.update(pricing={"tpuChipHour": {"v5p": {"spot": price}}}))
    )
    assert issues["pricing.tpuChipHour.v5p.spot"] == (
        f"{shown} is not a chip-hour price; give USD per chip-hour from 0 to 1000 (list prices "
        "are a few dollars)"
    )


def test_the_plan_document_never_holds_infinity():
    from components.plan.render import render_json

    plan = engine.Plan("s", "p", [], {}, {"cost": float("inf")})
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        render_json(plan)


@pytest.mark.parametrize("number", ["Infinity", "-Infinity", "NaN", "1e999"])
def test_a_diff_base_with_a_non_finite_number_is_refused(number, tmp_path):
    base = tmp_path / "base.json"
    base.write_text(
        json.dumps(_plan_document()).replace('"inputs": {}', f'"inputs": {{"x": {number}}}')
    )
    code, stderr = _run_cli(["plan", "--stack", "dev", "--diff", str(base)])
    assert code == 2
    assert_error_report(stderr)
    assert f"{base} holds {number}" in stderr


def test_a_diff_base_with_a_duplicate_resource_is_refused(tmp_path):
    document = _plan_document()
    first = document["resources"][0]
    document["resources"].append({**first, "inputs": {"shadowed": True}})
    base = tmp_path / "base.json"
    base.write_text(json.dumps(document))
    code, stderr = _run_cli(["plan", "--stack", "dev", "--diff", str(base)])
    assert code == 2
    assert_error_report(stderr)
    assert (
        f"resources: two resources have the URN {first['urn']!r} (resources[0] and resources[1])"
    ) in stderr


@pytest.mark.parametrize(
    ("where", "key"),
    [
        (lambda v, env: _train(v).update(env=env), "workloads[0].env.true"),
        (
            lambda v, env: _train(v).update(customComponents=[{"type": "worker", "env": env}]),
            "workloads[0].customComponents[0].env.true",
        ),
        (lambda v, env: _train(v).update(nodeSelector=env), "workloads[0].nodeSelector.true"),
        (lambda v, env: v.update(secrets=env), "secrets.true"),
    ],
)
def test_names_a_yaml_reader_made_of_true_or_null_are_refused(where, key):
    """What Pulumi's YAML reader (gopkg.in/yaml.v3) hands the program for an unquoted `TRUE: a`
    key (the engine path): the name 'true'. An unquoted `ON: a` reaches it as 'ON'."""
    issues = _issue_keys(_with(lambda v: where(v, {"true": "a"})))
    assert issues[key].startswith(
        "'true' is not allowed as a name: Pulumi's YAML reader reads unquoted true, True, TRUE,"
    )
    assert 'quote the name in the stack file ("TRUE": ...)' in issues[key]


def test_the_engine_refuses_an_env_name_read_from_a_yaml_boolean(monkeypatch):
    from pulumi.runtime import config as runtime_config

    from components.stack.entry import load_from_engine

    config = {f"tpu-pathways:{k}": json.dumps(v) for k, v in BASE.items() if k != "environment"}
    workloads = copy.deepcopy(BASE["workloads"])
    workloads[0]["env"] = {"true": "b", "null": "c"}  # `TRUE: b`, `~: c` once read
    config["tpu-pathways:workloads"] = json.dumps(workloads)
    monkeypatch.setattr(runtime_config, "get_config_env", lambda: {})
    token = runtime_config.CONFIG.set(config)
    try:
        with pytest.raises(ConfigError) as caught:
            load_from_engine()
    finally:
        runtime_config.CONFIG.reset(token)
    keys = [i.key for i in caught.value.issues]
    assert keys == ["workloads[0].env.true", "workloads[0].env.null"]


def test_out_never_writes_a_placeholder_secret_as_an_appliable_manifest(tmp_path, capsys):
    directory = _secret_stack(tmp_path, SECRETS_BLOCK, ENV_BLOCK)
    out = tmp_path / "manifests"
    code = cli.main(["plan", "--stack", "sec", "--stacks-dir", str(directory), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    appliable = [p for p in out.iterdir() if p.suffix in (".yaml", ".yml", ".json")]
    assert appliable and all("[secret]" not in p.read_text() for p in appliable)
    example = out / "secret-pathways-hello-train-config-secrets.yaml.example"
    text = example.read_text()
    assert text.startswith("# NOT APPLIED (the .example suffix keeps `kubectl apply -f DIR` away")
    assert yaml.safe_load(text)["stringData"] == "[secret]"
    assert (
        "1 object with [secret] or [unknown] values as .example files that are not applied" in err
    )
    assert "secret-pathways-hello-train-config-secrets.yaml.example" in err


SECRET_SHAPED = {
    "number": 987654321,
    "float": 98765.4321,
    "list": ["s3cr3t-a", "s3cr3t-b"],
    "mapping": {"value": "s3cr3t-c"},
    "boolean": True,
}


@pytest.mark.parametrize("shape", sorted(SECRET_SHAPED))
@pytest.mark.parametrize(
    ("where", "key"),
    [
        (lambda v, s: _train(v).update(env={"HF_TOKEN": s}), "workloads[0].env.HF_TOKEN"),
        (lambda v, s: _train(v).update(env={"DB_PASSWORD": s}), "workloads[0].env.DB_PASSWORD"),
        (
            lambda v, s: v["sharedServices"][0].update(
                customComponents=[{"type": "worker", "env": {"API_KEY": s}}]
            ),
            "sharedServices[0].customComponents[0].env.API_KEY",
        ),
        (lambda v, s: v.update(secrets={"hfToken": s}), "secrets.hfToken"),
    ],
)
def test_values_under_credential_names_are_never_echoed(shape, where, key):
    secret = SECRET_SHAPED[shape]
    issues = _issue_keys(_with(lambda v: where(v, secret)))
    message = issues[key]
    assert "value not shown" in message
    for shown in (repr(secret), str(secret), "s3cr3t"):
        assert shown not in message
    if key.startswith("secrets."):
        return
    assert message.endswith(
        "is not allowed: an env value is text (quote numbers and true/false), {secretKeyRef: "
        "{name: SECRET, key: KEY}} or {configSecret: NAME}"
    )


def test_a_date_under_a_credential_name_is_refused_without_echoing_it(tmp_path):
    text = (
        "config:\n  tpu-pathways:workloads:\n    - env:\n        HF_TOKEN: 2031-04-05\n"
        "  tpu-pathways:secrets:\n    pin: 2031-04-06\n"
    )
    directory = _stacks_dir_with(tmp_path, "bad", text)
    code, stderr = _run_cli(["plan", "--stack", "bad", "--stacks-dir", str(directory)])
    assert code == 2
    assert "workloads[0].env.HF_TOKEN: line 4: YAML reads this as a date/time" in stderr
    assert "secrets.pin: line 6: YAML reads this as a date/time" in stderr
    assert "2031" not in stderr


def test_an_unknown_key_in_an_env_value_lists_that_forms_keys():
    secret_ref = {"secretKeyRef": {"name": "creds", "key": "token", "value": "s3cr3t"}}
    issues = _issue_keys(_with(lambda v: _train(v).update(env={"HF_TOKEN": secret_ref})))
    assert issues == {
        "workloads[0].env.HF_TOKEN.secretKeyRef.value": "unknown key 'value'. Allowed keys: "
        "name, key."
    }


# --- An adversarial set of the same kinds, and a property over generated env blocks --------

SENTINEL = "zq-s3cr3t-9"


def _dev_with(extra: str) -> str:
    """The example dev stack's text with ``extra`` lines appended under ``config:``."""
    return (ROOT / "stacks" / f"Pulumi.{GOOD_STACK}.yaml").read_text() + extra


# Lines of the dev stack: an appended line's number is this plus its place in ``extra``.
_DEV_LINES = len((ROOT / "stacks" / f"Pulumi.{GOOD_STACK}.yaml").read_text().splitlines())


def _env_stack(env_lines: str) -> str:
    return _dev_with(
        "  tpu-pathways:sharedServices:\n    - name: svc\n      pool: v5e\n"
        "      customComponents:\n        - type: worker\n          env:\n" + env_lines
    )


ADVERSARIAL = {
    "merge-of-null": (_dev_with("  tpu-pathways:x:\n    <<: ~\n"), ["x.<<", "is a single value"]),
    "merge-of-a-scalar-alias": (
        _dev_with("  tpu-pathways:y: &s text\n  tpu-pathways:x:\n    <<: *s\n"),
        [f"x.<<: line {_DEV_LINES + 3}", f"(line {_DEV_LINES + 1})"],
    ),
    "merge-in-a-list-item": (
        _dev_with("  tpu-pathways:x:\n    - a: 1\n      <<: [[1]]\n"),
        ["x[0].<<", "holds a list"],
    ),
    "hex-key": (
        _env_stack("            0x1F: a\n"),
        ["env.0x1F", "as a number", 'quote it: "0x1F"'],
    ),
    "underscored-number-key": (_env_stack("            1_000: a\n"), ["env.1_000", "a number"]),
    "float-key": (_env_stack("            .inf: a\n"), ["env..inf", "not a finite number"]),
    "false-secret-name": (
        _dev_with("  tpu-pathways:secrets:\n    False: {secure: v1:abc}\n"),
        [f"secrets.False: line {_DEV_LINES + 2}", "true/false"],
    ),
    "nan-env-value": (_env_stack("            MODE: .nan\n"), ["env.MODE", "not a finite number"]),
    "list-under-a-credential-name": (
        _env_stack(f"            HF_TOKEN: [{SENTINEL}, {SENTINEL}]\n"),
        ["env.HF_TOKEN: a list (value not shown)"],
    ),
    "number-under-a-password": (
        _env_stack("            DB_PASSWORD: 424242424242\n"),
        ["env.DB_PASSWORD: a number (value not shown)"],
    ),
    "mapping-under-secrets": (
        _dev_with(f"  tpu-pathways:secrets:\n    hfToken: {{plain: {SENTINEL}}}\n"),
        ["secrets.hfToken: is plain text in the stack file (value not shown)"],
    ),
    "namespace-with-a-dash-too-many": (
        _dev_with(f"  tpu-pathways-:secrets:\n    a: {SENTINEL}\n"),
        ["tpu-pathways-:secrets: the namespace 'tpu-pathways-' is a misspelling"],
    ),
    "namespace-without-the-dash": (
        _dev_with(f"  tpupathways:secrets:\n    a: {SENTINEL}\n"),
        ["write it as 'tpu-pathways:secrets'"],
    ),
    "price-at-the-float-limit": (
        _dev_with("  tpu-pathways:pricing:\n    tpuChipHour: {v5e: {spot: 1.0e+308}}\n"),
        ["pricing.tpuChipHour.v5e.spot: 1e+308 is not a chip-hour price"],
    ),
    "non-ascii-env-name": (
        _env_stack("            ÄPI_KEY: a\n"),
        ["is not an environment variable"],
    ),
    "long-credential-name": (
        _env_stack(f"            {'A' * 300}_TOKEN: {SENTINEL}\n"),
        ["(306 characters)", "at most 256"],
    ),
    "config-secret-named-true": (
        _env_stack("            FOO: {configSecret: TRUE}\n"),
        ["env.FOO.configSecret: true/false (value not shown) is not allowed"],
    ),
    "secret-key-ref-with-extra-key": (
        _env_stack(
            f"            API_KEY: {{secretKeyRef: {{name: a, key: b, value: {SENTINEL}}}}}\n"
        ),
        ["env.API_KEY.secretKeyRef.value: unknown key 'value'. Allowed keys: name, key."],
    ),
}


@pytest.mark.parametrize("case", sorted(ADVERSARIAL))
def test_adversarial_stack_files_end_in_a_report_that_leaks_nothing(case, tmp_path, engine_spy):
    text, expected = ADVERSARIAL[case]
    directory = _stacks_dir_with(tmp_path, "bad", text)
    code, stderr = _run_cli(["plan", "--stack", "bad", "--stacks-dir", str(directory), "--json"])
    assert code == 2, stderr
    assert_error_report(stderr)
    assert engine_spy == []
    assert SENTINEL not in stderr
    for fragment in expected:
        assert fragment in stderr, (fragment, stderr)


# Credential-like names (the values under them must never be shown) and others. "{S}" in a
# value is the sentinel under a credential-like name, plain text under any other.
_CREDENTIAL_KEYS = ("HF_TOKEN", "API_KEY", "DB_PASSWORD", "MY_SECRET", "KEY", "_TOKEN")
_ENV_KEYS = st.one_of(
    st.sampled_from(
        ["ON", "On", "YES", "yes", "No", "OFF", "NULL", "~", "1", "0x1F", "1.5", ".inf", "<<"]
    ),
    st.sampled_from([*_CREDENTIAL_KEYS[:-1], "XLA_FLAGS"]),
    st.integers(min_value=250, max_value=400).map(lambda n: "A" * n + "_TOKEN"),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True),
)
_ENV_VALUES = st.sampled_from(
    [
        "{S}",
        "[{S}, 1]",
        "{value: {S}}",
        "424242424242",
        ".nan",
        "2031-04-05",
        "{configSecret: missing}",
        "{configSecret: ON}",
        "{secretKeyRef: {name: creds, key: token}}",
        "{secretKeyRef: {name: creds, key: token, value: {S}}}",
        "*a",
        "{<<: 5}",
        "<<",
        "'1'",
    ]
)


@SETTINGS
@given(
    entries=st.lists(st.tuples(_ENV_KEYS, _ENV_VALUES), min_size=1, max_size=5),
    where=st.sampled_from(["workload", "service"]),
)
def test_generated_env_blocks_never_trace_back_or_leak(entries, where, tmp_path_factory):
    """Env names YAML mis-reads, credential names over the bound, and values of every wrong
    shape: a clean report or a plan, never a traceback, and a value under a credential-like
    name never shown."""
    entries = [
        (k, v.replace("{S}", SENTINEL if k.endswith(_CREDENTIAL_KEYS) else "plain-value"))
        for k, v in entries
    ]
    lines = "".join(f"            {k}: {v}\n" for k, v in entries)
    if where == "service":
        text = _env_stack(lines)
    else:
        text = _dev_with(
            "  tpu-pathways:sharedServices: &a []\n"
            + "  tpu-pathways:workloads:\n    - {name: w, pool: v5e, mode: headless,\n"
            + "       customComponents: [{type: worker, env: {"
            + ", ".join(f"{k}: {v}" for k, v in entries)
            + "}}]}\n"
        )
    directory = _stacks_dir_with(tmp_path_factory.mktemp("env"), "fuzz", text)
    code, stderr = _run_cli(["plan", "--stack", "fuzz", "--stacks-dir", str(directory), "--json"])
    assert code in (0, 2), stderr
    if code == 2:
        assert_error_report(stderr)
    assert SENTINEL not in stderr


def test_a_nul_in_a_command_is_refused_and_never_printed_raw(tmp_path, capfd):
    _write_stack(tmp_path, _with(lambda v: _train(v).update(command=["sh", "-c", "a\x00b"])))
    code, out, err = _bounded_cli(capfd, "plan", "--stack", "fuzz", "--stacks-dir", str(tmp_path))
    assert code == 2, err[:2000]
    assert "Traceback" not in err
    assert "\x00" not in out + err
    assert "workloads[0].command[2]: 'a\\x00b' contains a NUL character" in err
