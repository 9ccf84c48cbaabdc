"""The offline plan of a Pulumi program of your own (``plan --program DIR --config KEY=VALUE``):
a project directory whose ``__main__.py`` builds on ``from components import ...``.

The program runs under the same mock engine as the project's own plan, with the config `pulumi
up` would give it: its ``Pulumi.yaml`` project config, then the ``--config`` values (which win).
There is no stack file: the config checks of ``tpu-pathways:*`` keys do not apply, so the plan
holds what the program registers, its outputs and the cost of its node pools.
"""

from __future__ import annotations

import runpy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi

from components.config.safe_yaml import load_yaml
from components.errors import ConfigError, ConfigIssue
from components.files import FileProblem, read_regular_file
from components.plan.cost import cost_summary
from components.plan.engine import ProgramLog, exported_tpu_summary, run_program
from components.plan.model import Plan
from components.plan.program_checks import program_job_issues
from components.resolve.stack_files import engine_string
from components.tpu.catalog import CatalogError
from components.workloads.job import PathwaysJobArgs, jobs_built

PROJECT_FILE = "Pulumi.yaml"
PROGRAM_FILE = "__main__.py"
DEFAULT_STACK = "dev"
MAX_PROJECT_BYTES = 2**20
_ARGUMENT = "--program"


def _error(key: str, message: str) -> ConfigError:
    return ConfigError([ConfigIssue(key, message)], "plan")


class MissingConfig(ConfigError):
    """A config key the program requires and was not given (``key``)."""

    def __init__(self, key: str) -> None:
        super().__init__([_missing_issue(key)], "plan")
        self.key = key


def _missing_issue(key: str) -> ConfigIssue:
    return ConfigIssue("--config", f"the program requires {key}; give it with --config {key}=VALUE")


MAX_MISSING = 20
"""Runs of a program to find the config keys it requires: each run finds one more."""


@dataclass(frozen=True)
class Project:
    """A Pulumi project directory: its name and the config values its ``Pulumi.yaml`` sets."""

    directory: Path
    name: str
    config: dict[str, str]


def read_project(directory: Path) -> Project:
    """``directory``'s ``Pulumi.yaml``: the project name and its config values (a key's short
    form ``key: value``, or the ``value``/``default`` of its long form), in the engine's string
    form."""
    path = directory / PROJECT_FILE
    try:
        text = read_regular_file(path, MAX_PROJECT_BYTES, "project file").decode("utf-8")
    except FileProblem as exc:
        message = f"{str(path)!r} {exc}; a program directory holds its Pulumi.yaml"
        raise _error(_ARGUMENT, message) from None
    except UnicodeDecodeError as exc:
        message = f"{str(path)!r} is not a Pulumi.yaml ({type(exc).__name__})"
        raise _error(_ARGUMENT, message) from None
    document = load_yaml(text, str(path))  # as the Pulumi CLI reads it (yaml.v3), or refused
    name = document.get("name") if isinstance(document, dict) else None
    if not isinstance(name, str) or not name:
        raise _error(_ARGUMENT, f"{str(path)!r} names no project (its `name:` key)")
    declared = document.get("config") or {}
    if not isinstance(declared, dict):
        raise _error(_ARGUMENT, f"{str(path)!r}: `config:` must be a mapping of keys to values")
    return Project(directory, name, _project_values(name, declared))


def _project_values(project: str, declared: Mapping[Any, Any]) -> dict[str, str]:
    values = {}
    for key, entry in declared.items():
        if isinstance(entry, dict):
            entry = entry.get("value", entry.get("default"))
        if entry is not None:
            values[qualified(project, str(key))] = engine_string(entry)
    return values


def qualified(project: str, key: str) -> str:
    """A config key as the engine knows it: ``namespace:key`` (a bare key is the project's)."""
    return key if ":" in key else f"{project}:{key}"


def parse_settings(project: str, settings: Sequence[str]) -> dict[str, str]:
    """``--config KEY=VALUE`` arguments as engine config; every bad one reported at once."""
    values: dict[str, str] = {}
    issues = []
    for setting in settings:
        key, sep, value = setting.partition("=")
        if not sep or not key.strip() or key != key.strip():
            issues.append(
                ConfigIssue(
                    "--config",
                    f"{setting!r} is not KEY=VALUE (e.g. --config gcp:project=my-project)",
                )
            )
            continue
        values[qualified(project, key)] = value
    if issues:
        raise ConfigError(issues, "plan")
    return values


def check_program_dir(directory: Path) -> None:
    """A program directory holds ``Pulumi.yaml`` and ``__main__.py`` (the form `pulumi up`
    runs; a single-file program is given as the file itself)."""
    if not (directory / PROGRAM_FILE).is_file():
        raise _error(
            _ARGUMENT,
            f"{str(directory)!r} has no {PROGRAM_FILE}; give a Pulumi project directory "
            f"({PROJECT_FILE} and {PROGRAM_FILE}) or a program file",
        )


def directory_program(project: Project) -> Callable[[], None]:
    """``project``'s ``__main__.py`` run as the Python language host runs it (as ``__main__``,
    its directory first on ``sys.path``); a config key it requires and was not given is
    reported with the ``--config`` that sets it."""

    def run() -> None:
        try:
            runpy.run_path(str(project.directory), run_name="__main__")
        except pulumi.ConfigMissingError as exc:
            raise MissingConfig(exc.key) from None
        except pulumi.RunError as exc:
            if isinstance(exc.__context__, ConfigError):
                raise exc.__context__ from None
            raise ConfigError([ConfigIssue("", str(exc))], project.name) from None
        except SyntaxError as exc:
            where = f"line {exc.lineno}" if exc.lineno else "its source"
            raise _error(_ARGUMENT, f"{PROGRAM_FILE} is not Python ({exc.msg}, {where})") from None
        except CatalogError as exc:  # a TPU name the program looked up: the user's mistake
            raise ConfigError([ConfigIssue("", str(exc))], project.name) from None

    return run


def plan_program(directory: Path, settings: Sequence[str] = (), stack: str | None = None) -> Plan:
    """The offline plan of the program in ``directory`` with ``--config`` ``settings``. Every
    config key the program requires and was not given is reported at once: the program runs
    again with a stand-in value for each one found, until it asks for no more."""
    check_program_dir(directory)
    project = read_project(directory)
    config = {**project.config, **parse_settings(project.name, settings)}
    stack = stack or DEFAULT_STACK
    missing: list[str] = []
    jobs: list[PathwaysJobArgs] = []
    for _ in range(MAX_MISSING):
        jobs.clear()
        try:
            with jobs_built(jobs.append):
                resources, outputs = run_program(
                    directory_program(project),
                    stack,
                    project.name,
                    config={**config, **_stand_ins(missing, config)},
                    log=ProgramLog(str(directory / PROGRAM_FILE)),
                    user_program=directory,
                )
        except MissingConfig as exc:
            missing.append(exc.key)
            continue
        except ConfigError:
            if missing:  # the stand-ins may cause it: the missing keys come first
                break
            raise
        break
    if missing:
        raise ConfigError([_missing_issue(key) for key in missing], "plan")
    if issues := program_job_issues(jobs, resources):
        raise ConfigError(issues, f"{directory / PROGRAM_FILE} (preflight)")
    summary: dict[str, Any] = {
        "tpu": exported_tpu_summary(outputs),
        "resources": len(resources),
        "cost": cost_summary([r.to_dict() for r in resources]),
    }
    return Plan(stack, project.name, resources, outputs, summary)


def _stand_ins(missing: list[str], config: Mapping[str, str]) -> dict[str, str]:
    """Values that let a program run past the keys it lacks (never planned: the run only looks
    for more missing keys). A zone and a region agree with each other when one is given."""
    region = config.get("gcp:region") or config.get("gcp:zone", "us-central1-a").rpartition("-")[0]
    known = {
        "gcp:project": "stand-in-project",
        "gcp:region": region,
        "gcp:zone": config.get("gcp:zone") or f"{region}-a",
    }
    return {key: known.get(key, "1") for key in missing}
