"""tpu-pathways' public Python API: the components, their ``*Args``, the PathwaysJob spec and the
TPU catalog lookup, for use in your own Pulumi program::

    from components import GkeCluster, GkeClusterArgs, TpuNodePool, TpuNodePoolArgs
    from components import resolve_accelerator

Names are imported lazily (PEP 562) from the module that defines them, so importing one layer
(``components.tpu.catalog``, the CLI) does not import a provider SDK it does not use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

# Public name -> the module that defines it: the one table of the public API.
_EXPORTS: dict[str, str] = {
    # GKE: the cluster, its network and identity, node pools.
    "GkeCluster": "components.gke.cluster",
    "GkeClusterArgs": "components.gke.cluster",
    "AuthorizedNetwork": "components.gke.cluster",
    "ExistingCluster": "components.gke.cluster",
    "ExistingClusterArgs": "components.gke.cluster",
    "ClusterNetwork": "components.gke.network",
    "ClusterNetworkArgs": "components.gke.network",
    "PathwaysPortsFirewall": "components.gke.network",
    "PathwaysPortsFirewallArgs": "components.gke.network",
    "NodeServiceAccount": "components.gke.node_identity",
    "NodeServiceAccountArgs": "components.gke.node_identity",
    "PoolTarget": "components.gke.node_config",
    "CpuNodePool": "components.gke.cpu_pool",
    "CpuNodePoolArgs": "components.gke.cpu_pool",
    "TpuNodePool": "components.gke.tpu_pool",
    "TpuNodePoolArgs": "components.gke.tpu_pool",
    # In-cluster add-ons, Kueue, teams and the scratch bucket.
    "ReleaseManifest": "components.addons.installs",
    "ReleaseManifestArgs": "components.addons.installs",
    "ControllerDeployment": "components.addons.installs",
    "ControllerPatch": "components.addons.installs",
    "ControllerPatchArgs": "components.addons.installs",
    "jobset_memory_mib": "components.vocabulary",
    "KueueQueues": "components.addons.kueue",
    "KueueQueuesArgs": "components.addons.kueue",
    "TeamQuotaArgs": "components.addons.kueue",
    "tpu_flavors": "components.addons.kueue",
    "LocalQueues": "components.addons.kueue",
    "LocalQueuesArgs": "components.addons.kueue",
    "PriorityClasses": "components.addons.kueue",
    "PriorityClassesArgs": "components.addons.kueue",
    "TeamNamespace": "components.addons.teams",
    "TeamNamespaceArgs": "components.addons.teams",
    "TeamAdmissionPolicies": "components.addons.team_policies",
    "TeamAdmissionPoliciesArgs": "components.addons.team_policies",
    "HostNetworkPlacement": "components.vocabulary",
    "ScratchBucket": "components.addons.scratch_bucket",
    "ScratchBucketArgs": "components.addons.scratch_bucket",
    "WorkloadAccount": "components.addons.scratch_bucket",
    "DataBucketGrants": "components.addons.data_buckets",
    "DataBucketGrantsArgs": "components.addons.data_buckets",
    "DataBucketGrant": "components.addons.data_buckets",
    "Access": "components.pathways.gcs_access",
    # Pathways workloads.
    "PathwaysJob": "components.workloads.job",
    "PathwaysJobArgs": "components.workloads.job",
    # The JobSet backend: the same spec as one JobSet, as XPK 1.16 renders it (no controller).
    "PathwaysJobSet": "components.workloads.jobset",
    "PathwaysJobSetArgs": "components.workloads.jobset",
    "wait_for_started": "components.workloads.jobset",
    "ColocatedModeUnsupported": "components.pathways.jobset",
    "SharedPathwaysService": "components.workloads.shared_service",
    "SharedPathwaysServiceArgs": "components.workloads.shared_service",
    "PathwaysJobSpec": "components.pathways.spec",
    "Worker": "components.pathways.spec",
    "WorkerType": "components.pathways.spec",
    "Controller": "components.pathways.spec",
    "DeploymentMode": "components.pathways.spec",
    "CustomComponent": "components.pathways.spec",
    "ComponentType": "components.pathways.spec",
    "EnvVar": "components.pathways.spec",
    "UserContainer": "components.pathways.user_container",
    "wait_for_running": "components.pathways.spec",
    # The node pools a PathwaysJob's preflight checks its pods against (``node_pools=``).
    "NodePoolModel": "components.pathways.scheduler_model",
    "Taint": "components.pathways.scheduler_model",
    "TPU_TAINT": "components.pathways.scheduler_model",
    "TaintEffect": "components.labels",
    "machine_type": "components.tpu.machines",
    # TPU catalog and domain values.
    "resolve_accelerator": "components.tpu.catalog",
    "TpuShape": "components.tpu.catalog",
    "CapacityType": "components.vocabulary",
    "Environment": "components.vocabulary",
    "ReleaseChannel": "components.vocabulary",
    "Priority": "components.vocabulary",
    "WorkloadBackend": "components.vocabulary",
    "ConfigError": "components.errors",
}

__all__ = [
    "TPU_TAINT",
    "Access",
    "AuthorizedNetwork",
    "CapacityType",
    "ClusterNetwork",
    "ClusterNetworkArgs",
    "ColocatedModeUnsupported",
    "ComponentType",
    "ConfigError",
    "Controller",
    "ControllerDeployment",
    "ControllerPatch",
    "ControllerPatchArgs",
    "CpuNodePool",
    "CpuNodePoolArgs",
    "CustomComponent",
    "DataBucketGrant",
    "DataBucketGrants",
    "DataBucketGrantsArgs",
    "DeploymentMode",
    "EnvVar",
    "Environment",
    "ExistingCluster",
    "ExistingClusterArgs",
    "GkeCluster",
    "GkeClusterArgs",
    "HostNetworkPlacement",
    "KueueQueues",
    "KueueQueuesArgs",
    "LocalQueues",
    "LocalQueuesArgs",
    "NodePoolModel",
    "NodeServiceAccount",
    "NodeServiceAccountArgs",
    "PathwaysJob",
    "PathwaysJobArgs",
    "PathwaysJobSet",
    "PathwaysJobSetArgs",
    "PathwaysJobSpec",
    "PathwaysPortsFirewall",
    "PathwaysPortsFirewallArgs",
    "PoolTarget",
    "Priority",
    "PriorityClasses",
    "PriorityClassesArgs",
    "ReleaseChannel",
    "ReleaseManifest",
    "ReleaseManifestArgs",
    "ScratchBucket",
    "ScratchBucketArgs",
    "SharedPathwaysService",
    "SharedPathwaysServiceArgs",
    "Taint",
    "TaintEffect",
    "TeamAdmissionPolicies",
    "TeamAdmissionPoliciesArgs",
    "TeamNamespace",
    "TeamNamespaceArgs",
    "TeamQuotaArgs",
    "TpuNodePool",
    "TpuNodePoolArgs",
    "TpuShape",
    "UserContainer",
    "Worker",
    "WorkerType",
    "WorkloadAccount",
    "WorkloadBackend",
    "jobset_memory_mib",
    "machine_type",
    "resolve_accelerator",
    "tpu_flavors",
    "wait_for_running",
    "wait_for_started",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'components' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:
    from components.addons.data_buckets import (
        DataBucketGrant,
        DataBucketGrants,
        DataBucketGrantsArgs,
    )
    from components.addons.installs import (
        ControllerDeployment,
        ControllerPatch,
        ControllerPatchArgs,
        ReleaseManifest,
        ReleaseManifestArgs,
    )
    from components.addons.kueue import (
        KueueQueues,
        KueueQueuesArgs,
        LocalQueues,
        LocalQueuesArgs,
        PriorityClasses,
        PriorityClassesArgs,
        TeamQuotaArgs,
        tpu_flavors,
    )
    from components.addons.scratch_bucket import ScratchBucket, ScratchBucketArgs, WorkloadAccount
    from components.addons.team_policies import TeamAdmissionPolicies, TeamAdmissionPoliciesArgs
    from components.addons.teams import TeamNamespace, TeamNamespaceArgs
    from components.errors import ConfigError
    from components.gke.cluster import (
        AuthorizedNetwork,
        ExistingCluster,
        ExistingClusterArgs,
        GkeCluster,
        GkeClusterArgs,
    )
    from components.gke.cpu_pool import CpuNodePool, CpuNodePoolArgs
    from components.gke.network import (
        ClusterNetwork,
        ClusterNetworkArgs,
        PathwaysPortsFirewall,
        PathwaysPortsFirewallArgs,
    )
    from components.gke.node_config import PoolTarget
    from components.gke.node_identity import NodeServiceAccount, NodeServiceAccountArgs
    from components.gke.tpu_pool import TpuNodePool, TpuNodePoolArgs
    from components.labels import TaintEffect
    from components.pathways.gcs_access import Access
    from components.pathways.jobset import ColocatedModeUnsupported
    from components.pathways.scheduler_model import TPU_TAINT, NodePoolModel, Taint
    from components.pathways.spec import (
        ComponentType,
        Controller,
        CustomComponent,
        DeploymentMode,
        EnvVar,
        PathwaysJobSpec,
        Worker,
        WorkerType,
        wait_for_running,
    )
    from components.pathways.user_container import UserContainer
    from components.tpu.catalog import TpuShape, resolve_accelerator
    from components.tpu.machines import machine_type
    from components.vocabulary import (
        CapacityType,
        Environment,
        HostNetworkPlacement,
        Priority,
        ReleaseChannel,
        WorkloadBackend,
        jobset_memory_mib,
    )
    from components.workloads.job import PathwaysJob, PathwaysJobArgs
    from components.workloads.jobset import PathwaysJobSet, PathwaysJobSetArgs, wait_for_started
    from components.workloads.shared_service import (
        SharedPathwaysService,
        SharedPathwaysServiceArgs,
    )
