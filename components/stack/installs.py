"""The in-cluster installs of a stack, in the order they need each other: JobSet (with its
controller sized for the stack's nodes), the PathwaysJob controller (it watches JobSets), the
team namespaces, and Kueue with its queues and priority classes (its JobSet integration needs
JobSet's API), or a team stack's LocalQueues on its owner's Kueue. ``build_installs`` returns
what the workloads wait for (``Installs``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.addons.installs import (
    JOBSET_CONTROLLER,
    KUEUE_CONTROLLER,
    PATHWAYS_JOB_CONTROLLER,
    ControllerDeployment,
    ControllerPatch,
    ReleaseManifest,
)
from components.addons.kueue import KueueQueues, LocalQueues, PriorityClasses, PriorityClassesArgs
from components.addons.kueue_config import KueueConfig, KueueConfigArgs
from components.addons.team_policies import TeamAdmissionPolicies, TeamAdmissionPoliciesArgs
from components.addons.teams import TeamNamespace
from components.config.schema import StackConfig
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
    jobset = _jobset(config, provider, ready, within) if config.addons.jobset.install else None
    after_jobset = [jobset] if jobset else []
    controller = None
    # A stack whose jobs all run as JobSets (workloadBackend: jobset) needs no controller.
    if config.addons.pathways_job.install and config.needs_pathways_controller:
        controller = _pathways_controller(config, provider, [*ready, *after_jobset], within)
    if config.owner is None:  # cluster-wide: the stack that owns the cluster's (or alone on it)
        TeamAdmissionPolicies(
            f"{name}-team-admission",
            TeamAdmissionPoliciesArgs(
                provider=provider,
                kueue=config.kueue_enabled,
                team=config.team,
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
        queueing = _kueue(config, provider, [*ready, *after_jobset], namespaces, within)
        kueue = queueing[0]
    elif config.shared_cluster is not None and config.queues_jobs:
        # The owner's Kueue queues this team's jobs too: a LocalQueue in each of its namespaces.
        queueing = [
            LocalQueues(
                f"{name}-queues", args.local_queues_args(config, namespaces, provider), within
            )
        ]
    return Installs(controller, jobset, namespaces, queueing, kueue)


def _protected(
    config: StackConfig, within: pulumi.ResourceOptions | None
) -> pulumi.ResourceOptions:
    """Production protects the installs and the Kueue objects: deleting a CRD deletes every
    object of it (every PathwaysJob, JobSet or queued workload) with it."""
    return pulumi.ResourceOptions.merge(
        within, pulumi.ResourceOptions(protect=config.protects_state)
    )


def _jobset(
    config: StackConfig,
    provider: k8s.Provider,
    ready: list[pulumi.Resource],
    within: pulumi.ResourceOptions | None,
) -> pulumi.Resource:
    """JobSet's release, and its controller sized for the nodes the stack may have."""
    name, protected = config.cluster.name, _protected(config, within)
    jobset = ReleaseManifest(
        f"{name}-jobset", args.release_args(config.addons.jobset, provider, ready), opts=protected
    )
    memory = jobset_memory_mib(config.max_node_count)
    ControllerPatch(
        f"{name}-jobset-controller",
        args.controller_patch_args(config, JOBSET_CONTROLLER, provider, jobset, memory),
        # It was the JobSetControllerMemory component: same resources, kept in place.
        opts=pulumi.ResourceOptions.merge(
            protected,
            pulumi.ResourceOptions(
                aliases=[
                    pulumi.Alias(
                        name=f"{name}-jobset-memory",
                        type_="tpu-pathways:installs:JobSetControllerMemory",
                    )
                ]
            ),
        ),
    )
    return jobset.manifest


def _pathways_controller(
    config: StackConfig,
    provider: k8s.Provider,
    ready: list[pulumi.Resource],
    within: pulumi.ResourceOptions | None,
) -> pulumi.Resource:
    """The controller watches JobSets, and JobSet's webhooks fail closed until it is ready."""
    name = config.cluster.name
    pathways_job = ReleaseManifest(
        f"{name}-pathways-job",
        args.release_args(config.addons.pathways_job, provider, ready),
        opts=_protected(config, within),
    )
    _place_on_system_pool(
        f"{name}-pathways-job-controller",
        config,
        PATHWAYS_JOB_CONTROLLER,
        pathways_job,
        provider,
        within,
    )
    return pathways_job.manifest


def _kueue(
    config: StackConfig,
    provider: k8s.Provider,
    ready: list[pulumi.Resource],
    namespaces: dict[str, pulumi.Output[str]],
    within: pulumi.ResourceOptions | None,
) -> list[pulumi.Resource]:
    """Kueue manages JobSets: its JobSet integration needs JobSet's API first."""
    name, protected = config.cluster.name, _protected(config, within)
    kueue = ReleaseManifest(
        f"{name}-kueue", args.release_args(config.addons.kueue, provider, ready), opts=protected
    )
    configured = KueueConfig(
        f"{name}-kueue-config", KueueConfigArgs(provider, kueue.manifest), opts=protected
    )
    # Placed on the system pool (in stacks that have one) and rolled to read its configuration.
    patch = args.controller_patch_args(config, KUEUE_CONTROLLER, provider, kueue)
    restarted = ControllerPatch(
        f"{name}-kueue-controller",
        dataclasses.replace(
            patch, install=configured.config_map, pod_annotations=configured.pod_annotations
        ),
        opts=protected,
    )
    return [
        restarted,
        KueueQueues(
            f"{name}-queues",
            args.kueue_queues_args(config, namespaces, provider, kueue.manifest),
            opts=protected,
        ),
        PriorityClasses(f"{name}-priorities", PriorityClassesArgs(provider), opts=protected),
    ]


def _place_on_system_pool(
    name: str,
    config: StackConfig,
    deployment: ControllerDeployment,
    install: ReleaseManifest,
    provider: k8s.Provider,
    within: pulumi.ResourceOptions | None,
) -> None:
    """Pin an install's controller to the system pool, in stacks that have one. Protected in
    production like the install it patches."""
    if config.creates_cluster:
        ControllerPatch(
            name,
            args.controller_patch_args(config, deployment, provider, install),
            opts=_protected(config, within),
        )
