"""The guardrail rules of ``components.policy.rules`` as pulumi-policy validations.

One policy per rule, enforcement mandatory: a ``ResourceValidationPolicy`` for a rule of one
resource, a ``StackValidationPolicy`` for a ``stack_wide`` rule (it reads the stack's other
resources: ``components.policy.model.stack_context``), which the engine runs once over every
resource and which names each violating resource's URN. Building the list does not start the
policy-pack server (``__main__.py`` does), so tests can call each validator directly.

Settings come from Pulumi, never from the process environment:

* the stack's environment (dev | staging | production) from the stack's own config,
  ``pulumi.Config("tpu-pathways").get("environment")``, as the program reads it, with the
  program's default ``dev`` when the key is absent. pulumi-policy puts the stack config into
  Pulumi's runtime config before each validation, so it is read inside the validator, never at
  import. A config with none of a stack's keys (gcp, owner, fleet), or a value that is no
  environment, gets the production rules (fail closed).
* the policy's own config (``--policy-pack-config FILE``, the pulumi/actions input
  ``policyPackConfigs``): each policy declares ``environment`` in its ``config_schema``, the
  environment to check every stack as at least. It only tightens: a production stack is always
  checked as production. The engine validates the file against the schemas before anything
  runs, so a misspelled key or value fails the preview.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    PolicyResource,
    PolicyResourceOptions,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError

from components.config.schema import NAMESPACE
from components.plan.model import UNKNOWN
from components.policy import rules as guardrails
from components.policy.model import stack_context
from components.vocabulary import Environment

PACK_NAME = "tpu-pathways-guardrails"
# Keys one of which every stack of this project sets: without any, no stack config is visible.
STACK_KEYS = ("gcp", "owner", "fleet")

# Least to most strict: the policy config may move a stack right, never left.
STRICTNESS = (Environment.DEV, Environment.STAGING, Environment.PRODUCTION)

CONFIG_SCHEMA = PolicyConfigSchema(
    properties={
        "environment": {
            "type": "string",
            "enum": [e.value for e in STRICTNESS],
            "description": "Check every stack at least as strictly as this environment "
            "(never relaxes a stack's own environment).",
        }
    }
)


def stack_settings() -> dict[str, str | None]:
    """The stack config the rules read (inside a validator: pulumi-policy has set it)."""
    config = pulumi.Config(NAMESPACE)
    return {key: config.get(key) for key in ("environment", *STACK_KEYS)}


def stack_environment(stack: Mapping[str, str | None], policy: Mapping[str, Any]) -> str:
    """The environment the rules apply: the stricter of the stack's and the policy config's;
    anything unreadable or unknown fails closed (production)."""
    if not any(stack.get(key) for key in STACK_KEYS):
        return Environment.PRODUCTION.value
    chosen = [_environment(stack.get("environment") or Environment.DEV.value)]
    if (tighter := policy.get("environment")) is not None:
        chosen.append(_environment(tighter))
    return max(chosen, key=STRICTNESS.index).value


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


def subject(resource: ResourceValidationArgs | PolicyResource) -> guardrails.Resource:
    """A resource as the engine sends it, as the rules see it."""
    return guardrails.Resource(
        type=resource.resource_type,
        name=resource.name,
        inputs=plain(resource.props),
        options=resource_options(resource.opts),
        urn=resource.urn,
    )


def policy_for(rule: guardrails.Rule) -> ResourceValidationPolicy | StackValidationPolicy:
    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        if not rule.applies_to(args.resource_type):
            return
        context = guardrails.StackContext(stack_environment(stack_settings(), args.get_config()))
        for message in rule.violations(subject(args), context):
            report_violation(message, None)

    def validate_stack(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        resources = [subject(resource) for resource in args.resources]
        environment = stack_environment(stack_settings(), args.get_config())
        context = stack_context(environment, resources)
        for resource in resources:
            for message in rule.violations(resource, context):
                report_violation(message, resource.urn)

    kind, check = (
        (StackValidationPolicy, validate_stack)
        if rule.stack_wide
        else (ResourceValidationPolicy, validate)
    )
    return kind(
        name=rule.id,
        description=rule.description,
        validate=check,
        enforcement_level=EnforcementLevel.MANDATORY,
        config_schema=CONFIG_SCHEMA,
    )


def policies() -> list[ResourceValidationPolicy | StackValidationPolicy]:
    """One mandatory validation per guardrail rule, in rule order."""
    return [policy_for(rule) for rule in guardrails.RULES]
