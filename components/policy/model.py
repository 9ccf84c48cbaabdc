"""What a guardrail rule sees: the type tokens it targets, one registered resource and the
stack's context, the rule itself, and how checks read engine wire values."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from components.plan.model import UNKNOWN
from components.plan.views import MISSING, is_unknown, value_at
from components.tokens import (
    BUCKET_ACCESS_CONTROL,
    BUCKET_ACL,
    BUCKET_IAM_BINDING,
    BUCKET_IAM_MEMBER,
    BUCKET_IAM_POLICY,
    CLUSTER,
    CONFIG_FILE,
    DEFAULT_OBJECT_ACCESS_CONTROL,
    DEFAULT_OBJECT_ACL,
    DEPLOYMENT_PATCH,
    FIREWALL,
    KUEUE_TYPE_PREFIX,
    LOCAL_QUEUE_KIND,
    NETWORK,
    NODE_POOL,
    OBJECT_ACCESS_CONTROL,
    OBJECT_ACL,
    PRIORITY_CLASS,
    PROJECT_IAM_BINDING,
    PROJECT_IAM_MEMBER,
    PROJECT_IAM_POLICY,
    ROUTER,
    ROUTER_NAT,
    SERVICE_ACCOUNT,
    SUBNETWORK,
)
from components.vocabulary import Environment

# Where each storage access resource names who gets access.
IAM_MEMBER = "member"
IAM_MEMBERS = "members"
IAM_POLICY = "policyData"
ACL_ENTITY = "entity"
ACL_ROLE_ENTITIES = "roleEntities"
BUCKET_ACCESS_TYPES: dict[str, str] = {
    BUCKET_IAM_MEMBER: IAM_MEMBER,
    BUCKET_IAM_BINDING: IAM_MEMBERS,
    BUCKET_IAM_POLICY: IAM_POLICY,
    BUCKET_ACCESS_CONTROL: ACL_ENTITY,
    DEFAULT_OBJECT_ACCESS_CONTROL: ACL_ENTITY,
    OBJECT_ACCESS_CONTROL: ACL_ENTITY,
    BUCKET_ACL: ACL_ROLE_ENTITIES,
    DEFAULT_OBJECT_ACL: ACL_ROLE_ENTITIES,
    OBJECT_ACL: ACL_ROLE_ENTITIES,
}
PUBLIC_MEMBERS = ("allUsers", "allAuthenticatedUsers")
PUBLIC_PREDEFINED_ACLS = ("publicRead", "publicReadWrite")

# Project IAM resources and where their roles are.
PROJECT_IAM_TYPES: dict[str, str] = {
    PROJECT_IAM_MEMBER: "role",
    PROJECT_IAM_BINDING: "role",
    PROJECT_IAM_POLICY: IAM_POLICY,
}
# GCP's basic (formerly "primitive") roles: project-wide, far beyond what nodes need.
BASIC_ROLES = ("roles/owner", "roles/editor", "roles/viewer")

# What a production stack stands on besides the cluster and node pools: deleting or replacing any
# of these takes running workloads down (a CRD's deletion deletes every object of it; an install's
# controller patch going away puts its controller back wherever the scheduler likes).
NETWORK_TYPES = frozenset(
    {
        NETWORK,
        SUBNETWORK,
        FIREWALL,
        ROUTER,
        ROUTER_NAT,
    }
)
PROTECTED_IN_PRODUCTION = frozenset(
    {CLUSTER, NODE_POOL, SERVICE_ACCOUNT, CONFIG_FILE, DEPLOYMENT_PATCH, PRIORITY_CLASS}
    | NETWORK_TYPES
    | set(PROJECT_IAM_TYPES)
)

DEFAULT_COMPUTE_SA_SUFFIX = "-compute@developer.gserviceaccount.com"


# --- what a rule sees ---------------------------------------------------------------------


@dataclass(frozen=True)
class StackContext:
    """What a rule may know about the stack: its environment (dev, staging, production) and,
    for a ``stack_wide`` rule, what the stack's other resources say (``stack_context``)."""

    environment: str = Environment.DEV.value
    local_queues: Mapping[str, frozenset[str]] | None = None
    """The Kueue LocalQueues the stack registers, by namespace (a name not visible yet as
    ``UNKNOWN``); None when the rules see one resource at a time."""

    def __post_init__(self) -> None:
        Environment(self.environment)  # ValueError for anything but dev|staging|production

    @property
    def production(self) -> bool:
        return self.environment == Environment.PRODUCTION.value


@dataclass(frozen=True)
class Resource:
    """One registration: type token, logical name, wire-form inputs and resource options."""

    type: str
    name: str
    inputs: Mapping[str, Any]
    options: Mapping[str, Any] = field(default_factory=dict)
    urn: str = ""

    @property
    def label(self) -> str:
        return f"{self.type} '{self.name}'"


def is_local_queue(type_token: str) -> bool:
    return type_token.startswith(KUEUE_TYPE_PREFIX) and type_token.endswith(f":{LOCAL_QUEUE_KIND}")


def stack_context(environment: str, resources: Iterable[Resource]) -> StackContext:
    """The context of a whole stack: its environment and its LocalQueues (a queue in a
    namespace not visible yet is left out: no rule can tell what it queues)."""
    queues: dict[str, set[str]] = {}
    for resource in resources:
        if not is_local_queue(resource.type):
            continue
        namespace = value_at(resource.inputs, "metadata.namespace")
        name = value_at(resource.inputs, "metadata.name")
        if isinstance(namespace, str) and not is_unknown(namespace):
            known = isinstance(name, str) and not is_unknown(name)
            queues.setdefault(namespace, set()).add(name if known else UNKNOWN)
    return StackContext(environment, {ns: frozenset(names) for ns, names in queues.items()})


Check = Callable[[Resource, StackContext], Iterable[str]]


@dataclass(frozen=True)
class Rule:
    id: str
    description: str
    types: frozenset[str]
    check: Check
    type_prefixes: tuple[str, ...] = ()  # type tokens that start so (e.g. any API version)
    production_only: bool = False  # checked in production stacks only (docs/policy.md says so)
    # Reads the rest of the stack (``stack_context``): the policy pack runs it as a stack
    # validation, over every resource at once.
    stack_wide: bool = False

    def applies_to(self, type_token: str) -> bool:
        return type_token in self.types or type_token.startswith(self.type_prefixes)

    def violations(self, resource: Resource, context: StackContext) -> list[str]:
        """Messages naming the resource, one per problem; none for other resource types, nor
        outside production for a production-only rule."""
        if not self.applies_to(resource.type) or (self.production_only and not context.production):
            return []
        return [f"{resource.label}: {problem}" for problem in self.check(resource, context)]


# --- reading wire values ----------------------------------------------------------------


def show(value: Any) -> str:
    if value is MISSING:
        return "not set"
    return json.dumps(value)


def expect(path: str, want: Any, why: str, *, default: Any = MISSING) -> Check:
    """A check that ``path`` equals ``want``; ``default`` is the provider's value when unset."""

    def check(resource: Resource, _: StackContext) -> Iterator[str]:
        value = value_at(resource.inputs, path)
        effective = default if value is MISSING else value
        if is_unknown(effective) or (effective == want and type(effective) is type(want)):
            return
        yield f"{path} is {show(value)}, must be {json.dumps(want)} ({why})"

    return check


def all_of(*checks: Check) -> Check:
    def check(resource: Resource, context: StackContext) -> Iterator[str]:
        for each in checks:
            yield from each(resource, context)

    return check


def policy_bindings(policy_data: Any) -> list[Mapping[str, Any]]:
    """The bindings of an IAM policy document (policyData is JSON text)."""
    if not isinstance(policy_data, str) or is_unknown(policy_data):
        return []
    try:
        document = json.loads(policy_data)
    except json.JSONDecodeError:
        return []
    bindings = document.get("bindings", []) if isinstance(document, Mapping) else []
    return [b for b in bindings if isinstance(b, Mapping)]


def as_list(value: Any) -> list[Any]:
    if value is MISSING or is_unknown(value):
        return []
    return list(value) if isinstance(value, list | tuple) else [value]


def grantees(resource: Resource) -> list[str]:
    """Who a storage access resource grants access to."""
    kind = BUCKET_ACCESS_TYPES[resource.type]
    inputs = resource.inputs
    if kind == IAM_POLICY:
        members = [
            m for b in policy_bindings(inputs.get(kind)) for m in as_list(b.get(IAM_MEMBERS))
        ]
    elif kind == ACL_ROLE_ENTITIES:
        pairs = as_list(value_at(inputs, kind))
        members = [p.split(":", 1)[-1] for p in pairs if isinstance(p, str)]
    else:
        members = as_list(value_at(inputs, kind))
    return [m for m in members if isinstance(m, str) and not is_unknown(m)]
