"""The guardrail check of how the stack's workloads are admitted, written once for both backends
against ``plan.views.WorkloadView`` (a PathwaysJob and its JobSet carry the queue label alike).

Kueue facts (kubernetes-sigs/kueue v0.17.1, the release the stack installs):
``Configuration.manageJobsWithoutQueueName`` defaults to false
(apis/config/v1beta2/configuration_types.go), and this project leaves it so: a job without the
``kueue.x-k8s.io/queue-name`` label is not managed and, created unsuspended, starts at once,
outside every quota, its slices' pods scheduled one by one instead of admitted all or nothing. A
label naming a LocalQueue its namespace does not have leaves the job's Workload inadmissible
("LocalQueue <name> doesn't exist", pkg/controller/core/workload_controller.go): it never runs.
"""

from __future__ import annotations

from collections.abc import Iterator

from components.labels import QUEUE_LABEL
from components.plan.views import MISSING, WorkloadView, is_unknown
from components.policy.model import Resource, StackContext


def workload_queued(resource: Resource, context: StackContext) -> Iterator[str]:
    """In a namespace the stack gives LocalQueues, the workload names one of them."""
    workload = WorkloadView.of(resource.type, resource.inputs)
    if workload is None or context.local_queues is None or workload.namespace is None:
        return
    queues = context.local_queues.get(workload.namespace)
    if not queues or is_unknown(workload.queue):
        return
    namespace, listed = workload.namespace, ", ".join(sorted(map(repr, queues)))
    if workload.queue is MISSING:
        yield (
            f"metadata.labels has no {QUEUE_LABEL!r}, while the stack queues namespace "
            f"{namespace!r} through LocalQueue {listed}: Kueue leaves the job alone "
            "(manageJobsWithoutQueueName is false), so it starts outside the quota and its "
            "slices are not admitted all or nothing"
        )
    elif workload.queue not in queues and not any(map(is_unknown, queues)):
        yield (
            f"{QUEUE_LABEL} is {workload.queue!r}, not a LocalQueue of namespace {namespace!r} "
            f"(the stack's there: {listed}): Kueue never admits the job"
        )
