"""The package's provider: Pulumi's component provider, reporting a user's mistake per input.

``ComponentProvider`` (the host ``component_provider_host`` starts) wraps whatever a
component's constructor raises in ``ComponentInitError``, which the engine shows with a Python
traceback. A ``ConfigError`` is a user's mistake, already naming each key and what is allowed:
it is re-raised as ``pulumi.InputPropertiesError``, which the engine shows as one message per
input property, without a traceback.
"""

from typing import Any

import pulumi

from components.errors import ConfigError
from components.sdk.pulumi_private import component_init_error, component_provider

ComponentProvider = component_provider()
ComponentInitError = component_init_error()


class TpuPathwaysProvider(ComponentProvider):  # type: ignore[misc, valid-type]
    def construct(
        self,
        name: str,
        resource_type: str,
        inputs: Any,
        options: pulumi.ResourceOptions | None = None,
    ) -> Any:
        try:
            return super().construct(name, resource_type, inputs, options)
        except ComponentInitError as exc:
            inner = getattr(exc, "inner", None)
            if not isinstance(inner, ConfigError):
                raise
            details = [{"property_path": i.key, "reason": i.message} for i in inner.issues]
            raise pulumi.InputPropertiesError(str(inner), details) from None  # type: ignore[arg-type]
