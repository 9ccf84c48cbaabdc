"""The program of a fleet stack (``tpu-pathways:fleet``): a CPU-only manager cluster whose Kueue
dispatches the fleet's JobSets to its worker stacks' clusters through MultiKueue.

Registered, in order of need: the manager cluster and its system pool; JobSet and Kueue on it
(MultiKueue is a Beta feature gate on by default since Kueue v0.9: kubernetes-sigs/kueue v0.17.1
pkg/features/kube_features.go), Kueue configured with JobSet its only integration
(``ManagerKueueConfig``: MultiKueue watches every enabled integration's kind on the workers);
the team namespaces; per worker, its
provider (from its contract: project, cluster name, location) and the manager's access to it
(``WorkerAccess``: its grants in the team namespaces of the sets it is in, its bounded token,
the LocalQueues of workloads' own sets); the MultiKueue objects and queues
(``MultiKueueManager``: per worker set a MultiKueueConfig, an AdmissionCheck and a ClusterQueue
whose TPU quota is the sum of its workers' shared chips per flavor, and one ClusterQueue per team
with a guaranteed share of them, ``fleet_shares``, or with pools dedicated to it on each of
them, ``fleet_dedicated``); then each workload as a JobSet
with ``spec.managedBy: kueue.x-k8s.io/multikueue`` on its LocalQueue (``fleet_sets``).

Each worker owns its cluster, pools, bucket, Kueue and the team namespaces and LocalQueues a
dispatched JobSet lands in: deploy the workers first, then the fleet.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s

from components.addons.installs import CONTROLLER_PATCH_TYPE, JOBSET, KUEUE
from components.addons.kueue import (
    PriorityClasses,
    PriorityClassesArgs,
    TpuFlavor,
    flavor_name,
    tpu_flavors,
)
from components.addons.manager_admission import (
    ManagerAdmissionPolicies,
    ManagerAdmissionPoliciesArgs,
)
from components.addons.multikueue import (
    MANAGER_KUEUE_CONFIG_TYPE,
    DedicatedTeamQueueArgs,
    ManagerKueueConfig,
    ManagerKueueConfigArgs,
    ManagerQueueArgs,
    MultiKueueManager,
    MultiKueueManagerArgs,
    TeamQueueArgs,
    WorkerSetArgs,
    dedicated_flavor,
)
from components.addons.multikueue_worker import (
    TokenLifetime,
    WorkerAccess,
    WorkerAccessArgs,
    WorkerQueueArgs,
    anchor_name,
)
from components.addons.teams import TeamNamespace, TeamNamespaceArgs
from components.config.schema import StackConfig, TeamConfig
from components.gke.cluster import ExistingCluster, ExistingClusterArgs, GkeCluster
from components.gke.cpu_pool import CpuNodePool
from components.pathways.multikueue_model import MULTIKUEUE_CONTROLLER
from components.resolve.tenancy.fleet import FleetStack
from components.resolve.tenancy.fleet_dispatch import own_queues
from components.resolve.tenancy.fleet_quota import shared_pools
from components.resolve.tenancy.fleet_sets import DedicatedShare, TeamShare, WorkerSet
from components.resolve.tenancy.shared_cluster import FLEET_OUTPUT
from components.resolve.workload_specs import (
    cpu_pool_selector,
    node_pool_pins,
    team_service_account,
    workload_spec,
)
from components.stack import args, installs
from components.stack.installs import Release
from components.tpu.catalog import resolve_accelerator
from components.tpu.machines import pods_capacity
from components.vocabulary import HostNetworkPlacement
from components.workloads.jobset import PathwaysJobSet, PathwaysJobSetArgs

TOKEN_EXPIRY_OUTPUT = "manager_token_expiry"


def build_fleet(fleet: FleetStack) -> dict[str, Any]:
    """Register the fleet's resources; returns its stack outputs."""
    manager = fleet.manager
    name = manager.cluster.name
    cluster = GkeCluster(name, args.gke_cluster_args(manager))
    # The manager's one pool is its system pool, tainted as an owner's: its controllers (at
    # their PriorityClass) and GKE's components run there, no team pod.
    system = CpuNodePool(
        f"{name}-{manager.system_pool.name}",
        args.cpu_pool_args(manager.system_pool, cluster.pool_target(), system=True),
    )
    provider = cluster.provider
    jobset, kueue = _manager_installs(manager, provider, [*cluster.control_plane, system])
    # Production protects the Kueue objects, as on a cluster a stack owns: deleting a queue
    # deletes the workloads queued on it.
    protected = pulumi.ResourceOptions(protect=manager.protects_state)
    namespaces = {
        team.name: TeamNamespace(
            f"{name}-{team.name}", manager_namespace_args(manager, team, provider)
        ).namespace
        for team in manager.teams
    }
    ManagerAdmissionPolicies(
        f"{name}-manager-admission",
        ManagerAdmissionPoliciesArgs(provider, manager_queues(fleet), depends_on=[jobset.manifest]),
        opts=protected,
    )
    accesses = _worker_accesses(name, cluster, kueue.manifest, fleet)
    secrets = [a.kubeconfig_secret for a in accesses.values()]
    queues = MultiKueueManager(
        f"{name}-multikueue",
        # Kueue configured: its controller rolled to read the MultiKueue configuration.
        manager_args(fleet, provider, kueue.controller or kueue.manifest, secrets, namespaces),
        opts=protected,
    )
    priorities = PriorityClasses(
        f"{name}-priorities", PriorityClassesArgs(provider), opts=protected
    )
    for i, workload in enumerate(fleet.config.workloads):
        namespace = namespaces[workload.team]
        PathwaysJobSet(
            f"{name}-{workload.team}-{workload.name}",
            _fleet_jobset_args(fleet, i, namespace, provider, jobset, [queues, priorities]),
        )
    return {
        "cluster_name": cluster.cluster_name,
        "cluster_location": cluster.location,
        "kubeconfig": cluster.kubeconfig,
        "team_namespaces": namespaces,
        FLEET_OUTPUT: fleet_output(fleet),
        # When each worker's token expires (known once `pulumi up` minted it): apart, as an
        # unknown would hide the whole `fleet` output in a preview.
        TOKEN_EXPIRY_OUTPUT: {worker: a.token.expires_at for worker, a in accesses.items()},
    }


def _manager_installs(
    manager: StackConfig, provider: k8s.Provider, ready: list[pulumi.Resource]
) -> tuple[Release, Release]:
    """JobSet and Kueue on the manager as on a cluster a stack owns (``installs.release``,
    protected in production): each controller on the system pool, tolerating its taint, at the
    controllers' PriorityClass; Kueue configured for MultiKueue first."""
    addons = manager.addons
    priority = installs.controller_priority(manager, provider, ready)
    jobset = installs.release(
        manager, JOBSET, addons.jobset, provider, ready, None, priority=priority
    )
    name, protected = manager.cluster.name, pulumi.ResourceOptions(protect=manager.protects_state)
    kueue = installs.release(
        manager,
        KUEUE,
        addons.kueue,
        provider,
        [*ready, jobset.manifest],
        None,
        # The controller's patch was ManagerKueueConfig's restart: same Deployment, kept.
        patch_options=pulumi.ResourceOptions(aliases=[_former_restart(name)]),
        configure=lambda release: ManagerKueueConfig(
            f"{name}-kueue-config",
            ManagerKueueConfigArgs(provider, release.manifest),
            opts=protected,
        ),
        priority=priority,
    )
    return jobset, kueue


def _former_restart(name: str) -> str:
    """The URN the manager's Kueue controller patch had: ``<cluster>-kueue-config-restart``, a
    child of the top-level ``ManagerKueueConfig`` ``<cluster>-kueue-config`` (its own child
    follows by name: ``<cluster>-kueue-controller`` for ``<cluster>-kueue-config-restart``)."""
    chain = f"{MANAGER_KUEUE_CONFIG_TYPE}${CONTROLLER_PATCH_TYPE}"
    stack, project = pulumi.get_stack(), pulumi.get_project()
    return f"urn:pulumi:{stack}::{project}::{chain}::{name}-kueue-config-restart"


def manager_namespace_args(
    manager: StackConfig, team: TeamConfig, provider: k8s.Provider
) -> TeamNamespaceArgs:
    """A team namespace of the manager: no host network, and a quota of no pods (MultiKueue
    runs the team's JobSets on the workers; the manager runs none of its pods), no TPU chips
    and no CPU or memory (nothing to share: its one pool is the system pool); the team's own
    limits of Services and Ingresses."""
    namespace = args.stack_team_namespace_args(manager, team, provider, HostNetworkPlacement.NONE)
    quota = replace(namespace.quota, pods=0, cpu=None, memory_gib=None, tpu_chips=0)
    return replace(namespace, quota=quota)


def manager_queues(fleet: FleetStack) -> dict[str, list[str]]:
    """Each team namespace's LocalQueues on the manager."""
    queues: dict[str, list[str]] = {team.name: [] for team in fleet.manager.teams}
    for queue in fleet.nominations.queues:
        queues[queue.team].append(queue.name)
    return queues


def _fleet_jobset_args(
    fleet: FleetStack,
    index: int,
    namespace: pulumi.Input[str],
    provider: k8s.Provider,
    jobset: Release,
    prerequisites: list[pulumi.Resource],
) -> PathwaysJobSetArgs:
    """A fleet workload's JobSet, rendered as on a worker that accepts it (all of them render
    it alike, or it is pinned) and handed to MultiKueue."""
    workload = fleet.config.workloads[index]
    view = next(iter(fleet.placements[index].values()))
    entry = view.workloads[0]
    spec = workload_spec(view, entry, node_pool_pins(view))
    if workload.pathways_dir is not None:
        spec = spec.model_copy(update={"pathways_dir": workload.pathways_dir})
    return PathwaysJobSetArgs(
        name=workload.name,
        namespace=namespace,
        spec=spec,
        provider=provider,
        jobset_install=jobset.manifest,
        queue_name=fleet.nominations.workloads[index].name,
        host_network=entry.host_network,
        service_account=None if entry.host_network else team_service_account(view, entry),
        head_node_selector=cpu_pool_selector(view, workload.team),
        prerequisites=prerequisites,
        managed_by=MULTIKUEUE_CONTROLLER,
    )


def fleet_output(fleet: FleetStack) -> dict[str, Any]:
    """The ``fleet`` output: its workers' regions, its worker sets (workers, teams, TPU chips),
    the workers each job may go to, and the manager's tokens (where, how long, when renewed)."""
    credentials = fleet.config.fleet.manager_tokens
    return {
        "workers": fleet.regions,
        "worker_sets": {s.name: _set_output(fleet, s) for s in fleet.nominations.sets},
        "placements": fleet.nominations.placements(fleet.config),
        "manager_tokens": {
            "kind": "TokenRequest of kueue-system/multikueue-manager on each worker, bound to "
            f"Secret kueue-system/{anchor_name(credentials.rotation)}",
            "lifetime_days": credentials.lifetime_days,
            "renew_before_days": credentials.renew_before_days,
            "expiry_output": TOKEN_EXPIRY_OUTPUT,
        },
    }


def _set_output(fleet: FleetStack, worker_set: WorkerSet) -> dict[str, Any]:
    """A worker set's workers, teams and TPU chips; and, if teams have a guaranteed share of
    it, each one's ClusterQueue and nominal chips (``fleet_shares``)."""
    output: dict[str, Any] = {
        "workers": list(worker_set.workers),
        "teams": list(worker_set.namespaces),
        "tpu_chips": {f.name: f.chips for f in manager_flavors(fleet, worker_set)},
    }
    own = fleet.nominations.team_queues(worker_set.name)
    if own:
        output["team_queues"] = {s.team: _team_queue_output(s) for s in own}
    return output


def _team_queue_output(queue: TeamShare | DedicatedShare) -> dict[str, Any]:
    """A team's own queue of a set: its ClusterQueue and nominal chips per flavor (of its pools
    dedicated to it, when it has some there)."""
    if isinstance(queue, DedicatedShare):
        chips = dedicated_queue_args(queue).tpu_flavors
        flavors = {dedicated_flavor(f.name, queue.team): f.chips for f in chips}
        return {"cluster_queue": queue.name, "dedicated": True, "tpu_chips": flavors}
    return {"cluster_queue": queue.name, "tpu_chips": flavor_chips(queue.chips)}


def dedicated_queue_args(share: DedicatedShare) -> DedicatedTeamQueueArgs:
    """A team's dedicated pools of a set as the manager's queue holds them (``fleet_dedicated``)."""
    shapes = [(resolve_accelerator(name), count) for name, count in share.chips.items()]
    return DedicatedTeamQueueArgs(
        name=share.name,
        team=share.team,
        tpu_flavors=tuple(TpuFlavor(flavor_name(shape), shape, chips) for shape, chips in shapes),
        cpu_pools=dict(share.cpu_pools),
    )


def flavor_chips(chips: Mapping[str, int]) -> dict[str, int]:
    """Chips per accelerator name (v5litepod-8) as chips per Kueue flavor name."""
    return {flavor_name(resolve_accelerator(name)): count for name, count in chips.items()}


def manager_flavors(fleet: FleetStack, worker_set: WorkerSet | None = None) -> list[TpuFlavor]:
    """One TPU flavor per shape over the workers' shared pools (of ``worker_set``, or all; a
    pool dedicated to a worker's team is not the fleet's: ``fleet_quota``), chips summed."""
    pools = shared_pools(fleet.worker_clusters(worker_set).values())
    return tpu_flavors([(p.shape, p.slices) for p in pools])


def heads_quota(fleet: FleetStack, worker_set: WorkerSet) -> tuple[str, str]:
    """CPU and memory of the set's workers' CPU pools at their maximum size (heads run there)."""
    workers = fleet.worker_clusters(worker_set).values()
    return pods_capacity((w.cpu_pool.machine_type, w.cpu_pool.max_nodes) for w in workers)


def set_args(fleet: FleetStack, worker_set: WorkerSet) -> WorkerSetArgs:
    cpu, memory = heads_quota(fleet, worker_set)
    chosen = fleet.nominations
    return WorkerSetArgs(
        name=worker_set.name,
        workers=worker_set.workers,
        tpu_flavors=tuple(manager_flavors(fleet, worker_set)),
        cpu_quota=cpu,
        memory_quota=memory,
        namespaces=chosen.set_teams(worker_set),
        team_queues=tuple(
            TeamQueueArgs(s.name, s.team, flavor_chips(s.chips), s.borrowing_limit)
            for s in chosen.shares.get(worker_set.name, ())
        ),
        dedicated_queues=tuple(
            dedicated_queue_args(s) for s in chosen.dedicated.get(worker_set.name, ())
        ),
    )


def manager_args(
    fleet: FleetStack,
    provider: k8s.Provider,
    kueue_install: pulumi.Resource,
    secrets: list[pulumi.Resource],
    namespaces: dict[str, pulumi.Output[str]],
) -> MultiKueueManagerArgs:
    return MultiKueueManagerArgs(
        provider=provider,
        kueue_install=kueue_install,
        workers=tuple(fleet.workers),
        kubeconfigs=tuple(secrets),
        tpu_flavors=tuple(manager_flavors(fleet)),
        sets=tuple(set_args(fleet, s) for s in fleet.nominations.sets),
        queues=tuple(
            ManagerQueueArgs(q.team, namespaces[q.team], q.name, fleet.nominations.cluster_queue(q))
            for q in fleet.nominations.queues
        ),
    )


def _worker_accesses(
    prefix: str, manager: GkeCluster, kueue: pulumi.Resource, fleet: FleetStack
) -> dict[str, WorkerAccess]:
    """Each worker's provider and the manager's access to it; the manager's tokens are minted
    with the deployer's own Google credentials (those of the program's gcp provider)."""
    access_token = gcp.organizations.get_client_config_output().access_token
    return {
        worker: _worker_access(prefix, worker, config, manager, kueue, fleet, access_token)
        for worker, config in fleet.worker_clusters().items()
    }


def _worker_access(
    prefix: str,
    worker: str,
    config: StackConfig,
    manager: GkeCluster,
    kueue: pulumi.Resource,
    fleet: FleetStack,
    access_token: pulumi.Input[str],
) -> WorkerAccess:
    """The worker's provider and the manager's access to it."""
    target = ExistingCluster(
        f"{prefix}-worker-{worker}",
        ExistingClusterArgs(
            project=config.gcp.project, name=config.cluster.name, location=config.cluster_location
        ),
    )
    contract = fleet.workers[worker]
    has = set(contract.team_namespaces)
    credentials = fleet.config.fleet.manager_tokens
    return WorkerAccess(
        f"{prefix}-access-{worker}",
        WorkerAccessArgs(
            worker=worker,
            worker_provider=target.provider,
            manager_provider=manager.provider,
            namespaces=tuple(n for n in fleet.nominations.access_namespaces(worker) if n in has),
            server=target.endpoint.apply(lambda endpoint: f"https://{endpoint}"),
            manager_kueue=kueue,
            lifetime=TokenLifetime(
                credentials.lifetime_days,
                credentials.renew_before_days,
                credentials.rotation,
            ),
            access_token=access_token,
            queues=tuple(
                WorkerQueueArgs(q.team, q.name, contract.queues.cluster_queue(q.team))
                for q in own_queues(fleet.nominations, worker)
                if q.team in has
            ),
        ),
    )
