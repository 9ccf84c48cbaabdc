"""A stack's config validated as a whole: ``parse_stack_config`` runs the schema
(``components.config.schema``, round after round with what it refused set aside:
``components.config.recovery``), then the checks across the stack's keys (``stack_checks``), the
checks of workloads and shared services against the rest of the stack (``workload_checks``: they
read the pools and the CPU pool, so they need a valid model first) and the preflight.

Each would otherwise surface only at run time (a Pending head pod, a job the controller
rejects, a scratch path the pods cannot write), after TPU capacity has been allocated.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from components.config import grammars
from components.config.recovery import Recovery
from components.config.schema import (
    StackConfig,
)
from components.config.schema.contract import SharedCluster
from components.errors import ConfigError, ConfigIssue, issues_from_validation
from components.resolve.image_checks import image_issues
from components.resolve.preflight import bucket_grants, planned_pools, preflight
from components.resolve.stack_checks import cross_check_issues
from components.resolve.tenancy.shared_cluster import owner_problems
from components.resolve.workload_checks import workload_issues
from components.resolve.zone_checks import zone_issues


def parse_stack_config(
    values: dict[str, Any],
    source: str = "stack config",
    owner: SharedCluster | None = None,
    earlier: Sequence[ConfigIssue] = (),
) -> StackConfig:
    """Validate the ``tpu-pathways:`` values of a stack (keys without the namespace prefix):
    the schema, the checks across the stack, the workload checks and the preflight, every
    problem in one ConfigError. Entries the schema refuses are left out of the later checks
    (``recovery``); the report then says which checks follow once they are fixed.

    A team stack (``owner:``) is validated with its owner's part filled in from ``owner``, the
    owner stack's exported contract; restating any of that part is an error of its own.
    ``earlier``: problems the caller found in the config map before (a misspelled namespace),
    reported with these.

    The same values (and owner contract) are validated once per process: the offline plan
    validates the stack file, then runs the program, which validates the config the engine
    passes it (`pulumi up` validates only that). The models are not changed after validation,
    so both get the one StackConfig."""
    key = None if earlier else _validation_key(values, owner)
    if key is not None and (config := _VALIDATED.get(key)) is not None:
        return config
    config = _validate(values, source, owner, earlier)
    if key is not None:
        if len(_VALIDATED) >= _VALIDATED_KEPT:
            del _VALIDATED[next(iter(_VALIDATED))]  # the oldest
        _VALIDATED[key] = config
    return config


_VALIDATED: dict[str, StackConfig] = {}
"""Stack configs validated in this process, by ``_validation_key``; only valid ones are kept."""
_VALIDATED_KEPT = 8
"""A plan validates a stack, its owner and a fleet's workers; a test process many more."""


def forget_validated() -> None:
    """Validate every config again (a test that changes what validation depends on)."""
    _VALIDATED.clear()


def _validation_key(values: dict[str, Any], owner: SharedCluster | None) -> str | None:
    """What a validation depends on, as canonical JSON; None (validated each time) for values
    JSON cannot hold as they are: json.dumps refuses some (a NaN) and rewrites others (the key
    True as "true", a tuple as a list), so the key must read back as the values."""
    contract = None if owner is None else owner.model_dump(mode="json")
    try:
        key = json.dumps([values, contract], sort_keys=True, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None
    return key if json.loads(key) == [values, contract] else None


def _validate(
    values: dict[str, Any],
    source: str,
    owner: SharedCluster | None,
    earlier: Sequence[ConfigIssue],
) -> StackConfig:
    """``parse_stack_config`` without the memo."""
    issues = list(earlier)
    if values.get("owner") is not None:
        if owner is None:  # only a malformed reference is left unread
            try:
                grammars.parse_owner_ref(
                    values["owner"] if isinstance(values["owner"], str) else ""
                )
            except ValueError as exc:
                raise ConfigError([*issues, ConfigIssue("owner", str(exc))], source) from None
            issue = ConfigIssue("owner", "the owner stack was not read")
            raise ConfigError([*issues, issue], source)
        issues += owner_problems(values, owner.owner_stack)
        values = {**values, **owner.team_values()}
    recovery = Recovery.of(values)
    config = _schema(recovery, owner, issues)
    if config is None:
        raise ConfigError(issues, source, _LATER_CHECKS)
    across = cross_check_issues(config, whole_pools=not recovery.partial)
    found = workload_issues(config)
    skipped = _unchecked_deployments(config, found)
    # Checks no other problem can mislead, and none of whose problems misleads the preflight.
    independent = zone_issues(config) + image_issues(config)
    if not across:  # a problem across the stack (a pool's name taken) can mislead every job's
        report = preflight(config, planned_pools(config), bucket_grants(config), skip=skipped)
        found += report.issues
    issues += [recovery.original(i) for i in [*across, *found, *independent]]
    issues[len(earlier) :] = in_file_order(issues[len(earlier) :], values)
    if issues:
        skipped = [recovery.original(ConfigIssue(k, "")).key for k in skipped]
        raise ConfigError(issues, source, _later(recovery.left_out, skipped, bool(across)))
    config._preflight = report  # every job checked, nothing found: the plan reuses it
    return config


MAX_ROUNDS = 20
"""Schema rounds: each sets aside at least one refused value, so a file with many mistakes of
many kinds takes a few; this bounds a hostile one."""
_LATER_CHECKS = (
    "more checks run once these are fixed: those across the stack, the workload checks and "
    "the preflight"
)


def _later(left_out: list[str], skipped: list[str], no_preflight: bool) -> str:
    """What the report says is checked once its problems are fixed ('' when nothing is)."""
    parts = [f"those of {_listing(left_out)}"] if left_out else []
    if no_preflight:
        parts.append("the preflight")
    elif skipped:
        parts.append(f"the preflight of {_listing(skipped)}")
    return f"more checks run once these are fixed: {'; '.join(parts)}" if parts else ""


def _schema(
    recovery: Recovery, owner: SharedCluster | None, issues: list[ConfigIssue]
) -> StackConfig | None:
    """The schema, round after round with the refused values set aside, every issue added to
    ``issues`` once (None: what is left cannot be validated)."""
    for _ in range(MAX_ROUNDS):
        try:
            return StackConfig.model_validate(recovery.values, context={"owner": owner})
        except ValidationError as exc:
            found = issues_from_validation(exc, StackConfig, grammars.hides_value)
            issues += [i for i in map(recovery.original, found) if i not in issues]
            errors = exc.errors(include_url=False)
            if not recovery.set_aside(errors, StackConfig, grammars.hides_value):
                return None
    return None


def _unchecked_deployments(config: StackConfig, issues: list[ConfigIssue]) -> list[str]:
    """The deployments a problem was found in: their preflight waits for the fix."""
    return [
        key
        for key, _ in config.deployments()
        if any(i.key == key or i.key.startswith((f"{key}.", f"{key}[")) for i in issues)
    ]


def in_file_order(issues: list[ConfigIssue], values: dict[str, Any]) -> list[ConfigIssue]:
    """The problems by where the file has them (its top-level keys in their order, a list's
    entries by index), so one entry's problems read together; otherwise as found."""
    order = {key: i for i, key in enumerate(values)}

    def position(issue: ConfigIssue) -> tuple[int, int]:
        match = _TOP_KEY.match(issue.key)
        if match is None:
            return (len(order), 0)
        index = int(match[2]) if match[2] is not None else -1
        return (order.get(match[1], len(order)), index)

    return sorted(issues, key=position)


_TOP_KEY = re.compile(r"([A-Za-z]+)(?:\[(\d+)\])?")


def _listing(keys: list[str]) -> str:
    return keys[0] if len(keys) == 1 else f"{', '.join(keys[:-1])} and {keys[-1]}"
