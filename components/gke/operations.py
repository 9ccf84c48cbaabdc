"""How many node pool operations GKE runs at once in one cluster, what the provider does while it
waits, and the timeouts that follow. Taken 2026-11-26; each fact with its source.

GKE's concurrency for node pool operations in one cluster:
- GKE docs, "Troubleshoot concurrent operations" (cloud.google.com/kubernetes-engine/docs/
  troubleshooting/concurrent-operations): GKE limits the operations that run at once; generally
  one cluster-level operation, or one operation per node pool, at a time (creating, updating,
  resizing and deleting node pools are cluster operations; GKE's own, such as control plane
  upgrades, count too). A busy cluster answers "Cluster is running incompatible operation" or
  "Operation ... is currently ACTIONING cluster ...": wait and retry. It gives no number for
  operations on different node pools.
- 5: the one published figure, a per-cluster quota seen in 2023 ("Error 429: Too many
  operations: cluster ... hits the concurrent operations quota 5", hashicorp/
  terraform-provider-google #15205 and #15579, provider 4.68 / 4.78). Concurrent node pool
  operations were rolled out to a limited number of projects from provider v4.46.0 (2022-12,
  magic-modules #6748). It may have been raised since, or be raisable per project.
- 10: XPK's default batch of concurrent gcloud commands (``run_commands(..., batch=10)``,
  AI-Hypercomputer/xpk src/xpk/core/commands.py), which it used for node pool creation before
  v1.5.0. Not a GKE number: an estimate, and the figure this model assumes
  (``NODE_POOL_OPERATIONS``).
- 100: XPK creates node pools 100 at a time since v1.5.0 (commit 678fcfef, 2026-02-20, PR #1068,
  "Increase number of concurrent NPs to be created to 100 ... significantly speeds up operations
  on large clusters (e.g., creating 288 cubes)"; src/xpk/core/nodepool.py
  ``run_commands(..., 'Create Nodepools', ..., batch=100)``, still at v1.13.1) and does not retry
  a refused create: a lower bound on what Google's own tool expects GKE to take at once.
``SENSITIVITY`` holds these three and 25; ``plan --critical-path`` prints the deployment at each.

What the provider does while GKE is busy (terraform-provider-google, which pulumi-gcp bridges;
google/services/container/resource_container_node_pool.go at e03b7622a2, after v7.45.0):
- a node pool's create, update and delete hold a read lock on the cluster
  (``projects/P/locations/L/clusters/C``) and a write lock on the pool; a cluster update takes the
  cluster's write lock, so it waits for every node pool operation in flight (and they for it);
- the create call is retried while GKE answers 400 failedPrecondition ("operation in progress")
  or any 429 (quota; since v4.83.0, magic-modules #8828), with terraform-plugin-sdk's backoff
  (``helper/retry``: from 500 ms, doubling to 10 s), until the resource's create timeout, which
  also bounds the wait for the operation itself. Updates retry FAILED_PRECONDITION and
  RESOURCE_EXHAUSTED the same way (``retryWhileIncompatibleOperation``), deletes as creates.
  So the program adds no retries of its own: they would double the provider's.
- A pool GKE has not taken yet keeps its Pulumi engine slot (the step runs until Create returns,
  pulumi/pulumi pkg/resource/deploy/step_executor.go) and re-sends its create about every 10 s:
  N queued pools make about 6N writes a minute, within the Kubernetes Engine API's default 3,000
  requests a minute (cloud.google.com/kubernetes-engine/quotas; an older copy says 600) up to
  a few hundred queued pools.
- The provider's default timeouts: node pools 2 hours for create, update and delete (1839045dad,
  v7.42.0, magic-modules #18250; 60 min from v7.30.0, 30 min before), the cluster 90 minutes
  (8b1d15a955, v7.30.0, magic-modules #17295). pulumi-gcp bridges them from v9.22.0 (TF v7.30.0)
  and v9.33.0 (TF v7.42.0); this project pins pulumi-gcp >= 10. A custom timeout replaces the
  default, so one shorter than it fails a slow slice the provider alone would have waited for:
  ``node_pool_timeouts`` and ``cluster_timeouts`` never go below the defaults.

So a pool queued behind the others needs a timeout of its whole queue: with every pool queued at
once (the deploy parallelism lets them, ``plan --critical-path``), the last waits
``ceil(pools / QUEUE_OPERATIONS)`` operations of at most ``OPERATION_HIGH_S`` each, at the lowest
sourced concurrency (5).

Why single-host slices (v5e 2x2 / 2x4 ct5lp, v6e 2x2) still get a node pool each, although one
pool of N single-host nodes would be one GKE operation instead of N: every Pathways worker pod
carries ``alpha.jobset.sigs.k8s.io/exclusive-topology: cloud.google.com/gke-nodepool`` (the
PathwaysJob controller v0.1.4 writes it; XPK 1.16's JobSets too, core/scheduling.py
``ONE_TO_ONE_REPLICA_NODE_POOL_ASSIGNMENT_ANNOTATION``), and JobSet's webhook (v0.10.1
pod_mutating_webhook.go, setExclusiveAffinities) gives each slice's Job an anti-affinity to every
other Job per node pool: in a shared pool the first slice takes the whole pool and the others
stay Pending. A hostname-exclusive key would place them, but the controller does not let it be
set, and XPK likewise creates one node pool per TPU slice, single-host or not (core/nodepool.py:
``desired_node_pool_count = ... args.num_slices``; one pool of N nodes only for GPUs). A
multi-host slice is one pool by GKE's rule: nodes cannot be added to a multi-host TPU slice node
pool, another slice is another pool (GKE docs, "About TPUs in GKE"). So no operation per slice
can be saved.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

NODE_POOL_OPERATIONS = 10
"""Node pool operations GKE runs at once in one cluster, as the model assumes (an estimate:
XPK's old batch, see the module docstring)."""


@dataclass(frozen=True)
class Concurrency:
    """One figure for GKE's concurrent node pool operations per cluster, and where it is from."""

    operations: int
    source: str


SENSITIVITY = (
    Concurrency(5, "per-cluster quota seen in 2023 (terraform-provider-google #15205, #15579)"),
    Concurrency(10, "XPK's default batch before v1.5.0 (estimate; the model's assumption)"),
    Concurrency(25, "between the published figures (what-if)"),
    Concurrency(100, "XPK's node pool batch since v1.5.0, no retry (xpk 678fcfef)"),
)
"""The figures ``plan --critical-path`` models the deployment at."""

QUEUE_OPERATIONS = min(c.operations for c in SENSITIVITY)
"""The concurrency the timeouts allow for: the lowest sourced figure."""
OPERATION_HIGH_S = 15 * 60
"""The longest one TPU slice pool's creation is modeled to take (the high figure of
``TPU slice node pool`` in components/plan/data/durations.yaml, kept equal by a test)."""
PROVIDER_NODE_POOL_TIMEOUT_S = 2 * 60 * 60
"""terraform-provider-google's default node pool create / update / delete timeout (v7.42.0+)."""
PROVIDER_CLUSTER_TIMEOUT_S = 90 * 60
"""terraform-provider-google's default cluster create / update / delete timeout (v7.30.0+)."""


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


def queue_waves(node_pools: int, concurrent: int = QUEUE_OPERATIONS) -> int:
    """How many rounds of ``concurrent`` operations it takes to run ``node_pools`` of them:
    the worst queue position, counted in operations."""
    return max(1, math.ceil(node_pools / concurrent))


def queue_bound_s(node_pools: int) -> int:
    """How long the last of ``node_pools`` operations queued at once may take, queue included."""
    return queue_waves(node_pools) * OPERATION_HIGH_S


def node_pool_timeouts(node_pools: int) -> Timeouts:
    """Long enough for the last of ``node_pools`` operations queued at once in the cluster, and
    never shorter than the provider's default."""
    bound = max(PROVIDER_NODE_POOL_TIMEOUT_S, queue_bound_s(node_pools))
    return Timeouts(bound, bound, bound)


def cluster_timeouts(node_pools: int) -> Timeouts:
    """The provider's defaults; an update (the cluster's write lock) also waits for the node
    pools' queue."""
    default = PROVIDER_CLUSTER_TIMEOUT_S
    return Timeouts(default, max(default, queue_bound_s(node_pools)), default)
