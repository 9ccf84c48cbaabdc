"""Compare two offline plans of a stack: what a PR adds, removes, replaces and changes.

Resources are matched by URN. Inputs are compared property by property (objects are walked,
lists and scalars compare whole); secrets stay ``[secret]`` and values only the cloud knows stay
``[unknown]``, exactly as the plan documents hold them. Changes under ``options.ignoreChanges``
are listed but do not count: Pulumi would not apply them.

A change is a REPLACE when Pulumi would delete and recreate the resource instead of updating
it: for a TPU node pool that is the difference between a rolling update and losing a running
slice. The rules are data (below): the Google provider's ForceNew fields per resource type, the
Kubernetes provider's name rules, ``options.replaceOnChanges`` (``*`` = any change) and the few
fields GKE cannot change in place although the provider would plan an update.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from components.plan.cost import plan_cost
from components.plan.critical_path import CriticalPath, critical_path
from components.plan.model import SECRET, Plan
from components.tpu.catalog import is_tpu_machine_type
from components.tpu.pricing import PriceTable

# The wire signature Pulumi gives a secret value; plan documents already hide secrets, but a
# hand-made or older document is masked again so no secret reaches a diff.
_SECRET_SIG = ("4dabf18193072939515e22adb298388d", "1b47061264138c4ac30d75fd1eb44270")


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


ABSENT: Any = _Absent()


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
    "gcp:container/nodePool:NodePool": ReplaceRules(
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
    "gcp:container/cluster:Cluster": ReplaceRules(
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
    "gcp:storage/bucket:Bucket": ReplaceRules(
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
    "gcp:compute/network:Network": ReplaceRules(
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
    "gcp:compute/subnetwork:Subnetwork": ReplaceRules(
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
    "gcp:serviceaccount/account:Account": ReplaceRules(values=("accountId", "project")),
    # IAM members (tpgiamresource/iam.go, IamMemberBaseSchema, and the parent resource's id):
    # a grant is its role, member and condition; changing any of them is a new grant.
    **{
        token: ReplaceRules(values=(parent, "role", "member", "condition"))
        for token, parent in (
            ("gcp:storage/bucketIAMMember:BucketIAMMember", "bucket"),
            ("gcp:projects/iAMMember:IAMMember", "project"),
        )
    },
}

# Fields GKE fixes when it creates a node pool although the provider has no ForceNew for them:
# `pulumi preview` shows an update that cannot take effect. A TPU slice's topology is its shape
# (placementPolicy.tpuTopology); the pool has to be recreated. Marked REPLACE here so review
# sees what the change really takes (the pool component can make Pulumi agree with
# replaceOnChanges).
GKE_IMMUTABLE: dict[str, ReplaceRules] = {
    "gcp:container/nodePool:NodePool": ReplaceRules(
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
    "gcp:container/nodePool:NodePool": (
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
    "gcp:container/nodePool:NodePool": ("nodeLocations", "location"),
}

KIND_ORDER = ("replace", "remove", "add", "update", "ignored")


@dataclass(frozen=True)
class PropertyChange:
    path: str
    before: Any = ABSENT
    after: Any = ABSENT
    replace_reason: str | None = None  # why this change forces a replacement
    ignored: bool = False  # under options.ignoreChanges: Pulumi does not apply it
    recreates_nodes: bool = False
    moves_zone: bool = False  # the pool's nodes move to another zone

    def to_dict(self) -> dict[str, Any]:
        row: dict[str, Any] = {"path": self.path}
        if self.before is not ABSENT:
            row["before"] = self.before
        if self.after is not ABSENT:
            row["after"] = self.after
        if self.replace_reason:
            row["forcesReplacement"] = self.replace_reason
        if self.ignored:
            row["ignored"] = True
        if self.recreates_nodes:
            row["recreatesNodes"] = True
        if self.moves_zone:
            row["movesZone"] = True
        return row


@dataclass(frozen=True)
class ResourceChange:
    urn: str
    type: str
    name: str
    kind: str  # add, remove, replace, update, ignored
    changes: tuple[PropertyChange, ...] = ()
    delete_before_replace: bool = False
    protected: bool = False
    tpu_hosts: int = 0  # hosts of a TPU node pool (after the change), 0 for anything else

    @property
    def recreates_nodes(self) -> bool:
        return any(c.recreates_nodes and not c.ignored for c in self.changes)

    @property
    def moves_tpu_hosts(self) -> bool:
        """A TPU pool whose hosts all move to another zone."""
        return self.tpu_hosts > 0 and any(c.moves_zone and not c.ignored for c in self.changes)

    def to_dict(self) -> dict[str, Any]:
        row: dict[str, Any] = {
            "urn": self.urn,
            "type": self.type,
            "name": self.name,
            "kind": self.kind,
        }
        if self.kind == "replace":
            row["deleteBeforeReplace"] = self.delete_before_replace
        if self.protected and self.kind in ("replace", "remove"):
            row["protected"] = True
        if self.recreates_nodes:
            row["recreatesNodes"] = True
        if self.moves_tpu_hosts:
            row["movesTpuHosts"] = self.tpu_hosts
        if self.changes:
            row["changes"] = [c.to_dict() for c in self.changes]
        return row


@dataclass
class StackDiff:
    """One stack's plan compared with its base plan (``before`` None: the stack is new)."""

    stack: str
    resources: list[ResourceChange] = field(default_factory=list)
    unchanged: int = 0
    new_stack: bool = False
    removed_stack: bool = False
    capacity: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    cost_before: dict[str, Any] | None = None
    cost_after: dict[str, Any] | None = None
    error: str | None = None  # the current plan could not be made
    cluster: str | None = None  # the name of the GKE cluster the stack creates, if it does
    path_before: CriticalPath | None = None  # modeled `pulumi up` critical path of each plan
    path_after: CriticalPath | None = None

    def count(self, kind: str) -> int:
        return sum(1 for r in self.resources if r.kind == kind)

    @property
    def counts(self) -> dict[str, int]:
        return {kind: self.count(kind) for kind in KIND_ORDER}

    @property
    def moved_tpu_hosts(self) -> int:
        """TPU hosts a zone change moves (every host of every TPU pool whose zone changes)."""
        return sum(r.tpu_hosts for r in self.resources if r.moves_tpu_hosts)

    @property
    def has_changes(self) -> bool:
        return any(r.kind != "ignored" for r in self.resources) or self.error is not None

    def to_dict(self) -> dict[str, Any]:
        row: dict[str, Any] = {"stack": self.stack}
        if self.error is not None:
            row["error"] = self.error
            return row
        row.update(
            newStack=self.new_stack,
            removedStack=self.removed_stack,
            counts={**self.counts, "unchanged": self.unchanged},
            resources=[r.to_dict() for r in self.resources],
            capacity=self.capacity,
            cost={"before": self.cost_before, "after": self.cost_after},
        )
        return row


def mask_secrets(value: Any) -> Any:
    """Values as a diff may show them: anything carrying Pulumi's secret signature is hidden."""
    if isinstance(value, dict):
        if any(value.get(key) == sig for key in value for sig in _SECRET_SIG):
            return SECRET
        return {k: mask_secrets(v) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_secrets(v) for v in value]
    return value


def property_changes(before: Any, after: Any, prefix: str = "") -> list[tuple[str, Any, Any]]:
    """(path, before, after) for every differing property. Objects are walked key by key; lists
    of named objects (containers, env, volumes, ...) item by item as ``containers[main]``, other
    lists of objects of one length by index (``workers[0]``); any other list compares whole."""
    if isinstance(before, dict) and isinstance(after, dict):
        found: list[tuple[str, Any, Any]] = []
        for key in sorted(set(before) | set(after)):
            path = f"{prefix}.{key}" if prefix else key
            found += property_changes(before.get(key, ABSENT), after.get(key, ABSENT), path)
        return found
    if isinstance(before, list) and isinstance(after, list) and before != after:
        found = _list_changes(before, after, prefix)
        if found:
            return found
    # Two [unknown]s compare equal: what only the cloud knows is not a change the plan can show.
    return [] if before == after else [(prefix, before, after)]


def _names(items: list[Any]) -> list[str] | None:
    """The items' names if every item is an object with a distinct, plain string ``name``."""
    names = [item.get("name") if isinstance(item, dict) else None for item in items]
    if not all(isinstance(n, str) and "[" not in n and "]" not in n for n in names):
        return None
    return names if len(set(names)) == len(names) else None  # type: ignore[return-value]


def _list_changes(before: list[Any], after: list[Any], prefix: str) -> list[tuple[str, Any, Any]]:
    """Item-wise changes of two lists, or [] when they only compare whole (e.g. a reordering)."""
    old_names, new_names = _names(before), _names(after)
    if old_names is not None and new_names is not None:
        old = dict(zip(old_names, before, strict=True))
        new = dict(zip(new_names, after, strict=True))
        keys = new_names + [n for n in old_names if n not in new]
        pairs = [(old.get(k, ABSENT), new.get(k, ABSENT), f"{prefix}[{k}]") for k in keys]
    elif len(before) == len(after) and all(isinstance(i, dict) for i in [*before, *after]):
        pairs = [
            (b, a, f"{prefix}[{i}]") for i, (b, a) in enumerate(zip(before, after, strict=True))
        ]
    else:
        return []
    return [
        change
        for old_item, new_item, path in pairs
        for change in property_changes(old_item, new_item, path)
    ]


def _segments(path: str) -> list[str]:
    # "spec.containers[*].image", "spec.containers[main].image" -> ["spec", "containers",
    # "image"]: the rules name properties, and a list item selector is not one.
    cleaned = re.sub(r"\[[^\]]*\]", "", path)
    return [s for s in cleaned.split(".") if s and not s.isdigit()]


def _value_at(value: Any, segments: list[str]) -> Any:
    for part in segments:
        if isinstance(value, list):
            return value  # below a list: compare the whole list
        if not isinstance(value, dict):
            return ABSENT
        value = value.get(part, ABSENT)
    return value


def _matches(pattern: list[str], path: list[str]) -> bool:
    return len(pattern) <= len(path) and all(
        p in ("*", s) for p, s in zip(pattern, path, strict=False)
    )


def _covers(rule: str, path: str, before: dict, after: dict) -> bool:
    """Does a change at ``path`` touch the property ``rule`` names (``*`` = any segment)?"""
    if rule == "*":
        return True
    pattern, changed = _segments(rule), _segments(path)
    if _matches(pattern, changed):
        return True  # the change is at or below the rule's property
    if _matches(changed, pattern) and "*" not in pattern:
        # the change is above it (a block appeared, vanished or was rewritten): look inside
        return _value_at(before, pattern) != _value_at(after, pattern)
    # a wildcard below the change: assume it is touched
    return _matches(changed, pattern[: len(changed)])


def _replace_reason(
    type_token: str, path: str, before: dict, after: dict, options: dict[str, Any]
) -> str | None:
    for rule in options.get("replaceOnChanges") or ():
        if _covers(rule, path, before, after):
            return f"options.replaceOnChanges {rule!r}"
    tables = [FORCE_NEW.get(type_token), GKE_IMMUTABLE.get(type_token)]
    if type_token.startswith("kubernetes:") and not type_token.startswith("kubernetes:yaml"):
        tables.append(KUBERNETES)
    for rules in tables:
        if rules is None:
            continue
        for rule in rules.values:
            if _covers(rule, path, before, after):
                return f"{rule} ({rules.source})"
        for block in rules.blocks:
            whole = _value_at(before, _segments(block)), _value_at(after, _segments(block))
            if path == block and ABSENT in whole:
                return f"{block} added or removed ({rules.source})"
    return None


def _ignored(path: str, options: dict[str, Any]) -> bool:
    changed = _segments(path)
    return any(_matches(_segments(rule), changed) for rule in options.get("ignoreChanges") or ())


def compare_resource(before: dict[str, Any], after: dict[str, Any]) -> ResourceChange | None:
    """The change of one resource present in both plans (None when nothing differs)."""
    type_token = after["type"]
    old_inputs = mask_secrets(before.get("inputs") or {})
    new_inputs = mask_secrets(after.get("inputs") or {})
    old_options, new_options = before.get("options") or {}, after.get("options") or {}
    # Pulumi applies the new program's options to the diff of the old state's inputs.
    options = new_options
    changes: list[PropertyChange] = []
    for path, old, new in property_changes(old_inputs, new_inputs):
        ignored = _ignored(path, options)
        reason = (
            None if ignored else _replace_reason(type_token, path, old_inputs, new_inputs, options)
        )
        recreates = any(
            _covers(rule, path, old_inputs, new_inputs)
            for rule in RECREATES_NODES.get(type_token, ())
        )
        moves = any(
            _covers(rule, path, old_inputs, new_inputs) for rule in ZONE_PATHS.get(type_token, ())
        )
        changes.append(PropertyChange(path, old, new, reason, ignored, recreates, moves))
    for path, old, new in property_changes(old_options, new_options, "options"):
        changes.append(PropertyChange(path, old, new))
    if not changes:
        return None
    effective = [c for c in changes if not c.ignored]
    if any(c.replace_reason for c in effective):
        kind = "replace"
    elif effective:
        kind = "update"
    else:
        kind = "ignored"
    return ResourceChange(
        urn=after["urn"],
        type=type_token,
        name=after.get("name", ""),
        kind=kind,
        changes=tuple(changes),
        delete_before_replace=bool(new_options.get("deleteBeforeReplace")),
        protected=bool(old_options.get("protect")),
        tpu_hosts=_tpu_hosts(type_token, new_inputs),
    )


def _tpu_hosts(type_token: str, inputs: dict[str, Any]) -> int:
    """Hosts of a TPU node pool: its node count, else its autoscaling maximum (flex-start)."""
    if type_token not in ZONE_PATHS:
        return 0
    machine = (inputs.get("nodeConfig") or {}).get("machineType")
    if not isinstance(machine, str) or not is_tpu_machine_type(machine):
        return 0
    autoscaling = inputs.get("autoscaling") or {}
    for count in (inputs.get("nodeCount"), autoscaling.get("totalMaxNodeCount")):
        if isinstance(count, int) and not isinstance(count, bool) and count > 0:
            return count
    return 1


def _whole(resource: dict[str, Any], kind: str) -> ResourceChange:
    options = resource.get("options") or {}
    return ResourceChange(
        urn=resource["urn"],
        type=resource["type"],
        name=resource.get("name", ""),
        kind=kind,
        protected=bool(options.get("protect")),
    )


def _capacity(before: dict | None, after: dict | None) -> dict[str, dict[str, dict[str, int]]]:
    def tpu(document: dict | None) -> dict[str, dict[str, int]]:
        return ((document or {}).get("summary") or {}).get("tpu") or {}

    old, new = tpu(before), tpu(after)
    empty = {"pools": 0, "slices": 0, "hosts": 0, "chips": 0}
    return {
        generation: {"before": old.get(generation, empty), "after": new.get(generation, empty)}
        for generation in sorted(set(old) | set(new))
    }


def diff_plans(
    old_plan: Plan | None, new_plan: Plan | None, table: PriceTable | None = None
) -> StackDiff:
    """Compare two plans of one stack; either may be None (a stack that is new or gone).
    Both sides are priced with the same price table (the repo's)."""
    if old_plan is None and new_plan is None:
        raise ValueError("nothing to compare")
    before = old_plan.to_dict() if old_plan is not None else None
    after = new_plan.to_dict() if new_plan is not None else None
    stack = (after or before or {}).get("stack", "")
    old = {r["urn"]: r for r in (before or {}).get("resources") or []}
    new = {r["urn"]: r for r in (after or {}).get("resources") or []}
    changes: list[ResourceChange] = []
    unchanged = 0
    for urn, resource in new.items():
        if urn not in old:
            changes.append(_whole(resource, "add"))
            continue
        change = compare_resource(old[urn], resource)
        if change is None:
            unchanged += 1
        else:
            changes.append(change)
    changes += [_whole(r, "remove") for urn, r in old.items() if urn not in new]
    changes.sort(key=lambda c: KIND_ORDER.index(c.kind))  # stable: plan order within a kind
    return StackDiff(
        stack=stack,
        resources=changes,
        unchanged=unchanged,
        new_stack=before is None,
        removed_stack=after is None,
        capacity=_capacity(before, after),
        cost_before=plan_cost(before, table) if before is not None else None,
        cost_after=plan_cost(after, table) if after is not None else None,
        cluster=_cluster_name([*new.values(), *old.values()]),
        path_before=_critical_path(before),
        path_after=_critical_path(after),
    )


def _cluster_name(resources: list[dict[str, Any]]) -> str | None:
    for resource in resources:
        if resource["type"] == "gcp:container/cluster:Cluster":
            name = (resource.get("inputs") or {}).get("name")
            return name if isinstance(name, str) else resource.get("name")
    return None


def _critical_path(document: dict[str, Any] | None) -> CriticalPath | None:
    """The modeled critical path of a plan document; None when there is none to draw (no plan,
    or a hand-made document the model cannot schedule)."""
    if document is None:
        return None
    try:
        return critical_path(document.get("resources") or [])
    except (KeyError, TypeError, ValueError):
        return None
