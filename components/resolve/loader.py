"""Where a stack's validated config comes from: ``load_stack`` reads one stack file
(``stack_files``), reads the owner's contract of a team stack (``tenancy``) and validates the
whole (``checks.parse_stack_config``). ``components.stack.entry`` does the same from the Pulumi
engine's config map under `pulumi up`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from components.config.schema import NAMESPACE, StackConfig
from components.errors import ConfigError, ConfigIssue
from components.resolve.checks import parse_stack_config
from components.resolve.stack_files import (
    STACKS_DIR,
    decode_engine_values,
    misspelled_namespaces,
    read_stack_file,
    stack_path,
)
from components.resolve.tenancy.ownership import owner_stack_of
from components.resolve.tenancy.shared_cluster import read_contract

OwnerReader = Callable[[str], Mapping[str, Any] | None]
"""Given an owner stack's name, its exported outputs (the offline plan passes one that plans
the owner stack; the loader itself never plans)."""


def load_stack(
    stack: str,
    stacks_dir: Path = STACKS_DIR,
    read_owner: OwnerReader | None = None,
    raw: Mapping[str, str] | None = None,
) -> StackConfig:
    """Read and validate one stack file. A team stack's owner contract comes from
    ``read_owner`` (the offline plan
    gives one that plans the owner stack: ``components.plan.engine.load_stack``). ``raw``: the
    file's config map already read (``read_stack_file``), so it is not read twice."""
    raw = read_stack_file(stack, stacks_dir) if raw is None else raw
    source = f"{stack_path(stack, stacks_dir).name} ({NAMESPACE}:)"
    misspelled = misspelled_namespaces(raw)  # reported with the rest
    values = decode_engine_values(raw)
    owner = values.get("owner")
    contract = None
    if isinstance(owner, str) and (owner_stack := owner_stack_of(stack, owner, stacks_dir, source)):
        if read_owner is None:
            raise ConfigError([ConfigIssue("owner", "the owner stack was not read")], source)
        contract = read_contract(read_owner(owner_stack), owner)
    return parse_stack_config(values, source, contract, misspelled)
