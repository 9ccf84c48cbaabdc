"""LocalQueues from its Args: a LocalQueue per namespace, pointing where it is told."""

from __future__ import annotations

from components.addons.kueue import LocalQueues, LocalQueuesArgs
from tests.components.harness import k8s_provider, register, urn

LOCAL = "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"


def test_a_local_queue_per_namespace():
    def build():
        args = LocalQueuesArgs(
            provider=k8s_provider(),
            namespaces={"research": "research-ns", "serving": "serving"},
            cluster_queues={"research": "research-cluster-queue", "serving": "cluster-queue"},
        )
        LocalQueues("lq", args)

    queues = register(build)
    assert queues.names(LOCAL) == ["lq-research-multislice-queue", "lq-serving-multislice-queue"]
    research = queues.one(LOCAL, "lq-research-multislice-queue")
    assert research.inputs["metadata"] == {"name": "multislice-queue", "namespace": "research-ns"}
    assert research.inputs["spec"] == {"clusterQueue": "research-cluster-queue"}
    assert research.parent == urn("tpu-pathways:kueue:LocalQueues", "lq")
    assert research.provider == urn("pulumi:providers:kubernetes", "k8s")


def test_a_shared_service_queue_in_default():
    def build():
        args = LocalQueuesArgs(
            provider=k8s_provider(),
            namespaces={"vision": "vision"},
            cluster_queues={"vision": "vision-cluster-queue"},
            service_queues={"vision-svc": "vision"},
        )
        LocalQueues("lq", args)

    queues = register(build)
    assert queues.names(LOCAL) == ["lq-default-vision-svc", "lq-vision-multislice-queue"]
    service = queues.one(LOCAL, "lq-default-vision-svc")
    assert service.inputs["metadata"] == {"name": "vision-svc", "namespace": "default"}
    assert service.inputs["spec"] == {"clusterQueue": "vision-cluster-queue"}
    assert service.parent == urn("tpu-pathways:kueue:LocalQueues", "lq")
