"""The IAM Conditions (CEL) of the grants on Cloud Storage buckets, and the limits IAM puts on
them. No Pulumi here: the bucket components build their grants from these expressions, and the
resolve layer refuses at plan time a stack whose expression IAM would reject at `pulumi up`.

IAM's limits (Overview of IAM Conditions, "Limits",
https://cloud.google.com/iam/docs/conditions-overview#limits; read 2026-11): a condition
expression has at most 12 logical operators, and one role may be bound to one principal under
at most 20 different conditions. The page names ``&&``, ``||`` and ``!`` as CEL's logical
operators; ``!`` is counted here too (the stricter reading). A public client library's measured
notes agree on both numbers ("At most 12 logical operators in a condition, and at most 20
bindings of one role and member with different conditions").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from components.vocabulary import team_prefix

MAX_LOGICAL_OPERATORS = 12
"""Logical operators (``&&``, ``||``, ``!``) of one IAM condition expression at most."""
LIMITS_SOURCE = "https://cloud.google.com/iam/docs/conditions-overview#limits"

LIST_PREFIX = 'api.getAttribute("storage.googleapis.com/objectListPrefix", "")'
"""The prefix of a list request (Cloud Storage's API attribute; "" for any other request)."""

# A string literal (skipped), or a logical operator: `!` but not the `!` of `!=`.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|&&|\|\||!(?!=)')


def logical_operators(expression: str) -> int:
    """The logical operators of a CEL expression, outside its string literals."""
    return sum(1 for t in _TOKENS.findall(expression) if not t.startswith('"'))


def object_prefix_expression(bucket: str, prefix: str) -> str:
    """CEL for "an object under ``prefix`` of ``bucket``, or a list of that prefix"."""
    return (
        f'resource.name.startsWith("projects/_/buckets/{bucket}/objects/{prefix}") || '
        f'{LIST_PREFIX}.startsWith("{prefix}")'
    )


def team_prefix_expression(bucket: str, team: str) -> str:
    """CEL for "an object under the team's prefix, or a list of it" (see ``scratch_bucket``)."""
    return object_prefix_expression(bucket, team_prefix(team))


def shared_nodes_expression(bucket: str, teams: Sequence[str]) -> str:
    """CEL for "an object under no prefix of ``teams``, or a list of a prefix that reaches
    none of theirs": a list of ``p`` shows every object whose name starts with ``p``, so a
    list of the whole bucket, or of ``n``, ``nl`` or ``nlp`` (the prefixes of ``nlp/``), would
    show the names of nlp's objects as much as a list under ``nlp/`` does. Written with the
    attribute on the left of ``startsWith`` and ``==`` only, the forms IAM's examples use: each
    character of a team's name costs one ``||`` (``shared_nodes_operators``)."""
    objects = f"projects/_/buckets/{bucket}/objects/"
    outside_objects = " || ".join(
        f'resource.name.startsWith("{objects}{team_prefix(t)}")' for t in teams
    )
    outside_lists = " || ".join(_lists_reaching(team_prefix(t)) for t in teams)
    return (
        f'(resource.name.startsWith("{objects}") && !({outside_objects})) || '
        f'(!resource.name.startsWith("{objects}") && {LIST_PREFIX} != "" && !({outside_lists}))'
    )


def _lists_reaching(prefix: str) -> str:
    """CEL for "a list whose prefix shows names under ``prefix``" (but the list of "")."""
    shorter = [f'{LIST_PREFIX} == "{prefix[:end]}"' for end in range(1, len(prefix))]
    return " || ".join([f'{LIST_PREFIX}.startsWith("{prefix}")', *shorter])


def shared_nodes_operators(teams: Sequence[str]) -> int:
    """The logical operators of ``shared_nodes_expression`` (the bucket's name adds none)."""
    return logical_operators(shared_nodes_expression("b", teams))
