"""Where a team namespace's pods may land: the pod policy's checks of tolerations and node
selection (``team_admission.pod_checks`` adds them). Pure CEL over a Pod (``object``).

A node pool is kept to its pods by a taint the others do not tolerate, so the checks are on
tolerations first (a toleration may be added to a running pod: checked on every CREATE and
UPDATE), and on the node selection that would name a pool outright:

- no toleration of every taint (an empty key with ``Exists``);
- the dedicated nodes of the namespace only (``DEDICATED_TO_LABEL`` = the namespace);
- not the system pool's taint (``SYSTEM_TAINT``: GKE's managed components and the installs'
  controllers run there), nor, when the policy knows the system pool's name, a node selector or
  required node affinity naming it (``NODE_POOL_LABEL``; ``nodeSelector`` and affinity may be
  added to a pod while it is gated, so this too is checked on UPDATE);
- no ``spec.nodeName`` at creation: a pod created bound to a node skips the scheduler, and so
  every NoSchedule taint (the kubelet admits it unless a NoExecute taint is untolerated:
  kubernetes pkg/kubelet/lifecycle/predicate.go). Nothing a team runs sets it legitimately: the
  scheduler binds through the ``pods/binding`` subresource, which this policy does not match
  and ``edit`` may not create (bootstrappolicy ``system:aggregate-to-edit`` lists no
  ``pods/binding``), the DaemonSet controller places its pods by node affinity (Kubernetes 1.12+,
  ScheduleDaemonSetPods), and the field cannot be changed later. A kubelet
  (``system:node:<name>``) creates only the mirror pods of what it already runs;
- the TPU hosts' taint (``google.com/tpu``) tolerated, at creation, only by a pod that requests
  TPU chips (GKE's ExtendedResourceToleration admission adds that toleration to it anyway) or
  runs on the host network (a Pathways head beside its workers; only the JobSet controller may
  create a Job of such pods), and, with Kueue, only by a pod the Job controller creates for a
  Job (every TPU Job is Kueue's, or the JobSet controller's under a JobSet Kueue admitted) or
  one waiting behind Kueue's admission gate; a toleration added to a running pod only by a
  controller or while Kueue's gate holds it. Else a Deployment's pods (or a best-effort Job's)
  could squat the TPU hosts, outside Kueue and its quota, and starve the PathwaysJob
  controller's workers, which request no CPU or memory.
"""

from __future__ import annotations

from components.addons.pod_security import Check
from components.labels import DEDICATED_TO_LABEL, NODE_POOL_LABEL, SYSTEM_TAINT, TPU_RESOURCE

SPEC = "object.spec"


def tolerations() -> Check:
    toleration = (
        "((has(t.key) && t.key != '') || !has(t.operator) || t.operator != 'Exists') && "
        f"(!has(t.key) || t.key != '{SYSTEM_TAINT}') && "
        f"(!has(t.key) || t.key != '{DEDICATED_TO_LABEL}' || "
        "((!has(t.operator) || t.operator == 'Equal') && has(t.value) && "
        "t.value == request.namespace))"
    )
    return Check(
        f"!has({SPEC}.tolerations) || {SPEC}.tolerations.all(t, {toleration})",
        "tolerating every taint, the system pool's or the nodes dedicated to another namespace "
        "is not allowed",
    )


def unbound() -> Check:
    return Check(
        f"!variables.create || !has({SPEC}.nodeName) || {SPEC}.nodeName == '' || "
        "request.userInfo.username.startsWith('system:node:')",
        "spec.nodeName is not allowed: a pod bound to a node at creation skips the scheduler "
        "and the taints that keep pods off the nodes of other teams",
    )


def tpu_tolerations(kueue: bool) -> Check:
    """Who may tolerate the TPU hosts' taint (reads the pod policy's variables ``create``,
    ``fromJob``, ``jobOwned``, ``gated``, ``trusted`` and ``requestsTpu``)."""
    # A pod that asks for no chips has no business on a TPU host: a best-effort Job's pod there
    # would compete with (and, at a higher priority, get evicted in place of) another team's
    # workers, which request no CPU or memory either. The exception is a Pathways head placed
    # beside its workers: a host-network pod, whose Job only the JobSet controller may create
    # (the Job policy).
    at_creation = "(variables.requestsTpu || variables.hostNetwork)"
    if kueue:
        at_creation += " && ((variables.fromJob && variables.jobOwned) || variables.gated)"
    kept = "(has(oldObject.spec.tolerations) && oldObject.spec.tolerations.exists(o, o == t))"
    later = f"{kept} || variables.trusted || variables.gated"
    allowed = f"(variables.create ? ({at_creation}) : ({later}))"
    return Check(
        f"!has({SPEC}.tolerations) || {SPEC}.tolerations.all(t, !has(t.key) || "
        f"t.key != '{TPU_RESOURCE}' || {allowed})",
        f"tolerating the TPU hosts' taint ({TPU_RESOURCE}) is allowed only for a pod that "
        "requests TPU chips and is a Job's pod or waits for Kueue's admission (queue it "
        "through the namespace's LocalQueue)",
    )


def names_pool(pool: str) -> str:
    """The pod's node selector, or a term of its required node affinity, selects ``pool``."""
    selector = (
        f"(has({SPEC}.nodeSelector) && '{NODE_POOL_LABEL}' in {SPEC}.nodeSelector && "
        f"{SPEC}.nodeSelector['{NODE_POOL_LABEL}'] == '{pool}')"
    )
    required = f"{SPEC}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    term = (
        f"has(t.matchExpressions) && t.matchExpressions.exists(e, e.key == '{NODE_POOL_LABEL}' "
        f"&& e.operator == 'In' && has(e.values) && '{pool}' in e.values)"
    )
    affinity = (
        f"(has({SPEC}.affinity) && has({SPEC}.affinity.nodeAffinity) && has({required}) && "
        f"has({required}.nodeSelectorTerms) && {required}.nodeSelectorTerms.exists(t, {term}))"
    )
    return f"({selector} || {affinity})"


def off_system_pool(system_pool: str) -> Check:
    return Check(
        f"!{names_pool(system_pool)}",
        f"the system pool ({system_pool}) runs the cluster's controllers: a team's pods may "
        "not select it",
    )
