"""The offline plan runs the project's program (`__main__.py`, what `pulumi up` runs) with the
stack's config: what a user adds there is planned, written by --out and checked by --policy."""

from __future__ import annotations

import json
from pathlib import Path

from components.cli.main import main
from tests.examples import EXAMPLES_DIR

ROOT = Path(__file__).resolve().parents[2]

EXTRA = """
import pulumi_gcp as gcp

pulumi.export("extra_output", "added in __main__.py")
gcp.storage.Bucket(
    "added-bucket", name="added-bucket-0", location="US", uniform_bucket_level_access=True
)
"""


def program_with_extra(tmp_path: Path) -> Path:
    program = tmp_path / "__main__.py"
    program.write_text((ROOT / "__main__.py").read_text() + EXTRA)
    return program


def plan_json(capsys, *argv: str) -> dict:
    assert main(["plan", "--json", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_line_appended_to_the_program_shows_up_in_the_plan(tmp_path, capsys):
    program = program_with_extra(tmp_path)
    plain = plan_json(capsys, "--stack", "dev")
    extended = plan_json(capsys, "--stack", "dev", "--program", str(program))
    assert "extra_output" not in plain["outputs"]
    assert extended["outputs"]["extra_output"] == "added in __main__.py"
    added = [r for r in extended["resources"] if r["name"] == "added-bucket"]
    assert [r["type"] for r in added] == ["gcp:storage/bucket:Bucket"]
    assert added[0]["inputs"]["name"] == "added-bucket-0"
    assert extended["summary"]["resources"] == plain["summary"]["resources"] + 1


def test_a_team_stack_runs_the_program_with_its_owner_read(tmp_path, capsys):
    extended = plan_json(
        capsys, "--stack", "team-research", "--program", str(program_with_extra(tmp_path))
    )
    assert extended["outputs"]["extra_output"] == "added in __main__.py"
    reads = [r for r in extended["resources"] if r["type"] == "pulumi:pulumi:StackReference"]
    assert [r["name"] for r in reads] == ["research-v5p"]


def test_the_added_resource_is_diffed(tmp_path, capsys):
    base = tmp_path / "dev.json"
    assert main(["plan", "--stack", "dev", "--json"]) == 0
    base.write_text(capsys.readouterr().out)
    program = program_with_extra(tmp_path)
    argv = ["plan", "--stack", "dev", "--diff", str(base), "--program", str(program)]
    assert main([*argv, "--format", "json"]) == 0
    (stack,) = json.loads(capsys.readouterr().out)["stacks"]
    changes = [(r["name"], r["kind"]) for r in stack["resources"]]
    assert changes == [("added-bucket", "add")]


def test_the_added_resource_is_policy_checked(tmp_path, capsys):
    """The bucket misses the labels every resource must carry: --policy reports it, exit 1."""
    program = program_with_extra(tmp_path)
    code = main(["plan", "--stack", "dev", "--policy", "--program", str(program)])
    out = capsys.readouterr().out
    assert code == 1
    assert "added-bucket" in out


def test_a_missing_program_is_a_clean_error(tmp_path, capsys):
    code = main(["plan", "--stack", "dev", "--program", str(tmp_path / "missing.py")])
    assert code == 2
    assert "--program: " in capsys.readouterr().err


def test_the_plan_reads_the_stack_file_once_and_keeps_the_programs_preflight(monkeypatch):
    """The stack file's reader hands the map it read to the loader, and the engine summarizes
    the preflight report the program's build_stack made instead of running it again."""
    from components.plan import engine, stack_source
    from components.resolve import checks, loader
    from components.resolve import preflight as stack_preflight
    from components.resolve.tenancy import ownership

    reads, runs = [], []
    real_read, real_preflight = loader.read_stack_file, stack_preflight.preflight

    def read(stack, *args):
        reads.append(stack)
        return real_read(stack, *args)

    def preflight(*args, **kwargs):
        runs.append(args[0].cluster.name)
        return real_preflight(*args, **kwargs)

    monkeypatch.setattr(loader, "read_stack_file", read)
    monkeypatch.setattr(stack_source, "read_stack_file", read)
    monkeypatch.setattr(ownership, "read_stack_file", read)  # the conflicts between stacks
    monkeypatch.setattr(stack_preflight, "preflight", preflight)
    monkeypatch.setattr(checks, "preflight", preflight)  # the parse's run, reused by the program
    plan = engine.plan_file("research-v5p", EXAMPLES_DIR)
    # this stack once; every other stack once, for the conflicts between stacks
    assert len(reads) == len(set(reads))  # each file once
    assert set(reads) == {p.stem.removeprefix("Pulumi.") for p in EXAMPLES_DIR.glob("*.yaml")}
    # The engine's parse of the file runs it; the program's parse of the same values (the
    # engine's config map) is that validation again, so it runs once; build_stack reuses it.
    assert runs == ["pathways-research"]
    assert plan.summary["workloads"]
