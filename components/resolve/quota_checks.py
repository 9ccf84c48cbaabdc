"""The quotas of a stack checked against what it provisions and what its jobs need at once:
Kueue's TPU quota and the teams' quotas against the TPU pools, and a team namespace's
ResourceQuota against its own workloads (``stack_checks.cross_check_issues`` runs them)."""

from __future__ import annotations

from collections import Counter

from components.config.schema import StackConfig
from components.errors import ConfigIssue, key_part
from components.tpu import catalog


def kueue_quota_issues(config: StackConfig) -> list[ConfigIssue]:
    expected = config.addons.kueue.tpu_quota
    chips = config.provisioned_chips
    if expected is None or expected == chips:
        return []
    return [
        ConfigIssue(
            "addons.kueue.tpuQuota",
            f"{expected} does not match the {chips} TPU chips the tpuPools provision; the "
            "ClusterQueue quota is computed from the pools, so remove tpuQuota or fix it",
        )
    ]


def team_quota_issues(config: StackConfig, whole_pools: bool = True) -> list[ConfigIssue]:
    """Quotas name shapes the stack provisions and add up to at most what it provisions."""
    kueue, issues = config.addons.kueue, []
    if kueue.team_quotas and not config.kueue_enabled:
        issues.append(ConfigIssue("addons.kueue.teamQuotas", "needs addons.kueue.enabled"))
    _duplicate_quota_teams(issues, [q.team for q in kueue.team_quotas], "addons.kueue.teamQuotas")
    if not whole_pools:
        return issues
    provisioned: dict[catalog.TpuShape, int] = {}
    for pool in config.tpu_pools:
        provisioned[pool.shape] = provisioned.get(pool.shape, 0) + pool.slices * pool.shape.chips
    assigned: dict[catalog.TpuShape, int] = {}
    for i, quota in enumerate(kueue.team_quotas):
        for name, chips in quota.chips.items():
            key = f"addons.kueue.teamQuotas[{i}].chips.{key_part(name)}"
            try:
                shape = catalog.resolve_accelerator(name)
            except catalog.CatalogError as exc:
                issues.append(ConfigIssue(key, str(exc)))
                continue
            if shape not in provisioned:
                have = ", ".join(sorted(s.accelerator_name for s in provisioned)) or "none"
                issues.append(ConfigIssue(key, f"no TPU pool of this stack is {name}; {have}"))
                continue
            assigned[shape] = assigned.get(shape, 0) + chips
    for shape, chips in assigned.items():
        if chips > provisioned[shape]:
            issues.append(
                ConfigIssue(
                    "addons.kueue.teamQuotas",
                    f"quotas give {chips} {shape.accelerator_name} chips to teams but the "
                    f"pools provision {provisioned[shape]}",
                )
            )
    return issues


def namespace_quota_issues(config: StackConfig) -> list[ConfigIssue]:
    """A team's ResourceQuota its own workloads could never fit. Pathways worker pods request
    no CPU or memory (PathwaysJob controller v0.1.4, and XPK's JobSet: google.com/tpu only),
    and a quota on requests.cpu or requests.memory refuses every pod that does not request
    them; a job needs its head and every worker pod, and every chip of its slices, at once."""
    issues = []
    for i, team in enumerate(config.teams):
        quota, key = team.resource_quota, f"teams[{i}].resourceQuota"
        jobs = [w for w in config.workloads if w.team == team.name]
        if not jobs:
            continue
        for name, value in (("cpu", quota.cpu), ("memoryGib", quota.memory_gib)):
            if value is not None:
                issues.append(
                    ConfigIssue(
                        f"{key}.{name}",
                        f"{value} would refuse the team's Pathways worker pods, which request "
                        "no CPU or memory (a quota on requests refuses every pod that does "
                        "not make one); remove it and bound pods or tpuChips instead",
                    )
                )
        for job in jobs:
            pool = config.pool(job.pool)
            if pool is None:
                continue
            hosts = job.slices * pool.shape.hosts
            needs = {"tpuChips": hosts * pool.shape.chips_per_host, "pods": hosts + 1}
            have = {"tpuChips": quota.tpu_chips, "pods": quota.pods}
            issues += [
                ConfigIssue(
                    f"{key}.{name}",
                    f"{have[name]} is less than workload {job.name!r} needs at once "
                    f"({needs[name]}: its head and {hosts} worker pod(s) on {job.slices} "
                    f"slice(s) of pool {job.pool!r}); it would never start",
                )
                for name in needs
                if have[name] is not None and needs[name] > have[name]
            ]
    return issues


def _duplicate_quota_teams(issues: list[ConfigIssue], teams: list[str], key: str) -> None:
    counts = Counter(teams)
    issues += [
        ConfigIssue(f"{key}[{i}].team", f"{team!r} has more than one quota")
        for i, team in enumerate(teams)
        if counts[team] > 1
    ]
