"""The Pulumi program: validated stack config in, components registered, outputs returned.

`__main__.py` (for `pulumi up`) and the offline plan both call `build_stack`, so what the plan
shows is what the engine would be asked to create.

Before anything is registered, the preflight expands every PathwaysJob into the pods the
controller would create (or reads a jobset-backend job's pods from its JobSet) and schedules
them against the node pools (the stack's own or, for a team stack, its owner's;
``preflight``). On an existing subnetwork the cluster, registered first, looks it up and checks
the teams' Pod ranges on it before it registers itself (``gke/pod_range_check.py``): a failed
check registers nothing.

Ordering: the system pool waits for the cluster; in-cluster installs wait for the system pool
(their controllers run there), not for TPU pools, which are created in parallel. The PathwaysJob
controller and Kueue wait for JobSet (its webhooks fail closed until it is ready); the
controller is installed only when a job uses the PathwaysJob backend (or the stack's default
does); workloads wait for the controller (JobSets: for JobSet), Kueue's queues, the scratch
bucket with its grants and the data bucket grants. The installs are ``installs.py``, the
workloads ``workloads.py``.

A team stack (``owner:``) reads its owner's ``shared_cluster`` output through a StackReference
before anything else registers (``read_owner_contract``; see
``resolve/tenancy/shared_cluster.py``) and then creates only namespaced objects in its own
namespaces: namespaces, service accounts, LocalQueues pointing at the owner's ClusterQueue,
bucket grants and its workloads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pulumi

from components.addons.data_buckets import DataBucketGrants
from components.addons.scratch_bucket import ScratchBucket
from components.config.schema import StackConfig
from components.errors import ConfigError, ConfigIssue
from components.gke.cluster import ClusterTarget, ExistingCluster, GkeCluster
from components.gke.cpu_pool import CpuNodePool
from components.gke.tpu_pool import TpuNodePool
from components.pathways.preflight import PreflightReport
from components.resolve.image_checks import image_warnings
from components.resolve.preflight import run_preflight
from components.resolve.tenancy.isolation import tenancy_summary
from components.resolve.tenancy.shared_cluster import reference_outputs
from components.resolve.zone_checks import zone_warnings
from components.stack import args
from components.stack.installs import build_installs
from components.stack.observability import build_observability
from components.stack.owner import read_owner_contract
from components.stack.storage import build_storage
from components.stack.workloads import build_workloads
from components.vocabulary import team_node_service_account_email

PreflightListener = Callable[[PreflightReport], None]
_preflight_listeners: list[PreflightListener] = []


@contextmanager
def preflight_reports(listener: PreflightListener) -> Iterator[None]:
    """While open, ``listener`` gets the preflight report of every stack built (the offline
    plan summarizes it instead of running the preflight a second time)."""
    _preflight_listeners.append(listener)
    try:
        yield
    finally:
        _preflight_listeners.remove(listener)


def build_stack(
    config: StackConfig, owner_read: bool = False, within: pulumi.ResourceOptions | None = None
) -> dict[str, Any]:
    """Register every resource of the stack; returns the stack outputs to export.

    ``within``: options for the cluster's components (the component package's ``Cluster``
    registers a stack of no workloads inside itself: its parent and depends_on).

    For a team stack, ``owner_read`` says the caller already read the owner's contract through
    the StackReference (``pulumi up``: it had to, to validate the config); otherwise it is read
    here first and must be the contract the config was validated with (the offline plan).

    Raises ConfigError (before registering anything but that read) when the preflight finds a
    job that would not run."""
    _check_before_registering(config, owner_read)
    name = config.cluster.name
    node_account = None
    if config.creates_cluster:
        # First: on an existing subnetwork, GkeCluster looks it up and checks the teams' Pod
        # ranges on it before it registers itself, so a failed check stops every resource.
        cluster: ClusterTarget = GkeCluster(name, args.gke_cluster_args(config), within)
        system_pool, pools = _node_pools(config, cluster, within)
        install_after = [*cluster.control_plane, system_pool]
        node_account = cluster.node_service_account
        team_accounts: dict[str, pulumi.Input[str]] = dict(cluster.team_node_service_accounts())
    else:
        cluster = ExistingCluster(name, args.existing_cluster_args(config), within)
        pools, install_after = {}, []
        team_accounts = _team_stack_accounts(config)
    installs = build_installs(config, cluster, install_after, within)
    bucket, grants = _buckets(config, cluster, node_account, team_accounts, within)
    grants += build_storage(config, cluster, installs.namespaces, within)
    workloads = build_workloads(config, cluster, installs, grants)
    watched = (
        build_observability(config, cluster, installs, within) if config.creates_cluster else {}
    )
    _name_the_dashboard(workloads, watched)

    outputs: dict[str, Any] = {
        "cluster_name": cluster.cluster_name,
        "cluster_location": cluster.location,
        "cluster_endpoint": cluster.endpoint,
        "kubeconfig": cluster.kubeconfig,
        "tpu_node_pools": {pool: p.node_pool_names for pool, p in pools.items()},
        "tpu_summary": tpu_summary(config),
        "scratch_bucket": bucket.url,
        "team_namespaces": installs.namespaces,
        "tenancy": tenancy_summary(config),
        **workloads,
        **watched,
    }
    if isinstance(cluster, GkeCluster):
        outputs["node_service_account"] = cluster.node_service_account
    # What team stacks and fleets read through their StackReference.
    outputs.update(reference_outputs(config, pulumi.get_stack()))
    if config.owner is not None:
        outputs["owner_stack"] = config.owner
    return outputs


def _buckets(
    config: StackConfig,
    cluster: ClusterTarget,
    node_account: pulumi.Output[str] | None,
    team_accounts: dict[str, pulumi.Input[str]],
    within: pulumi.ResourceOptions | None,
) -> tuple[ScratchBucket, list[pulumi.Resource]]:
    """The scratch bucket, and the grants on it and on ``dataBuckets``: each team's service
    account on its prefix, the shared pools' and each dedicated team's node account."""
    own_accounts = team_accounts if config.creates_cluster else None
    bucket = ScratchBucket(
        f"{config.cluster.name}-scratch",
        args.scratch_bucket_args(config, cluster.control_plane, node_account, own_accounts),
        within,
    )
    grants = [*bucket.grants, *_data_bucket_grants(config, node_account, team_accounts, within)]
    return bucket, grants


def _name_the_dashboard(workloads: dict[str, Any], watched: dict[str, Any]) -> None:
    """Each job's outputs say where its dashboard is (its URL is ``dashboard_url``)."""
    if "dashboard" not in watched:
        return
    jobs = [
        *workloads.get("workloads", {}).values(),
        *workloads.get("shared_services", {}).values(),
    ]
    for job in jobs:
        job["dashboard"] = watched["dashboard"]


def _check_before_registering(config: StackConfig, owner_read: bool) -> None:
    """A team stack's owner read (unless the caller did), then the preflight."""
    read_here = config.owner is not None and not owner_read
    if read_here and read_owner_contract(config.owner) != config.shared_cluster:
        raise ConfigError(
            [ConfigIssue("owner", f"stack {config.owner!r} changed while being read")],
            "owner stack",
        )
    report = run_preflight(config)
    for message in zone_warnings(config) + image_warnings(config):
        pulumi.log.warn(message)
    for listener in _preflight_listeners:
        listener(report)


def _node_pools(
    config: StackConfig, cluster: GkeCluster, within: pulumi.ResourceOptions | None = None
) -> tuple[pulumi.Resource, dict[str, TpuNodePool]]:
    """The system pool (returned first: installs wait for it), the CPU pool, the teams' CPU
    pools and the TPU pools; a pool dedicated to a team runs as the team's own account."""
    target = cluster.pool_target()
    name = config.cluster.name
    system, cpu = config.system_pool, config.cpu_pool
    system_pool = CpuNodePool(
        f"{name}-{system.name}", args.cpu_pool_args(system, target, system=True), within
    )
    CpuNodePool(f"{name}-{cpu.name}", args.cpu_pool_args(cpu, target), within)
    for team_cpu in config.team_cpu_pools:
        team_target = cluster.pool_target(team_cpu.team)
        CpuNodePool(f"{name}-{team_cpu.name}", args.cpu_pool_args(team_cpu, team_target), within)
    tpu_pools: dict[str, TpuNodePool] = {}
    for pool in config.tpu_pools:  # a loop, not a comprehension: one frame fewer under each
        # registration, and the SDK records the whole call stack of every one
        pool_args = args.tpu_pool_args(pool, cluster.pool_target(pool.team or ""))
        tpu_pools[pool.name] = TpuNodePool(f"{name}-{pool.name}", pool_args, within)
    return system_pool, tpu_pools


def _team_stack_accounts(config: StackConfig) -> dict[str, pulumi.Input[str]]:
    """A team stack's teams with pools dedicated to them in its owner: their node service
    account (its email follows from the owner's project, cluster and the team)."""
    if config.owner is None:
        return {}
    mine = {team.name for team in config.teams}
    return {
        team: team_node_service_account_email(config.gcp.project, config.cluster.name, team)
        for team in config.dedicated_teams
        if team in mine
    }


def _data_bucket_grants(
    config: StackConfig,
    node_account: pulumi.Input[str] | None,
    team_accounts: dict[str, pulumi.Input[str]],
    within: pulumi.ResourceOptions | None = None,
) -> list[pulumi.Resource]:
    """``dataBuckets`` granted to the node service account of the shared pools, and those of
    a team to its dedicated pools' account."""
    name, grants = config.cluster.name, []
    teams = sorted({b.team for b in config.data_buckets if b.team is not None})
    if node_account is not None and any(b.team is None for b in config.data_buckets):
        grants += DataBucketGrants(
            f"{name}-data-buckets", args.data_bucket_grants_args(config, node_account), within
        ).grants
    for team in teams:
        if team in team_accounts:
            grants += DataBucketGrants(
                f"{name}-{team}-data-buckets",
                args.data_bucket_grants_args(config, team_accounts[team], team),
                within,
            ).grants
    return grants


def tpu_summary(config: StackConfig) -> dict[str, dict[str, int]]:
    """Slices, hosts and chips per TPU generation: what the stack provisions. A stack on an
    existing cluster provisions none (its pools belong to the owning stack)."""
    summary: dict[str, dict[str, int]] = {}
    for pool in config.tpu_pools if config.creates_cluster else []:
        shape = pool.shape
        empty = {"pools": 0, "slices": 0, "hosts": 0, "chips": 0}
        row = summary.setdefault(shape.generation.value, empty)
        row["pools"] += 1
        row["slices"] += pool.slices
        row["hosts"] += pool.slices * shape.hosts
        row["chips"] += pool.slices * shape.chips
    return dict(sorted(summary.items()))
