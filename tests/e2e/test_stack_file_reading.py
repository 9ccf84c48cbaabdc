"""The offline plan reads a stack file as `pulumi up` does: the values the Pulumi CLI hands the
program (gopkg.in/yaml.v3, text at the top level, JSON inside), its keys namespaced as Pulumi
namespaces them, or a refusal naming the key, the line and the fix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from components.errors import ConfigError
from components.resolve.stack_files import read_stack_file, read_stack_values
from tests.helpers import assert_error_report, run_cli

ROOT = Path(__file__).resolve().parents[2]
DEV = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text()


def _stack(tmp_path: Path, text: str, name: str = "s") -> Path:
    directory = tmp_path / "stacks"
    directory.mkdir(exist_ok=True)
    (directory / f"Pulumi.{name}.yaml").write_text(text)
    return directory


def _dev(tmp_path: Path, old: str, new: str) -> Path:
    assert old in DEV
    return _stack(tmp_path, DEV.replace(old, new))


def _plan_json(capsys, directory: Path) -> dict:
    code, out, err = run_cli(
        capsys, "plan", "--stack", "s", "--stacks-dir", str(directory), "--json"
    )
    assert code == 0, err
    return json.loads(out)


def _line(needle: str) -> int:
    """The line of the dev stack file that holds ``needle`` (the edits keep line counts)."""
    return next(i for i, line in enumerate(DEV.splitlines(), 1) if needle in line)


def _refusal(capsys, directory: Path) -> str:
    code, _, err = run_cli(capsys, "plan", "--stack", "s", "--stacks-dir", str(directory))
    assert code == 2, err
    assert_error_report(err)
    return err


@pytest.mark.parametrize("word", ["on", "yes", "OFF"])
def test_a_yaml_1_1_boolean_word_reaches_the_program_as_its_text(word, tmp_path, capsys):
    """Pulumi's reader knows only true/True/TRUE/false/False/FALSE as booleans."""
    directory = _dev(tmp_path, "tpu-pathways:team: ml-platform", f"tpu-pathways:team: {word}")
    assert read_stack_values("s", directory)["team"] == word
    if word.islower():  # a GCP label value is lowercase: `OFF` is refused as one, by its text
        labels = re.findall(r'"team": "([^"]*)"', json.dumps(_plan_json(capsys, directory)))
        assert labels and set(labels) == {word}


@pytest.mark.parametrize(
    ("written", "passed"),
    [
        ("0.10", "0.1"),
        ("1.0", "1"),
        ("1e3", "1000"),
        ("0o10", "8"),
        ("0x10", "16"),
        ("010", "8"),
        ("+1", "1"),
        ("True", "true"),
    ],
)
def test_a_top_level_value_pulumi_would_pass_changed_is_refused_with_its_quoting(
    written, passed, tmp_path, capsys
):
    directory = _dev(
        tmp_path,
        "tpu-pathways:environment: dev\n",
        f"tpu-pathways:environment: dev\n  tpu-pathways:pathwaysVersion: {written}\n",
    )
    err = _refusal(capsys, directory)
    assert (
        f"tpu-pathways:pathwaysVersion: line {_line('environment: dev') + 1}: Pulumi passes "
        f"{written} to the program as the "
    ) in err
    assert f"text '{passed}', not as written; quote it: \"{written}\"" in err


def test_a_quoted_version_is_the_image_tag_as_written(tmp_path, capsys):
    directory = _dev(
        tmp_path,
        "tpu-pathways:environment: dev\n",
        'tpu-pathways:environment: dev\n  tpu-pathways:pathwaysVersion: "0.10"\n',
    )
    images = re.findall(r"pathways/server:[^\"]*", json.dumps(_plan_json(capsys, directory)))
    assert images and set(images) == {"pathways/server:0.10"}


@pytest.mark.parametrize("date", ["2025-1-5", "2025-1-5T1:2:3Z", "2025-1-5 1:2:3"])
def test_a_date_only_pulumi_reads_as_a_date_is_refused(date, tmp_path, capsys):
    directory = _stack(tmp_path, f"config:\n  tpu-pathways:pathwaysVersion: {date}\n")
    err = _refusal(capsys, directory)
    assert f"tpu-pathways:pathwaysVersion: line 2: YAML reads '{date}' as a date/time" in err
    assert f'quote it: "{date}"' in err


def test_a_whole_float_inside_a_value_is_the_integer_the_program_gets(tmp_path, capsys):
    directory = _dev(tmp_path, "maxNodes: 3", "maxNodes: 3.0")
    assert read_stack_values("s", directory)["cpuPool"]["maxNodes"] == 3
    assert _plan_json(capsys, directory)["stack"] == "s"


@pytest.mark.parametrize(("written", "number"), [("1e1", 10), ("0o10", 8), ("08", 8)])
def test_a_number_only_pulumi_reads_as_one_is_refused_inside_a_value(
    written, number, tmp_path, capsys
):
    directory = _dev(tmp_path, "maxNodes: 3", f"maxNodes: {written}")
    err = _refusal(capsys, directory)
    line = _line("maxNodes: 3")
    assert f"tpu-pathways:cpuPool.maxNodes: line {line}: YAML readers disagree on {written}" in err
    assert f'write {number} or quote it: "{written}"' in err


def test_on_inside_a_value_reaches_the_schema_as_text(tmp_path, capsys):
    directory = _dev(
        tmp_path,
        "tpu-pathways:environment: dev\n",
        "tpu-pathways:environment: dev\n  tpu-pathways:addons:\n    kueue:\n      enabled: on\n",
    )
    assert read_stack_values("s", directory)["addons"] == {"kueue": {"enabled": "on"}}
    assert (
        "addons.kueue.enabled: 'on' is not allowed: enabled is true or false (unquoted)"
    ) in _refusal(capsys, directory)


def test_an_integer_past_int64_inside_a_value_is_refused(tmp_path, capsys):
    directory = _dev(tmp_path, "maxNodes: 3", "maxNodes: 9223372036854775808")
    line = _line("maxNodes: 3")
    assert f"cpuPool.maxNodes: line {line}: '9223372036854775808' is past the largest" in (
        _refusal(capsys, directory)
    )


def test_a_bare_key_is_the_projects_as_pulumi_reads_it(tmp_path, capsys):
    directory = _dev(tmp_path, "tpu-pathways:environment: dev", "environment: staging")
    assert read_stack_values("s", directory)["environment"] == "staging"
    assert set(
        re.findall(r'"environment": "([^"]*)"', json.dumps(_plan_json(capsys, directory)))
    ) == {"staging"}


def test_a_bare_key_beside_its_namespaced_twin_is_refused(tmp_path, capsys):
    directory = _dev(
        tmp_path, "tpu-pathways:environment: dev", "tpu-pathways:environment: dev\n  environment: x"
    )
    assert (
        "  - environment: Pulumi reads 'environment' as 'tpu-pathways:environment', which the "
        "file also sets, and keeps one of the two values at random; remove one"
    ) in _refusal(capsys, directory)


def test_an_unknown_bare_key_is_refused_as_pulumi_up_would(tmp_path, capsys):
    directory = _dev(
        tmp_path, "tpu-pathways:environment: dev", "tpu-pathways:environment: dev\n  fooBar: 1"
    )
    assert "fooBar: unknown key 'fooBar'" in _refusal(capsys, directory)


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("tpu-pathways:config:team", "Pulumi reads it as 'tpu-pathways:team' (an old form"),
        ("a:b:c", "a config key has one ':'"),
        (":team", "no namespace before the ':'"),
        ("tpu-pathways:", "no name after the ':'"),
        ('""', "an empty key"),
    ],
)
def test_a_key_pulumi_refuses_or_renames_is_refused(key, message, tmp_path):
    directory = _stack(tmp_path, f"config:\n  {key}: a\n")
    with pytest.raises(ConfigError) as caught:
        read_stack_file("s", directory)
    assert message in str(caught.value)


def test_a_mapping_reaches_the_program_with_its_keys_in_pulumis_order(tmp_path):
    directory = _stack(tmp_path, "config:\n  tpu-pathways:x: {ZED: '1', ALPHA: '2'}\n")
    assert list(json.loads(read_stack_file("s", directory)["tpu-pathways:x"])) == ["ALPHA", "ZED"]


def test_an_explicit_number_tag_is_refused_and_a_string_tag_is_text(tmp_path):
    directory = _stack(tmp_path, "config:\n  tpu-pathways:x: !!float 1\n")
    with pytest.raises(ConfigError, match="has the tag !!float"):
        read_stack_file("s", directory)
    directory = _stack(tmp_path, "config:\n  tpu-pathways:x: !!str 0.10\n", "t")
    assert read_stack_file("t", directory)["tpu-pathways:x"] == "0.10"


@pytest.mark.parametrize(
    ("project", "message"),
    [
        ("name: mine\nconfig:\n  mine:version: 0.10\n", 'quote it: "0.10"'),
        ("name: mine\nconfig:\n  mine:zone: [a, b\n", "not valid YAML"),
        ("name: mine\nruntime: python\ndescription: 2025-1-5\n", "as a date/time"),
    ],
)
def test_a_project_file_is_read_as_pulumi_reads_it_or_refused(project, message, tmp_path, capsys):
    directory = tmp_path / "prog"
    directory.mkdir()
    (directory / "Pulumi.yaml").write_text(project)
    (directory / "__main__.py").write_text("import pulumi\n")
    code, _, err = run_cli(capsys, "plan", "--program", str(directory))
    assert code == 2
    assert_error_report(err)
    assert f"error: {directory / 'Pulumi.yaml'}: 1 problem" in err
    assert message in err


def test_a_project_files_config_reaches_the_program_as_pulumi_reads_it(tmp_path, capsys):
    directory = tmp_path / "prog"
    directory.mkdir()
    (directory / "Pulumi.yaml").write_text("name: mine\nconfig:\n  mine:team: on\n")
    (directory / "__main__.py").write_text(
        "import pulumi\npulumi.export('team', pulumi.Config().get('team'))\n"
    )
    code, out, err = run_cli(capsys, "plan", "--program", str(directory), "--json")
    assert code == 0, err
    assert json.loads(out)["outputs"]["team"] == "on"
