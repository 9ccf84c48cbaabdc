"""Which stack owns which cluster: every stack file of the project sorted by role (cluster
owners, team stacks, fleets) with the conflicts only the stacks seen together show
(``classify_stacks``, what ``python -m components stacks`` reports), and the owner a team
stack names checked to be one (``owner_stack_of``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.config.grammars import parse_owner_ref
from components.config.schema.fleet import is_fleet
from components.errors import ConfigError, ConfigIssue
from components.resolve.stack_files import (
    PROJECT,
    STACKS_DIR,
    available_stacks,
    decode_engine_values,
    read_stack_file,
    read_stack_values,
    stack_path,
)
from components.resolve.tenancy.cross_stack import (
    Conflict,
    both,
    derived_name_conflicts,
    fleet_workers,
    manager_remedy,
    manager_values,
    namespace_conflicts,
    shared_worker_conflicts,
    stack_names,
    text_at,
)
from components.resolve.tenancy.shared_cluster import fleet_owner_message


def deploys_onto_existing_cluster(values: Mapping[str, Any]) -> bool:
    """Whether a stack (its decoded values, ``read_stack_values``) deploys onto a cluster
    another stack owns (`owner:`), or one made outside this project (`cluster.existing`)."""
    cluster = values.get("cluster")
    existing = isinstance(cluster, dict) and cluster.get("existing") is not None
    return existing or values.get("owner") is not None


def targets_existing_cluster(stack: str, stacks_dir: Path = STACKS_DIR) -> bool:
    """``deploys_onto_existing_cluster`` of stack ``stack``, read from its stack file."""
    return deploys_onto_existing_cluster(read_stack_values(stack, stacks_dir))


@dataclass(frozen=True)
class StackKinds:
    """Every stack file sorted by role: owners (create their cluster; deploy these first) and
    team stacks (with fleet stacks: they read their workers, so they deploy after them). A file
    that cannot be read is reported in ``errors``, not fatal to the others; ``found`` are
    problems between stacks (``conflicts``: their issues)."""

    owners: list[str]
    teams: list[str]
    errors: dict[str, ConfigError]
    found: list[Conflict]

    @property
    def conflicts(self) -> list[ConfigIssue]:
        return [conflict.issue_of(conflict.stacks[0]) for conflict in self.found]

    def conflicts_of(self, stack: str) -> list[ConfigIssue]:
        """The problems between stacks that involve ``stack``, at its own keys."""
        return [conflict.issue_of(stack) for conflict in self.found if stack in conflict.stacks]


def _clusters_sharing_a_project(
    claims: dict[tuple[Any, Any], list[str]], fleets: Mapping[str, list[str]]
) -> list[Conflict]:
    """Two clusters in one project: a Workload Identity grant names the project's pool,
    `serviceAccount:<project>.svc.id.goog[<namespace>/<ksa>]`, so it holds for that namespace
    and account in every cluster of the project (GKE "Workload Identity Federation for GKE",
    identity sameness)."""
    by_project: dict[Any, list[str]] = {}
    for (project, name), stacks in claims.items():
        if project is not None and name is not None:
            by_project.setdefault(project, []).append(stacks[0])
    return [
        Conflict(
            tuple(stacks),
            ConfigIssue(
                "gcp.project",
                f"stacks {stack_names(stacks, fleets)} would each create a cluster in project "
                f"{project!r}: a team's Workload Identity grant (its bucket prefix) would then "
                "hold for the same namespace in the other cluster too; give each cluster its "
                "own project",
            ),
            frozenset(fleets).intersection(stacks),
        )
        for project, stacks in by_project.items()
        if len(stacks) > 1
    ]


def _one_cluster_two_owners(
    project: Any, name: Any, stacks: list[str], fleets: Mapping[str, list[str]]
) -> Conflict:
    if any(s in fleets for s in stacks):
        remedy = manager_remedy(stacks, fleets)
    else:
        remedy = (
            f"keep one owner and make the others team stacks (owner: {stacks[0]}, without gcp, "
            "cluster and pools)"
        )
    return Conflict(
        tuple(stacks),
        ConfigIssue(
            "cluster.name",
            f"stacks {stack_names(stacks, fleets)} would {both(stacks)} own cluster {name!r} in "
            f"project "
            f"{project!r}; {remedy}",
        ),
        frozenset(fleets).intersection(stacks),
    )


def _existing_owned(stack: str, name: Any, owner: str, fleets: Mapping[str, list[str]]) -> str:
    if owner in fleets:
        return (
            f"stack {stack!r} targets cluster {name!r}, the manager cluster of fleet stack "
            f"{owner!r}, which runs no TPU work and takes no team stacks; add its workloads to "
            f"that fleet's tpu-pathways:workloads, or make it a team stack of a cluster owner"
        )
    return (
        f"stack {stack!r} targets cluster {name!r}, which stack {owner!r} owns; make it a team "
        f"stack (owner: {owner}) so the owner's rules and queues apply"
    )


def classify_stacks(
    stacks_dir: Path = STACKS_DIR,
    read: Mapping[str, Mapping[str, str]] | None = None,
    values: Mapping[str, Mapping[str, Any]] | None = None,
) -> StackKinds:
    """Refuses (in ``conflicts``) two stacks that would own one cluster (same project and
    cluster name), two clusters in one project (``_clusters_sharing_a_project``), a stack that
    reaches an owner's cluster through `cluster.existing` instead of `owner:` (it would bypass
    the owner's rules and queues), and the conflicts of ``cross_stack``: names two owners would
    both create, a namespace two team stacks would both own. A fleet stack's manager is a
    cluster it owns, checked as an owner's. ``read``: config maps of stack files already read
    (``read_stack_file``), not read again; ``values``: stacks' values already decoded (a fleet
    stack's own under `pulumi up`), used instead of their files."""
    roles, errors = _Roles(), dict[str, ConfigError]()
    for stack in sorted({*available_stacks(stacks_dir), *(values or {})}):
        try:
            decoded = (values or {}).get(stack)
            if decoded is None:
                raw = (read or {}).get(stack) or read_stack_file(stack, stacks_dir)
                decoded = decode_engine_values(dict(raw))
        except ConfigError as exc:
            errors[stack] = exc
            continue
        roles.add(stack, decoded)
    return StackKinds(roles.owners, roles.teams, errors, roles.conflicts())


@dataclass
class _Roles:
    """The stacks read so far by role, with the clusters they claim."""

    owners: list[str] = field(default_factory=list)
    teams: list[str] = field(default_factory=list)
    values_of: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    # (project, cluster name) -> the stacks that own it
    claims: dict[tuple[Any, Any], list[str]] = field(default_factory=dict)
    existing: list[tuple[str, tuple[Any, Any]]] = field(default_factory=list)
    fleets: dict[str, list[str]] = field(default_factory=dict)  # fleet stack -> its workers

    def add(self, stack: str, decoded: Mapping[str, Any]) -> None:
        manager = manager_values(decoded)
        if manager is not None:
            # A fleet reads its workers' contracts, so it deploys after them, as team stacks
            # do; the manager is a cluster it owns.
            self.teams.append(stack)
            self.fleets[stack] = fleet_workers(decoded)
            self.values_of[stack] = manager
            cluster = (text_at(manager, "gcp", "project"), text_at(manager, "cluster", "name"))
            self.claims.setdefault(cluster, []).append(stack)
            return
        self.values_of[stack] = decoded
        # Text or None only: a list or mapping here is the stack's own schema's to refuse.
        project, cluster = text_at(decoded, "gcp", "project"), decoded.get("cluster")
        cluster = cluster if isinstance(cluster, dict) else {}
        target = cluster.get("existing")
        if decoded.get("owner") is not None or target is not None:
            self.teams.append(stack)
            if decoded.get("owner") is None and isinstance(target, dict):
                self.existing.append((stack, (project, text_at(cluster, "existing", "name"))))
            return
        self.owners.append(stack)
        self.claims.setdefault((project, text_at(decoded, "cluster", "name")), []).append(stack)

    def conflicts(self) -> list[Conflict]:
        claims, fleets = self.claims, self.fleets
        conflicts = [
            _one_cluster_two_owners(project, name, stacks, fleets)
            for (project, name), stacks in claims.items()
            if len(stacks) > 1 and name is not None
        ]
        conflicts += _clusters_sharing_a_project(claims, fleets)
        conflicts += [
            Conflict(
                (stack, claims[key][0]),
                ConfigIssue(
                    "cluster.existing", _existing_owned(stack, key[1], claims[key][0], fleets)
                ),
            )
            for stack, key in self.existing
            if key in claims
        ]
        owning = sorted([*self.owners, *fleets])
        conflicts += derived_name_conflicts({s: self.values_of[s] for s in owning}, fleets)
        teams = [s for s in self.teams if s not in fleets]
        conflicts += namespace_conflicts({s: self.values_of[s] for s in teams})
        conflicts += shared_worker_conflicts(fleets)
        return conflicts


def owner_stacks(stacks_dir: Path = STACKS_DIR) -> list[str]:
    """The stacks that create their cluster. Raises ConfigError on ownership conflicts."""
    kinds = classify_stacks(stacks_dir)
    if kinds.conflicts:
        raise ConfigError(kinds.conflicts, "stacks")
    return kinds.owners


def owner_stack_of(stack: str, owner: str, stacks_dir: Path, source: str) -> str | None:
    """The stack of this project that ``owner`` names, checked to be a cluster owner (None for
    a malformed reference, which the schema reports against its key)."""

    def refuse(message: str) -> ConfigError:
        return ConfigError([ConfigIssue("owner", message)], source)

    try:
        project, owner_stack = parse_owner_ref(owner)
    except ValueError:
        return None
    if project not in (None, PROJECT):
        raise refuse(
            f"{owner!r} is a stack of project {project!r}; the offline plan reads owners of "
            f"this project ({PROJECT}) only, from stacks/Pulumi.<stack>.yaml"
        )
    if owner_stack == stack:
        raise refuse(f"{owner!r} is this stack; name the stack that creates the cluster")
    if not stack_path(owner_stack, stacks_dir).is_file():
        known = ", ".join(owner_stacks(stacks_dir)) or "none"
        raise refuse(f"no stack {owner_stack!r} in this project; cluster owners: {known}")
    if is_fleet(read_stack_values(owner_stack, stacks_dir)):
        raise refuse(fleet_owner_message(owner, ", ".join(owner_stacks(stacks_dir)) or "none"))
    if targets_existing_cluster(owner_stack, stacks_dir):
        raise refuse(
            f"stack {owner_stack!r} does not own a cluster (it is a team stack or targets an "
            f"existing cluster); cluster owners: {', '.join(owner_stacks(stacks_dir)) or 'none'}"
        )
    return owner_stack
