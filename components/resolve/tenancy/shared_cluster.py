"""One cluster, many teams: the one home of the team-stack contract. What an owner stack exports
(``export_contract``), how a team stack's reader validates it (``contract_from_outputs``,
``read_contract``), which keys a team stack may not restate (``owner_problems``) and which
namespaces it may not take (``ownership_issues``). Pure data; the document's model is
``components.config.schema.contract``, the StackReference that reads it under Pulumi is
``components.stack.owner``.

The owner stack (it creates the cluster) exports one stack output, ``shared_cluster``: a
``SharedCluster`` document of plain JSON data (no unknowns: all of it follows from the owner's
config). A team stack names its owner (``owner: research-v5p`` or ``org/project/stack``) and reads
that output through a ``pulumi.StackReference``. The owner's project, cluster, CPU pool, TPU pools,
bucket and install versions become the team stack's own config values, so every check that
works on a stack's pools (workload checks, Pathways shapes, head sizing) works on the owner's.

Why the reference is awaited, not used as an Output: the team's workloads must be validated
against the owner's pools before any of its resources registers (a bad pool name must fail the
preview, not half a deployment). ``read_owner_contract`` (``components.stack.owner``) registers
the
StackReference (a read: it creates nothing) and waits for its outputs the way the SDK's own
synchronous invokes wait; only then is the team config validated and the rest of the program
registered.

The offline plan answers the StackReference with ``reference_outputs`` of the owner's validated
stack file (same project, no network, no credentials; the owner's program does not run): see
``components/resolve/loader.py`` ``reference_reader``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from components.config.schema import StackConfig
from components.config.schema.contract import (
    CONTRACT_VERSION,
    HeldNodePool,
    SharedCluster,
    SharedCpuPool,
    SharedQueues,
    SharedTeamCpuPool,
    SharedTpuPool,
    SharedVersions,
)
from components.errors import ConfigError, ConfigIssue
from components.labels import QUEUE_LABEL, tpu_node_labels
from components.resolve.tenancy.isolation import (
    google_api_egress,
    shared_pool_teams,
    team_quota_chips,
)
from components.resolve.workload_specs import (
    deployment_namespace,
    is_colocated,
    job_key,
    node_pool_pins,
    selected_node_pool,
)
from components.vocabulary import (
    CLUSTER_QUEUE,
    LOCAL_QUEUE,
    PRIORITY_CLASSES,
    team_cluster_queues,
)

OUTPUT = "shared_cluster"
FLEET_OUTPUT = "fleet"  # what a fleet stack exports instead (``components.stack.fleet``)
# Keys of a team stack that belong to its owner (what each holds, with its verb): restating
# them is how they drifted.
OWNER_KEYS = {
    "gcp": "the project, region and zone belong",
    "cluster": "the cluster belongs",
    "cpuPool": "the CPU pool belongs",
    "tpuPools": "the TPU pools belong",
    "teamCpuPools": "the CPU pools dedicated to teams belong",
    "scratchBucket": "the scratch bucket belongs",
    "addons": "the JobSet, PathwaysJob controller and Kueue installs, ClusterQueues, "
    "ResourceFlavors and PriorityClasses belong",
}


def export_contract(config: StackConfig, stack: str) -> dict[str, Any]:
    """The `shared_cluster` output of an owner stack (plain JSON)."""
    kueue_addon, addons = config.addons.kueue, config.addons
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
        tpu_pools=_shared_tpu_pools(config),
        team_cpu_pools=[
            SharedTeamCpuPool(
                name=pool.name,
                machine_type=pool.machine_type,
                min_nodes=pool.min_nodes,
                max_nodes=pool.max_nodes,
                team=pool.team,
            )
            for pool in config.team_cpu_pools
        ],
        shared_pool_teams=shared_pool_teams(config),
        dns=config.cluster.dns.value,
        google_apis=google_api_egress(config).value,
        scratch_bucket=config.bucket_name,
        team_namespaces=[team.name for team in config.teams],
        shared_services=[service.name for service in config.shared_services],
        queues=_shared_queues(config),
        versions=SharedVersions(
            jobset=addons.jobset.version if addons.jobset.install else None,
            pathways_job=(
                addons.pathways_job.version
                if addons.pathways_job.install and config.needs_pathways_controller
                else None
            ),
            kueue=kueue_addon.version if config.kueue_enabled else None,
        ),
    )
    return contract.model_dump(mode="json", exclude_none=True)


def _shared_tpu_pools(config: StackConfig) -> list[SharedTpuPool]:
    held = held_node_pools(config)
    return [
        SharedTpuPool(
            name=pool.name,
            generation=pool.shape.generation.value,
            topology=pool.shape.topology,
            machine_type=pool.shape.machine_type,
            slices=pool.slices,
            chips=pool.slices * pool.shape.chips,
            node_labels=tpu_node_labels(pool.shape),
            node_pools=pool.node_pool_names(),
            capacity=pool.capacity,
            held=held.get(pool.name, []),
            team=pool.team,
        )
        for pool in config.tpu_pools
    ]


def _shared_queues(config: StackConfig) -> SharedQueues:
    """The queues: each team with a quota or dedicated pools has a ClusterQueue of its own."""
    own = [*(q.team for q in config.addons.kueue.team_quotas), *config.dedicated_teams]
    return SharedQueues(
        enabled=config.kueue_enabled,
        queue_label=QUEUE_LABEL,
        local_queue=LOCAL_QUEUE,
        default_cluster_queue=CLUSTER_QUEUE,
        team_cluster_queues=team_cluster_queues(own),
        team_quota_chips=team_quota_chips(config),
        priority_classes=(
            {p.value: v for p, v in PRIORITY_CLASSES.items()} if config.kueue_enabled else {}
        ),
    )


def held_node_pools(config: StackConfig) -> dict[str, list[HeldNodePool]]:
    """Per TPU pool, the node pools the stack's jobs are pinned to (``node_pool_pins``) or
    select, and for a job with neither, every node pool of its TPU pool (it may land on any)."""
    pins = node_pool_pins(config)
    jobs: dict[tuple[str, str], list[str]] = defaultdict(list)
    colocated: set[tuple[str, str]] = set()
    for _, entry in config.deployments():
        pool = config.pool(entry.pool)
        assert pool is not None  # guaranteed by the stack's workload checks
        pinned = pins.get(job_key(entry)) or selected_node_pool(entry)
        for node_pool in [pinned] if pinned else pool.node_pool_names():
            jobs[(pool.name, node_pool)].append(f"{deployment_namespace(entry)}/{entry.name}")
            if is_colocated(entry):
                colocated.add((pool.name, node_pool))
    held: dict[str, list[HeldNodePool]] = defaultdict(list)
    for pool in config.tpu_pools:
        for node_pool in pool.node_pool_names():
            if (where := (pool.name, node_pool)) in jobs:
                held[pool.name].append(
                    HeldNodePool(
                        node_pool=node_pool, jobs=jobs[where], colocated=where in colocated
                    )
                )
    return held


def reference_outputs(config: StackConfig, stack: str) -> dict[str, Any]:
    """What stack ``stack`` exports for the StackReferences of other stacks (its program exports
    it beside its other outputs): a cluster owner's contract; nothing from a stack that creates
    no cluster. A function of the validated config alone: the offline plan reads another
    stack's contract with it, without running that stack's program
    (``loader.reference_reader``)."""
    return {OUTPUT: export_contract(config, stack)} if config.creates_cluster else {}


def contract_outputs(contract: SharedCluster) -> dict[str, Any]:
    """A stack's outputs holding ``contract`` (what a StackReference to its owner answers)."""
    return {OUTPUT: contract.model_dump(mode="json")}


def read_contract(outputs: Mapping[str, Any] | None, owner: str) -> SharedCluster:
    """The contract in the outputs of owner stack ``owner`` (None: it has none)."""
    outputs = outputs or {}
    if OUTPUT not in outputs and FLEET_OUTPUT in outputs:
        raise ConfigError(
            [ConfigIssue("owner", fleet_owner_message(owner, CLUSTER_OWNERS))], "owner stack"
        )
    return contract_from_outputs(outputs.get(OUTPUT), owner)


# Who may be named in `owner:` when the stack files are not at hand (`pulumi up`).
CLUSTER_OWNERS = "a stack of this project whose gcp and cluster keys create its cluster"


def fleet_owner_message(owner: str, owners: str) -> str:
    """``owner:`` names a fleet stack: its manager is no cluster for team stacks to join."""
    return (
        f"{owner!r} is a fleet stack: its manager cluster runs no TPU or CPU pool for jobs and "
        "takes no team stacks (it queues JobSets and MultiKueue dispatches them to its workers); "
        f"to run jobs through the fleet, add them to its tpu-pathways:workloads; name a cluster "
        f"owner instead: {owners}"
    )


def owner_problems(values: dict[str, Any], owner: str) -> list[ConfigIssue]:
    """A team stack restating what its owner owns is refused, naming the owner."""
    return [
        ConfigIssue(
            key,
            f"{what} to owner stack {owner!r}, and a team stack reads {key} from it; remove "
            f"{key} from this team stack",
        )
        for key, what in OWNER_KEYS.items()
        if key in values
    ]


def ownership_issues(config: StackConfig) -> list[ConfigIssue]:
    """A team stack owns its namespaces and what is in them, nothing cluster-wide."""
    owner = config.shared_cluster
    if config.owner is None:
        return []
    if owner is None:  # parse_stack_config resolves it first; never a user's mistake
        return [ConfigIssue("owner", "the owner stack's outputs were not read")]
    taken = set(owner.team_namespaces)
    return [
        ConfigIssue(
            f"teams[{i}].name",
            f"namespace {team.name!r} belongs to owner stack {owner.owner_stack!r}; "
            "choose another name for this team stack's namespace",
        )
        for i, team in enumerate(config.teams)
        if team.name in taken
    ]


def contract_from_outputs(outputs: Any, owner: str) -> SharedCluster:
    """Validate what the owner stack exported; a clear error when it is missing or foreign."""
    if not isinstance(outputs, dict):
        raise ConfigError(
            [
                ConfigIssue(
                    "owner",
                    f"stack {owner!r} exports no {OUTPUT!r} output: it is not a cluster-owning "
                    "stack of this program, or it has not been deployed yet (deploy it first)",
                )
            ],
            "owner stack",
        )
    version = outputs.get("contract_version")
    if version != CONTRACT_VERSION:
        raise ConfigError(
            [
                ConfigIssue(
                    "owner",
                    f"stack {owner!r} exports {OUTPUT} version {version!r}; this program reads "
                    f"version {CONTRACT_VERSION}: deploy both stacks from the same revision",
                )
            ],
            "owner stack",
        )
    try:
        return SharedCluster.model_validate(outputs)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(
            [ConfigIssue("owner", f"stack {owner!r} exports an invalid {OUTPUT}: {problems}")],
            "owner stack",
        ) from None
