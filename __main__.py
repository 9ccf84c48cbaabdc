"""Entry point for `pulumi up` / `pulumi preview`: validate the stack config, build the stack."""

import pulumi

from components.addons.installs import ManifestDigestError
from components.config.schema import StackConfig
from components.errors import ConfigError
from components.stack.entry import load_from_engine
from components.stack.program import build_stack

try:
    config = load_from_engine()
    # A team stack's owner (a fleet's workers) was read (StackReference) while loading its
    # config; the preflight runs before anything else registers.
    if isinstance(config, StackConfig):
        outputs = build_stack(config, owner_read=True)
    else:  # a fleet stack (FleetStack): only it loads the fleet modules
        from components.stack.fleet import build_fleet

        outputs = build_fleet(config)
except (ConfigError, ManifestDigestError) as exc:
    # RunError is reported to the user as a message, without a Python traceback.
    raise pulumi.RunError(str(exc)) from None

for key, value in outputs.items():
    pulumi.export(key, value)
