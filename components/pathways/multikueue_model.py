"""Our own model of what Kueue's MultiKueue (v0.17.1; unchanged in v0.19.2 for what is modelled)
does with a JobSet queued on a manager cluster: where it may go and what stops it there.

No Pulumi here: the manager's and the workers' Kueue objects and the manager's grants in, a
verdict per JobSet and per manager LocalQueue out, so the plan refuses a fleet whose workloads
would never be dispatched, before anything is registered.

The walk, as Kueue does it (kubernetes-sigs/kueue v0.17.1; files under pkg/ unless named):

1. The JobSet carries ``spec.managedBy: kueue.x-k8s.io/multikueue``, or the adapter refuses to
   dispatch it and the manager's own JobSet controller runs it there, where no TPU is
   (controller/jobs/jobset/jobset_multikueue_adapter.go ``IsJobManagedByKueue``), and the label
   ``kueue.x-k8s.io/queue-name``, or Kueue leaves it alone (manageJobsWithoutQueueName false).
2. Its LocalQueue (same namespace) exists and names a ClusterQueue that exists and selects the
   namespace (apis/kueue/v1beta2/localqueue_types.go, clusterqueue_types.go namespaceSelector).
3. That ClusterQueue holds exactly one AdmissionCheck of controller
   ``kueue.x-k8s.io/multikueue``, not per flavor (``onFlavors``): more than one, or one per
   flavor, makes it inactive (cache/scheduler/clusterqueue.go ``updateQueueStatus``); none, and
   the manager admits the JobSet itself, which then never runs. The manager uses the first
   MultiKueue check (util/admissioncheck/admissioncheck.go ``GetMultiKueueAdmissionCheck``).
4. The check's parameters name a MultiKueueConfig (kueue.x-k8s.io, kind MultiKueueConfig) that
   exists (controller/admissionchecks/multikueue/admissioncheck.go ``Reconcile``: else
   BadConfig), with 1 to 20 clusters (its CRD), each a MultiKueueCluster whose kubeconfig
   Secret the manager holds.
5. On **every** cluster of that config, whatever the dispatcher (AllAtOnce, the default,
   nominates them all; Incremental all in turn):
   - the manager's service account may list and watch Workloads and JobSets cluster-wide, and
     the worker serves the JobSet CRD: else the watch fails and the cluster stays inactive
     (multikueuecluster.go ``setConfig``, ``startWatcher``; kueue issue 3582);
   - it may use, in the JobSet's namespace, every namespaced right of the manager's Kueue minor
     (``multikueue_rights``). ``readGroup`` GETs the Workload on each cluster and any error
     but NotFound ends the reconcile: a 403 on one worker (RBAC is checked before the namespace
     is looked up) stops the dispatch to all of them;
   - the namespace exists (the copy's create fails with NotFound, retried forever) and holds a
     LocalQueue of the same name whose ClusterQueue exists (``cloneForCreate`` copies
     ``spec.queueName``; that worker's Kueue never admits a copy without one);
   - the worker runs Kueue; and a manager at v0.18 or later needs a worker at v0.18 or later:
     it names the prebuilt workload in an annotation, which v0.17 does not read
     (v0.19.2 jobframework/utils.go ``SetPrebuiltWorkloadName``; v0.17.1
     jobframework/interface.go ``PrebuiltWorkloadFor`` reads the label only).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from components.pathways.multikueue_rights import (
    KUEUE_GROUP,
    Need,
    PolicyRule,
    Right,
    Scope,
    known_minors,
    kueue_minor,
    manager_needs,
)

MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"
"""An AdmissionCheck's controllerName, and the value of a dispatched JobSet's spec.managedBy."""
MAX_CLUSTERS = 20
"""MultiKueueConfig spec.clusters maxItems (v0.17.1 CRD)."""
PREBUILT_ANNOTATION_MINOR = (0, 18)
"""The Kueue minor from which the prebuilt workload's name is an annotation (gate
WorkloadIdentifierAnnotations, beta and on since 0.18: v0.19.2 pkg/features/kube_features.go)."""
READ = Right(Scope.NAMESPACE, KUEUE_GROUP, "workloads", "get")
"""What readGroup does on every cluster of the config (v0.17.1 workload.go)."""


@dataclass(frozen=True)
class Access:
    """What the manager's service account may do on a worker: its cluster-wide rules and its
    rules per namespace (RoleBindings there, to Roles or ClusterRoles)."""

    cluster: tuple[PolicyRule, ...] = ()
    namespaced: Mapping[str, tuple[PolicyRule, ...]] = field(default_factory=dict)

    def allows(self, right: Right, namespace: str) -> bool:
        rules = self.cluster
        if right.scope is Scope.NAMESPACE:
            rules = rules + self.namespaced.get(namespace, ())
        return any(r.allows(right.group, right.resource, right.verb) for r in rules)


@dataclass(frozen=True)
class QueuedJobSet:
    namespace: str
    name: str
    queue: str | None
    """Its ``kueue.x-k8s.io/queue-name`` label."""
    managed_by: str | None


@dataclass(frozen=True)
class ClusterQueue:
    checks: tuple[tuple[str, tuple[str, ...]], ...]
    """Its admissionChecksStrategy: (check name, onFlavors) each."""
    namespaces: tuple[str, ...] | None = None
    """The namespaces its namespaceSelector selects (None: every one)."""


@dataclass(frozen=True)
class AdmissionCheck:
    controller: str
    api_group: str
    kind: str
    name: str
    """spec.parameters: what the check's controller reads."""


@dataclass(frozen=True)
class Manager:
    """The manager cluster's Kueue objects, by name."""

    kueue_version: str
    jobsets: tuple[QueuedJobSet, ...]
    local_queues: Mapping[tuple[str, str], str]
    """(namespace, name) -> its ClusterQueue."""
    cluster_queues: Mapping[str, ClusterQueue]
    admission_checks: Mapping[str, AdmissionCheck]
    configs: Mapping[str, tuple[str, ...]]
    """MultiKueueConfig -> its clusters."""
    clusters: Mapping[str, bool]
    """MultiKueueCluster -> whether the manager holds its kubeconfig Secret."""


@dataclass(frozen=True)
class Worker:
    """A worker cluster as the manager's Kueue meets it."""

    kueue_version: str | None
    """None: no Kueue."""
    jobset_crd: bool
    namespaces: frozenset[str]
    local_queues: Mapping[tuple[str, str], str]
    """(namespace, name) -> its ClusterQueue."""
    cluster_queues: frozenset[str]
    access: Access


@dataclass(frozen=True)
class Finding:
    """What is missing, where (``worker``: None on the manager), and what Kueue then does."""

    worker: str | None
    missing: str
    effect: str


@dataclass(frozen=True)
class Route:
    """Manager LocalQueue -> ClusterQueue -> AdmissionCheck -> MultiKueueConfig -> clusters."""

    namespace: str
    queue: str
    cluster_queue: str = ""
    admission_check: str = ""
    config: str = ""
    workers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verdict:
    route: Route
    findings: tuple[Finding, ...]

    @property
    def dispatches(self) -> bool:
        return not self.findings


NEVER = "nothing queued there is ever dispatched"
STOPS_ALL = (
    "Kueue reads each Workload on every worker of the MultiKueueConfig and stops at the first "
    "refusal (readGroup), so nothing queued there is dispatched, not even to the other workers"
)
INACTIVE = "the manager's watch there fails and the worker never becomes active (setConfig)"
RETRIES = "creating the copy there fails and is retried forever (nominateAndSynchronizeWorkers)"
NEVER_ADMITTED = (
    "the copy is created there and that worker's Kueue never admits it (cloneForCreate copies "
    "spec.queueName)"
)


def queue_verdict(
    manager: Manager, workers: Mapping[str, Worker], namespace: str, queue: str
) -> Verdict:
    """The verdict on what is queued on the manager's LocalQueue ``namespace/queue``."""
    route, findings = _route(manager, namespace, queue)
    needs = manager_needs(manager.kueue_version)
    if needs is None:
        findings.append(
            Finding(
                None,
                f"a Kueue with a row in the rights table (it runs {manager.kueue_version})",
                f"its client's calls on the workers are not known (known: {known_minors()})",
            )
        )
    for name in route.workers:
        worker = workers.get(name)
        if worker is None:
            findings.append(Finding(name, "a worker cluster the fleet reaches", STOPS_ALL))
            continue
        findings += worker_findings(manager.kueue_version, needs or (), name, worker, route)
    return Verdict(route, tuple(findings))


def jobset_verdicts(manager: Manager, workers: Mapping[str, Worker]) -> dict[str, Verdict]:
    """namespace/name of each manager JobSet -> its verdict."""
    verdicts = {}
    for jobset in manager.jobsets:
        own = []
        if jobset.managed_by != MULTIKUEUE_CONTROLLER:
            own.append(
                Finding(
                    None,
                    f"spec.managedBy: {MULTIKUEUE_CONTROLLER}",
                    "MultiKueue does not dispatch it and the manager's JobSet controller runs "
                    "it there (IsJobManagedByKueue)",
                )
            )
        if jobset.queue is None:
            own.append(Finding(None, "the label kueue.x-k8s.io/queue-name", "Kueue ignores it"))
            verdict = Verdict(Route(jobset.namespace, ""), ())
        else:
            verdict = queue_verdict(manager, workers, jobset.namespace, jobset.queue)
        key = f"{jobset.namespace}/{jobset.name}"
        verdicts[key] = Verdict(verdict.route, (*own, *verdict.findings))
    return verdicts


def queue_verdicts(manager: Manager, workers: Mapping[str, Worker]) -> dict[tuple, Verdict]:
    """(namespace, name) of each manager LocalQueue -> its verdict."""
    return {key: queue_verdict(manager, workers, *key) for key in manager.local_queues}


def _route(manager: Manager, namespace: str, queue: str) -> tuple[Route, list[Finding]]:
    """Steps 2 to 4 of the module doc, on the manager."""
    route = Route(namespace, queue)
    cluster_queue = manager.local_queues.get((namespace, queue))
    if cluster_queue is None:
        return route, [_on_manager(f"LocalQueue {namespace}/{queue}", "it is never admitted")]
    route = Route(namespace, queue, cluster_queue)
    spec = manager.cluster_queues.get(cluster_queue)
    if spec is None:
        return route, [_on_manager(f"ClusterQueue {cluster_queue}", "it is never admitted")]
    if spec.namespaces is not None and namespace not in spec.namespaces:
        selected = f"ClusterQueue {cluster_queue} selecting namespace {namespace}"
        return route, [_on_manager(selected, "it is never admitted")]
    check, findings = _multikueue_check(manager, cluster_queue, spec)
    if check is None:
        return route, findings
    route = Route(namespace, queue, cluster_queue, check)
    parameters = manager.admission_checks[check]
    config = manager.configs.get(parameters.name)
    if (parameters.api_group, parameters.kind) != (KUEUE_GROUP, "MultiKueueConfig") or (
        config is None
    ):
        missing = f"MultiKueueConfig {parameters.name} (AdmissionCheck {check}'s parameters)"
        return route, [_on_manager(missing, "the check is inactive (BadConfig): " + NEVER)]
    route = Route(namespace, queue, cluster_queue, check, parameters.name, config)
    if not 1 <= len(config) <= MAX_CLUSTERS:
        findings.append(_on_manager(f"1 to {MAX_CLUSTERS} clusters in {parameters.name}", NEVER))
    for name in config:
        if not manager.clusters.get(name, False):
            findings.append(
                Finding(name, f"MultiKueueCluster {name} with its kubeconfig Secret", INACTIVE)
            )
    return route, findings


def _multikueue_check(
    manager: Manager, name: str, spec: ClusterQueue
) -> tuple[str | None, list[Finding]]:
    """The ClusterQueue's one MultiKueue check (step 3), or None and why."""
    missing = [check for check, _ in spec.checks if check not in manager.admission_checks]
    ours = [
        (check, flavors)
        for check, flavors in spec.checks
        if check in manager.admission_checks
        and manager.admission_checks[check].controller == MULTIKUEUE_CONTROLLER
    ]
    inactive = "the ClusterQueue is inactive: " + NEVER
    if missing:
        return None, [_on_manager(f"AdmissionCheck {', '.join(missing)}", inactive)]
    if not ours:
        return None, [
            _on_manager(
                f"a {MULTIKUEUE_CONTROLLER} AdmissionCheck on ClusterQueue {name}",
                "the manager admits its JobSets itself, and they never run",
            )
        ]
    if len(ours) > 1:
        return None, [_on_manager(f"one MultiKueue AdmissionCheck on {name}, not more", inactive)]
    check, flavors = ours[0]
    if flavors:
        return None, [_on_manager(f"MultiKueue check {check} for all flavors of {name}", inactive)]
    return check, []


def worker_findings(
    manager_version: str, needs: Sequence[Need], name: str, worker: Worker, route: Route
) -> list[Finding]:
    """Step 5 of the module doc, on one worker of the route."""
    namespace, found = route.namespace, []
    cluster = _missing(needs, worker, namespace, Scope.CLUSTER)
    if cluster:
        found.append(Finding(name, f"the manager's rights cluster-wide ({cluster})", INACTIVE))
    if not worker.jobset_crd:
        found.append(Finding(name, "the JobSet CRD", INACTIVE))
    # A refused GET (403: RBAC is checked before the namespace is looked up) stops every
    # worker; a NotFound one only this worker's copy.
    effect = RETRIES if worker.access.allows(READ, namespace) else STOPS_ALL
    if namespace not in worker.namespaces:
        found.append(Finding(name, f"namespace {namespace}", effect))
    namespaced = _missing(needs, worker, namespace, Scope.NAMESPACE)
    if namespaced:
        rights = f"the manager's rights in namespace {namespace} ({namespaced})"
        found.append(Finding(name, rights, effect))
    found += _queue_findings(name, worker, route)
    found += _version_findings(manager_version, name, worker)
    return found


def _queue_findings(name: str, worker: Worker, route: Route) -> list[Finding]:
    if worker.kueue_version is None:
        return [Finding(name, "Kueue", NEVER_ADMITTED)]
    cluster_queue = worker.local_queues.get((route.namespace, route.queue))
    if cluster_queue is None:
        return [Finding(name, f"LocalQueue {route.namespace}/{route.queue}", NEVER_ADMITTED)]
    if cluster_queue not in worker.cluster_queues:
        missing = f"ClusterQueue {cluster_queue} (of LocalQueue {route.namespace}/{route.queue})"
        return [Finding(name, missing, NEVER_ADMITTED)]
    return []


def _version_findings(manager_version: str, name: str, worker: Worker) -> list[Finding]:
    manager = kueue_minor(manager_version)
    own = kueue_minor(worker.kueue_version or "")
    if manager is None or own is None or manager < PREBUILT_ANNOTATION_MINOR <= own:
        return []
    if manager >= PREBUILT_ANNOTATION_MINOR > own:
        return [
            Finding(
                name,
                f"Kueue v0.18 or later (it runs {worker.kueue_version}, the manager "
                f"{manager_version})",
                "the copy's JobSet names its prebuilt Workload in an annotation that Kueue "
                "before v0.18 does not read, so it is never linked to it",
            )
        ]
    return []


def _missing(needs: Sequence[Need], worker: Worker, namespace: str, scope: Scope) -> str:
    """The rights of ``scope`` the worker does not grant, as `get, create workloads; ...`."""
    verbs: dict[str, list[str]] = {}
    for need in needs:
        right = need.right
        if right.scope is scope and not worker.access.allows(right, namespace):
            verbs.setdefault(right.resource, []).append(right.verb)
    return "; ".join(f"{', '.join(v)} {resource}" for resource, v in verbs.items())


def _on_manager(missing: str, effect: str) -> Finding:
    return Finding(None, missing, effect)
