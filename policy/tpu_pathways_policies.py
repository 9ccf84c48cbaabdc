"""The guardrail rules of ``components.policy.rules`` as pulumi-policy resource validations.

One ``ResourceValidationPolicy`` per rule, enforcement mandatory. Building the list does not start
the policy-pack server (``__main__.py`` does), so tests can call each validator directly.

The stack environment (dev | staging | production) comes from the stack's own config: the Pulumi
engine starts a policy pack with the stack config in the ``PULUMI_CONFIG`` environment variable
(a JSON map of ``namespace:key`` to string), so the pack reads ``tpu-pathways:environment`` exactly
as the program does, with the program's default ``dev`` when the key is absent. The variable
``TPU_PATHWAYS_POLICY_ENVIRONMENT`` can only make the rules stricter (check a dev stack as
production); it never relaxes a stack's own environment, so a production stack is always checked
as production. With no stack config at all, or a value that is no environment (in the config or
the variable), the pack applies the production rules.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyResourceOptions,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError

from components.config.schema import NAMESPACE
from components.plan.model import UNKNOWN
from components.policy import rules as guardrails
from components.vocabulary import Environment

PACK_NAME = "tpu-pathways-guardrails"
ENVIRONMENT_OVERRIDE = "TPU_PATHWAYS_POLICY_ENVIRONMENT"
ENVIRONMENT_KEY = f"{NAMESPACE}:environment"


# Least to most strict: the override variable may move a stack right, never left.
STRICTNESS = (Environment.DEV, Environment.STAGING, Environment.PRODUCTION)


def stack_environment(environ: Mapping[str, str] | None = None) -> str:
    """The environment the rules apply: the stricter of the stack config and the override
    variable; anything unreadable or unknown fails closed (production)."""
    environ = os.environ if environ is None else environ
    chosen = [_config_environment(environ)]
    override = environ.get(ENVIRONMENT_OVERRIDE)
    if override:
        chosen.append(_environment(override))
    return max(chosen, key=STRICTNESS.index).value


def _config_environment(environ: Mapping[str, str]) -> Environment:
    try:
        config = json.loads(environ["PULUMI_CONFIG"])
    except (KeyError, json.JSONDecodeError):
        return Environment.PRODUCTION
    if not isinstance(config, Mapping):
        return Environment.PRODUCTION
    return _environment(config.get(ENVIRONMENT_KEY, Environment.DEV.value))


def _environment(value: object) -> Environment:
    try:
        return Environment(value)
    except ValueError:
        return Environment.PRODUCTION


def plain(value: Any) -> Any:
    """The engine's property proxies as plain dicts and lists; values unknown during a preview
    become ``UNKNOWN`` (the proxy raises on reading them), which the rules never report."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return {key: _read(value, key) for key in value}
    if isinstance(value, Sequence):
        return [_read(value, index) for index in range(len(value))]
    return value


def _read(container: Any, key: Any) -> Any:
    try:
        return plain(container[key])
    except UnknownValueError:
        return UNKNOWN


def resource_options(opts: PolicyResourceOptions) -> dict[str, Any]:
    # Policy packs are not told about retainOnDelete (the analyzer's resource options carry
    # protect but not it), so it is unknown here and rules needing it rely on protect alone.
    return {"protect": bool(opts.protect), "retainOnDelete": UNKNOWN}


def policy_for(rule: guardrails.Rule) -> ResourceValidationPolicy:
    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        if not rule.applies_to(args.resource_type):
            return
        resource = guardrails.Resource(
            type=args.resource_type,
            name=args.name,
            inputs=plain(args.props),
            options=resource_options(args.opts),
            urn=args.urn,
        )
        context = guardrails.StackContext(stack_environment())
        for message in rule.violations(resource, context):
            report_violation(message, None)

    return ResourceValidationPolicy(
        name=rule.id,
        description=rule.description,
        validate=validate,
        enforcement_level=EnforcementLevel.MANDATORY,
    )


def policies() -> list[ResourceValidationPolicy]:
    """One mandatory resource validation per guardrail rule, in rule order."""
    return [policy_for(rule) for rule in guardrails.RULES]
