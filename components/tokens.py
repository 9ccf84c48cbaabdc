"""Pulumi type tokens of the provider resources that the plan, its diff, cost, critical path and
the guardrails look for: one place, so the layers that read a plan never disagree on a token.
Pure: no Pulumi. (The project's own component tokens, ``tpu-pathways:<module>:<Type>``, are
each written once, in their component.)"""

from __future__ import annotations

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
BUCKET = "gcp:storage/bucket:Bucket"
SERVICE_ACCOUNT = "gcp:serviceaccount/account:Account"
# A release manifest applied by URL (pulumi-kubernetes' remote ConfigFile component).
CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
PRIORITY_CLASS = "kubernetes:scheduling.k8s.io/v1:PriorityClass"
PATHWAYS_JOB = "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob"
KUEUE_TYPE_PREFIX = "kubernetes:kueue.x-k8s.io/"  # every served version of Kueue's kinds
