"""The offline plan reads a stack file's scalars as the Pulumi CLI does, or refuses them.

Known answers, written out: what Pulumi hands the program for each text, produced by replaying
pulumi/pulumi v3.259's load path (LoadProjectStackBytes, config.Value, Map.Decrypt) with
gopkg.in/yaml.v3 v3.0.1 and Go's encoding/json (research note 33, §6). Never computed here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from components.errors import ConfigError
from components.resolve.stack_files import read_stack_file

DATE = "a date"  # Pulumi passes time.Time.String(): "2025-01-15 00:00:00 +0000 UTC"
LOAD_FAILS = "Pulumi cannot load the file"  # json: unsupported value: +Inf / NaN

# written unquoted: (Pulumi's text for `tpu-pathways:k: <it>`, the value the program reads for x
# in `tpu-pathways:k: {x: <it>}`, whether the plan reads the first, whether it reads the second).
# A value the plan reads is Pulumi's; one it does not read is refused with the fix.
KNOWN = {
    "0.10": ("0.1", 0.1, False, True),
    "1.0": ("1", 1, False, True),
    "1.": ("1", 1, False, True),
    "100.0": ("100", 100, False, True),
    "0.": ("0", 0, False, True),
    "-0.0": ("0", 0, False, True),
    "1.5": ("1.5", 1.5, True, True),
    ".5": ("0.5", 0.5, False, True),
    "-.5": ("-0.5", -0.5, False, False),
    "+.5": ("0.5", 0.5, False, False),
    "+1": ("1", 1, False, True),
    "-0": ("0", 0, False, True),
    "00": ("0", 0, False, True),
    "010": ("8", 8, False, True),
    "08": ("8", 8, False, False),
    "0o10": ("8", 8, False, False),
    "-0o10": ("-8", -8, False, False),
    "0x10": ("16", 16, False, True),
    "0X10": ("16", 16, False, False),
    "0b10": ("2", 2, False, True),
    "1_000": ("1000", 1000, False, True),
    "1_000.5": ("1000.5", 1000.5, False, True),
    "1e3": ("1000", 1000, False, False),
    "1E3": ("1000", 1000, False, False),
    "1e+3": ("1000", 1000, False, False),
    "1.5e3": ("1500", 1500, False, False),
    "1.5e+3": ("1500", 1500, False, True),
    "1e-3": ("0.001", 0.001, False, False),
    "1.0e-7": ("1e-7", 1e-07, False, True),
    "1e20": ("100000000000000000000", 100000000000000000000, False, False),
    "1e21": ("1e+21", 1e21, False, False),
    "1e400": ("1e400", "1e400", True, True),
    "1.0e+400": ("1.0e+400", "1.0e+400", False, False),
    "0B1": ("1", 1, False, False),
    "0O10": ("8", 8, False, False),
    "9223372036854775808": ("9223372036854775808", 9223372036854776000, True, False),
    "18446744073709551615": ("18446744073709551615", 18446744073709552000, True, False),
    "99999999999999999999": ("100000000000000000000", 100000000000000000000, False, False),
    "12345678901234567890123": ("1.2345678901234568e+22", 1.2345678901234568e22, False, False),
    "1:30": ("1:30", "1:30", False, False),
    "true": ("true", True, True, True),
    "True": ("true", True, False, True),
    "TRUE": ("true", True, False, True),
    "false": ("false", False, True, True),
    "on": ("on", "on", True, True),
    "On": ("On", "On", True, True),
    "ON": ("ON", "ON", True, True),
    "off": ("off", "off", True, True),
    "yes": ("yes", "yes", True, True),
    "Yes": ("Yes", "Yes", True, True),
    "no": ("no", "no", True, True),
    "NO": ("NO", "NO", True, True),
    "y": ("y", "y", True, True),
    "Y": ("Y", "Y", True, True),
    "n": ("n", "n", True, True),
    "tRUE": ("tRUE", "tRUE", True, True),
    "nUll": ("nUll", "nUll", True, True),
    "null": ("", None, False, True),
    "Null": ("", None, False, True),
    "NULL": ("", None, False, True),
    "~": ("", None, False, True),
    "": ("", None, False, True),
    "2025-01-15": (DATE, DATE, False, False),
    "2025-1-5": (DATE, DATE, False, False),
    "2025-1-5T1:2:3Z": (DATE, DATE, False, False),
    "2025-1-5 1:2:3": (DATE, DATE, False, False),
    "2025-01-15T10:00:00Z": (DATE, DATE, False, False),
    "2025-01-15t10:00:00+02:00": (DATE, DATE, False, False),
    "2025-01-15T10:00:00": ("2025-01-15T10:00:00", "2025-01-15T10:00:00", False, False),
    "2025-02-30": ("2025-02-30", "2025-02-30", False, False),
    ".inf": (LOAD_FAILS, LOAD_FAILS, False, False),
    "-.inf": (LOAD_FAILS, LOAD_FAILS, False, False),
    ".Inf": (LOAD_FAILS, LOAD_FAILS, False, False),
    ".nan": (LOAD_FAILS, LOAD_FAILS, False, False),
    ".NaN": (LOAD_FAILS, LOAD_FAILS, False, False),
    "0.10.0": ("0.10.0", "0.10.0", True, True),
    "1.2.3": ("1.2.3", "1.2.3", True, True),
    "v1.2": ("v1.2", "v1.2", True, True),
    "0xG": ("0xG", "0xG", True, True),
    "1e": ("1e", "1e", True, True),
    "_1": ("_1", "_1", True, True),
    "1__0": ("10", 10, False, True),
    "1_": ("1", 1, False, True),
    "0_10": ("8", 8, False, True),
    "<<": ("<<", "<<", False, False),
    "10": ("10", 10, True, True),
    "-3": ("-3", -3, True, True),
    # tagged and quoted
    "!!str 0.10": ("0.10", "0.10", True, True),
    "!!str on": ("on", "on", True, True),
    "!!float 1": ("1", 1, False, False),
    "!!int 10": ("10", 10, False, False),
    "'0.10'": ("0.10", "0.10", True, True),
    '"on"': ("on", "on", True, True),
}


def _read(tmp_path: Path, text: str) -> dict[str, str] | None:
    directory = tmp_path / str(len(list(tmp_path.iterdir())))
    directory.mkdir()
    (directory / "Pulumi.k.yaml").write_text(text)
    try:
        return read_stack_file("k", directory)
    except ConfigError:
        return None


@pytest.mark.parametrize("written", sorted(KNOWN))
def test_the_plan_reads_a_top_level_value_as_pulumi_passes_it_or_refuses_it(written, tmp_path):
    pulumi, _, read, _ = KNOWN[written]
    raw = _read(tmp_path, f"config:\n  tpu-pathways:k: {written}\n")
    assert (raw is not None) == read, raw
    if raw is not None:
        assert raw["tpu-pathways:k"] == pulumi


@pytest.mark.parametrize("written", sorted(KNOWN))
def test_the_plan_reads_a_nested_value_as_the_program_gets_it_or_refuses_it(written, tmp_path):
    _, pulumi, _, read = KNOWN[written]
    raw = _read(tmp_path, f"config:\n  tpu-pathways:k: {{x: {written}}}\n")
    assert (raw is not None) == read, raw
    if raw is not None:
        value = json.loads(raw["tpu-pathways:k"])["x"]
        assert value == pulumi and type(value) is type(pulumi)


@pytest.mark.parametrize("written", sorted(w for w in KNOWN if w[:1] not in "!'\""))
def test_the_resolver_reads_a_plain_scalar_as_yaml_v3_does(written):
    from components.config.yaml_v3 import Kind, program_text, resolve_plain

    pulumi, _, _, _ = KNOWN[written]
    scalar = resolve_plain(written)
    if pulumi == DATE:
        assert scalar.kind is Kind.TIMESTAMP
    elif pulumi == LOAD_FAILS:
        assert scalar.kind is Kind.NOT_FINITE
    else:
        assert program_text(scalar) == pulumi


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (0.1, "0.1"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (1e-6, "0.000001"),
        (-1e100, "-1e+100"),
        (5e-324, "5e-324"),
        (-0.0, "0"),
        (2**63, "9223372036854775808"),
    ],
)
def test_numbers_are_written_as_go_encoding_json_writes_them(number, text):
    from components.config.yaml_v3 import go_json_number

    assert go_json_number(number) == text


# Keys of nested mappings, as Pulumi names them for the program (fmt.Sprintf("%v")); the plan
# reads only those that are text to Pulumi.
KEYS = {
    "ON": ("ON", True),
    "yes": ("yes", True),
    "=": ("=", True),
    '"1"': ("1", True),
    "1": ("1", False),
    "0x1F": ("31", False),
    "010": ("8", False),
    "1.0": ("1", False),
    "~": ("<nil>", False),
    "true": ("true", False),
    "True": ("true", False),
    ".inf": ("+Inf", False),
    "2025-01-15": ("2025-01-15 00:00:00 +0000 UTC", False),
}


@pytest.mark.parametrize("written", sorted(KEYS))
def test_a_nested_key_is_read_only_if_pulumi_reads_it_as_text(written, tmp_path):
    name, read = KEYS[written]
    raw = _read(tmp_path, f"config:\n  tpu-pathways:k: {{{written}: v}}\n")
    assert (raw is not None) == read
    if raw is not None:
        assert json.loads(raw["tpu-pathways:k"]) == {name: "v"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Go's encoding/json sorts keys; Python's code-point order is Go's UTF-8 byte order.
        ("{z: 2, a: 1, É: 3, B: 4}", '{"B":4,"a":1,"z":2,"É":3}'),
        ("[0.10, on, 1.0, {z: 2, a: 1}]", '[0.1,"on",1,{"a":1,"z":2}]'),
        ("{<<: {x: 1}, y: 2}", '{"x":1,"y":2}'),
        ("{<<: [{x: 1, z: 5}, {x: 2, y: 3}], y: 4}", '{"x":1,"y":4,"z":5}'),
    ],
)
def test_structured_values_reach_the_program_as_pulumi_encodes_them(text, expected, tmp_path):
    raw = _read(tmp_path, f"config:\n  tpu-pathways:k: {text}\n")
    assert raw is not None
    assert list(json.loads(raw["tpu-pathways:k"])) == list(json.loads(expected))
    assert json.loads(raw["tpu-pathways:k"]) == json.loads(expected)


def test_a_large_file_without_aliases_is_no_alias_bomb(tmp_path):
    """250,000 values written out (a 10,000-workload stack has as many) add nothing by
    aliases; the alias budget is for what aliases add. The values are plain text, the
    cheapest scalar to read (half the CPU of numbers): the budget counts values, whatever
    they are."""
    values = ", ".join(["x"] * 250_000)
    raw = _read(tmp_path, f"config:\n  tpu-pathways:k: [{values}]\n")
    assert raw is not None and len(json.loads(raw["tpu-pathways:k"])) == 250_000


def test_aliases_that_add_more_than_the_budget_are_refused(tmp_path):
    lines = ["config:", '  tpu-pathways:a: &a ["x","x","x","x","x","x","x","x","x","x"]']
    for i in range(1, 7):  # 10**6 values from a few hundred written
        previous = "a" if i == 1 else f"b{i - 1}"
        lines.append(f"  tpu-pathways:b{i}: &b{i} [{', '.join([f'*{previous}'] * 10)}]")
    directory = tmp_path / "bomb"
    directory.mkdir()
    (directory / "Pulumi.k.yaml").write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match="more than the 200000 aliases may add"):
        read_stack_file("k", directory)
