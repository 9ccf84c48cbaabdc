"""The Kueue objects the program builds, checked against the CRDs of the Kueue it installs before
any is registered: the openAPIV3Schema of each kind at the version Kueue v0.17.1 stores
(``data/kueue-v0.17.1-openapi-schemas.json``, extracted from the release's CRDs by
scripts/refresh_crd_schemas.py; the contract tests check every plan's objects with it too).

A problem here is the program's, not the user's: the stack's checks refuse first what would
make one (a worker set with no shared TPU pool: ``resolve.tenancy.fleet_quota``). So a finding
raises ``InvalidKueueObject`` and the plan (and ``pulumi preview``) fails instead of rendering
an object the API server refuses.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from components.crd_schema import crd_schema_errors
from components.vocabulary import KUEUE_API_VERSION

SCHEMA_RELEASE = "v0.17.1"
"""The Kueue release whose CRDs the file holds: the default of ``addons.kueue.version``, the one
a fleet's manager installs (the contract test keeps them equal)."""
KUEUE_SCHEMA_FILE = (
    Path(__file__).resolve().parent / "data" / f"kueue-{SCHEMA_RELEASE}-openapi-schemas.json"
)


class InvalidKueueObject(ValueError):
    """A Kueue object the program built that its CRD refuses."""


@cache
def _validator(kind: str) -> Callable[[dict[str, Any]], list[str]]:
    schemas = json.loads(KUEUE_SCHEMA_FILE.read_text())["schemas"]
    return crd_schema_errors(schemas[f"{KUEUE_API_VERSION}/{kind}"])


def kueue_object_errors(kind: str, name: str, spec: dict[str, Any]) -> list[str]:
    """What the CRD of ``kind`` finds in a cluster-scoped object ``name`` with ``spec``."""
    document = {
        "apiVersion": KUEUE_API_VERSION,
        "kind": kind,
        "metadata": {"name": name},
        "spec": spec,
    }
    return _validator(kind)(document)


def check_kueue_object(kind: str, name: str, spec: dict[str, Any]) -> None:
    """Raise ``InvalidKueueObject`` naming the object and each problem its CRD finds."""
    errors = kueue_object_errors(kind, name, spec)
    if errors:
        raise InvalidKueueObject(
            f"{kind} {name!r} would be refused by Kueue's CRD ({KUEUE_API_VERSION}, Kueue "
            f"{SCHEMA_RELEASE}): {'; '.join(errors)}"
        )
