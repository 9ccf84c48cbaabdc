"""TPU pools against the zone catalog (``components.tpu.zones``): a pool whose generation the
stack's zone does not offer is refused at plan time, listing the zones that have it, instead of
failing at `pulumi up` after the ~10-minute cluster step. ``allowUnlistedZone`` on a pool turns
the refusal into a warning (a zone newer than the table); a capacity type the zone does not list
is only warned about. The warnings are the program's (``zone_warnings``), so `pulumi up` shows
them too."""

from __future__ import annotations

from components.config.schema import StackConfig
from components.errors import ConfigIssue
from components.tpu.zones import capacity_note, zone_problem


def zone_issues(config: StackConfig) -> list[ConfigIssue]:
    """The TPU pools of a stack that creates its cluster whose zone lacks their generation."""
    if not config.creates_cluster:  # a team stack's pools are its owner's, checked there
        return []
    return [
        ConfigIssue(f"tpuPools[{i}].generation", problem)
        for i, pool in enumerate(config.tpu_pools)
        if not pool.allow_unlisted_zone
        and (problem := zone_problem(pool.shape.generation, config.gcp.zone))
    ]


def zone_warnings(config: StackConfig) -> list[str]:
    """What the plan warns about: pools allowed in an unlisted zone, capacity types a zone
    does not list."""
    if not config.creates_cluster:
        return []
    warnings = []
    for pool in config.tpu_pools:
        generation, zone = pool.shape.generation, config.gcp.zone
        if zone_problem(generation, zone) is not None:
            warnings.append(
                f"tpuPools {pool.name!r}: {generation.value} is not listed in zone {zone!r}; "
                "created anyway (allowUnlistedZone: true)"
            )
        elif note := capacity_note(generation, zone, pool.capacity.type.value):
            warnings.append(f"tpuPools {pool.name!r}: {note}")
    return warnings
