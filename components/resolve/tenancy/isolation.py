"""Which node pools a team's host-network pods may run on: the trust boundary between teams.

A pod on the host network acts as its node's service account (GKE's metadata server answers it
as the node; Workload Identity does not apply) and shares the node's network and ``/tmp``. Every
PathwaysJob pod is on the host network (the controller v0.1.4 forces it), so the node pool is
the boundary, and each team namespace gets one ``HostNetworkPlacement``:

- ``dedicated``: pools the owner stack dedicates to it (``tpuPools[].team``,
  ``teamCpuPools[].team``), with their own node service account, label and taint, Kueue flavors
  and grants on its prefix and buckets only;
- ``shared``: the cluster's shared pools (those without ``team``), with every other team there.
  A declared choice (``teams[].isolation: shared``), or the default of the one team of a stack
  that owns its cluster without dedicating pools (no other team is there to trust);
- ``none``: no host network at all (the namespace enforces Pod Security baseline).

Pure: the config (an owner's, or a team stack's with its owner's pools filled in) in, the
placement and the problems out; the plan prints ``tenancy_summary``.
"""

from __future__ import annotations

from collections.abc import Iterator

from components.config.schema import StackConfig, TeamConfig
from components.config.schema.pools import TpuPoolConfig
from components.errors import ConfigIssue
from components.tpu.catalog import resolve_accelerator
from components.vocabulary import (
    GoogleApiEgress,
    HostNetworkPlacement,
    Isolation,
    WorkloadBackend,
)

DEDICATE_HINT = (
    "dedicate pools to it in the owner stack (tpuPools[].team and teamCpuPools[]), or declare "
    "teams[].isolation: shared (the teams on the shared pools then trust each other)"
)


def dedicated_teams(config: StackConfig) -> set[str]:
    return set(config.dedicated_teams)


def _sole_shared_team(config: StackConfig) -> str | None:
    """The one team namespace of a stack not on another's cluster that declared nothing and has
    no dedicated pools, if it is the only one on the shared pools."""
    if config.owner is not None:
        return None
    dedicated = dedicated_teams(config)
    candidates = [
        t
        for t in config.teams
        if t.name not in dedicated and t.isolation is not Isolation.DEDICATED
    ]
    if len(candidates) == 1 and candidates[0].isolation is None:
        return candidates[0].name
    return None


def placements(config: StackConfig) -> dict[str, HostNetworkPlacement]:
    """Every team namespace of the stack and where its host-network pods may run."""
    dedicated, sole = dedicated_teams(config), _sole_shared_team(config)
    return {team.name: _placement(team, dedicated, sole) for team in config.teams}


def _placement(team: TeamConfig, dedicated: set[str], sole: str | None) -> HostNetworkPlacement:
    if team.name in dedicated:
        return HostNetworkPlacement.DEDICATED
    if team.isolation is Isolation.SHARED:
        return HostNetworkPlacement.SHARED
    return HostNetworkPlacement.ALONE if team.name == sole else HostNetworkPlacement.NONE


def shared_pool_teams(config: StackConfig) -> dict[str, bool]:
    """The stack's teams on the shared pools, and whether each declared ``isolation: shared``
    (what an owner exports for its team stacks)."""
    on_shared = (HostNetworkPlacement.SHARED, HostNetworkPlacement.ALONE)
    return {
        name: placement is HostNetworkPlacement.SHARED
        for name, placement in placements(config).items()
        if placement in on_shared
    }


def host_network_deployments(config: StackConfig) -> Iterator[tuple[str, str, str]]:
    """(key, namespace, pool) of each workload and shared service whose pods are on the host
    network: every PathwaysJob, and a JobSet unless it sets ``hostNetwork: false``."""
    for key, entry in config.deployments():
        on_jobset = config.backend_of(entry) is WorkloadBackend.JOBSET
        if on_jobset and getattr(entry, "host_network", True) is False:
            continue
        yield key, entry.team, entry.pool


def isolation_issues(config: StackConfig) -> list[ConfigIssue]:
    """The dedicated pools, the declared choices and the jobs against them."""
    issues = _dedication_issues(config) + _declared_issues(config)
    return issues + _owner_consent_issues(config) + _placement_issues(config)


def _dedication_issues(config: StackConfig) -> list[ConfigIssue]:
    """Dedicated pools need Kueue (its flavors place a team's pods there), a head pool with
    the TPU pools, and no quota besides them."""
    issues = []
    tpu_teams = {p.team for p in config.tpu_pools if p.team}
    # The stack that creates the cluster installs Kueue (another stack reads what it did).
    if config.dedicated_teams and config.creates_cluster and not config.kueue_enabled:
        issues.append(
            ConfigIssue(
                "addons.kueue.enabled",
                "dedicated pools need Kueue: its per-team flavors give a team's pods the "
                "toleration and node selector of its pools",
            )
        )
    seen: set[str] = set()
    for i, pool in enumerate(config.team_cpu_pools):
        if pool.team in seen:
            issues.append(
                ConfigIssue(f"teamCpuPools[{i}].team", f"{pool.team!r} has a CPU pool already")
            )
        seen.add(pool.team)
    for i, pool in enumerate(config.tpu_pools):
        if pool.team and config.team_cpu_pool(pool.team) is None:
            issues.append(
                ConfigIssue(
                    f"tpuPools[{i}].team",
                    f"{pool.team!r} has no CPU pool for its Pathways heads: add "
                    f"{{team: {pool.team}, machineType: n2-standard-64}} to teamCpuPools",
                )
            )
    quotas = config.addons.kueue.team_quotas
    issues += [
        ConfigIssue(
            f"addons.kueue.teamQuotas[{i}].team",
            f"{quota.team!r} has dedicated pools, which are its quota; remove its teamQuota",
        )
        for i, quota in enumerate(quotas)
        if quota.team in tpu_teams or config.team_cpu_pool(quota.team) is not None
    ]
    return issues


def _declared_issues(config: StackConfig) -> list[ConfigIssue]:
    dedicated = dedicated_teams(config)
    return [
        ConfigIssue(
            f"teams[{i}].isolation",
            f"shared, but pools are dedicated to {team.name!r}: its host-network pods run on "
            "them only; remove isolation or the dedicated pools",
        )
        for i, team in enumerate(config.teams)
        if team.isolation is Isolation.SHARED and team.name in dedicated
    ]


def _owner_consent_issues(config: StackConfig) -> list[ConfigIssue]:
    """A team stack joins the shared pools only with owner teams that declared the same."""
    owner = config.shared_cluster
    if owner is None:
        return []
    undeclared = sorted(name for name, declared in owner.shared_pool_teams.items() if not declared)
    if not undeclared:
        return []
    return [
        ConfigIssue(
            f"teams[{i}].isolation",
            f"shared, but the shared pools of owner stack {owner.owner_stack!r} run team "
            f"{', '.join(map(repr, undeclared))}, which did not declare isolation: shared; "
            f"it would act as the same node identity: {DEDICATE_HINT}",
        )
        for i, team in enumerate(config.teams)
        if team.isolation is Isolation.SHARED
    ]


def _placement_issues(config: StackConfig) -> list[ConfigIssue]:
    """Each job's pool against its team's placement; every job off a pool dedicated to another
    team (its taint keeps them out)."""
    placement, issues = placements(config), []
    hosted = {key for key, _, _ in host_network_deployments(config)}
    for key, entry in config.deployments():
        pool = config.pool(entry.pool)
        where = placement.get(entry.team)
        if pool is None or where is None:
            continue  # an unknown pool or team is reported by the workload checks
        problem = _pool_problem(entry.team, pool, where, key in hosted)
        if problem:
            issues.append(ConfigIssue(f"{key}.pool", problem))
    return issues


def _pool_problem(
    team: str, pool: TpuPoolConfig, where: HostNetworkPlacement, host_network: bool
) -> str | None:
    if pool.team is not None and pool.team != team:
        return f"{pool.name!r} is dedicated to team {pool.team!r}; use a pool of {team!r}"
    if where is HostNetworkPlacement.DEDICATED and pool.team is None:
        return (
            f"{pool.name!r} is a shared pool, and {team!r} has dedicated pools (its Kueue queue "
            "admits it only there); use one of them"
        )
    if host_network and where is HostNetworkPlacement.NONE:
        return (
            f"the job's pods are on the host network (they act as the node's service account "
            f"of pool {pool.name!r}), and team {team!r} may not share a node identity: "
            f"{DEDICATE_HINT}; or run it off the host network (backend: jobset, "
            "hostNetwork: false)"
        )
    return None


def tenancy_summary(config: StackConfig) -> dict[str, str]:
    """What the plan prints per team namespace: where its host-network pods run, and with
    whom it shares a node identity."""
    placement = placements(config)
    shared = sorted(t for t, p in placement.items() if p is HostNetworkPlacement.SHARED)
    owner = config.shared_cluster
    if owner is not None:
        shared = sorted({*shared, *owner.shared_pool_teams})
    summary = {}
    for team, where in placement.items():
        if where is HostNetworkPlacement.DEDICATED:
            pools = [p.name for p in config.tpu_pools if p.team == team]
            cpu = config.team_cpu_pool(team)
            pools = ([cpu.name] if cpu else []) + pools
            summary[team] = f"dedicated pools {', '.join(pools)} (its own node service account)"
        elif where is HostNetworkPlacement.SHARED:
            others = [t for t in shared if t != team]
            trust = f"shares a node identity with {', '.join(others)}" if others else "no other"
            summary[team] = f"the cluster's shared pools, declared (trusts {trust})"
        elif where is HostNetworkPlacement.ALONE:
            summary[team] = "the cluster's shared pools, the only team there"
        else:
            summary[team] = "no host-network pods (Pod Security baseline enforced)"
    return summary


def google_api_egress(config: StackConfig) -> GoogleApiEgress:
    """Private Google Access where the cluster's VPC is this project's (it creates the private
    zones that resolve Google APIs there); any HTTPS address on a VPC it did not create."""
    if config.shared_cluster is not None:
        return GoogleApiEgress(config.shared_cluster.google_apis)
    own_network = config.creates_cluster and config.cluster.network.existing_network is None
    return GoogleApiEgress.PRIVATE_ACCESS if own_network else GoogleApiEgress.ANY_HTTPS


def team_quota_chips(config: StackConfig) -> dict[str, int]:
    """The most chips each team with a Kueue teamQuota can hold: per shared flavor its quota
    plus what it may borrow, at most what the shared pools provide (an owner's export)."""
    provided: dict[str, int] = {}
    for pool in config.tpu_pools:
        if pool.team is None:
            name = pool.shape.accelerator_name
            provided[name] = provided.get(name, 0) + pool.slices * pool.shape.chips
    shares = {}
    for quota in config.addons.kueue.team_quotas:
        nominal: dict[str, int] = {}
        for accelerator, chips in quota.chips.items():
            name = resolve_accelerator(accelerator).accelerator_name
            nominal[name] = nominal.get(name, 0) + chips
        limit = quota.borrowing_limit
        shares[quota.team] = sum(
            total if limit is None else min(total, nominal.get(name, 0) + limit)
            for name, total in provided.items()
        )
    return shares


def team_tpu_chips(config: StackConfig, team: TeamConfig) -> int:
    """The default tpuChips of a team namespace's ResourceQuota: its share of the cluster's
    chips (its dedicated pools'; else what its Kueue quota lets it hold; else the shared
    pools'), so a pod that went around Kueue cannot take more either."""
    if team.resource_quota.tpu_chips is not None:
        return team.resource_quota.tpu_chips
    if team.name in dedicated_teams(config):
        return sum(p.slices * p.shape.chips for p in config.tpu_pools if p.team == team.name)
    owner = config.shared_cluster
    shares = owner.queues.team_quota_chips if owner is not None else team_quota_chips(config)
    if team.name in shares:
        return shares[team.name]
    return sum(p.slices * p.shape.chips for p in config.tpu_pools if p.team is None)
