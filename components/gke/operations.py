"""How many node pool operations GKE runs at once in one cluster, and the timeouts that follow.

Facts used:
- terraform-provider-google (which pulumi-gcp bridges), google/services/container/
  resource_container_node_pool.go: a node pool's create, update and delete take a read lock on
  the cluster key (``projects/{project}/locations/{location}/clusters/{cluster}``) and a write
  lock on the node pool, and retry the GKE call while it answers FAILED_PRECONDITION ("the
  cluster is updating": GKE runs a bounded number of operations per cluster) until the
  resource's timeout, which also bounds the wait for the operation itself. Its default timeouts
  are 30 minutes for node pools (create, update, delete), and a cluster update takes the write
  lock: it waits for every node pool operation of the cluster.
- GKE publishes no number for the concurrent node pool operations of one cluster. XPK created
  node pools 10 at a time in its earlier releases (``run_commands`` with its default
  ``batch=10``, xpk core/commands.py, still the default in 1.16.0) and creates them 100 at a
  time in 1.16.0 (core/nodepool.py: ``run_commands(..., 'Create Nodepools', ...,
  batch=100)``). ``NODE_POOL_OPERATIONS`` is the lower, safer figure: an estimate, labelled so
  in the modeled critical path.
- Cloud Workflows' connector for ``container.v1 ...nodePools.create`` and ``clusters.create``
  waits 1,800 s by default for the long-running operation: Google's own bound on one operation
  (``OPERATION_BOUND_S``).

So a pool queued behind others in the provider needs a timeout of its whole queue: one bound
per wave of ``NODE_POOL_OPERATIONS`` pools ahead of it and its own. The deploy workflow runs
``pulumi up --parallel`` sized to the stack, so every pool can be queued at once.

Why single-host slices (v5e 2x2 / 2x4 ct5lp, v6e 2x2) still get a node pool each, although one
pool of N single-host nodes would be one GKE operation instead of N: every Pathways worker pod
carries ``alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool`` (the
PathwaysJob controller v0.1.4 writes it; XPK 1.16's JobSets too, core/scheduling.py
``ONE_TO_ONE_REPLICA_NODE_POOL_ASSIGNMENT_ANNOTATION``), and JobSet's webhook (v0.10.1
pod_mutating_webhook.go, setExclusiveAffinities) gives each slice's Job an anti-affinity to every
other Job per node pool: in a shared pool the first slice takes the whole pool and the others
stay Pending. A hostname-exclusive key would place them, but the controller does not let it be
set, and XPK likewise creates one node pool per TPU slice, single-host or not (core/nodepool.py:
``desired_node_pool_count = ... args.num_slices``; one pool of N nodes only for GPUs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

NODE_POOL_OPERATIONS = 10
"""Node pool operations GKE runs at once in one cluster (estimate; see the module docstring)."""
OPERATION_BOUND_S = 30 * 60
"""Google's default wait for one GKE long-running operation (create of a cluster or pool)."""
CLUSTER_MINIMUM_S = 60 * 60
"""The cluster's own timeouts: twice the bound of one operation (its create also removes the
default pool: a second operation)."""


@dataclass(frozen=True)
class Timeouts:
    """create / update / delete timeouts, in seconds."""

    create: int
    update: int
    delete: int

    def as_strings(self) -> dict[str, str]:
        """As Pulumi's ``CustomTimeouts`` takes them (Go durations: ``3h30m``)."""
        return {k: go_duration(v) for k, v in vars(self).items()}


def go_duration(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    minutes = rest // 60
    if not hours:
        return f"{minutes}m"
    return f"{hours}h{minutes}m" if minutes else f"{hours}h"


def queue_waves(node_pools: int, concurrent: int = NODE_POOL_OPERATIONS) -> int:
    """How many rounds of ``concurrent`` operations it takes to run ``node_pools`` of them:
    the worst queue position, counted in operations' bounds."""
    return max(1, math.ceil(node_pools / concurrent))


def node_pool_timeouts(node_pools: int) -> Timeouts:
    """Long enough for the last of ``node_pools`` operations queued at once in the cluster."""
    bound = queue_waves(node_pools) * OPERATION_BOUND_S
    return Timeouts(bound, bound, bound)


def cluster_timeouts(node_pools: int) -> Timeouts:
    """The cluster's own operations; its update waits for the node pools' queue as well."""
    queued = queue_waves(node_pools) * OPERATION_BOUND_S
    return Timeouts(CLUSTER_MINIMUM_S, max(CLUSTER_MINIMUM_S, queued), CLUSTER_MINIMUM_S)
