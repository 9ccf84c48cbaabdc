"""Kueue MultiKueue: a manager cluster's Kueue dispatching JobSets to worker clusters.

Objects and fields are Kueue v0.17.1's ``kueue.x-k8s.io/v1beta2`` API
(kubernetes-sigs/kueue v0.17.1, apis/kueue/v1beta2/multikueue_types.go,
admissioncheck_types.go, clusterqueue_types.go):

- MultiKueueCluster ``spec.clusterSource.kubeConfig {location, locationType: Secret}``: the
  Secret is in the namespace Kueue runs in (kueue-system) and holds the worker's kubeconfig
  under key ``kubeconfig`` (``MultiKueueConfigSecretKey``). Kueue refuses kubeconfigs with exec
  plugins (pkg/controller/admissionchecks/multikueue/multikueuecluster.go), so the worker's
  kubeconfig carries a service-account token, not gke-gcloud-auth-plugin. It points at the
  worker's DNS-based endpoint, whose certificate a public Google CA signs (GKE, "About network
  isolation": only the IP-based endpoints serve the cluster root CA's), so it pins no CA: the
  cluster CA there fails TLS verification.
- MultiKueueConfig ``spec.clusters``: the MultiKueueCluster names.
- AdmissionCheck ``spec.controllerName: kueue.x-k8s.io/multikueue`` with ``spec.parameters``
  naming the MultiKueueConfig.
- ClusterQueue ``spec.admissionChecksStrategy.admissionChecks[].name`` (v1beta2 has no plain
  ``admissionChecks`` list).

A worker set's quota on the manager is the sum of its workers' (site/content/en/docs/concepts/
multikueue.md: "the quota in the manager cluster should equal the total quota available in all
worker clusters"); each worker's own Kueue then admits the dispatched JobSet against its own
quota. Sets that share a worker count its quota in each, so the manager may admit more than that
worker holds; the worker's Kueue arbitrates, and the JobSet waits there.

The manager's Kueue dispatches JobSets only (``integrations.frameworks: [jobset]``): its remote
client watches the kind of every integration it has enabled on each worker and stays
disconnected if one watch fails (multikueuecluster.go ``setConfig``; kubernetes-sigs/kueue issue
3582), and the release's default list names a dozen kinds (MPIJob, RayJob, ...) whose CRDs a
worker does not have. Kueue reads its Configuration only at start, so the ConfigMap is patched
and the controller rolled (``ManagerKueueConfig``).

One worker set (``components.resolve.tenancy.fleet_sets``) gets one MultiKueueConfig, one
AdmissionCheck and one ClusterQueue, all named after it: MultiKueue reads each Workload on every
cluster of its config, and a ClusterQueue takes one MultiKueue check only
(pkg/cache/scheduler/clusterqueue.go), so the set is chosen by the queue a JobSet is on. Each
set's ClusterQueue selects the namespaces of the teams queued on it and holds the quota of its
workers only. A team with a guaranteed share of the set's workers (their ``teamQuotas``) gets a
ClusterQueue of its own on the set's check holding that share, and the set's keeps the rest;
then they form one cohort named after the set, with the workers' preemption
(``components.resolve.tenancy.fleet_shares``). A team with pools dedicated to it on every worker
of the set gets a ClusterQueue of exactly those pools, on flavors with the workers' node labels
and toleration, never lent nor borrowed (``components.resolve.tenancy.fleet_dedicated``). The
manager's access to each worker is ``multikueue_worker``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.addons.kueue import (
    TpuFlavor,
    cpu_flavor_name,
    cpu_quota_group,
    dedicated_flavor_spec,
    local_queue,
    queue_preemption,
    tpu_quota_group,
)
from components.addons.kueue_config import (
    JOBSET_FRAMEWORK,
    config_digest,
    config_map_patch,
    config_text,
    kueue_configuration,
)
from components.addons.multikueue_worker import (
    LOCAL_QUEUE_REPLACEMENT,
    worker_secret_name,
)
from components.labels import NAMESPACE_NAME_LABEL, NODE_POOL_LABEL, TPU_RESOURCE, tpu_node_labels
from components.pathways.multikueue_model import MULTIKUEUE_CONTROLLER
from components.vocabulary import KUEUE_API_VERSION

HEADS_POOL = "heads"
CPU_FLAVOR = cpu_flavor_name(HEADS_POOL)
"""The manager's flavor for the heads' CPU and memory (they run on the workers' CPU pools)."""


def manager_kueue_configuration() -> dict:
    """The manager's Kueue Configuration: the v0.17.1 release's own with JobSet the only
    integration (``kueue_config``)."""
    return kueue_configuration([JOBSET_FRAMEWORK])


def manager_kueue_config_text() -> str:
    return config_text(manager_kueue_configuration())


def multikueue_cluster_spec(worker: str) -> dict:
    return {
        "clusterSource": {
            "kubeConfig": {"locationType": "Secret", "location": worker_secret_name(worker)}
        }
    }


def multikueue_config_spec(workers: Sequence[str]) -> dict:
    return {"clusters": list(workers)}


def admission_check_spec(config: str) -> dict:
    return {
        "controllerName": MULTIKUEUE_CONTROLLER,
        "parameters": {
            "apiGroup": KUEUE_API_VERSION.split("/")[0],
            "kind": "MultiKueueConfig",
            "name": config,
        },
    }


@dataclass(frozen=True)
class TeamQueueArgs:
    """A team's guaranteed share of a worker set: a ClusterQueue of its own in the set's
    cohort, through the set's check."""

    name: str
    team: str
    chips: Mapping[str, int]
    """Nominal chips per TPU flavor name (0 where absent)."""
    borrowing_limit: int | None
    """Chips per flavor it may borrow (None: no limit)."""


@dataclass(frozen=True)
class DedicatedTeamQueueArgs:
    """A team's pools dedicated to it on every worker of a set: a ClusterQueue of its own
    holding exactly them, as each worker's own ClusterQueue for the team does."""

    name: str
    team: str
    tpu_flavors: Sequence[TpuFlavor]
    """Its dedicated TPU pools per shape, chips summed over the set's workers (named as the
    shared flavor of that shape; the manager's flavor is ``dedicated_flavor``)."""
    cpu_pools: Mapping[str, tuple[str, str]]
    """Its CPU pool's name -> CPU and memory of those pools at their maximum size, summed."""

    def flavors(self) -> dict[str, dict]:
        """The manager's flavors of its pools: name -> spec, the worker's node labels and
        toleration for the team."""
        found = {
            dedicated_flavor(f.name, self.team): dedicated_flavor_spec(
                self.team, tpu_node_labels(f.shape)
            )
            for f in self.tpu_flavors
        }
        for pool in self.cpu_pools:
            name = dedicated_flavor(cpu_flavor_name(pool), self.team)
            found[name] = dedicated_flavor_spec(self.team, {NODE_POOL_LABEL: pool})
        return found


def dedicated_flavor(base: str, team: str) -> str:
    """The manager's flavor of a team's dedicated pools: the worker's flavor name, a dot and the
    team (no flavor name or team has a dot, so no two teams' flavors and no shared flavor share
    a name; a ResourceFlavor's name is a DNS subdomain: kueue v0.17.1 apis/kueue/v1beta2/
    clusterqueue_types.go ``ResourceFlavorReference``)."""
    return f"{base}.{team}"


@dataclass(frozen=True)
class WorkerSetArgs:
    """One worker set: its MultiKueueConfig, AdmissionCheck and ClusterQueue (all ``name``),
    and its teams' own ClusterQueues (``team_queues``)."""

    name: str
    workers: Sequence[str]
    tpu_flavors: Sequence[TpuFlavor]
    """Its workers' chips per flavor, summed."""
    cpu_quota: str
    memory_quota: str
    """Its workers' CPU pools' CPU and memory at their maximum size (where heads run)."""
    namespaces: Sequence[str]
    """The team namespaces queued on its own ClusterQueue (those without a share)."""
    team_queues: Sequence[TeamQueueArgs] = ()
    dedicated_queues: Sequence[DedicatedTeamQueueArgs] = ()


def _namespaces(names: Sequence[str]) -> dict:
    """A selector of the namespaces ``names``; of none if empty (every namespace has the
    label, and ``In`` needs a value)."""
    if not names:
        return {"matchExpressions": [{"key": NAMESPACE_NAME_LABEL, "operator": "DoesNotExist"}]}
    expression = {"key": NAMESPACE_NAME_LABEL, "operator": "In", "values": list(names)}
    return {"matchExpressions": [expression]}


def _set_queue_spec(worker_set: WorkerSetArgs, namespaces: dict, groups: list[dict]) -> dict:
    spec: dict = {"namespaceSelector": namespaces, "queueingStrategy": "BestEffortFIFO"}
    cohort = bool(worker_set.team_queues or worker_set.dedicated_queues)
    if cohort:
        spec["cohortName"] = worker_set.name
    spec["preemption"] = queue_preemption(cohort)
    spec["resourceGroups"] = groups
    spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": worker_set.name}]}
    return spec


def manager_cluster_queue_spec(worker_set: WorkerSetArgs) -> dict:
    """A worker set's ClusterQueue: its workers' chips per flavor summed less its teams' shares,
    their CPU pools' CPU and memory, the namespaces of its teams without a share only, every
    JobSet through the set's MultiKueue check; in the set's cohort if a team has a share."""
    tpu = worker_set.tpu_flavors
    rest = {f.name: f.chips for f in tpu}
    for queue in worker_set.team_queues:
        for flavor, chips in queue.chips.items():
            rest[flavor] -= chips
    # No TPU flavor when its workers have no shared pool: then each of its teams has pools
    # dedicated to it (``fleet_quota``) and a queue of its own, and a resource group needs one.
    groups = [tpu_quota_group(tpu, rest, None)] if tpu else []
    groups.append(cpu_quota_group(HEADS_POOL, worker_set.cpu_quota, worker_set.memory_quota))
    return _set_queue_spec(worker_set, _namespaces(worker_set.namespaces), groups)


def team_cluster_queue_spec(worker_set: WorkerSetArgs, queue: TeamQueueArgs) -> dict:
    """A team's share of a worker set: its chips as nominal quota (borrowing up to its limit),
    no CPU of its own (its heads borrow the set's), its namespace only, in the set's cohort,
    through the set's check."""
    groups = [
        tpu_quota_group(worker_set.tpu_flavors, queue.chips, queue.borrowing_limit),
        cpu_quota_group(HEADS_POOL, "0", "0"),
    ]
    return _set_queue_spec(worker_set, _namespaces([queue.team]), groups)


def _kept(name: str, quantity: int | str) -> dict:
    """A resource's quota that is neither lent nor borrowed (limits need a cohort: kueue
    v0.17.1 pkg/webhooks/clusterqueue_webhook.go ``validateLimit``)."""
    return {"name": name, "nominalQuota": quantity, "borrowingLimit": 0, "lendingLimit": 0}


def dedicated_cluster_queue_spec(worker_set: WorkerSetArgs, queue: DedicatedTeamQueueArgs) -> dict:
    """A team's dedicated pools on a set: exactly their chips and its CPU pools' CPU and memory
    (as the worker's ``dedicated_cluster_queue_spec``), its namespace only, through the set's
    check; in the set's cohort only so that its quota can be marked as never lent
    (``lendingLimit: 0``) nor borrowed beyond (``borrowingLimit: 0``): no other queue of the
    cohort has its flavors, and it reclaims nothing (``reclaimWithinCohort: Never``)."""
    groups = []
    if queue.tpu_flavors:
        flavors = [
            {
                "name": dedicated_flavor(f.name, queue.team),
                "resources": [_kept(TPU_RESOURCE, f.chips)],
            }
            for f in queue.tpu_flavors
        ]
        groups.append({"coveredResources": [TPU_RESOURCE], "flavors": flavors})
    cpu_flavors = [
        {
            "name": dedicated_flavor(cpu_flavor_name(pool), queue.team),
            "resources": [_kept("cpu", cpu), _kept("memory", memory)],
        }
        for pool, (cpu, memory) in queue.cpu_pools.items()
    ]
    groups.append({"coveredResources": ["cpu", "memory"], "flavors": cpu_flavors})
    return {
        "namespaceSelector": _namespaces([queue.team]),
        "queueingStrategy": "BestEffortFIFO",
        "cohortName": worker_set.name,
        "preemption": {"reclaimWithinCohort": "Never", "withinClusterQueue": "LowerPriority"},
        "resourceGroups": groups,
        "admissionChecksStrategy": {"admissionChecks": [{"name": worker_set.name}]},
    }


MANAGER_KUEUE_CONFIG_TYPE = "tpu-pathways:multikueue:ManagerKueueConfig"


@dataclass(frozen=True)
class ManagerKueueConfigArgs:
    """The manager's Kueue install to configure (``manager_kueue_configuration``)."""

    provider: k8s.Provider
    kueue_install: pulumi.Resource


class ManagerKueueConfig(pulumi.ComponentResource):
    """The manager's Kueue Configuration written over the release's (a server-side patch of its
    ConfigMap). The controller's own patch (its placement, ``stack.installs.release``) carries
    ``pod_annotations``, a digest of it, so it rolls to read it."""

    config_map: pulumi.Resource
    pod_annotations: dict[str, str]

    def __init__(
        self, name: str, args: ManagerKueueConfigArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(MANAGER_KUEUE_CONFIG_TYPE, name, None, opts)
        text = manager_kueue_config_text()
        self.config_map = config_map_patch(name, self, args.provider, args.kueue_install, text)
        self.pod_annotations = config_digest(text)
        self.register_outputs({})


@dataclass(frozen=True)
class ManagerQueueArgs:
    """A LocalQueue of the manager: in a team's namespace, on a worker set's ClusterQueue."""

    team: str
    namespace: pulumi.Input[str]
    name: str
    cluster_queue: str


@dataclass(frozen=True)
class MultiKueueManagerArgs:
    """The manager's MultiKueue objects and queues (Kueue installed on ``provider``)."""

    provider: k8s.Provider
    kueue_install: pulumi.Resource
    """Kueue installed and configured for MultiKueue (``ManagerKueueConfig``)."""
    workers: Sequence[str]
    """Worker stack names (one MultiKueueCluster each; their Secrets come from WorkerAccess)."""
    kubeconfigs: Sequence[pulumi.Resource]
    """The workers' kubeconfig Secrets (a MultiKueueCluster waits for its Secret)."""
    tpu_flavors: Sequence[TpuFlavor]
    """Every TPU shape of the workers (a ResourceFlavor each)."""
    sets: Sequence[WorkerSetArgs]
    queues: Sequence[ManagerQueueArgs]


class MultiKueueManager(pulumi.ComponentResource):
    """Flavors, MultiKueueClusters, and per worker set its MultiKueueConfig, AdmissionCheck and
    ClusterQueue; the LocalQueues on them."""

    def __init__(
        self, name: str, args: MultiKueueManagerArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:multikueue:MultiKueueManager", name, None, opts)
        self._name = name
        self._child = pulumi.ResourceOptions(
            parent=self, provider=args.provider, depends_on=[args.kueue_install]
        )
        for flavor in args.tpu_flavors:
            self._kueue(
                "ResourceFlavor", flavor.name, {"nodeLabels": tpu_node_labels(flavor.shape)}
            )
        self._kueue("ResourceFlavor", CPU_FLAVOR, {})
        # A team's dedicated flavors once, however many of its sets have them.
        dedicated = {
            name: spec
            for worker_set in args.sets
            for queue in worker_set.dedicated_queues
            for name, spec in queue.flavors().items()
        }
        flavors = [self._kueue("ResourceFlavor", n, dedicated[n]) for n in sorted(dedicated)]
        clusters = {
            w: self._kueue(
                "MultiKueueCluster", w, multikueue_cluster_spec(w), list(args.kubeconfigs)
            )
            for w in args.workers
        }
        queues = {}
        for worker_set in args.sets:
            config = self._kueue(
                "MultiKueueConfig",
                worker_set.name,
                multikueue_config_spec(worker_set.workers),
                [clusters[w] for w in worker_set.workers],
            )
            check = self._kueue(
                "AdmissionCheck", worker_set.name, admission_check_spec(worker_set.name), [config]
            )
            queues[worker_set.name] = self._kueue(
                "ClusterQueue", worker_set.name, manager_cluster_queue_spec(worker_set), [check]
            )
            for team in worker_set.team_queues:
                spec = team_cluster_queue_spec(worker_set, team)
                queues[team.name] = self._kueue("ClusterQueue", team.name, spec, [check])
            for own in worker_set.dedicated_queues:
                spec = dedicated_cluster_queue_spec(worker_set, own)
                queues[own.name] = self._kueue("ClusterQueue", own.name, spec, [check, *flavors])
        for queue in args.queues:
            after = pulumi.ResourceOptions(depends_on=[queues[queue.cluster_queue]])
            local_queue(
                f"{name}-{queue.team}-{queue.name}",
                queue.name,
                queue.namespace,
                queue.cluster_queue,
                pulumi.ResourceOptions.merge(
                    pulumi.ResourceOptions.merge(self._child, LOCAL_QUEUE_REPLACEMENT), after
                ),
            )
        self.register_outputs({})

    def _kueue(
        self, kind: str, object_name: str, spec: dict, after: Sequence[pulumi.Resource] = ()
    ) -> k8s.apiextensions.CustomResource:
        """A cluster-scoped Kueue object, after ``after``."""
        return k8s.apiextensions.CustomResource(
            f"{self._name}-{kind.lower()}-{object_name}",
            api_version=KUEUE_API_VERSION,
            kind=kind,
            metadata=k8s.meta.v1.ObjectMetaArgs(name=object_name),
            spec=spec,
            opts=pulumi.ResourceOptions.merge(
                self._child, pulumi.ResourceOptions(depends_on=list(after))
            ),
        )
