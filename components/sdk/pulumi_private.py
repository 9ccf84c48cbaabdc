"""Every private or experimental Pulumi SDK API this project uses, and only here.

The offline plan runs programs under Pulumi's mock engine the way the SDK's own test decorator
does (``pulumi.runtime.mocks``), a team stack reads its owner's output synchronously, the
`pulumi up` entry reads the config the engine passed, and the component package
(``provider/``) is hosted by the SDK's experimental component provider. None of that has a
public API; each use is a name below, and ``tests/unit/sdk/test_pulumi_private.py`` has one test per
name that checks it still exists and still behaves. ``pyproject.toml`` pins ``pulumi`` to the
window those tests were run on (``PULUMI_WINDOW``); the `newest-pulumi` job of
``.github/workflows/pr-plan.yml`` runs them against the newest release.

Where each came from (pulumi/pulumi ``sdk/python/lib/pulumi``; "since" = first release tag):

* ``runtime/sync_await.py`` ``_sync_await`` (since v1.12): wait for a coroutine from
  synchronous code inside the program's event loop.
* ``runtime/stack.py`` ``run_pulumi_func`` (since v1.12): run a program function and wait for
  every resource it registered, as ``pulumi.runtime.test`` does (``run``, or ``program_run``
  for its coroutine).
* ``runtime/settings.py`` ``ROOT`` (a ContextVar, since v3.39), ``SETTINGS.rpc_manager``
  (v3.76) and ``SETTINGS.outputs`` (v3.112; a deque until 3.237, a set since 3.238): cleared
  for a fresh root stack per run.
* ``runtime/config.py`` ``CONFIG`` (a ContextVar, since v3.39): the config map the engine gave
  the program.
* ``runtime/rpc.py`` ``_special_sig_key`` / ``_special_secret_sig`` / ``_special_resource_sig``
  (since v0.14.2 / v2.13): the wire markers of secrets and resource references.
* ``runtime/mocks.py`` ``MockMonitor`` (since v1.12): the mock engine's monitor, subclassed to
  record every registration.
* ``provider/experimental`` ``ComponentProvider`` (since v3.166; TypedDict ``NotRequired``
  since v3.237) and ``provider/server.py`` ``ComponentInitError``: the component package's
  host (``pulumi.InputPropertiesError``, which it reports errors with, is public).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from pulumi.runtime import config as _config
from pulumi.runtime import mocks as _mocks
from pulumi.runtime import rpc as _rpc
from pulumi.runtime import settings as _settings
from pulumi.runtime.stack import run_pulumi_func as _run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

T = TypeVar("T")

PULUMI_WINDOW = ">=3.237,<3.273"
"""The ``pulumi`` releases the tests of this module were run on (pyproject's pin)."""

SIG_KEY: str = _rpc._special_sig_key
SECRET_SIG: str = _rpc._special_secret_sig
RESOURCE_SIG: str = _rpc._special_resource_sig

MockMonitor = _mocks.MockMonitor
"""The mock engine's monitor; subclass it to see every RegisterResource / ReadResource."""


if TYPE_CHECKING:

    def sync_await(awaitable: Awaitable[T]) -> T:
        """The result of ``awaitable``, waited for from synchronous code in a Pulumi program."""

else:
    # The SDK's function itself, not a wrapper: a program run with ``sync_await(
    # program_run(...))`` has one frame fewer under each of its registrations (the SDK records
    # the whole call stack of every registration).
    sync_await = _sync_await


def fresh_runtime() -> None:
    """Forget the root stack, the pending RPCs and the outputs of an earlier run (as
    ``pulumi.runtime.test`` does), so the next ``set_mocks`` run starts clean."""
    _settings.ROOT.set(None)
    _settings.SETTINGS.rpc_manager.clear()
    _settings.SETTINGS.outputs.clear()


def run(program: Callable[[], Any]) -> None:
    """Run a program function and wait for everything it registered."""
    _sync_await(_run_pulumi_func(program))


def program_run(program: Callable[[], Any]) -> Coroutine[Any, Any, None]:
    """``run``'s coroutine: ``sync_await(program_run(program))`` runs ``program`` as ``run``
    does, without ``run``'s own frame under its registrations."""
    return _run_pulumi_func(program)


def engine_config() -> dict[str, str]:
    """The config map the engine passed the program: the environment's, then the runtime's."""
    return {**_config.get_config_env(), **_config.CONFIG.get()}


def set_engine_config(values: Mapping[str, str]) -> Any:
    """Make ``values`` the runtime's config map; returns the token ``reset_engine_config``
    takes to put the previous map back (tests)."""
    return _config.CONFIG.set(dict(values))


def reset_engine_config(token: Any) -> None:
    _config.CONFIG.reset(token)


def component_provider() -> type:
    """``pulumi.provider.experimental.ComponentProvider``: builds a package schema from
    ComponentResource classes and constructs them (imported only by the component package)."""
    from pulumi.provider.experimental.component import ComponentProvider

    return ComponentProvider


def component_init_error() -> type[Exception]:
    """What ``ComponentProvider.construct`` wraps a component constructor's exception in
    (``.inner`` is the exception)."""
    from pulumi.provider.server import ComponentInitError

    return ComponentInitError
