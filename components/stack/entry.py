"""The `pulumi up` entry: the config map the Pulumi engine passes to the program, a team stack's
owner read through a StackReference, then the same parser the offline plan uses."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi

from components.config.grammars import parse_owner_ref
from components.config.schema import NAMESPACE, StackConfig
from components.config.schema.fleet import is_fleet
from components.errors import ConfigError, ConfigIssue
from components.resolve.checks import parse_stack_config
from components.resolve.stack_files import (
    SECRETS_KEY,
    SET_SECRET_HINT,
    decode_engine_values,
    misspelled_namespaces,
    program_stacks_dir,
)
from components.sdk.pulumi_private import engine_config
from components.stack.owner import read_owner_contract, read_worker_outputs

if TYPE_CHECKING:
    from components.resolve.tenancy.fleet import FleetStack


def load_from_engine() -> StackConfig | FleetStack:
    """Validate the config the Pulumi engine passed to this program (the `pulumi up` entry).
    A team stack's owner is read through a StackReference first (it registers nothing else)."""
    raw = engine_config()
    source = f"stack config ({NAMESPACE}:)"
    misspelled = misspelled_namespaces(raw)  # reported with the rest
    if SECRETS_KEY in raw and not pulumi.runtime.is_config_secret(SECRETS_KEY):
        issue = ConfigIssue(
            SECRETS_KEY,
            f"is stored in plain text (value not shown); encrypt each: {SET_SECRET_HINT}",
        )
        raise ConfigError([issue], source)
    values = decode_engine_values(raw)
    if is_fleet(values):  # its workers' contracts read through StackReferences first
        # Only a fleet stack loads the fleet modules (MultiKueue models, dispatch, sets).
        from components.resolve.tenancy.fleet import parse_fleet_config

        return parse_fleet_config(
            pulumi.get_stack(), values, read_worker_outputs, program_stacks_dir()
        )
    contract = None
    owner = values.get("owner")
    if isinstance(owner, str):
        try:
            parse_owner_ref(owner)
        except ValueError:
            pass  # reported by the schema, before anything is read
        else:
            contract = read_owner_contract(owner)
    return parse_stack_config(values, source, contract, misspelled)
