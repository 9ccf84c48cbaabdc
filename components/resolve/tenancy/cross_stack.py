"""Conflicts only the stacks seen together show: names two stacks would both create, and a
namespace two team stacks would both own. ``ownership.classify_stacks`` reads every stack file of
the project and reports these with its ownership conflicts (``python -m components stacks``,
which the deploy workflow runs before anything deploys).

Each works on the decoded values of the stack files (not yet validated: a stack whose values
are malformed is reported on its own, and its names are left out here). A fleet stack owns a
cluster too, its manager (``fleet.manager``): ``manager_values`` gives it an owner's shape, so
every check between owners covers it, and ``Conflict.issue_of`` names its own keys.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from components.config.grammars import parse_owner_ref
from components.config.schema.fleet import FLEET_KEY, MANAGER_CLUSTER
from components.errors import ConfigIssue
from components.vocabulary import default_bucket_name, node_account_id

DEFAULT_TEAM = "pathways"  # StackConfig.teams' default


# An owner's key -> where a fleet stack sets the same thing of its manager cluster (longest
# first, so a nested key finds its own entry).
MANAGER_KEYS = {
    "cluster.secretsEncryption": "fleet.manager.secretsEncryption",
    "cluster.securityGroup": "fleet.manager.securityGroup",
    "systemPool.machineType": "fleet.manager.machineType",
    "systemPool.minNodes": "fleet.manager.nodes",
    "systemPool.maxNodes": "fleet.manager.nodes",
    "cluster.name": "fleet.manager.clusterName",
    "gcp.project": "fleet.manager.project",
    "gcp.region": "fleet.manager.region",
    "gcp.zone": "fleet.manager.zone",
}


@dataclass(frozen=True)
class Conflict:
    """A problem between stacks, and the stacks it involves (each one's plan reports it);
    ``fleets``: those of them that are fleet stacks (their manager is the cluster involved)."""

    stacks: tuple[str, ...]
    issue: ConfigIssue
    fleets: frozenset[str] = frozenset()

    def issue_of(self, stack: str) -> ConfigIssue:
        """The issue at ``stack``'s own key (a fleet sets its manager's under fleet.manager)."""
        if stack not in self.fleets:
            return self.issue
        return ConfigIssue(MANAGER_KEYS.get(self.issue.key, self.issue.key), self.issue.message)


def manager_values(values: Mapping[str, Any]) -> dict[str, Any] | None:
    """A fleet stack's manager cluster in an owner stack's shape (project, cluster name; it
    creates no scratch bucket); None for a stack that is not a fleet."""
    fleet = values.get(FLEET_KEY)
    if not isinstance(fleet, Mapping):
        return None
    manager = fleet.get("manager")
    manager = manager if isinstance(manager, Mapping) else {}
    return {
        "gcp": {"project": manager.get("project")},
        "cluster": {"name": manager.get("clusterName", MANAGER_CLUSTER)},
        "scratchBucket": {"create": False},
    }


def fleet_workers(values: Mapping[str, Any]) -> list[str]:
    """The worker stacks a fleet stack's values name (none for another stack)."""
    fleet = values.get(FLEET_KEY)
    workers = fleet.get("workers") if isinstance(fleet, Mapping) else None
    return [w for w in workers if isinstance(w, str)] if isinstance(workers, list) else []


def stack_names(stacks: Sequence[str], fleets: Mapping[str, Any]) -> str:
    """``'dev' and 'fleet' (its fleet.manager)``, ``'a', 'b' and 'c'``: a fleet is named with
    the key of its cluster."""
    quoted = [f"{s!r} (its fleet.manager)" if s in fleets else repr(s) for s in stacks]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} and {quoted[-1]}"


def manager_remedy(stacks: list[str], fleets: Mapping[str, list[str]]) -> str:
    """Why a fleet's manager must be a cluster of its own, and what to change."""
    for fleet in (s for s in stacks if s in fleets):
        workers = [s for s in stacks if s in fleets[fleet]]
        if workers:
            return (
                f"{workers[0]!r} is a worker of fleet {fleet!r}, and MultiKueue does not let the "
                "manager cluster also be a worker: give fleet.manager a project and clusterName "
                "of its own"
            )
    return (
        "a fleet's manager is a CPU-only cluster of its own (it runs no TPU work and takes no "
        "team stacks): give fleet.manager a project and clusterName of its own"
    )


def shared_worker_conflicts(fleets: Mapping[str, list[str]]) -> list[Conflict]:
    """A worker named by two fleets: each manager's Kueue garbage-collects the MultiKueue
    Workloads (and their JobSets) on the worker that carry its origin label but that it did not
    create, and both use the default origin (kubernetes-sigs/kueue v0.17.1,
    pkg/controller/admissionchecks/multikueue/multikueuecluster.go ``runGC``;
    apis/config/v1beta2 ``MultiKueue.Origin``, default "multikueue"); both would also own the
    worker's multikueue-manager account and its grants."""
    named: dict[str, list[str]] = {}
    for fleet, workers in sorted(fleets.items()):
        for worker in dict.fromkeys(workers):
            named.setdefault(worker, []).append(fleet)
    return [
        Conflict(
            tuple(stacks),
            ConfigIssue(
                "fleet.workers",
                f"{worker!r} is a worker of fleets {stack_names(stacks, {})}: each fleet's "
                "manager would delete the jobs the other dispatched there (MultiKueue's garbage "
                "collector removes the worker's Workloads of the same origin that its manager "
                f"did not create), and {both(stacks)} would own its multikueue-manager account; "
                "name each worker in one fleet",
            ),
            frozenset(stacks),
        )
        for worker, stacks in named.items()
        if len(stacks) > 1
    ]


def derived_name_conflicts(
    owners: Mapping[str, Mapping[str, Any]], fleets: Mapping[str, list[str]] | None = None
) -> list[Conflict]:
    """Owner stacks whose node service accounts (per project) or scratch buckets (global) would
    have one name. Two owners of one cluster are reported by ``classify_stacks`` already.
    ``fleets``: which of ``owners`` are fleets (their values are ``manager_values``)."""
    fleets = fleets or {}
    accounts: dict[tuple[str, str], list[str]] = {}
    buckets: dict[str, list[str]] = {}
    for stack, values in owners.items():
        project, cluster = text_at(values, "gcp", "project"), text_at(values, "cluster", "name")
        if project is None or cluster is None:
            continue
        accounts.setdefault((project, node_account_id(cluster)), []).append(stack)
        if (bucket := _created_bucket(values, project, cluster)) is not None:
            buckets.setdefault(bucket, []).append(stack)
    conflicts = [
        Conflict(
            tuple(stacks),
            ConfigIssue(
                "cluster.name",
                f"stacks {stack_names(stacks, fleets)} would each create node service account "
                f"{account!r} in project {project!r} (derived from their cluster names); rename "
                "a cluster",
            ),
            frozenset(fleets).intersection(stacks),
        )
        for (project, account), stacks in accounts.items()
        if len(stacks) > 1 and not _same_cluster(owners, stacks)
    ]
    conflicts += [
        Conflict(
            tuple(stacks),
            ConfigIssue(
                "scratchBucket.name",
                f"stacks {stack_names(stacks, {})} would each create scratch bucket {bucket!r} "
                "(bucket names are global); give one of them another scratchBucket.name",
            ),
        )
        for bucket, stacks in buckets.items()
        if len(stacks) > 1 and not _same_cluster(owners, stacks)
    ]
    return conflicts


def namespace_conflicts(teams: Mapping[str, Mapping[str, Any]]) -> list[Conflict]:
    """Team stacks on one cluster (one owner stack, or one existing cluster) that list the same
    team: each would create and own the namespace, and destroying one deletes the other's."""
    claims: dict[tuple[str, str], list[str]] = {}
    for stack, values in teams.items():
        target = _cluster_of(values)
        if target is None:
            continue
        for team in _team_names(values):
            claims.setdefault((target, team), []).append(stack)
    return [
        Conflict(
            tuple(stacks),
            ConfigIssue(
                "teams",
                f"stacks {stack_names(stacks, {})} {both(stacks)} list team {team!r} on {target}; "
                f"each would create and own namespace {team!r} (destroying one deletes the "
                "other's); give each team stack its own team names",
            ),
        )
        for (target, team), stacks in claims.items()
        if len(stacks) > 1
    ]


def _created_bucket(values: Mapping[str, Any], project: str, cluster: str) -> str | None:
    scratch = values.get("scratchBucket")
    scratch = scratch if isinstance(scratch, Mapping) else {}
    if scratch.get("create") is False:
        return None
    name = scratch.get("name")
    return name if isinstance(name, str) else default_bucket_name(project, cluster)


def _cluster_of(values: Mapping[str, Any]) -> str | None:
    owner = values.get("owner")
    if isinstance(owner, str):
        try:
            return f"the cluster of owner stack {parse_owner_ref(owner)[1]!r}"
        except ValueError:
            return None
    cluster = values.get("cluster")
    existing = cluster.get("existing") if isinstance(cluster, Mapping) else None
    if not isinstance(existing, Mapping):
        return None
    name, context = existing.get("name"), existing.get("kubeconfigContext")
    if isinstance(name, str):
        return f"existing cluster {name!r} of project {text_at(values, 'gcp', 'project')!r}"
    return f"kubeconfig context {context!r}" if isinstance(context, str) else None


def _team_names(values: Mapping[str, Any]) -> list[str]:
    teams = values.get("teams")
    if teams is None:
        return [DEFAULT_TEAM]
    if not isinstance(teams, list):
        return []
    names = [t.get("name") for t in teams if isinstance(t, Mapping)]
    return list(dict.fromkeys(n for n in names if isinstance(n, str)))


def _same_cluster(owners: Mapping[str, Mapping[str, Any]], stacks: list[str]) -> bool:
    """Stacks that name one cluster of one project (reported as two owners of it)."""
    pairs = {
        (text_at(values, "gcp", "project"), text_at(values, "cluster", "name"))
        for values in (owners[s] for s in stacks)
    }
    return len(pairs) == 1


def text_at(values: Mapping[str, Any], section: str, key: str) -> str | None:
    """``values[section][key]`` if it is text, else None (a list or mapping there is the
    stack's own schema's to refuse; here it would be an unhashable key)."""
    part = values.get(section)
    value = part.get(key) if isinstance(part, Mapping) else None
    return value if isinstance(value, str) else None


def both(stacks: Sequence[str]) -> str:
    return "both" if len(stacks) == 2 else "all"
