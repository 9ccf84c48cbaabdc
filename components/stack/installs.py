"""The in-cluster installs of a stack, in the order they need each other: JobSet (with its
controller sized for the stack's nodes), the PathwaysJob controller (it watches JobSets), the
team namespaces, and Kueue with its queues and priority classes (its JobSet integration needs
JobSet's API), or a team stack's LocalQueues on its owner's Kueue. ``build_installs`` returns
what the workloads wait for (``Installs``).

Every install of ``addons.installs.INSTALLS`` is registered by ``release``: its release
manifest, and its controller on the system pool (of a stack that creates its cluster) unless the
install says otherwise, both protected in production."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.addons import installs
from components.addons.installs import (
    ControllerPatch,
    ControllerPriorityClass,
    ControllerPriorityClassArgs,
    Install,
    ReleaseManifest,
)
from components.addons.kueue import KueueQueues, LocalQueues, PriorityClasses, PriorityClassesArgs
from components.addons.kueue_config import ConfiguredKueue, KueueConfig, KueueConfigArgs
from components.addons.team_policies import TeamAdmissionPolicies, TeamAdmissionPoliciesArgs
from components.addons.teams import TeamNamespace
from components.config.schema import ReleaseAddon, StackConfig
from components.gke.cluster import ClusterTarget
from components.stack import args
from components.vocabulary import jobset_memory_mib


@dataclass
class Installs:
    """What workloads need from the in-cluster installs."""

    pathways_controller: pulumi.Resource | None
    # The JobSet install a jobset-backend job waits for (None: another stack's).
    jobset: pulumi.Resource | None
    namespaces: dict[str, pulumi.Output[str]]
    # Kueue's queues and priority classes: a queued job must not be created before them.
    queueing: list[pulumi.Resource]
    # What waits for Kueue's install: its queues (None: no Kueue of this stack's).
    kueue: pulumi.Resource | None = None


def build_installs(
    config: StackConfig,
    cluster: ClusterTarget,
    ready: list[pulumi.Resource],
    within: pulumi.ResourceOptions | None = None,
) -> Installs:
    """``ready``: what the installs wait for (the control plane and the system pool);
    ``within``: options of every install (``build_stack``'s)."""
    name, provider = config.cluster.name, cluster.provider
    priority = None
    if config.creates_cluster:  # its controllers run on its system pool, at their priority
        priority = controller_priority(config, provider, ready, within)
    jobset = (
        _jobset(config, provider, ready, within, priority) if config.addons.jobset.install else None
    )
    after_jobset = [jobset] if jobset else []
    controller = None
    # A stack whose jobs all run as JobSets (workloadBackend: jobset) needs no controller.
    if config.addons.pathways_job.install and config.needs_pathways_controller:
        controller = _pathways_controller(
            config, provider, [*ready, *after_jobset], within, priority
        )
    if config.owner is None:  # cluster-wide: the stack that owns the cluster's (or alone on it)
        TeamAdmissionPolicies(
            f"{name}-team-admission",
            TeamAdmissionPoliciesArgs(
                provider=provider,
                kueue=config.kueue_enabled,
                team=config.team,
                system_pool=config.system_pool.name if config.creates_cluster else None,
                depends_on=[*ready, *after_jobset],
            ),
            opts=_protected(config, within),
        )
    namespaces = {
        team.name: TeamNamespace(
            f"{name}-{team.name}", args.stack_team_namespace_args(config, team, provider), within
        ).namespace
        for team in config.teams
    }
    queueing: list[pulumi.Resource] = []
    kueue = None
    if config.kueue_enabled:
        queueing = _kueue(config, provider, [*ready, *after_jobset], namespaces, within, priority)
        kueue = queueing[0]
    elif config.shared_cluster is not None and config.queues_jobs:
        # The owner's Kueue queues this team's jobs too: a LocalQueue in each of its namespaces.
        queueing = [
            LocalQueues(
                f"{name}-queues", args.local_queues_args(config, namespaces, provider), within
            )
        ]
    return Installs(controller, jobset, namespaces, queueing, kueue)


def controller_priority(
    config: StackConfig,
    provider: k8s.Provider,
    ready: list[pulumi.Resource],
    within: pulumi.ResourceOptions | None = None,
) -> ControllerPriorityClass:
    """The PriorityClass of the controllers on the system pool of a cluster ``config``
    creates (an owner stack's, a fleet's manager)."""
    return ControllerPriorityClass(
        f"{config.cluster.name}-controller-priority",
        ControllerPriorityClassArgs(provider, ready),
        opts=_protected(config, within),
    )


@dataclass(frozen=True)
class Release:
    """What waits for an install: its release manifest, and its controller's patch if any (a
    controller that reads a configuration at start is ready when the patch has rolled it)."""

    manifest: pulumi.Resource
    controller: ControllerPatch | None


def _protected(
    config: StackConfig, within: pulumi.ResourceOptions | None
) -> pulumi.ResourceOptions:
    """Production protects the installs and the Kueue objects: deleting a CRD deletes every
    object of it (every PathwaysJob, JobSet or queued workload) with it."""
    return pulumi.ResourceOptions.merge(
        within, pulumi.ResourceOptions(protect=config.protects_state)
    )


def release(
    config: StackConfig,
    install: Install,
    settings: ReleaseAddon,
    provider: k8s.Provider,
    ready: list[pulumi.Resource],
    within: pulumi.ResourceOptions | None,
    memory_mib: int | None = None,
    patch_options: pulumi.ResourceOptions | None = None,
    configure: Callable[[ReleaseManifest], ConfiguredKueue] | None = None,
    priority: ControllerPriorityClass | None = None,
) -> Release:
    """An install's release manifest (waiting for ``ready``) and its controller's patch: on the
    system pool at ``priority`` unless the install says otherwise, ``memory_mib`` if given, and
    after the configuration ``configure`` writes (given the release), rolled to read it."""
    name, protected = f"{config.cluster.name}-{install.name}", _protected(config, within)
    release = ReleaseManifest(name, args.release_args(settings, provider, ready), opts=protected)
    configured = configure(release) if configure is not None else None
    patch = args.controller_patch_args(
        config, install, provider, release, memory_mib, configured, priority
    )
    controller = None
    if patch is not None:
        options = pulumi.ResourceOptions.merge(protected, patch_options)
        controller = ControllerPatch(f"{name}-controller", patch, opts=options)
    return Release(release.manifest, controller)


def _jobset(
    config: StackConfig,
    provider: k8s.Provider,
    ready: list[pulumi.Resource],
    within: pulumi.ResourceOptions | None,
    priority: ControllerPriorityClass | None,
) -> pulumi.Resource:
    """JobSet's release, and its controller sized for the nodes the stack may have."""
    # The controller's patch was the JobSetControllerMemory component: same resources, kept.
    renamed = pulumi.Alias(
        name=f"{config.cluster.name}-jobset-memory",
        type_="tpu-pathways:installs:JobSetControllerMemory",
    )
    jobset = release(
        config,
        installs.JOBSET,
        config.addons.jobset,
        provider,
        ready,
        within,
        memory_mib=jobset_memory_mib(config.max_node_count),
        patch_options=pulumi.ResourceOptions(aliases=[renamed]),
        priority=priority,
    )
    return jobset.manifest


def _pathways_controller(
    config: StackConfig,
    provider: k8s.Provider,
    ready: list[pulumi.Resource],
    within: pulumi.ResourceOptions | None,
    priority: ControllerPriorityClass | None,
) -> pulumi.Resource:
    """The controller watches JobSets, and JobSet's webhooks fail closed until it is ready."""
    settings = config.addons.pathways_job
    return release(
        config, installs.PATHWAYS_JOB, settings, provider, ready, within, priority=priority
    ).manifest


def _kueue(
    config: StackConfig,
    provider: k8s.Provider,
    ready: list[pulumi.Resource],
    namespaces: dict[str, pulumi.Output[str]],
    within: pulumi.ResourceOptions | None,
    priority: ControllerPriorityClass | None,
) -> list[pulumi.Resource]:
    """Kueue manages JobSets: its JobSet integration needs JobSet's API first."""
    name, protected = config.cluster.name, _protected(config, within)
    kueue = release(
        config,
        installs.KUEUE,
        config.addons.kueue,
        provider,
        ready,
        within,
        configure=lambda release: KueueConfig(
            f"{name}-kueue-config", KueueConfigArgs(provider, release.manifest), opts=protected
        ),
        priority=priority,
    )
    return [
        kueue.controller or kueue.manifest,
        KueueQueues(
            f"{name}-queues",
            args.kueue_queues_args(config, namespaces, provider, kueue.manifest),
            opts=protected,
        ),
        PriorityClasses(f"{name}-priorities", PriorityClassesArgs(provider), opts=protected),
    ]
