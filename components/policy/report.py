"""The guardrail rules over an offline plan: `python -m components plan --stack NAME --policy`.

Every registered resource goes through every rule of ``components.policy.rules`` with its recorded
inputs and options, in plan order; the stack's environment comes from its validated config, and
what a stack-wide rule reads of the other resources from the whole plan (``stack_context``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from components.plan.model import Plan, PlannedResource
from components.policy.model import stack_context
from components.policy.rules import RULES, Resource, Rule, evaluate


@dataclass(frozen=True)
class Violation:
    rule: str
    urn: str
    type: str
    name: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def subject(resource: PlannedResource) -> Resource:
    """A planned resource as the rules see it."""
    return Resource(
        type=resource.type,
        name=resource.name,
        inputs=resource.inputs,
        options=resource.options,
        urn=resource.urn,
    )


def check_plan(plan: Plan, environment: str, rules: Iterable[Rule] = RULES) -> list[Violation]:
    """Every violation in the plan, in plan order, then rule order."""
    subjects = [subject(resource) for resource in plan.resources]
    context = stack_context(environment, subjects)
    rules = tuple(rules)
    return [
        Violation(rule.id, resource.urn, resource.type, resource.name, message)
        for resource in subjects
        for rule, message in evaluate(resource, context, rules)
    ]


def render_violations(violations: list[Violation], environment: str, stack: str) -> str:
    """The report; its header names the stack and the environment whose rules applied."""
    header = f"Policy for stack {stack!r} ({environment} environment)"
    if not violations:
        return f"{header}: no violations of {len(RULES)} rules"
    count = len(violations)
    lines = [f"{header}: {count} violation{'s' if count != 1 else ''}"]
    lines += [f"  [{v.rule}] {v.message}" for v in violations]
    return "\n".join(lines)
