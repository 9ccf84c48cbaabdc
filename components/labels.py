"""Label keys, taints and resource names other systems define, and the labels this project puts
on what it creates: one place, so a component, the preflight, Kueue's flavors and the guardrails
can never disagree about a key. Pure: no Pulumi.

Sources: GKE's TPU node labels and taint (GKE "About TPUs in GKE"; google/pathways-job v0.1.4
internal/controller selects on the accelerator and topology labels), Kubernetes' well-known
labels (kubernetes.io/docs/reference/labels-annotations-taints), Kueue's queue label.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from components.tpu.catalog import TpuShape


class TaintEffect(StrEnum):
    """What a node taint does to a pod that does not tolerate it, spelled as Kubernetes spells
    it on a node and in a toleration (core v1 ``Taint.effect``). A StrEnum, so a toleration read
    from a manifest or a user's input, whose effect is a plain string (or empty: every effect),
    compares equal to the member it names."""

    NO_SCHEDULE = "NoSchedule"
    """The scheduler places no new pod there; the kubelet does not check it."""
    PREFER_NO_SCHEDULE = "PreferNoSchedule"
    """The scheduler avoids the node when another fits."""
    NO_EXECUTE = "NoExecute"
    """Read by the kubelet too, which refuses a pod bound to the node outright; a pod already
    running there is evicted."""

    @property
    def gke(self) -> str:
        """The same effect as GKE's node pool API spells it (google.container.v1
        ``NodeTaint.Effect``: NO_SCHEDULE, PREFER_NO_SCHEDULE, NO_EXECUTE), which a pool's node
        config asks for and its nodes then carry as this member's value: the member's name, so
        one line per effect holds both spellings."""
        return self.name


# GKE puts these on every node.
NODE_POOL_LABEL = "cloud.google.com/gke-nodepool"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
SPOT_LABEL = "cloud.google.com/gke-spot"
HOSTNAME_LABEL = "kubernetes.io/hostname"
# GKE puts these on TPU nodes (and taints them with TPU_RESOURCE=present:NoSchedule).
ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator"
TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology"
TPU_RESOURCE = "google.com/tpu"
# Node label XPK pairs with the v6e accelerator network profile (xpk core/nodepool.py).
DRA_DRIVER_LABEL = "cloud.google.com/gke-networking-dra-driver"
# The taint of the system pool, which GKE's own managed components tolerate (GKE attached
# clusters, "Customize system components": Google-owned system component pods always carry the
# toleration components.gke.io/gke-managed-components Exists; GoogleCloudPlatform/
# prometheus-engine charts/operator templates tolerate it the same way) and XPK's Kueue install
# tolerates as <key>=true:NoSchedule (AI-Hypercomputer/xpk v1.13 src/xpk/commands/
# cluster_gcluster.py ``__install_kueue``): a pool tainted with it runs GKE's components and the
# controllers that tolerate it, and no team pod (admission refuses the toleration to them).
SYSTEM_TAINT = "components.gke.io/gke-managed-components"
SYSTEM_TAINT_VALUE = "true"
SYSTEM_TAINT_EFFECT = TaintEffect.NO_SCHEDULE
# Kubernetes labels every namespace with its name.
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
# Kueue admits a workload labelled with the LocalQueue of its namespace.
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"

# Kueue's scheduling gate on the pods it manages (pkg/controller/jobs/pod/constants
# SchedulingGateName) and its workload priority label (pkg/controller/constants), v0.17.1.
KUEUE_ADMISSION_GATE = "kueue.x-k8s.io/admission"
KUEUE_PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"

# This project's own labels.
TEAM_LABEL = "tpu-pathways/team"
# A node pool dedicated to one team namespace carries this label and a NoExecute taint of this
# key, both with the namespace's name as value: the trust boundary of host-network pods.
# NoExecute, not NoSchedule: only the scheduler reads NoSchedule, while the kubelet also refuses
# a pod bound to its node that does not tolerate a NoExecute taint (kubernetes
# pkg/kubelet/lifecycle/predicate.go, the admission of a pod whose spec.nodeName names the node
# outright); the team's own pods tolerate it through their Kueue flavor, whatever its effect.
DEDICATED_TO_LABEL = "tpu-pathways/dedicated-to"
DEDICATED_TAINT_EFFECT = TaintEffect.NO_EXECUTE
# Every shared pool but the system pool carries this label, and the shared Kueue flavors select
# it: a job admitted on a shared flavor never lands on a dedicated node, though both carry the
# same TPU labels.
SHARED_POOL_LABEL = "tpu-pathways/shared-pool"
SHARED_POOL_VALUE = "true"
# Team namespaces carry these; the shared admission policies select the namespaces by the first
# and read the others as the namespace's parameters (a member with `edit` cannot relabel a
# namespace): where its host-network pods may run (``HostNetworkPlacement``) and the
# PriorityClasses its pods and jobs may name, joined by ".".
TEAM_NAMESPACE_LABEL = "tpu-pathways/team-namespace"
HOST_NETWORK_LABEL = "tpu-pathways/host-network"
PRIORITY_CLASSES_LABEL = "tpu-pathways/priority-classes"
POOL_LABEL = "tpu-pathways/pool"
# GKE does not document a node label for the reservation a pool consumes; this one is ours.
RESERVATION_LABEL = "tpu-pathways/reservation"


def standard_labels(team: str, **more: str) -> dict[str, str]:
    """The labels this project puts on what it creates: the team (when there is one) and any
    more ``key=value`` given (e.g. the pool)."""
    labels = dict(more)
    if team:
        labels[TEAM_LABEL] = team
    return labels


def gcp_resource_labels(team: str, **more: str) -> dict[str, str]:
    """Labels for Google Cloud resources (a bucket): their keys may not contain '/', so the
    team is ``team`` there; ``managed-by`` says which program owns the resource."""
    labels = {"managed-by": "tpu-pathways", **more}
    if team:
        labels["team"] = team
    return labels


def tpu_pool_labels(
    team: str, pool: str, shape: TpuShape, reservation: str | None = None
) -> dict[str, str]:
    """The labels a TPU pool's node config sets (GKE adds its own TPU labels).

    v6e pools with accelerator_network_profile "auto" carry DRA_DRIVER_LABEL, as XPK creates
    them (xpk src/xpk/core/nodepool.py: --accelerator-network-profile=auto together with
    --node-labels=cloud.google.com/gke-networking-dra-driver=true): GKE's networking DRA driver
    is scheduled onto the nodes that carry it, and attaches the pool's extra accelerator NICs.
    Reservation pools carry RESERVATION_LABEL, set by this project so a workload can select it
    (whether GKE labels nodes of a Standard node pool with the reservation's name is not
    confirmed in its documentation, so the preflight does not assume it)."""
    labels = pool_labels(team, pool)
    if shape.needs_accelerator_network_profile:
        labels[DRA_DRIVER_LABEL] = "true"
    if reservation is not None:
        labels[RESERVATION_LABEL] = reservation.rsplit("/", 1)[-1]
    return labels


def pool_labels(team: str, pool: str) -> dict[str, str]:
    return standard_labels(team, **{POOL_LABEL: pool})


def tpu_node_labels(shape: TpuShape) -> dict[str, str]:
    """The node labels that select one TPU shape (a Kueue flavor's nodeLabels, the owner's
    exported pool labels)."""
    return {
        ACCELERATOR_LABEL: shape.accelerator_label,
        TOPOLOGY_LABEL: shape.topology,
        # 2x4 exists on two 4-chip hosts and on one 8-chip host: the machine decides.
        INSTANCE_TYPE_LABEL: shape.machine_type,
    }
