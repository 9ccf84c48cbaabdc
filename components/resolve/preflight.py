"""The plan-time preflight: would every PathwaysJob of the stack actually run?

Each workload and shared service is expanded into the pods the PathwaysJob controller v0.1.4
would create (``controller_model``), or on the JobSet backend read back from the JobSet the
program registers (``jobset_pods``: one model of the pods, two renderers), and scheduled against
node pools (``scheduler_model``): every pod must fit some node (labels, taints, allocatable
CPU/memory/TPU chips, hosts per slice), a job's slices need as many node pools, pools must not
be oversubscribed without Kueue (which admits a job all-or-nothing), no job may be able to land
on the node pool a colocated (inference) job needs to itself, and the identity the pods act as
must be able to use every ``gs://`` path the job names: write its ``pathwaysDir``, read the
others (``components.pathways.preflight`` checks one job). Everything found is reported at once,
before any resource is registered.

The node pools are an explicit input: ``planned_pools`` builds the ones this stack creates; a
team stack can pass the owner stack's instead.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from components.config.schema import (
    AutoscalingPoolConfig,
    PathwaysDeployment,
    StackConfig,
    TpuPoolConfig,
    WorkloadConfig,
)
from components.config.schema.contract import HeldNodePool
from components.errors import ConfigIssue
from components.labels import (
    DEDICATED_TAINT_EFFECT,
    DEDICATED_TO_LABEL,
    INSTANCE_TYPE_LABEL,
    SHARED_POOL_LABEL,
    SHARED_POOL_VALUE,
    SPOT_LABEL,
    SYSTEM_TAINT,
    SYSTEM_TAINT_EFFECT,
    SYSTEM_TAINT_VALUE,
    pool_labels,
    tpu_pool_labels,
)
from components.pathways.controller_model import (
    ACCELERATOR_LABEL,
    NODE_POOL_LABEL,
    TOPOLOGY_LABEL,
    Toleration,
)
from components.pathways.gcs_access import Access, BucketGrant, kubernetes_identity
from components.pathways.preflight import (
    Deployment,
    Placement,
    PreflightReport,
    check_job,
    oversubscription,
    shared_node_pools,
)
from components.pathways.scheduler_model import (
    TPU_TAINT,
    NodePoolModel,
    PoolIndex,
    Taint,
    jobset_bound_topologies,
)
from components.pathways.service_client import client_capacity
from components.pathways.storage_access import StorageCheck
from components.resolve.links import job_logs_url
from components.resolve.storage import gcsfuse_annotations, mounts_summary, team_bucket_grants
from components.resolve.workload_specs import (
    deployment_jobset,
    deployment_namespace,
    holds_client_port,
    node_pool_pins,
    owner_held_node_pools,
    shared_service_address,
    shared_service_connect,
    shared_service_spec,
    workload_endpoints,
    workload_spec,
)
from components.tpu.machines import tpu_host
from components.vocabulary import (
    DEDICATED_SCRATCH_ROOT,
    CapacityType,
    node_service_account_email,
    team_node_service_account_email,
)


def planned_pools(config: StackConfig) -> list[NodePoolModel]:
    """The node pools of the stack's config: the system pool, the CPU pool, the teams' CPU
    pools, one per TPU slice; a pool dedicated to a team carries its label and taint and runs
    as its account.

    On a cluster this stack does not own, the shared pools described in its config are the
    owner's and the identity their nodes act as is not known here (None); a dedicated pool's
    account follows from the team's name."""
    shared_identity = (
        node_service_account_email(config.gcp.project, config.cluster.name)
        if config.creates_cluster
        else None
    )
    pools = []
    cpu_pools: list[tuple[AutoscalingPoolConfig, str | None]] = [(config.cpu_pool, None)]
    if config.creates_cluster:
        cpu_pools.insert(0, (config.system_pool, None))
    cpu_pools += [(p, p.team) for p in config.team_cpu_pools]
    for cpu, team in cpu_pools:
        labels = {**pool_labels(config.team, cpu.name), NODE_POOL_LABEL: cpu.name}
        labels[INSTANCE_TYPE_LABEL] = cpu.machine_type
        if config.creates_cluster and cpu is config.system_pool:  # its own taint, no label
            taints: tuple[Taint, ...] = (
                Taint(SYSTEM_TAINT, SYSTEM_TAINT_VALUE, SYSTEM_TAINT_EFFECT),
            )
            identity = shared_identity
        else:
            labels, taints, identity = _dedication(config, team, labels, (), shared_identity)
        pools.append(
            NodePoolModel(
                cpu.name, cpu.name, cpu.machine, labels, taints, cpu.max_nodes, 0, identity
            )
        )
    for tpu in config.tpu_pools:
        pools += _tpu_node_pools(config, tpu, shared_identity)
    return pools


def _dedication(
    config: StackConfig,
    team: str | None,
    labels: dict[str, str],
    taints: tuple[Taint, ...],
    shared_identity: str | None,
) -> tuple[dict[str, str], tuple[Taint, ...], str | None]:
    """A pool's labels, taints and node identity, with its team's when dedicated (else the
    shared pools' label)."""
    if team is None:
        return {**labels, SHARED_POOL_LABEL: SHARED_POOL_VALUE}, taints, shared_identity
    identity = team_node_service_account_email(config.gcp.project, config.cluster.name, team)
    taint = Taint(DEDICATED_TO_LABEL, team, DEDICATED_TAINT_EFFECT)
    return {**labels, DEDICATED_TO_LABEL: team}, (*taints, taint), identity


def _tpu_node_pools(
    config: StackConfig, tpu: TpuPoolConfig, shared_identity: str | None
) -> list[NodePoolModel]:
    shape, pools = tpu.shape, []
    for node_pool in tpu.node_pool_names():
        labels = {
            **tpu_pool_labels(config.team, tpu.name, tpu.shape, tpu.capacity.reservation),
            NODE_POOL_LABEL: node_pool,
        }
        labels[INSTANCE_TYPE_LABEL] = shape.machine_type
        labels[ACCELERATOR_LABEL] = shape.accelerator_label
        labels[TOPOLOGY_LABEL] = shape.topology
        if tpu.capacity.type is CapacityType.SPOT:
            labels[SPOT_LABEL] = "true"
        labels, taints, identity = _dedication(
            config, tpu.team, labels, (TPU_TAINT,), shared_identity
        )
        pools.append(
            NodePoolModel(
                node_pool,
                tpu.name,
                tpu_host(shape.machine_type),
                labels,
                taints,
                shape.hosts,
                shape.chips_per_host,
                identity,
            )
        )
    return pools


def bucket_grants(config: StackConfig) -> tuple[BucketGrant, ...]:
    """What this stack grants: each team's Kubernetes service account read-write on its prefix
    of the scratch bucket and what its ``buckets`` give it (Workload Identity: the identity of
    Pathways pods off the host network and of Cloud Storage FUSE mounts); the shared pools' node
    service account (the identity of host-network Pathways pods) read-write on the scratch
    bucket but ``_/`` (where every dedicated team's prefix is, this stack's or another's), and
    on each of ``dataBuckets`` without a team; each dedicated team's node service account on its
    prefix and its ``dataBuckets``. A stack on a cluster it does not create grants only what its
    own dedicated teams' nodes get."""
    grants = [
        BucketGrant(
            kubernetes_identity(team.name, team.service_account),
            config.bucket_name,
            Access.READ_WRITE,
            config.scratch_prefix(team.name),
        )
        for team in config.teams
    ]
    grants += team_bucket_grants(config)
    dedicated = config.dedicated_teams
    if config.creates_cluster:
        nodes = node_service_account_email(config.gcp.project, config.cluster.name)
        excluded = (DEDICATED_SCRATCH_ROOT,)
        grants.append(BucketGrant(nodes, config.bucket_name, Access.READ_WRITE, "", excluded))
        grants += [BucketGrant(nodes, b.name, b.access) for b in config.data_buckets if not b.team]
    mine = {team.name for team in config.teams}
    for team in dedicated:
        nodes = team_node_service_account_email(config.gcp.project, config.cluster.name, team)
        if config.creates_cluster or team in mine:  # the owner grants the prefix
            prefix = config.scratch_prefix(team)
            grants.append(BucketGrant(nodes, config.bucket_name, Access.READ_WRITE, prefix))
            grants += [
                BucketGrant(nodes, b.name, b.access) for b in config.data_buckets if b.team == team
            ]
    return tuple(grants)


def how_to_grant(bucket: str, access: Access) -> str:
    """The stack config that grants ``bucket`` to the node service account."""
    return f"add {{name: {bucket}, access: {access.value}}} to dataBuckets (stack config)"


def stack_deployments(config: StackConfig, skip: Collection[str] = ()) -> list[Deployment]:
    """The stack's PathwaysJobs to check, but those keyed in ``skip`` (a problem found in
    them already: their preflight waits for the fix)."""
    pins = node_pool_pins(config)
    entries = [(key, entry) for key, entry in config.deployments() if key not in skip]
    return [_deployment(config, key, entry, pins) for key, entry in entries]


def _deployment(
    config: StackConfig, key: str, entry: PathwaysDeployment, pins: Mapping[str, str]
) -> Deployment:
    """The deployment to check; a jobset-backend one with the JobSet it runs as, whose pods the
    preflight then reads instead of the controller's expansion. A dedicated team's job gets
    what Kueue adds when it admits it on the team's flavors."""
    jobset = deployment_jobset(config, entry, pins)
    queued: dict[str, Any] = {}
    if entry.team in config.dedicated_teams:
        queued = {
            "queue_selector": {DEDICATED_TO_LABEL: entry.team},
            "queue_tolerations": (Toleration(DEDICATED_TO_LABEL, "Equal", entry.team),),
        }
    if isinstance(entry, WorkloadConfig):
        spec = workload_spec(config, entry, pins)
        proxy = workload_endpoints(entry).proxy
        return Deployment(
            key,
            "workload",
            entry.name,
            entry.team,
            entry.pool,
            spec,
            proxy,
            entry.image,
            jobset,
            annotations=gcsfuse_annotations(config, entry),
            **queued,
        )
    spec = shared_service_spec(config, entry, pins)
    address = shared_service_address(entry)
    namespace = deployment_namespace(entry)
    return Deployment(
        key,
        "sharedService",
        entry.name,
        namespace,
        entry.pool,
        spec,
        address,
        jobset=jobset,
        **queued,
    )


def preflight(
    config: StackConfig,
    pools: Sequence[NodePoolModel],
    grants: Iterable[BucketGrant] = (),
    skip: Collection[str] = (),
) -> PreflightReport:
    """Check every PathwaysJob of the stack (but those keyed in ``skip``) against ``pools`` and
    the bucket ``grants`` their identities hold; never raises (see the report)."""
    report = PreflightReport()
    deployments = stack_deployments(config, skip)
    storage = StorageCheck(tuple(grants), how_to_grant)
    index = PoolIndex(pools)  # once: each job then costs what its pods select
    placements = [check_job(deployment, index, storage, report) for deployment in deployments]
    _links_and_mounts(config, report, skip)
    report.issues += shared_node_pools(placements)
    report.issues += owner_node_pools(config, placements)
    if not config.queues_jobs:
        report.issues += oversubscription(deployments, pools)
    if config.shared_services:
        _service_clients(config, pools, report)
    return report


def _links_and_mounts(config: StackConfig, report: PreflightReport, skip: Collection[str]) -> None:
    """Each job's Logs Explorer link, and a workload's mounts, in the plan's summary."""
    for key, entry in config.deployments():
        job = report.jobs.get(f"{deployment_namespace(entry)}/{entry.name}")
        if key in skip or job is None:
            continue
        if isinstance(entry, WorkloadConfig) and (mounts := mounts_summary(config, entry)):
            job["volumes"] = mounts
        job["logs"] = job_logs_url(config, entry.name, deployment_namespace(entry))


def owner_node_pools(config: StackConfig, placements: Sequence[Placement]) -> list[ConfigIssue]:
    """A team stack's jobs against the node pools its owner's jobs hold (the owner's preflight
    checked those among themselves): a colocated job of either stack needs its node pool to
    itself, so a job that could land on a held node pool where either is colocated never
    schedules, or keeps the other from scheduling."""
    owner = config.shared_cluster
    if owner is None:
        return []
    issues = []
    for placement in placements:
        colocated = NODE_POOL_LABEL in jobset_bound_topologies(placement.job.workers)
        held = owner_held_node_pools(config, placement.deployment.pool or "")
        met = [
            held[pool.name]
            for pool in placement.landing()
            if pool.name in held and (colocated or held[pool.name].colocated)
        ]
        if met:
            issues.append(_owner_meeting(owner.owner_stack, placement, colocated, met))
    return issues


def _owner_meeting(
    owner: str, placement: Placement, colocated: bool, met: list[HeldNodePool]
) -> ConfigIssue:
    deployment = placement.deployment
    held = "; ".join(f"{h.node_pool!r} by {', '.join(h.jobs)}" for h in met)
    why = (
        "it is colocated and needs a node pool to itself (its workers are bound to its head's "
        "node pool, and the head is kept out of no node pool another job holds)"
        if colocated
        else "a colocated job of the owner needs its node pool to itself"
    )
    return ConfigIssue(
        deployment.key,
        f"{deployment.label} could land on node pools of TPU pool {deployment.pool!r} that "
        f"jobs of owner stack {owner!r} hold ({held}), and {why}; no free node pool of the pool "
        "is left to pin it to: add slices to the pool in the owner stack, or use another TPU "
        "pool",
    )


def _service_clients(
    config: StackConfig, pools: Sequence[NodePoolModel], report: PreflightReport
) -> None:
    """Each shared service's connect(...) call and client capacity, in the plan's summary (the
    config checks refused a stack with room for none:
    ``workload_checks.client_capacity_issues``)."""
    heads = sum(1 for _, entry in config.deployments() if holds_client_port(config, entry))
    capacity = client_capacity(pools, heads)
    for service in config.shared_services:
        key = f"{deployment_namespace(service)}/{service.name}"
        if key not in report.jobs:  # skipped: a problem was found in it
            continue
        report.jobs[key]["connect"] = shared_service_connect(config, service)
        report.jobs[key]["clients"] = capacity


def run_preflight(config: StackConfig) -> PreflightReport:
    """The preflight against the pools this stack plans; raises ConfigError on any problem.
    A stack parsed by ``checks.parse_stack_config`` was checked then: that report is reused."""
    report = config._preflight or preflight(config, planned_pools(config), bucket_grants(config))
    report.raise_if_failed()
    return report
