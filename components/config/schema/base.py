"""Shared validators and constrained text types of the stack schema."""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated

from pydantic import AfterValidator, Field, StrictInt

from components.config import grammars

NAMESPACE = "tpu-pathways"

MAX_CHIPS = 1_000_000
"""The most TPU chips a quota may name: over eight times the 120,000 one GKE cluster can hold
(15,000 nodes of at most 8 chips), and far inside the int64 of Kueue's and Kubernetes'
quantities (a larger number would reach a ClusterQueue or ResourceQuota as written)."""


def pattern(regex: str, what: str):
    compiled = re.compile(regex)

    def check(value: str) -> str:
        if not compiled.fullmatch(value):
            shown = repr(value) if len(value) <= 60 else f"{value[:57]!r}... ({len(value)} chars)"
            raise ValueError(f"{shown} is not {what}")
        return value

    return AfterValidator(check)


def grammar(problem_of):
    """A field validator from one of ``grammars``' checks."""

    def check(value: str) -> str:
        if problem := problem_of(value):
            raise ValueError(problem)
        return value

    return AfterValidator(check)


ChipCount = Annotated[StrictInt, Field(ge=0, le=MAX_CHIPS)]
"""A number of TPU chips in a quota (0 allowed: a share of nothing)."""
ImageReference = Annotated[str, grammar(grammars.image_problem)]
LabelKey = Annotated[str, grammar(grammars.label_key_problem), grammar(grammars.yaml_word_problem)]
LabelValue = Annotated[str, grammar(grammars.label_value_problem)]
GcsPath = Annotated[str, grammar(grammars.gcs_path_problem)]
Flag = Annotated[str, grammar(grammars.flag_problem)]
PlainEnvValue = Annotated[str, grammar(grammars.env_value_problem)]
ImageTag = Annotated[
    str, pattern(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}", "an image tag such as 'v0.1.4'")
]


def _cidr(value: str) -> str:
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError:
        raise ValueError(
            f"{value!r} is not a CIDR range such as '10.0.0.0/20' (an address with no host "
            "bits set, a slash and a prefix length)"
        ) from None
    return value


ProjectId = Annotated[str, grammar(grammars.project_id_problem)]
DnsLabel = Annotated[
    str,
    pattern(
        r"[a-z]([-a-z0-9]{0,28}[a-z0-9])?",
        "a name of 1-30 lowercase letters, digits or hyphens that starts with a letter "
        "and does not end with a hyphen",
    ),
]
ClusterName = Annotated[
    str,
    pattern(
        r"[a-z]([-a-z0-9]{0,38}[a-z0-9])?",
        "a GKE cluster name (1-40 lowercase letters, digits or hyphens, starting with a letter)",
    ),
]
Cidr = Annotated[str, AfterValidator(_cidr)]
SubnetCidr = Annotated[Cidr, grammar(grammars.subnet_range_problem)]
"""A range of the cluster's subnetwork: IPv4, allowed in a GCP subnet, at least a /29."""
CommandArg = Annotated[str, grammar(grammars.command_arg_problem)]
Label = Annotated[
    str,
    pattern(r"[a-z0-9]([-_a-z0-9]{0,61}[a-z0-9])?|", "a GCP label value (lowercase, at most 63)"),
]

# A Google group's address (Google Groups for RBAC binds Kubernetes RBAC to groups by it).
GroupEmail = Annotated[
    str,
    pattern(
        r"[a-z0-9][a-z0-9._+-]{0,63}@[a-z0-9][-a-z0-9]{0,62}(\.[a-z0-9][-a-z0-9]{0,62})+",
        "a Google group's email address such as 'ml-research@example.com' (lowercase)",
    ),
]
