"""The team-stack contract under Pulumi: an owner stack's export and a team stack's read.

``export_contract`` builds the owner's ``shared_cluster`` output (with Kueue's names and node
labels); ``read_owner`` registers a team stack's StackReference and waits for that output (see
``components.config.shared_cluster`` for why it is awaited and for the contract itself).
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi.runtime.sync_await import _sync_await

from components.addons import kueue
from components.config.schema import StackConfig
from components.config.shared_cluster import (
    OUTPUT,
    SharedCluster,
    SharedCpuPool,
    SharedQueues,
    SharedTpuPool,
    SharedVersions,
    contract_from_outputs,
)
from components.labels import QUEUE_LABEL


def owner_reference(resource_name: str, owner: str) -> pulumi.StackReference:
    return pulumi.StackReference(resource_name, stack_name=owner)


def read_owner(reference: pulumi.StackReference, owner: str) -> SharedCluster:
    """Wait for the referenced stack's `shared_cluster` output (see the module docstring)."""
    details = _sync_await(reference.get_output_details(OUTPUT))
    value = details.value if details.value is not None else details.secret_value
    return contract_from_outputs(value, owner)


def export_contract(config: StackConfig, stack: str) -> dict[str, Any]:
    """The `shared_cluster` output of an owner stack (plain JSON)."""
    kueue_addon, addons = config.addons.kueue, config.addons
    pools = [
        SharedTpuPool(
            name=pool.name,
            generation=pool.shape.generation.value,
            topology=pool.shape.topology,
            machine_type=pool.shape.machine_type,
            slices=pool.slices,
            chips=pool.slices * pool.shape.chips,
            node_labels=kueue.tpu_node_labels(pool.shape),
            node_pools=pool.node_pool_names(),
            capacity=pool.capacity,
        )
        for pool in config.tpu_pools
    ]
    contract = SharedCluster(
        owner_stack=stack,
        project=config.gcp.project,
        region=config.gcp.region,
        zone=config.gcp.zone,
        cluster_name=config.cluster.name,
        cluster_location=config.cluster_location,
        cpu_pool=SharedCpuPool(
            name=config.cpu_pool.name,
            machine_type=config.cpu_pool.machine_type,
            min_nodes=config.cpu_pool.min_nodes,
            max_nodes=config.cpu_pool.max_nodes,
        ),
        tpu_pools=pools,
        scratch_bucket=config.bucket_name,
        team_namespaces=[team.name for team in config.teams],
        shared_services=[service.name for service in config.shared_services],
        queues=SharedQueues(
            enabled=config.kueue_enabled,
            queue_label=QUEUE_LABEL,
            local_queue=kueue.LOCAL_QUEUE,
            default_cluster_queue=kueue.CLUSTER_QUEUE,
            team_cluster_queues=kueue.team_cluster_queues(q.team for q in kueue_addon.team_quotas),
            priority_classes=(
                {p.value: v for p, v in kueue.PRIORITY_CLASSES.items()}
                if config.kueue_enabled
                else {}
            ),
        ),
        versions=SharedVersions(
            jobset=addons.jobset.version if addons.jobset.install else None,
            pathways_job=addons.pathways_job.version if addons.pathways_job.install else None,
            kueue=kueue_addon.version if config.kueue_enabled else None,
        ),
    )
    return contract.model_dump(mode="json", exclude_none=True)
