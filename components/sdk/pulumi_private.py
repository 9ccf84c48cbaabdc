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
  record every registration. ``EchoingMockMonitor`` (below) answers a registration of plain
  inputs as its ``RegisterResource`` does, without its round trip through Python values; it
  reads the monitor's ``mocks``, ``resources``, ``make_urn`` and ``ResourceRegistration`` and
  relies on ``runtime/rpc.py`` ``deserialize_properties`` dropping only nulls and unknowns.
* ``provider/experimental`` ``ComponentProvider`` (since v3.166; TypedDict ``NotRequired``
  since v3.237) and ``provider/server.py`` ``ComponentInitError``: the component package's
  host (``pulumi.InputPropertiesError``, which it reports errors with, is public).
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from google.protobuf import struct_pb2 as _struct_pb2
from pulumi.runtime import config as _config
from pulumi.runtime import mocks as _mocks
from pulumi.runtime import rpc as _rpc
from pulumi.runtime import settings as _settings
from pulumi.runtime.proto import resource_pb2 as _resource_pb2
from pulumi.runtime.stack import run_pulumi_func as _run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

T = TypeVar("T")

PULUMI_WINDOW = ">=3.261,<3.273"
"""The ``pulumi`` releases the tests of this module were run on (pyproject's pin)."""

SIG_KEY: str = _rpc._special_sig_key
SECRET_SIG: str = _rpc._special_secret_sig
RESOURCE_SIG: str = _rpc._special_resource_sig

MockMonitor = _mocks.MockMonitor
"""The mock engine's monitor; subclass it to see every RegisterResource / ReadResource."""

_STACK = "pulumi:pulumi:Stack"
_GET_RESOURCE = "pulumi:pulumi:getResource"
"""The invoke that rehydrates a resource from its URN (it reads the monitor's registrations)."""


class EchoingMockMonitor(MockMonitor):
    """``MockMonitor``, answering a registration of plain inputs that its mocks echo with a
    copy of those inputs.

    The SDK's monitor answers every registration (``MockMonitor.RegisterResource``) by
    converting its inputs to Python values (``rpc.deserialize_properties``), asking the mocks
    for the state, and converting that back to the wire (``rpc.serialize_properties``, a
    coroutine it waits for on the executor thread's event loop). When the mocks answer with the
    inputs alone and no ID (``echoes(type)``: ``new_resource`` gives ``("", inputs)``) and the
    inputs are plain (strings other than the unknown marker, numbers, booleans, and mappings
    and lists of them: no null, no secret, no resource reference, no asset), that round trip
    gives back the inputs unchanged: a null is the only value ``deserialize_properties`` drops,
    the unknown marker the only string it rewrites, and the signature key the only key it
    reads. The answer is then a copy of the inputs, its
    keys in the same order (a program reads its outputs in that order): the same answer for
    about a sixth of a plan's CPU less. ``tests/unit/sdk/test_pulumi_private.py`` checks on
    generated inputs that the answers are the SDK's own, key order included.

    Such a registration is kept as its wire inputs and converted into ``resources`` (as the
    SDK keeps its own) only when something asks for it: the ``getResource`` invoke, which
    rehydrates a resource reference, ``ExistsResource`` or ``get_registered_resources``."""

    def __init__(self, mocks: Any, echoes: Callable[[str], bool]) -> None:
        super().__init__(mocks)
        self._echoes = echoes
        self._echoed: dict[str, Any] = {}
        self._echoed_lock = threading.Lock()

    def RegisterResource(self, request):
        if (
            request.type == _STACK  # the SDK answers the stack with its URN alone
            or not self._echoes(request.type)
            or not plain_struct(request.object)
        ):
            response = super().RegisterResource(request)
            self._sdk_answer(response.urn)
            return response
        urn = self.make_urn(request.parent, request.type, request.name)
        # Copied into a Struct of its own, then into the answer, as the SDK builds its answer:
        # the keys iterate in the request's order, as they do in the SDK's answer (copied
        # straight into the answer's own field they may not; a program sees its outputs in
        # that order).
        inputs = _struct_pb2.Struct()
        inputs.CopyFrom(request.object)
        response = _resource_pb2.RegisterResourceResponse(urn=urn, id="", object=inputs)
        with self._echoed_lock:
            self._echoed[urn] = response.object
        return response

    def _sdk_answer(self, urn: str) -> None:
        """The SDK's path answers ``urn`` again (a duplicate, or a read): its registration is
        the one the SDK keeps, not an earlier echo."""
        with self._echoed_lock:
            self._echoed.pop(urn, None)

    def ReadResource(self, request):
        response = super().ReadResource(request)
        self._sdk_answer(response.urn)
        return response

    def Invoke(self, request):
        if request.tok == _GET_RESOURCE:
            self._convert_echoed()
        return super().Invoke(request)

    def ExistsResource(self, request):
        self._convert_echoed()
        return super().ExistsResource(request)

    def get_registered_resources(self) -> dict[str, Any]:
        self._convert_echoed()
        return super().get_registered_resources()

    def _convert_echoed(self) -> None:
        # Under the lock: a getResource on another thread waits for the whole batch, not
        # finding a registration this one has taken but not yet written.
        with self._echoed_lock:
            for urn, inputs in self._echoed.items():
                state = _rpc.deserialize_properties(inputs)
                self.resources[urn] = MockMonitor.ResourceRegistration(urn, "", state)
            self._echoed.clear()


def plain_struct(struct: Any) -> bool:
    """Whether a ``google.protobuf.Struct`` holds only plain values (``EchoingMockMonitor``)."""
    fields = struct.fields
    if SIG_KEY in fields:
        return False
    return all(_plain_value(value) for value in fields.values())


def _plain_value(value: Any) -> bool:
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        return value.string_value != _rpc.UNKNOWN
    if kind == "struct_value":
        return plain_struct(value.struct_value)
    if kind == "list_value":
        return all(_plain_value(item) for item in value.list_value.values)
    return kind == "number_value" or kind == "bool_value"


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
