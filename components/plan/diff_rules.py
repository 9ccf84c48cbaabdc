"""When a change replaces a resource instead of updating it, as data: the Google provider's
ForceNew fields per resource type, the Kubernetes provider's name rules, the fields GKE cannot
change in place, and the in-place updates that recreate a node pool's nodes or move them to
another zone (used by ``components.plan.diff``)."""

from __future__ import annotations

from dataclasses import dataclass

from components.tokens import (
    BUCKET,
    BUCKET_IAM_MEMBER,
    CLUSTER,
    NETWORK,
    NODE_POOL,
    PROJECT_IAM_MEMBER,
    SERVICE_ACCOUNT,
    SUBNETWORK,
)


@dataclass(frozen=True)
class ReplaceRules:
    """Property paths (camelCase, as pulumi-gcp names them) that force a replacement.

    ``values``: any change at or below the path. ``blocks``: a nested block whose fields update
    in place, but whose appearing or disappearing forces a replacement.
    """

    values: tuple[str, ...] = ()
    blocks: tuple[str, ...] = ()
    source: str = "ForceNew in the Google provider"


# ForceNew fields of the node config block, shared by node pools and the cluster's default pool.
_NODE_CONFIG_FORCE_NEW = tuple(
    "nodeConfig." + p
    for p in (
        "advancedMachineFeatures",
        "bootDiskKmsKey",
        "confidentialNodes.confidentialInstanceType",
        "enableConfidentialStorage",
        "ephemeralStorageLocalSsdConfig",
        "flexStart",
        "guestAccelerators",
        "hostMaintenancePolicy",
        "localNvmeSsdBlockConfig",
        "localSsdCount",
        "localSsdEncryptionMode",
        "maxRunDuration",
        "metadata",
        "minCpuPlatform",
        "nodeGroup",
        "oauthScopes",
        "preemptible",
        "reservationAffinity",
        "sandboxConfig",
        "secondaryBootDisks",
        "serviceAccount",
        "shieldedInstanceConfig",
        "soleTenantConfig",
        "spot",
    )
)

# Source: hashicorp/terraform-provider-google (which pulumi-gcp bridges), commit e03b7622
# (v7.45.0, Aug 2026): the ForceNew attributes of google/services/container/
# resource_container_node_pool.go, node_config.go, resource_container_cluster.go,
# storage/resource_storage_bucket.go, compute/resource_compute_network.go,
# compute/resource_compute_subnetwork.go, resourcemanager/resource_google_service_account.go,
# tpgiamresource/iam.go.
# Not ForceNew there (updated in place): node pool nodeLocations, nodeCount, autoscaling,
# nodeConfig.machineType/diskSizeGb/labels; cluster nodeLocations, privateClusterConfig
# .enablePrivateNodes; subnetwork ipCidrRange; network mtu.
FORCE_NEW: dict[str, ReplaceRules] = {
    NODE_POOL: ReplaceRules(
        values=(
            "cluster",
            "initialNodeCount",
            "location",
            "maxPodsPerNode",
            "name",
            "namePrefix",
            "networkConfig.acceleratorNetworkProfile",
            "networkConfig.additionalNodeNetworkConfigs",
            "networkConfig.additionalPodNetworkConfigs",
            "networkConfig.createPodRange",
            "networkConfig.podCidrOverprovisionConfig",
            "networkConfig.podIpv4CidrBlock",
            "networkConfig.podRange",
            "networkConfig.subnetwork",
            "placementPolicy.policyName",
            "project",
            "queuedProvisioning.enabled",
            *_NODE_CONFIG_FORCE_NEW,
        ),
        blocks=("nodeConfig", "placementPolicy", "queuedProvisioning"),
    ),
    CLUSTER: ReplaceRules(
        values=(
            "clusterAutoscaling.autoProvisioningDefaults.bootDiskKmsKey",
            "clusterIpv4Cidr",
            "confidentialNodes.confidentialInstanceType",
            "confidentialNodes.enabled",
            "datapathProvider",
            "dataplaneOptimizationMode",
            "defaultMaxPodsPerNode",
            "description",
            "enableAutopilot",
            "enableKubernetesAlpha",
            "enableTpu",
            "initialNodeCount",
            "ipAllocationPolicy.clusterIpv4CidrBlock",
            "ipAllocationPolicy.clusterSecondaryRangeName",
            "ipAllocationPolicy.podCidrOverprovisionConfig",
            "ipAllocationPolicy.servicesIpv4CidrBlock",
            "ipAllocationPolicy.servicesSecondaryRangeName",
            "location",
            "masterAuth.clientCertificateConfig.issueClientCertificate",
            "name",
            "network",
            "networkingMode",
            "nodePools",
            "privateClusterConfig.masterIpv4CidrBlock",
            "privateClusterConfig.privateEndpointSubnetwork",
            "project",
            "subnetwork",
            "userManagedKeysConfig.aggregationCa",
            "userManagedKeysConfig.clusterCa",
            "userManagedKeysConfig.etcdApiCa",
            "userManagedKeysConfig.etcdPeerCa",
            *_NODE_CONFIG_FORCE_NEW,
        ),
        blocks=(
            "confidentialNodes",
            "ipAllocationPolicy",
            "masterAuth.clientCertificateConfig",
            "nodeConfig",
        ),
    ),
    BUCKET: ReplaceRules(
        values=(
            "customPlacementConfig.dataLocations",
            "enableObjectRetention",
            "hierarchicalNamespace.enabled",
            "location",
            "name",
            "project",
        ),
        blocks=("hierarchicalNamespace",),
    ),
    NETWORK: ReplaceRules(
        values=(
            "autoCreateSubnetworks",
            "description",
            "internalIpv6Range",
            "name",
            "networkProfile",
            "params.resourceManagerTags",
            "project",
        ),
        blocks=("params",),
    ),
    SUBNETWORK: ReplaceRules(
        values=(
            "description",
            "externalIpv6Prefix",
            "internalIpv6Prefix",
            "name",
            "network",
            "params.resourceManagerTags",
            "project",
            "region",
            "reservedInternalRange",
            "resolveSubnetMask",
        ),
        blocks=("params",),
    ),
    SERVICE_ACCOUNT: ReplaceRules(values=("accountId", "project")),
    # IAM members (tpgiamresource/iam.go, IamMemberBaseSchema, and the parent resource's id):
    # a grant is its role, member and condition; changing any of them is a new grant.
    **{
        token: ReplaceRules(values=(parent, "role", "member", "condition"))
        for token, parent in (
            (BUCKET_IAM_MEMBER, "bucket"),
            (PROJECT_IAM_MEMBER, "project"),
        )
    },
}

# Fields GKE fixes when it creates a node pool although the provider has no ForceNew for them:
# `pulumi preview` shows an update that cannot take effect. A TPU slice's topology is its shape
# (placementPolicy.tpuTopology); the pool has to be recreated. Marked REPLACE here so review
# sees what the change really takes (the pool component can make Pulumi agree with
# replaceOnChanges).
GKE_IMMUTABLE: dict[str, ReplaceRules] = {
    NODE_POOL: ReplaceRules(
        values=("placementPolicy.tpuTopology",),
        source="GKE cannot change a TPU slice's topology in place",
    ),
}

# pulumi-kubernetes replaces an object whose name or namespace changes.
KUBERNETES = ReplaceRules(
    values=("metadata.name", "metadata.namespace"),
    source="Kubernetes objects are replaced when their name or namespace changes",
)

# In-place node pool updates that GKE carries out by recreating the pool's nodes (its upgrade
# strategy): on a TPU slice that still stops what runs on it.
RECREATES_NODES: dict[str, tuple[str, ...]] = {
    NODE_POOL: (
        "nodeConfig.diskSizeGb",
        "nodeConfig.diskType",
        "nodeConfig.imageType",
        "nodeConfig.machineType",
    ),
}

# Where a node pool's nodes are: a new zone (nodeLocations, an in-place update for the provider)
# makes GKE create every node anew there and delete the old ones, and a new location replaces the
# pool. Either way every host moves: on a TPU pool, every host of every slice, with its capacity
# (reservations and TPU quota are zonal) and whatever runs on it.
ZONE_PATHS: dict[str, tuple[str, ...]] = {
    NODE_POOL: ("nodeLocations", "location"),
}
