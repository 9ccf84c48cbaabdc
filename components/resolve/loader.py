"""Where a stack's validated config comes from: ``load_stack`` reads one stack file
(``stack_files``), reads the owner's contract of a team stack (``tenancy``) and validates the
whole (``checks.parse_stack_config``). ``components.stack.entry`` does the same from the Pulumi
engine's config map under `pulumi up`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from components.config.schema import NAMESPACE, StackConfig
from components.errors import ConfigError
from components.resolve.checks import parse_stack_config
from components.resolve.stack_files import (
    STACKS_DIR,
    decode_engine_values,
    misspelled_namespaces,
    read_stack_file,
    stack_path,
)
from components.resolve.tenancy.ownership import StackKinds, classify_stacks, owner_stack_of
from components.resolve.tenancy.shared_cluster import read_contract, reference_outputs

OwnerReader = Callable[[str], Mapping[str, Any] | None]
"""Given another stack's name (an owner, a fleet's worker), what its StackReference answers:
the outputs it exports for other stacks (``reference_reader``)."""


def load_stack(
    stack: str,
    stacks_dir: Path = STACKS_DIR,
    read_owner: OwnerReader | None = None,
    raw: Mapping[str, str] | None = None,
) -> StackConfig:
    """Read and validate one stack file. A team stack's owner contract comes from
    ``read_owner`` (default: ``reference_reader`` of ``stacks_dir``). ``raw``: the file's config
    map already read (``read_stack_file``), so it is not read twice."""
    raw = read_stack_file(stack, stacks_dir) if raw is None else raw
    read_owner = reference_reader(stacks_dir) if read_owner is None else read_owner
    source = f"{stack_path(stack, stacks_dir).name} ({NAMESPACE}:)"
    misspelled = misspelled_namespaces(raw)  # reported with the rest
    values = decode_engine_values(raw)
    owner = values.get("owner")
    contract = None
    if isinstance(owner, str) and (owner_stack := owner_stack_of(stack, owner, stacks_dir, source)):
        contract = read_contract(read_owner(owner_stack), owner)
    return parse_stack_config(values, source, contract, misspelled)


def reference_reader(stacks_dir: Path = STACKS_DIR, kinds: StackKinds | None = None) -> OwnerReader:
    """Another stack of ``stacks_dir`` (a team stack's owner, a fleet's worker) -> what its
    StackReference answers in the offline plan: the outputs it exports for other stacks,
    ``reference_outputs`` of its validated config. Its program exports them with that same
    function, so the other stack's program need not run: only its file is read and validated
    (planning it whole cost about 0.2-0.4 s of CPU for each owner or worker read), and refused,
    as its own plan refuses it, when it is in conflict with another stack of the directory
    (``classify_stacks``: two owners of one cluster, two clusters in one project). ``kinds``:
    the directory classified already (else it is, when a stack is first read)."""
    classified: list[StackKinds] = [] if kinds is None else [kinds]

    def read(other: str) -> Mapping[str, Any]:
        config = load_stack(other, stacks_dir, read)
        if not classified:
            classified.append(classify_stacks(stacks_dir))
        if conflicts := classified[0].conflicts_of(other):
            label = f"{stack_path(other, stacks_dir).name} (with the other stacks of "
            raise ConfigError(conflicts, f"{label}{stacks_dir.name}/)")
        return reference_outputs(config, other)

    return read
