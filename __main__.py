"""Entry point for `pulumi up` / `pulumi preview`: validate the stack config, build the stack."""

import pulumi

from components.errors import ConfigError
from components.program import build_stack
from components.stack_file import load_from_engine

try:
    config = load_from_engine()
except ConfigError as exc:
    # RunError is reported to the user as a message, without a Python traceback.
    raise pulumi.RunError(str(exc)) from None

# A team stack's owner was read (StackReference) while loading its config.
for key, value in build_stack(config, owner_read=True).items():
    pulumi.export(key, value)
