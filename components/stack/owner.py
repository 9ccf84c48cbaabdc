"""The team-stack contract under Pulumi: a team stack's read of its owner's export.

``read_owner_contract`` registers a team stack's StackReference and waits for its owner's
``shared_cluster`` output; the contract itself (model, export, validation) is
``components.resolve.tenancy.shared_cluster``, which also says why the reference is awaited.
"""

from __future__ import annotations

import pulumi

from components.config.grammars import owner_ref_parts
from components.config.schema.contract import SharedCluster
from components.errors import ConfigError, ConfigIssue
from components.resolve.tenancy.shared_cluster import OUTPUT, contract_from_outputs
from components.sdk.pulumi_private import sync_await

# What a DIY backend (a local directory or a bucket) reports as the organization: it has none,
# and takes no other in a stack name (pulumi/pulumi pkg/backend/diy/state.go and store.go,
# read at 1b59498, 2026-08).
DIY_ORGANIZATION = "organization"


def owner_reference(resource_name: str, owner: str) -> pulumi.StackReference:
    name = reference_name(owner, pulumi.get_organization(), pulumi.get_project())
    return pulumi.StackReference(resource_name, stack_name=name)


def reference_name(ref: str, organization: str | None, project: str) -> str:
    """The name a StackReference to stack ``ref`` (`stack`, `org/stack` or `org/project/stack`)
    is given. Pulumi Cloud reads another stack's outputs only by a name of the form
    <organization>/<project>/<stack> (pulumi/pulumi pkg/backend/httpstate/backend.go
    ``GetStackOutputs`` refuses any other, at 1b59498), so there the parts the name leaves out
    are this stack's. A DIY backend (``DIY_ORGANIZATION``) takes the name as written (its old
    layout takes a bare stack name only), and so does the offline plan (``organization`` None:
    its mocks know none)."""
    if not organization or organization == DIY_ORGANIZATION:
        return ref
    org, named_project, stack = owner_ref_parts(ref)
    return f"{org or organization}/{named_project or project}/{stack}"


def read_owner(reference: pulumi.StackReference, owner: str) -> SharedCluster:
    """Wait for the referenced stack's `shared_cluster` output (see the module docstring)."""
    details = sync_await(reference.get_output_details(OUTPUT))
    value = details.value if details.value is not None else details.secret_value
    return contract_from_outputs(value, owner)


def read_owner_contract(owner: str) -> SharedCluster:
    """A team stack's first registration: the StackReference to its owner, read and validated
    (an owner of another organization refused before it is read)."""
    check_owner_organization(owner, pulumi.get_organization())
    return read_owner(owner_reference(owner, owner), owner)


def check_owner_organization(owner: str, organization: str | None) -> None:
    """Refuse an owner named in an organization other than the one this stack deploys in. The
    offline plan reads an owner from this project's stack files whatever organization its name
    gives, so a team stack reviewed against the owner there could otherwise deploy against a
    stack of the same name in another organization, whose contract names other clusters and
    projects. ``organization``: the engine's (None under the offline plan's mocks, which know
    none)."""
    org, project, stack = owner_ref_parts(owner)
    if org is None or organization is None or org == organization:
        return
    same = f"{organization}/{project}/{stack}" if project else f"{organization}/{stack}"
    message = (
        f"{owner!r} names organization {org!r}, but this stack deploys in {organization!r}; "
        f"an owner is a stack of this organization: {stack!r} or {same!r}"
    )
    raise ConfigError([ConfigIssue("owner", message)], "owner stack")


def read_worker_outputs(worker: str) -> dict:
    """A fleet's read of worker stack ``worker``: its ``shared_cluster`` output (validated by
    the fleet's loader), through a StackReference named after the worker."""
    reference = owner_reference(f"worker-{worker}", worker)
    details = sync_await(reference.get_output_details(OUTPUT))
    value = details.value if details.value is not None else details.secret_value
    return {OUTPUT: value} if value is not None else {}
