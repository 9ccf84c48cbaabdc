"""What a MultiKueue manager does on a worker cluster, as data: the rights Kueue's remote client
uses there, per Kueue minor of the **manager** (its client makes the calls), read from
``data/multikueue_rights.yaml`` (each right with where Kueue's code uses it, at a tag); and what a
fleet grants the manager's service account there (``MANAGER_ROLE_RULES`` in each team namespace
it dispatches to, ``MANAGER_WATCH_RULES`` cluster-wide). The MultiKueue model
(``components.pathways.multikueue_model``) checks the grant against the rights of the manager's
Kueue minor: a Kueue bump whose client needs more fails in the plan, not on the cluster, and a
minor without an entry is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from pathlib import Path

from components.files import read_data_yaml

KUEUE_GROUP = "kueue.x-k8s.io"
JOBSET_GROUP = "jobset.x-k8s.io"


class Scope(StrEnum):
    NAMESPACE = "namespace"
    CLUSTER = "cluster"


@dataclass(frozen=True)
class Right:
    """One verb on one resource, in the workload's namespace or cluster-wide."""

    scope: Scope
    group: str
    resource: str
    verb: str


@dataclass(frozen=True)
class Need:
    """A right the manager's Kueue uses on a worker, and where its code does."""

    right: Right
    source: str


@dataclass(frozen=True)
class PolicyRule:
    """An RBAC rule (rbac.authorization.k8s.io/v1 PolicyRule; no resourceNames)."""

    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    verbs: tuple[str, ...]

    def allows(self, group: str, resource: str, verb: str) -> bool:
        """RBAC's match: each list names the value or ``*``."""
        return (
            (group in self.api_groups or "*" in self.api_groups)
            and (resource in self.resources or "*" in self.resources)
            and (verb in self.verbs or "*" in self.verbs)
        )

    def as_dict(self) -> dict[str, list[str]]:
        return {
            "apiGroups": list(self.api_groups),
            "resources": list(self.resources),
            "verbs": list(self.verbs),
        }


RIGHTS_TABLE = Path(__file__).resolve().parent / "data" / "multikueue_rights.yaml"


@cache
def manager_rights() -> dict[tuple[int, int], tuple[Need, ...]]:
    """Kueue minor of the manager -> the rights it uses on each worker (``RIGHTS_TABLE``)."""
    table = read_data_yaml(RIGHTS_TABLE)
    rights: dict[tuple[int, int], tuple[Need, ...]] = {}
    for minor, entry in table.items():
        key = kueue_minor(minor)
        assert key is not None, minor  # the table's own keys
        rights[key] = tuple(
            Need(
                Right(scope, row["group"], row["resource"], verb),
                f"kubernetes-sigs/kueue {entry['tag']} {row['source']}",
            )
            for scope in Scope
            for row in entry[scope.value]
            for verb in row["verbs"]
        )
    return rights


# What a fleet grants the manager's service account on each worker (components/addons renders
# them): a Role in each team namespace the worker serves in a worker set, a ClusterRole for the
# watches. Written out, not derived from the table, so that the model's check can fail.
MANAGER_ROLE_RULES = (
    PolicyRule((KUEUE_GROUP,), ("workloads",), ("get", "create", "update", "delete")),
    PolicyRule((KUEUE_GROUP,), ("workloads/status",), ("patch",)),
    PolicyRule((JOBSET_GROUP,), ("jobsets",), ("get", "create", "delete")),
)
MANAGER_WATCH_RULES = (
    PolicyRule((KUEUE_GROUP,), ("workloads",), ("list", "watch")),
    PolicyRule((JOBSET_GROUP,), ("jobsets",), ("list", "watch")),
)


def kueue_minor(version: str) -> tuple[int, int] | None:
    """``v0.17.1`` -> (0, 17); None for a text that is no release tag."""
    parts = version.removeprefix("v").split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        return None
    return int(parts[0]), int(parts[1])


def manager_needs(version: str) -> tuple[Need, ...] | None:
    """The rights a manager running Kueue ``version`` uses on each worker (None: no row)."""
    minor = kueue_minor(version)
    return None if minor is None else manager_rights().get(minor)


def known_minors() -> str:
    return ", ".join(f"v{a}.{b}" for a, b in sorted(manager_rights()))
