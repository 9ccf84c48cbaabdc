"""The team-stack contract under Pulumi: a team stack's read of its owner's export.

``read_owner_contract`` registers a team stack's StackReference and waits for its owner's
``shared_cluster`` output; the contract itself (model, export, validation) is
``components.resolve.tenancy.shared_cluster``, which also says why the reference is awaited.
"""

from __future__ import annotations

import pulumi

from components.config.schema.contract import SharedCluster
from components.resolve.tenancy.shared_cluster import OUTPUT, contract_from_outputs
from components.sdk.pulumi_private import sync_await


def owner_reference(resource_name: str, owner: str) -> pulumi.StackReference:
    return pulumi.StackReference(resource_name, stack_name=owner)


def read_owner(reference: pulumi.StackReference, owner: str) -> SharedCluster:
    """Wait for the referenced stack's `shared_cluster` output (see the module docstring)."""
    details = sync_await(reference.get_output_details(OUTPUT))
    value = details.value if details.value is not None else details.secret_value
    return contract_from_outputs(value, owner)


def read_owner_contract(owner: str) -> SharedCluster:
    """A team stack's first registration: the StackReference to its owner, read and validated."""
    return read_owner(owner_reference(owner, owner), owner)


def read_worker_outputs(worker: str) -> dict:
    """A fleet's read of worker stack ``worker``: its ``shared_cluster`` output (validated by
    the fleet's loader), through a StackReference named after the worker."""
    reference = owner_reference(f"worker-{worker}", worker)
    details = sync_await(reference.get_output_details(OUTPUT))
    value = details.value if details.value is not None else details.secret_value
    return {OUTPUT: value} if value is not None else {}
