"""Entry point for `pulumi up` / `pulumi preview`: validate the stack config, build the stack."""

import pulumi

from components.addons.installs import ManifestDigestError
from components.errors import ConfigError
from components.resolve.tenancy.fleet import FleetStack
from components.stack.entry import load_from_engine
from components.stack.fleet import build_fleet
from components.stack.program import build_stack

try:
    config = load_from_engine()
    # A team stack's owner (a fleet's workers) was read (StackReference) while loading its
    # config; the preflight runs before anything else registers.
    if isinstance(config, FleetStack):
        outputs = build_fleet(config)
    else:
        outputs = build_stack(config, owner_read=True)
except (ConfigError, ManifestDigestError) as exc:
    # RunError is reported to the user as a message, without a Python traceback.
    raise pulumi.RunError(str(exc)) from None

for key, value in outputs.items():
    pulumi.export(key, value)
