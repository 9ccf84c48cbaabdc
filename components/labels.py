"""Label keys and resource names other systems define, and the labels this project puts on what
it creates: one place, so a component, the preflight, Kueue's flavors and the guardrails can
never disagree about a key. Pure: no Pulumi.

Sources: GKE's TPU node labels and taint (GKE "About TPUs in GKE"; google/pathways-job v0.1.4
internal/controller selects on the accelerator and topology labels), Kubernetes' well-known
labels (kubernetes.io/docs/reference/labels-annotations-taints), Kueue's queue label.
"""

from __future__ import annotations

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
# Kubernetes labels every namespace with its name.
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
# Kueue admits a workload labelled with the LocalQueue of its namespace.
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"

# This project's own labels.
TEAM_LABEL = "tpu-pathways/team"
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
