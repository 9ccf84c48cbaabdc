"""The stack configuration schema: everything a `stacks/Pulumi.<stack>.yaml` holds under the
``tpu-pathways:`` namespace, as pydantic models.

These models are the single, documented schema of the config: their field docstrings become
the config reference, docs/config-reference.md (``python -m components config-reference``).
Validation runs before any resource is registered and reports every problem at once (see
``errors.py``).

The package is split by part of the stack file: ``base`` (shared validators and text types),
``cluster`` (GCP, network, cluster), ``pools`` (CPU and TPU pools), ``addons`` (installs),
``teams`` (team namespaces and the scratch bucket), ``workloads`` (PathwaysJobs and shared
services) and ``stack`` (the root ``StackConfig``; ``resolve/checks.py`` parses a stack's
values with it).
"""

from components.config.schema.addons import (
    AddonsConfig,
    JobSetAddon,
    KueueAddon,
    ManifestUrl,
    PathwaysJobAddon,
    ReleaseAddon,
    TeamQuota,
    Version,
)
from components.config.schema.base import (
    NAMESPACE,
    Cidr,
    ClusterName,
    DnsLabel,
    Flag,
    GcsPath,
    ImageReference,
    ImageTag,
    Label,
    LabelKey,
    LabelValue,
    PlainEnvValue,
    ProjectId,
)
from components.config.schema.cluster import (
    AuthorizedNetwork,
    ClusterConfig,
    ExistingClusterConfig,
    GcpConfig,
    NetworkConfig,
)
from components.config.schema.maintenance import (
    MaintenanceConfig,
    MaintenanceExclusionConfig,
    MaintenanceWindowConfig,
)
from components.config.schema.pools import (
    AutoscalingPoolConfig,
    CapacityConfig,
    CpuPoolConfig,
    SystemPoolConfig,
    TpuPoolConfig,
)
from components.config.schema.stack import (
    StackConfig,
    namespace_values,
)
from components.config.schema.teams import (
    SYSTEM_NAMESPACE_PREFIXES,
    SYSTEM_NAMESPACES,
    BucketName,
    DataBucketConfig,
    ScratchBucketConfig,
    TeamConfig,
)
from components.config.schema.workloads import (
    CONTROLLER_ENV,
    ContainerResources,
    CustomComponentConfig,
    EnvFromConfigSecret,
    EnvFromSecret,
    EnvName,
    EnvValue,
    JobName,
    KubernetesSecretName,
    PathwaysDeployment,
    ProxyCredentials,
    SecretDataKey,
    SecretKeySelector,
    SecretName,
    SharedServiceConfig,
    WaitForRunningConfig,
    WorkloadConfig,
    WorkloadMode,
    env_issues,
)

__all__ = [
    "CONTROLLER_ENV",
    "NAMESPACE",
    "SYSTEM_NAMESPACES",
    "SYSTEM_NAMESPACE_PREFIXES",
    "AddonsConfig",
    "AuthorizedNetwork",
    "AutoscalingPoolConfig",
    "BucketName",
    "CapacityConfig",
    "Cidr",
    "ClusterConfig",
    "ClusterName",
    "ContainerResources",
    "CpuPoolConfig",
    "CustomComponentConfig",
    "DataBucketConfig",
    "DnsLabel",
    "EnvFromConfigSecret",
    "EnvFromSecret",
    "EnvName",
    "EnvValue",
    "ExistingClusterConfig",
    "Flag",
    "GcpConfig",
    "GcsPath",
    "ImageReference",
    "ImageTag",
    "JobName",
    "JobSetAddon",
    "KubernetesSecretName",
    "KueueAddon",
    "Label",
    "LabelKey",
    "LabelValue",
    "MaintenanceConfig",
    "MaintenanceExclusionConfig",
    "MaintenanceWindowConfig",
    "ManifestUrl",
    "NetworkConfig",
    "PathwaysDeployment",
    "PathwaysJobAddon",
    "PlainEnvValue",
    "ProjectId",
    "ProxyCredentials",
    "ReleaseAddon",
    "ScratchBucketConfig",
    "SecretDataKey",
    "SecretKeySelector",
    "SecretName",
    "SharedServiceConfig",
    "StackConfig",
    "SystemPoolConfig",
    "TeamConfig",
    "TeamQuota",
    "TpuPoolConfig",
    "Version",
    "WaitForRunningConfig",
    "WorkloadConfig",
    "WorkloadMode",
    "env_issues",
    "namespace_values",
]
