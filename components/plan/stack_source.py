"""A stack file read and validated for the offline plan (``read_stack``), without the engine
and the provider SDKs: a mistake in a stack file is reported in the time it takes to read and
validate it (about 0.2 s of CPU), not after the SDKs' imports (about 1 s more). Another stack
this one reads (a team stack's owner, a fleet's workers) is read and validated too, and what it
exports for StackReferences (its contract) computed from its config
(``loader.reference_reader``): its program does not run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.config.schema import StackConfig
from components.config.schema.fleet import is_fleet
from components.errors import ConfigError
from components.resolve import loader
from components.resolve.stack_files import (
    STACKS_DIR,
    decode_engine_values,
    read_stack_file,
    stack_path,
)
from components.resolve.tenancy.ownership import classify_stacks


@dataclass(frozen=True)
class StackFile:
    """A stack file read for the offline plan: its validated config, its config map in the
    engine's string form (what the program is given) and its name for messages."""

    stack: str
    config: StackConfig
    raw: dict[str, str]
    label: str
    references: dict[str, dict[str, Any]] | None = None
    """What the stack's StackReferences answer (a fleet's workers); None: its owner's, if any."""
    stacks_dir: Path = STACKS_DIR
    """The directory it was read from: the program checks other stacks there too."""


def read_stack(stack: str, stacks_dir: Path = STACKS_DIR) -> StackFile:
    """Read and validate ``stacks_dir/Pulumi.<stack>.yaml``: every problem is reported at once
    (ConfigError), before anything registers; so are the problems between it and the other
    stacks of the directory (``tenancy.ownership.classify_stacks``: names both would create, a
    namespace both would own)."""
    raw = read_stack_file(stack, stacks_dir)
    if is_fleet(decode_engine_values(raw)):  # its workers read as owners are
        # Only a fleet's plan loads the fleet modules (MultiKueue models, dispatch, sets).
        from components.resolve.tenancy.fleet import load_fleet, worker_outputs

        fleet = load_fleet(stack, loader.reference_reader(stacks_dir), stacks_dir, raw)
        label = stack_path(stack, stacks_dir).name
        return StackFile(stack, fleet.manager, raw, label, worker_outputs(fleet), stacks_dir)
    kinds = classify_stacks(stacks_dir, {stack: raw})  # once, for this stack and its owner
    config = loader.load_stack(stack, stacks_dir, loader.reference_reader(stacks_dir, kinds), raw)
    label = stack_path(stack, stacks_dir).name
    if conflicts := kinds.conflicts_of(stack):
        raise ConfigError(conflicts, f"{label} (with the other stacks of {stacks_dir.name}/)")
    return StackFile(stack, config, raw, label, stacks_dir=stacks_dir)
