"""Run the stack's Pulumi program under Pulumi's mock engine and record every registration.

The recording monitor keeps what the SDK actually sent to the engine for each resource: its
inputs, parent, provider, options and the dependencies Pulumi computed from the outputs it
consumed and from ``depends_on``. Nothing here guesses an edge.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any, cast

import pulumi

from components.config.schema import StackConfig
from components.errors import ConfigError, ConfigIssue
from components.pathways.preflight import PreflightReport
from components.plan.cost import cost_summary
from components.plan.fresh_stack import on_fresh_stack
from components.plan.links import add_dashboard
from components.plan.main_module import MainProgram, main_program
from components.plan.mocks import PlanMocks
from components.plan.model import SECRET, TPU_COUNTS, UNKNOWN, Plan, PlannedResource
from components.plan.monitor import RecordingMonitor
from components.plan.stack_source import StackFile, read_stack
from components.plan.wire import readable
from components.program_failure import ProgramFailed
from components.resolve.stack_files import (
    PROJECT,
    PROJECT_DIR,
    SECRETS_KEY,
    STACKS_DIR,
    stacks_dir_of_program,
)
from components.resolve.tenancy.shared_cluster import contract_outputs
from components.sdk import pulumi_private as sdk
from components.stack.program import build_stack, preflight_reports

# Where an engine may also pass config to a program (which the SDK reads at start-up).
_ENGINE_CONFIG_VARIABLES = ("PULUMI_CONFIG", "PULUMI_CONFIG_SECRET_KEYS")
# The stack output in which the project's program (build_stack) exports its TPU summary.
TPU_SUMMARY = "tpu_summary"
# The project's Pulumi program: what `pulumi up` runs, and so what the offline plan runs.
PROGRAM = PROJECT_DIR / "__main__.py"


class ProgramLog:
    """Where the program's ``pulumi.log`` messages go in the offline plan: warnings and errors
    to stderr, prefixed like the CLI's own (``label``: the stack file); debug and info are
    dropped, as `pulumi preview` hides them by default."""

    def __init__(self, label: str = "") -> None:
        self.prefix = f"{label}: " if label else ""

    def debug(self, message: str) -> None:
        """Not shown."""

    info = debug

    def warning(self, message: str) -> None:
        print(f"warning: {self.prefix}{message}", file=sys.stderr)

    def error(self, message: str) -> None:
        print(f"error: {self.prefix}{message}", file=sys.stderr)


def run_program(
    program: Callable[[], dict[str, Any] | None],
    stack: str,
    project: str = PROJECT,
    stack_outputs: dict[str, dict[str, Any]] | None = None,
    config: Mapping[str, str] | None = None,
    secret_keys: tuple[str, ...] = (),
    log: ProgramLog | None = None,
    user_program: Path | None = None,
    mocks: PlanMocks | None = None,
) -> tuple[list[PlannedResource], dict[str, Any]]:
    """Run ``program`` under the mock engine (as a preview); return registrations and outputs.

    The outputs are what the program exported (``pulumi.export``, kept by the root stack as the
    engine's would) plus what ``program`` returned. ``stack_outputs`` answers StackReferences:
    {stack reference name: its outputs}. ``config`` is the engine's config map (every value a
    string, as the engine passes it), ``secret_keys`` the keys it marks secret; without them the
    program sees an empty config. ``user_program``: the user's program file or directory that
    ``program`` runs (``plan --program``): an exception it raises is its failure
    (ProgramFailed), reported with its own frames. The project's own program runs on a call
    stack of its own (``fresh_stack``); a user's keeps the main thread. ``mocks``: other
    answers than the offline plan's (a component test's invokes)."""
    resource_mocks = mocks or PlanMocks(stack_outputs)
    run = partial(
        _run_program,
        program,
        stack,
        project,
        resource_mocks,
        config,
        secret_keys,
        log,
        user_program,
    )
    return run() if user_program is not None else on_fresh_stack(run)


def _run_program(
    program: Callable[[], dict[str, Any] | None],
    stack: str,
    project: str,
    resource_mocks: PlanMocks,
    config: Mapping[str, str] | None,
    secret_keys: tuple[str, ...],
    log: ProgramLog | None,
    user_program: Path | None,
) -> tuple[list[PlannedResource], dict[str, Any]]:
    """``run_program``, on the thread that runs the program."""
    monitor = RecordingMonitor(resource_mocks, stack, project)
    # A fresh runtime for every run: a new root stack, and nothing left over from an earlier
    # (possibly failed) run, as pulumi.runtime.test does.
    sdk.fresh_runtime()
    # The program sees this config only: none left from an earlier run, none from the
    # process environment (PULUMI_CONFIG, the engine's older channel, when run inside one).
    pulumi.runtime.set_all_config(dict(config or {}), list(secret_keys))
    for variable in _ENGINE_CONFIG_VARIABLES:
        os.environ.pop(variable, None)
    pulumi.runtime.set_mocks(
        resource_mocks,
        project=project,
        stack=stack,
        preview=True,
        monitor=monitor,
        logger=cast(Any, log or ProgramLog()),
    )
    root = pulumi.runtime.get_root_resource()
    returned: dict[str, Any] = {}
    with _failures_of(user_program):
        with _as_function(program, returned) as run:
            # Not sdk.run: one frame fewer under each registration.
            sdk.sync_await(sdk.program_run(run))
        exported = {**getattr(root, "outputs", {}), **returned}
        outputs = {key: sdk.sync_await(resolve(value)) for key, value in sorted(exported.items())}
    _refuse_duplicate_urns(monitor.registrations)
    return order_resources(monitor.registrations), outputs


@contextlib.contextmanager
def _as_function(
    program: Callable[[], dict[str, Any] | None], returned: dict[str, Any]
) -> Iterator[Callable[[], None]]:
    """``program`` as the function the SDK runs: a program file's own (``MainProgram.running``:
    no frame of its own or of this module under the program's registrations), or one that
    keeps what ``program`` returns in ``returned``."""
    if isinstance(program, MainProgram):
        with program.running() as run:
            yield run
        return

    def run() -> None:
        returned.update(program() or {})

    yield run


@contextlib.contextmanager
def _failures_of(user_program: Path | None) -> Iterator[None]:
    """An exception of the user's program (not a ConfigError: this project's clean report), or
    its sys.exit, is the program's failure; one of the project's own program is a bug, left as
    it is."""
    try:
        yield
    except ConfigError:
        raise
    except (Exception, SystemExit) as exc:
        if user_program is None:
            raise
        raise ProgramFailed(user_program, exc) from None


def _refuse_duplicate_urns(resources: list[PlannedResource]) -> None:
    """Two registrations with one URN: `pulumi up` fails on it, and a plan keyed by URN would
    keep one silently. The config checks refuse the name collisions that cause it; this is the
    net under them."""
    counts = Counter(r.urn for r in resources)
    duplicates = sorted(urn for urn, n in counts.items() if n > 1)
    if duplicates:
        raise ConfigError(
            [
                ConfigIssue("", f"two resources would have the same name: {urn}")
                for urn in duplicates
            ],
            "plan",
        )


async def resolve(value: Any) -> Any:
    """A stack output as the plan shows it: secret, unknown, or its plain value."""
    if _plain(value):  # data as written (the shared-cluster contract: ~200 KB at 1,024 slices)
        return readable(value)  # Output.from_input would wrap and gather each of its values
    output = pulumi.Output.from_input(value)
    if await output.is_secret():
        return SECRET
    if not await output.is_known():
        return UNKNOWN
    return readable(await output.future())


def _plain(value: Any) -> bool:
    """JSON data with no Output (or other input to resolve) anywhere inside."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, str | int | float | bool)


def order_resources(resources: list[PlannedResource]) -> list[PlannedResource]:
    """A stable order: parents and dependencies before dependents, ties broken by URN."""
    by_urn = {r.urn: r for r in resources}
    ordered: list[PlannedResource] = []
    placed: set[str] = set()

    def place(resource: PlannedResource, visiting: frozenset[str]) -> None:
        if resource.urn in placed or resource.urn in visiting:
            return
        before = [resource.parent, resource.provider, *resource.dependencies]
        for urn in sorted({u for u in before if u in by_urn}):
            place(by_urn[urn], visiting | {resource.urn})
        placed.add(resource.urn)
        ordered.append(resource)

    for resource in sorted(resources, key=lambda r: r.urn):
        place(resource, frozenset())
    return ordered


def engine_config(raw: Mapping[str, str]) -> tuple[dict[str, str], tuple[str, ...]]:
    """A stack file's config in the engine's form: every value a string, and the keys the
    engine marks secret (``tpu-pathways:secrets``, whose values are encrypted in the file)."""
    return dict(raw), (SECRETS_KEY,) if SECRETS_KEY in raw else ()


def plan_read(source: StackFile, program: Path = PROGRAM) -> Plan:
    """The offline plan of a stack file read by ``read_stack``: ``program`` (default: the
    project's `__main__.py`) run under the mock engine with that stack's config."""
    with stacks_dir_of_program(source.stacks_dir):
        return plan_stack(
            source.config,
            source.stack,
            source.raw,
            program,
            ProgramLog(source.label),
            source.references,
        )


def plan_file(stack: str, stacks_dir: Path = STACKS_DIR, program: Path = PROGRAM) -> Plan:
    """The offline plan of ``stacks_dir/Pulumi.<stack>.yaml`` (``read_stack``, ``plan_read``)."""
    return plan_read(read_stack(stack, stacks_dir), program)


def owner_outputs(config: StackConfig) -> dict[str, dict[str, Any]]:
    """A team stack's StackReference answers: the contract its owner exports, as the loader
    read it from the owner's stack file and validated the team config with it."""
    if config.owner is None or config.shared_cluster is None:
        return {}
    return {config.owner: contract_outputs(config.shared_cluster)}


def exported_tpu_summary(outputs: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """``summary.tpu``: the slices, hosts and chips per TPU generation the program exported
    (``TPU_SUMMARY``; none from a program that exports no summary), counts in plan order."""
    exported = outputs.get(TPU_SUMMARY)
    if not isinstance(exported, dict):
        return {}
    return {
        generation: {key: row[key] for key in TPU_COUNTS if key in row}
        for generation, row in exported.items()
        if isinstance(row, dict)
    }


def plan_stack(
    config: StackConfig,
    stack: str,
    raw: Mapping[str, str] | None = None,
    program: Path = PROGRAM,
    log: ProgramLog | None = None,
    references: dict[str, dict[str, Any]] | None = None,
) -> Plan:
    """The offline plan of one validated stack config.

    With ``raw`` (the stack's config map in the engine's string form, ``read_stack_file``),
    ``program`` runs with it, as `pulumi up` would run it. Without it (a config built in
    Python, e.g. by a test), the project's program function runs on ``config`` directly."""
    references = owner_outputs(config) if references is None else references
    reports: list[PreflightReport] = []
    with preflight_reports(reports.append):
        if raw is None:
            resources, outputs = run_program(
                lambda: build_stack(config), stack, stack_outputs=references
            )
        else:
            values, secret_keys = engine_config(raw)
            user = None if program == PROGRAM else program
            resources, outputs = run_program(
                main_program(program), stack, PROJECT, references, values, secret_keys, log, user
            )
    summary = {"tpu": exported_tpu_summary(outputs), "resources": len(resources)}
    summary["cost"] = cost_summary([r.to_dict() for r in resources], config.pricing)
    # The program's own preflight report (it refused the stack on a problem): what would run,
    # the pods per workload, where they land and as which identity.
    if reports and reports[-1].jobs:
        summary["workloads"] = reports[-1].jobs
        add_dashboard(summary["workloads"], resources)
    return Plan(stack, PROJECT, resources, outputs, summary)
