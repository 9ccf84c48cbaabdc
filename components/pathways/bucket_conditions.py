"""The IAM Conditions (CEL) of the grants on Cloud Storage buckets, and the limits IAM puts on
them. No Pulumi here: the bucket components build their grants from these expressions, each of a
fixed shape whose logical operators the tests count (``tests/helpers.logical_operators``) and
hold under IAM's limit (none grows with the number of teams: the dedicated teams' prefixes share
one top-level segment, ``_/``).

IAM's limits (Overview of IAM Conditions, "Limits",
https://cloud.google.com/iam/docs/conditions-overview#limits; read 2026-11): a condition
expression has at most 12 logical operators, and one role may be bound to one principal under
at most 20 different conditions. The page names ``&&``, ``||`` and ``!`` as CEL's logical
operators; ``!`` is counted here too (the stricter reading). A public client library's measured
notes agree on both numbers ("At most 12 logical operators in a condition, and at most 20
bindings of one role and member with different conditions").
"""

from __future__ import annotations

from components.vocabulary import DEDICATED_SCRATCH_ROOT

MAX_LOGICAL_OPERATORS = 12
"""Logical operators (``&&``, ``||``, ``!``) of one IAM condition expression at most."""

LIST_PREFIX = 'api.getAttribute("storage.googleapis.com/objectListPrefix", "")'
"""The prefix of a list request (Cloud Storage's API attribute; "" for any other request)."""


def object_prefix_expression(bucket: str, prefix: str) -> str:
    """CEL for "an object under ``prefix`` of ``bucket``, or a list of that prefix"."""
    return (
        f'resource.name.startsWith("projects/_/buckets/{bucket}/objects/{prefix}") || '
        f'{LIST_PREFIX}.startsWith("{prefix}")'
    )


def shared_nodes_expression(bucket: str) -> str:
    """CEL for "an object outside ``_/``, or a list of a prefix that shows no name under it":
    the teams with dedicated pools keep their prefixes under ``_/`` (``DEDICATED_SCRATCH_ROOT``),
    so one expression leaves every one of them out, whatever their number and names. A list of
    ``p`` shows every object whose name starts with ``p``, so the lists refused are those of the
    whole bucket (``""``), of ``_`` and of anything under ``_/``. Written with the attribute on
    the left of ``startsWith`` and ``==``/``!=`` only, the forms IAM's examples use: 8 logical
    operators, of IAM's 12 (``MAX_LOGICAL_OPERATORS``)."""
    objects = f"projects/_/buckets/{bucket}/objects/"
    root = DEDICATED_SCRATCH_ROOT
    return (
        f'(resource.name.startsWith("{objects}") && '
        f'!resource.name.startsWith("{objects}{root}")) || '
        f'(!resource.name.startsWith("{objects}") && {LIST_PREFIX} != "" && '
        f'{LIST_PREFIX} != "{root.rstrip("/")}" && !{LIST_PREFIX}.startsWith("{root}"))'
    )
