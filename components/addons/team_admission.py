"""The admission policies of every team namespace: who may create what, where host-network pods
may run, and Pod Security baseline for everything else. Pure data (``Policy``); the component
that creates them is ``team_policies.TeamAdmissionPolicies``.

One policy per kind of the chain a Pathways pod comes from, shared by every team namespace
(bound by the namespace label ``TEAM_NAMESPACE_LABEL``; the per-team parameters are the
namespace's own labels, read through ``namespaceObject``, which a member with ``edit`` cannot
change):

- **Pods**: the host network (and with it the host's ``/tmp`` and the Pathways ports as host
  ports) only for a pod the Job controller creates for a Job (``request.userInfo``: a member
  cannot impersonate a kube-system service account) in a namespace whose host-network pods may
  run (``HOST_NETWORK_LABEL``), and on a dedicated namespace's own nodes (a nodeSelector naming
  it); everything else is Pod Security baseline in full (``pod_security``). Stricter than
  baseline: where its pods may land (``pod_placement``: no toleration of every taint, of
  another namespace's dedicated nodes or of the system pool, no selection of it, no node
  named at creation, the TPU hosts' taint only for a Job's pods or Kueue's), no TPU
  request outside a Job's pods or Kueue's gate, no PriorityClass the namespace is not given,
  no controller ownerReference written, changed or removed by anyone but a controller, at
  creation or later (Kueue follows a controller reference by name: a forged one would take a
  pod out of its quota; on Jobs and JobSets too), Kueue's admission gate
  removed by Kueue only, and no inline file system (``_file_systems``): an ``nfs`` volume, or a
  ``csi`` volume of any driver but Cloud Storage FUSE's, would mount another team's Lustre or
  Filestore instance by its address.
- **Jobs**: a host-network pod template only from the JobSet controller for a JobSet; a TPU
  Job created suspended (Kueue's webhook suspends what it manages) unless the JobSet controller
  creates it for a JobSet; ``spec.suspend`` lifted by Kueue or the JobSet controller only.
- **JobSets**: host-network templates only where the namespace's host-network pods may run; a
  TPU JobSet created suspended; ``spec.suspend`` lifted by Kueue only.

Who is who (``request.userInfo.username``): the Job controller is
``system:serviceaccount:kube-system:job-controller`` when the controller manager runs with
``--use-service-account-credentials`` (kubernetes bootstrappolicy controller_policy.go binds
``system:controller:job-controller`` to that account), else ``system:kube-controller-manager``;
GKE does not document which, so both are accepted (neither is reachable with ``edit``, which may
impersonate only its own namespace's service accounts). The installs' controllers:
``ControllerDeployment.username``. The MultiKueue manager creates a fleet's JobSets on a worker
(``multikueue.MANAGER_ACCOUNT``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from components.addons.file_systems import FILESTORE_DRIVER, LUSTRE_DRIVER
from components.addons.installs import (
    JOBSET_CONTROLLER,
    KUEUE_CONTROLLER,
    PATHWAYS_JOB_CONTROLLER,
)
from components.addons.pod_placement import off_system_pool, tolerations, tpu_tolerations, unbound
from components.addons.pod_security import Check, PathwaysException, baseline_checks, cel_list
from components.labels import (
    DEDICATED_TO_LABEL,
    HOST_NETWORK_LABEL,
    KUEUE_ADMISSION_GATE,
    KUEUE_PRIORITY_LABEL,
    PRIORITY_CLASSES_LABEL,
    TPU_RESOURCE,
)
from components.pathways.volumes import DRIVER as GCS_FUSE_DRIVER
from components.vocabulary import HostNetworkPlacement

JOB_CONTROLLER_USERNAMES = (
    "system:serviceaccount:kube-system:job-controller",
    "system:kube-controller-manager",
)
SYSTEM_ACCOUNTS = "system:serviceaccount:kube-system:"
# The MultiKueue manager's account on a worker (components.addons.multikueue MANAGER_ACCOUNT in
# KUEUE_NAMESPACE; a constant here: multikueue imports this layer's kueue module).
MULTIKUEUE_MANAGER_USERNAME = "system:serviceaccount:kueue-system:multikueue-manager"
TMP = "/tmp"
ON_SHARED_POOLS = (HostNetworkPlacement.SHARED.value, HostNetworkPlacement.ALONE.value)
PRIORITY_SEPARATOR = "."


@dataclass(frozen=True)
class ResourceRule:
    """Which requests a policy sees: ``operations`` on ``resources`` of ``api_group``."""

    api_group: str
    api_version: str
    resources: tuple[str, ...]
    operations: tuple[str, ...]


@dataclass(frozen=True)
class Policy:
    """One ValidatingAdmissionPolicy: its name, the requests it sees, its variables (evaluated
    in order, each may read the ones before) and its validations."""

    name: str
    rules: tuple[ResourceRule, ...]
    variables: tuple[tuple[str, str], ...]
    validations: tuple[Check, ...]


def username_in(usernames: Sequence[str]) -> str:
    return f"request.userInfo.username in {cel_list(list(usernames))}"


def trusted() -> str:
    """A controller: a kube-system service account, the controller manager, or an install's."""
    installs = [c.username for c in (JOBSET_CONTROLLER, PATHWAYS_JOB_CONTROLLER, KUEUE_CONTROLLER)]
    return (
        f"(request.userInfo.username.startsWith('{SYSTEM_ACCOUNTS}') || "
        f"{username_in([*JOB_CONTROLLER_USERNAMES, *installs, MULTIKUEUE_MANAGER_USERNAME])})"
    )


def _namespace_variables() -> tuple[tuple[str, str], ...]:
    """The namespace's parameters (its labels) and the request's facts every policy reads."""
    labels = "variables.labels"
    return (
        ("create", "request.operation == 'CREATE'"),
        (
            "labels",
            "has(namespaceObject.metadata.labels) ? namespaceObject.metadata.labels : {}",
        ),
        (
            "placement",
            f"'{HOST_NETWORK_LABEL}' in {labels} ? {labels}['{HOST_NETWORK_LABEL}'] : "
            f"'{HostNetworkPlacement.NONE.value}'",
        ),
        (
            "priorities",
            f"'{PRIORITY_CLASSES_LABEL}' in {labels} ? "
            f"{labels}['{PRIORITY_CLASSES_LABEL}'].split('{PRIORITY_SEPARATOR}') : []",
        ),
        ("trusted", trusted()),
    )


def _controller_owner(api_prefix: str, kind: str) -> str:
    """The object has a controller ownerReference to a ``kind`` of API group ``api_prefix``."""
    return (
        "has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(r, "
        f"r.apiVersion.startsWith('{api_prefix}') && r.kind == '{kind}' && has(r.controller) "
        "&& r.controller)"
    )


def _controllers(owner: str) -> str:
    """The controller ownerReferences of ``owner`` (``object`` or ``oldObject``), a list."""
    return (
        f"(has({owner}.metadata.ownerReferences) ? {owner}.metadata.ownerReferences.filter(r, "
        "has(r.controller) && r.controller) : [])"
    )


def _owner_references() -> Check:
    """No controller ownerReference set, changed or removed but by a controller: Kueue and
    JobSet treat an object with a controller reference to a JobSet as that JobSet's (Kueue
    v0.17.1 makes no Workload of it: no quota; JobSet resumes it), on creation or added later."""
    unchanged = f"{_controllers('object')} == {_controllers('oldObject')}"
    return Check(
        f"variables.trusted || (variables.create ? {_controllers('object')} == [] : {unchanged})",
        "a controller ownerReference is set, changed or removed by controllers only (a forged "
        "one takes the object out of Kueue's quota)",
    )


def _requests_tpu(spec: str) -> str:
    """Some container of pod spec ``spec`` requests or limits TPU chips."""
    resources = (
        f"(has(c.resources) && ((has(c.resources.requests) && '{TPU_RESOURCE}' in "
        f"c.resources.requests) || (has(c.resources.limits) && '{TPU_RESOURCE}' in "
        "c.resources.limits)))"
    )
    return " || ".join(
        f"(has({spec}.{lst}) && {spec}.{lst}.exists(c, {resources}))"
        for lst in ("initContainers", "containers")
    )


def _priority(spec: str | None) -> Check:
    """The Kueue priority label, and the pod spec's priorityClassName, name an allowed class."""
    label = (
        "!has(object.metadata.labels) || "
        f"!('{KUEUE_PRIORITY_LABEL}' in object.metadata.labels) || "
        f"object.metadata.labels['{KUEUE_PRIORITY_LABEL}'] in variables.priorities"
    )
    parts = [f"({label})"]
    if spec is not None:
        parts.append(
            f"(!has({spec}.priorityClassName) || {spec}.priorityClassName in variables.priorities)"
        )
    return Check(
        " && ".join(parts),
        "this PriorityClass is not one the namespace may use (its label "
        f"{PRIORITY_CLASSES_LABEL} lists them)",
    )


def _suspend_lifted_by(usernames: Sequence[str]) -> Check:
    return Check(
        "request.operation != 'UPDATE' || !has(oldObject.spec.suspend) || !oldObject.spec.suspend "
        f"|| (has(object.spec.suspend) && object.spec.suspend) || {username_in(usernames)}",
        "only Kueue resumes a suspended job (it admits it against the team's quota)",
    )


def _host_network(spec: str) -> str:
    return f"(has({spec}.hostNetwork) && {spec}.hostNetwork)"


def _pod_variables() -> tuple[tuple[str, str], ...]:
    dedicated = HostNetworkPlacement.DEDICATED.value
    on_own_nodes = (
        f"has(object.spec.nodeSelector) && '{DEDICATED_TO_LABEL}' in object.spec.nodeSelector "
        f"&& object.spec.nodeSelector['{DEDICATED_TO_LABEL}'] == request.namespace"
    )
    return (
        *_namespace_variables(),
        ("checked", "variables.create || request.subResource == 'ephemeralcontainers'"),
        ("hostNetwork", _host_network("object.spec")),
        ("fromJob", username_in(JOB_CONTROLLER_USERNAMES)),
        ("requestsTpu", _requests_tpu("object.spec")),
        ("jobOwned", _controller_owner("batch/", "Job")),
        (
            "placed",
            f"variables.placement in {cel_list(ON_SHARED_POOLS)} || "
            f"(variables.placement == '{dedicated}' && {on_own_nodes})",
        ),
        (
            "pathways",
            "variables.create && variables.hostNetwork && variables.fromJob && "
            "variables.jobOwned && variables.placed",
        ),
        # Pathways' exception to baseline (the host's /tmp, its ports as host ports): at
        # creation for a Pathways pod; on an update (an ephemeral container: the baseline
        # checks run again) for a pod on the host network only, which this policy admitted as
        # a Pathways pod at its creation (the field is immutable), not for every pod.
        ("exempt", "variables.pathways || (!variables.create && variables.hostNetwork)"),
        (
            "gated",
            "has(object.spec.schedulingGates) && "
            f"object.spec.schedulingGates.exists(g, g.name == '{KUEUE_ADMISSION_GATE}')",
        ),
    )


def _gate_removal() -> Check:
    old_gated = (
        "has(oldObject.spec.schedulingGates) && "
        f"oldObject.spec.schedulingGates.exists(g, g.name == '{KUEUE_ADMISSION_GATE}')"
    )
    return Check(
        f"request.operation != 'UPDATE' || request.subResource != '' || !({old_gated}) || "
        f"variables.gated || request.userInfo.username == '{KUEUE_CONTROLLER.username}'",
        "only Kueue removes its admission gate (it admits the pod against the team's quota)",
    )


def _file_systems() -> Check:
    """No inline file system: an ``nfs`` volume names a server and path, and a ``csi`` volume
    its driver's attributes (Lustre's ``ip`` and ``filesystem``), so either would mount another
    team's instance, which the kubelet reaches from any node. The one inline CSI driver left is
    Cloud Storage FUSE's (``components.pathways.volumes``: its mounts act as the pod's own
    Kubernetes service account through Workload Identity, which holds its team's grants only),
    which the project renders inline on both backends. A team's Lustre and Filestore shares are
    PersistentVolumeClaims of its namespace, bound to PersistentVolumes that name that claim
    (``claimRef``); ``edit`` creates no PersistentVolume (kubernetes/kubernetes
    plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata/cluster-roles.yaml at 025f2834:
    system:aggregate-to-edit, which edit aggregates, lists persistentvolumeclaims, not
    persistentvolumes; a RoleBinding grants nothing cluster-scoped anyway). Checked at creation
    (a pod's volumes never change)."""
    volume = f"!has(v.nfs) && (!has(v.csi) || v.csi.driver == '{GCS_FUSE_DRIVER}')"
    return Check(
        f"!variables.create || !has(object.spec.volumes) || object.spec.volumes.all(v, {volume})",
        "inline nfs volumes, and inline csi volumes of a driver other than Cloud Storage FUSE's "
        f"({GCS_FUSE_DRIVER}; e.g. {LUSTRE_DRIVER}, {FILESTORE_DRIVER}), are not allowed: a "
        "Lustre or Filestore share is mounted through the namespace's PersistentVolumeClaim",
    )


def pod_checks(
    pathways_ports: Sequence[int], kueue: bool, system_pool: str | None = None
) -> list[Check]:
    """The pod policy's validations (``kueue``: the cluster runs Kueue, which every TPU pod
    must go through; ``system_pool``: the name of the pool of the cluster's controllers, None
    when the policy does not know it)."""
    exception = PathwaysException("variables.exempt", TMP, pathways_ports)
    checks = [
        Check(
            "!variables.create || !variables.hostNetwork || variables.pathways",
            "hostNetwork is allowed only for the pods the Job controller creates for a Job, in "
            "a namespace given host-network pods, on the nodes dedicated to it when it has "
            f"them (nodeSelector {DEDICATED_TO_LABEL}: <namespace>)",
        ),
        *(
            Check(f"!variables.checked || ({c.expression})", c.message)
            for c in baseline_checks(exception)
        ),
        _file_systems(),
        tolerations(),
        tpu_tolerations(kueue),
        unbound(),
        *([off_system_pool(system_pool)] if system_pool else []),
        Check(
            f"!variables.create || {_priority('object.spec').expression}",
            _priority(None).message,
        ),
        _owner_references(),
    ]
    if kueue:
        checks += [
            Check(
                "!variables.create || !variables.requestsTpu || "
                "(variables.fromJob && variables.jobOwned) || variables.gated",
                "a pod requesting TPU chips must be a Job's pod or wait for Kueue's admission "
                "(queue it through the namespace's LocalQueue)",
            ),
            _gate_removal(),
        ]
    return checks


def pod_policy(
    name: str, pathways_ports: Sequence[int], kueue: bool, system_pool: str | None = None
) -> Policy:
    return Policy(
        name,
        (
            ResourceRule("", "v1", ("pods",), ("CREATE", "UPDATE")),
            ResourceRule("", "v1", ("pods/ephemeralcontainers",), ("UPDATE",)),
        ),
        _pod_variables(),
        tuple(pod_checks(pathways_ports, kueue, system_pool)),
    )


def job_policy(name: str, kueue: bool) -> Policy:
    template = "object.spec.template.spec"
    checks = [
        Check(
            f"!variables.create || !{_host_network(template)} || "
            f"(request.userInfo.username == '{JOBSET_CONTROLLER.username}' && "
            f"{_controller_owner('jobset.x-k8s.io/', 'JobSet')})",
            "a Job with host-network pods is created by the JobSet controller only",
        ),
        _priority(template),
        _owner_references(),
    ]
    if kueue:
        checks += [
            Check(
                f"!variables.create || !({_requests_tpu(template)}) || "
                "(has(object.spec.suspend) && object.spec.suspend) || "
                f"request.userInfo.username == '{JOBSET_CONTROLLER.username}'",
                "a Job requesting TPU chips must be queued by Kueue (created suspended: give it "
                "the namespace's LocalQueue)",
            ),
            _suspend_lifted_by([KUEUE_CONTROLLER.username, JOBSET_CONTROLLER.username]),
        ]
    return Policy(
        name,
        (ResourceRule("batch", "v1", ("jobs",), ("CREATE", "UPDATE")),),
        _namespace_variables(),
        tuple(checks),
    )


def jobset_policy(name: str, kueue: bool) -> Policy:
    def each_template(condition: str) -> str:
        return f"object.spec.replicatedJobs.exists(j, {condition})"

    template = "j.template.spec.template.spec"
    checks = [
        Check(
            f"!variables.create || !({each_template(_host_network(template))}) || "
            f"variables.placement != '{HostNetworkPlacement.NONE.value}'",
            "host-network JobSets are not allowed in this namespace (it has no host-network "
            "pods: Pod Security baseline)",
        ),
        Check(
            f"!variables.create || (({_priority(None).expression}) && "
            f"object.spec.replicatedJobs.all(j, !has({template}.priorityClassName) || "
            f"{template}.priorityClassName in variables.priorities))",
            _priority(None).message,
        ),
        _owner_references(),
    ]
    if kueue:
        checks += [
            Check(
                f"!variables.create || !({each_template(_requests_tpu(template))}) || "
                "(has(object.spec.suspend) && object.spec.suspend) || "
                f"request.userInfo.username == '{MULTIKUEUE_MANAGER_USERNAME}'",
                "a JobSet requesting TPU chips must be queued by Kueue (created suspended)",
            ),
            _suspend_lifted_by([KUEUE_CONTROLLER.username]),
        ]
    return Policy(
        name,
        (ResourceRule("jobset.x-k8s.io", "v1alpha2", ("jobsets",), ("CREATE", "UPDATE")),),
        _namespace_variables(),
        tuple(checks),
    )
