"""Shared fixtures: stack config values shaped like the dev stack, and cached offline plans.

``stack_values(**overrides)`` returns a fresh dict (deep-merged with the overrides) that the
tests may mutate freely; ``plan_of(values)`` validates it with the real parser and plans it
under the mock engine, caching the plan per distinct config for the whole session (plans are
read-only: never mutate one).
"""

from __future__ import annotations

import compileall
import copy
import gc
import importlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent
if str(PROJECT_ROOT) not in sys.path:  # plain `pytest` (not `python -m pytest`) from anywhere
    sys.path.insert(0, str(PROJECT_ROOT))

from tests import plan_cache  # noqa: E402
from tests.crd_schema import crd_schema_errors  # noqa: E402
from tests.examples import EXAMPLES_DIR  # noqa: E402
from tests.helpers import deep_merge  # noqa: E402

# The project's modules are imported by the fixtures that use them, not here: a run of tests
# that need neither the config models nor the Pulumi engine does not load them (about 1 s).
if TYPE_CHECKING:
    from components.config.schema import StackConfig
    from components.errors import ConfigError
    from components.plan.model import Plan

# parse_stack_config's module: it keeps a per-process memo of the configs it validated.
CHECKS_MODULE = "components.resolve.checks"

STACKS_DIR = EXAMPLES_DIR  # the declared examples only (tests/examples.py)
# A Cloud KMS key for production test stacks (production requires Secrets encryption).
PRODUCTION_KMS = "projects/tpu-pathways-dev/locations/us-west4/keyRings/gke/cryptoKeys/secrets"

# The dev stack's values (stacks/Pulumi.dev.yaml), written out so tests do not depend on the file.
DEV_VALUES: dict[str, Any] = {
    "environment": "dev",
    "team": "ml-platform",
    "gcp": {"project": "tpu-pathways-dev", "region": "us-west4", "zone": "us-west4-a"},
    "cluster": {"name": "pathways-dev", "deletionProtection": False},
    "cpuPool": {"machineType": "n2-standard-64", "minNodes": 1, "maxNodes": 3},
    "tpuPools": [
        {
            "name": "v5e",
            "generation": "v5e",
            "topology": "2x4",
            "slices": 1,
            "capacity": {"spot": True},
        }
    ],
}


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """The workers ``-n auto`` (pyproject.toml's addopts) starts: none (this process runs the
    tests) when the run names only files or tests, or on one core; otherwise xdist's choice,
    one per core. A worker starts in seconds (each imports and collects on its own), which a
    directory of tests repays and a single file does not. ``-n N`` and
    PYTEST_XDIST_AUTO_NUM_WORKERS still decide for themselves."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    here = config.invocation_params.dir
    if config.args and all((here / arg.split("::")[0]).is_file() for arg in config.args):
        return 0
    cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(os.cpu_count())
    return None if len(cores) > 1 else 0


_PLAN_CACHE = pytest.StashKey[Path | None]()


def pytest_configure(config: pytest.Config) -> None:
    """The run's directory of example plans (tests/plan_cache.py) and the package's bytecode,
    made by the process that starts the run before it starts the workers."""
    config.stash[_PLAN_CACHE] = plan_cache.start()
    if config.stash[_PLAN_CACHE] is not None:
        _compile_the_package()


def _compile_the_package() -> None:
    """Write the bytecode of every module of ``components`` once, before the workers and the
    ~90 processes the tests start (the CLI, the watchdog, the determinism probes) import them.
    An import writes it anyway, unless PYTHONDONTWRITEBYTECODE is set (CI images often set it):
    then each of those processes compiled the modules it loads from source again, about 20 of
    a run's 124 CPU-seconds on 2 cores. A module already compiled costs a stat. (The benchmark
    does the same before it measures: benchmarks/run.py ``compile_project``.)"""
    compileall.compile_dir(PROJECT_ROOT / "components", quiet=2)


def pytest_unconfigure(config: pytest.Config) -> None:
    plan_cache.stop(config.stash.get(_PLAN_CACHE, None))


# A full collection (the oldest generation) walks every object not frozen below: the session's
# plans, fixtures and hypothesis state, 0.1-0.3 s each time. Python's default starts one after
# every 10 collections of the middle generation, about 80 per worker in a run (15 CPU-s of a
# whole run); after every 100 it is about 12 (6 CPU-s), peak memory the same. The younger
# generations keep Python's thresholds: they collect the tests' own garbage as before.
gc.set_threshold(700, 10, 100)

# How many modules were loaded when the GC last froze what was alive (pytest_runtest_teardown).
_modules_frozen = [0]


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Once the Pulumi SDK is loaded: its registrations skip capturing the call stack
    (``_no_stack_trace``, below; the SDK's own is kept for ``sdk_stack_trace``)."""
    resource = sys.modules.get(PULUMI_RESOURCE_MODULE)
    if resource is not None and resource._get_stack_trace is not _no_stack_trace:
        if not _sdk_stack_trace:
            _sdk_stack_trace.append(resource._get_stack_trace)
        resource._get_stack_trace = _no_stack_trace


# Every registration asks the SDK for the call stack that made it (`_get_stack_trace`: the real
# engine shows source positions; the offline plan's mock engine records none of it, and no plan
# holds it). In a test, traceback.extract_stack walks pytest's and hypothesis's 60-odd frames
# and stats each one's file for every resource: a third of the CPU of each in-process plan. The
# tests' processes skip it; the CLI processes tests start (tests/e2e/test_cli_process.py,
# test_determinism.py: byte-identical plans either way, and others) keep the SDK's own.
PULUMI_RESOURCE_MODULE = "pulumi.runtime.resource"


_sdk_stack_trace: list[Callable[[], Any]] = []
"""The SDK's own ``_get_stack_trace``, once ``pytest_runtest_setup`` replaced it."""


def _no_stack_trace() -> Any:
    """The empty stack trace the SDK itself sends when it finds no caller."""
    from pulumi.runtime.proto import source_pb2

    return source_pb2.StackTrace()


@pytest.fixture
def sdk_stack_trace(monkeypatch) -> Callable[[], Any]:
    """The SDK's own ``_get_stack_trace`` in place for the test's registrations (a test of the
    frames they record); the next test's setup replaces it again."""
    resource = importlib.import_module(PULUMI_RESOURCE_MODULE)
    sdk = _sdk_stack_trace[0] if _sdk_stack_trace else resource._get_stack_trace
    assert sdk is not _no_stack_trace and sdk.__module__ == PULUMI_RESOURCE_MODULE
    monkeypatch.setattr(resource, "_get_stack_trace", sdk)
    return sdk


@pytest.hookimpl(trylast=True)  # after the test's fixtures are torn down
def pytest_runtest_teardown(item: pytest.Item) -> None:
    """After a test that loaded many modules (the first plan loads the provider SDKs, ~100k
    classes), move every object then alive to the GC's permanent generation (``gc.freeze``):
    later collections skip them instead of walking them again and again, about a fifth of the
    suite's CPU (``python -m components`` turns the GC off for the same reason). Garbage is
    collected first, so only what is still referenced stays (modules, classes, session
    fixtures' plans); the tests' own garbage is collected as before."""
    if len(sys.modules) > _modules_frozen[0] + 100:
        gc.collect()
        gc.freeze()
        _modules_frozen[0] = len(sys.modules)


@pytest.fixture(autouse=True)
def _validate_afresh():
    """Each test validates its configs itself: a config validated by an earlier test (the
    per-process memo of ``parse_stack_config``) would hide what a test patches or counts.
    Until the module is loaded nothing was validated (the fixtures below load it by this name,
    so a wrong name fails them)."""
    checks = sys.modules.get(CHECKS_MODULE)
    if checks is not None:
        checks.forget_validated()


@pytest.fixture(scope="session")
def stack_values() -> Callable[..., dict[str, Any]]:
    """Factory: a fresh dev-like values dict, e.g. ``stack_values(cluster={"regional": False})``.
    Production values get the KMS key production requires (PRODUCTION_KMS) unless they set one."""

    def make(**overrides: Any) -> dict[str, Any]:
        values = deep_merge(DEV_VALUES, overrides)
        if values["environment"] == "production":
            values["cluster"].setdefault("secretsEncryption", {"kmsKey": PRODUCTION_KMS})
        return values

    return make


@pytest.fixture(scope="session")
def config_of() -> Callable[[dict[str, Any]], StackConfig]:
    """Factory: validate values with the real parser (raises ConfigError)."""
    return importlib.import_module(CHECKS_MODULE).parse_stack_config


@pytest.fixture(scope="session")
def schema_of() -> Callable[[dict[str, Any]], StackConfig]:
    """Factory: values through the schema alone, without the checks across the stack, the
    workload checks and the preflight ``parse_stack_config`` adds (to test those on their own)."""
    from components.config.schema import StackConfig

    return StackConfig.model_validate


@pytest.fixture(scope="session")
def config_error() -> Callable[[dict[str, Any]], ConfigError]:
    """Factory: the ConfigError that values raise (fails the test if they are valid)."""
    from components.errors import ConfigError

    parse_stack_config = importlib.import_module(CHECKS_MODULE).parse_stack_config

    def check(values: dict[str, Any]) -> ConfigError:
        with pytest.raises(ConfigError) as caught:
            parse_stack_config(values)
        return caught.value

    return check


@pytest.fixture(scope="session")
def plan_of() -> Callable[..., Plan]:
    """Factory: the offline plan of a values dict, cached per distinct config and stack name."""
    from components.plan.engine import plan_stack
    from components.resolve.stack_files import engine_string

    parse_stack_config = importlib.import_module(CHECKS_MODULE).parse_stack_config
    cache: dict[str, Plan] = {}

    def plan(values: dict[str, Any], stack: str = "test") -> Plan:
        key = json.dumps([stack, values], sort_keys=True)
        if key not in cache:
            config = parse_stack_config(copy.deepcopy(values))
            # The config map the engine would hand `__main__.py` for these values.
            raw = {f"tpu-pathways:{k}": engine_string(v) for k, v in values.items()}
            cache[key] = plan_stack(config, stack, raw)
        return cache[key]

    return plan


# --- example stacks, the CLI on a temporary stack file, the PathwaysJob CRD schema ----------
# (added with the installs / kueue / workloads / PathwaysJob tests)

CRD_SCHEMA_FILE = PROJECT_ROOT / "tests" / "data" / "pathwaysjob-v0.1.4-openapi-schema.json"


@pytest.fixture(scope="session")
def example_plan() -> Callable[[str], Plan]:
    """Factory: the offline plan of an example stack file (stacks/Pulumi.<name>.yaml), planned
    once per test run through the same loader the CLI uses (one process plans it, the others of
    the run read it: tests/plan_cache.py). Plans are read-only."""
    from components.plan.engine import plan_file

    cache: dict[str, Plan] = {}

    def plan(name: str) -> Plan:
        if name not in cache:
            cache[name] = plan_cache.plan_of_file(
                name, STACKS_DIR, lambda: plan_file(name, STACKS_DIR)
            )
        return cache[name]

    return plan


@pytest.fixture
def registrations(monkeypatch) -> list[tuple[str, str]]:
    """(type token, name) of every resource registration the mock engine receives during the
    test (the stack resource included)."""
    from components.plan import engine

    registered: list[tuple[str, str]] = []
    original = engine.RecordingMonitor.RegisterResource

    def spy(self, request):
        registered.append((request.type, request.name))
        return original(self, request)

    monkeypatch.setattr(engine.RecordingMonitor, "RegisterResource", spy)
    return registered


@pytest.fixture
def cli_plan(tmp_path, capsys, registrations) -> Callable[..., tuple[int, str, str, int]]:
    """Factory: write ``values`` as ``<tmp>/Pulumi.<stack>.yaml`` and run
    ``python -m components plan --stack <stack> --stacks-dir <tmp>`` in-process.

    Returns (exit code, stdout, stderr, number of resources registered with the mock engine).
    """
    import yaml

    from components.cli import main as cli

    def run(values: dict[str, Any], stack: str = "scratch", *extra: str):
        document = {"config": {f"tpu-pathways:{key}": value for key, value in values.items()}}
        (tmp_path / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(document))
        registrations.clear()
        code = cli.main(["plan", "--stack", stack, "--stacks-dir", str(tmp_path), *extra])
        out, err = capsys.readouterr()
        return code, out, err, len(registrations)

    return run


@pytest.fixture(scope="session")
def pathwaysjob_schema_errors() -> Callable[[dict[str, Any]], list[str]]:
    """Factory: the problems the v0.1.4 PathwaysJob CRD schema
    (tests/data/pathwaysjob-v0.1.4-openapi-schema.json) finds in a whole PathwaysJob document
    (empty list = valid); see ``crd_schema_errors``."""
    return crd_schema_errors(json.loads(CRD_SCHEMA_FILE.read_text()))
