"""From a few lines of workload config to a production-ready PathwaysJob spec.

The stack layer's mapping of ``workloads`` and ``sharedServices`` entries to the
``PathwaysJobSpec``s and addresses the program and the preflight use (pure: no Pulumi).

The worker type and topology come from the named TPU pool, so a job cannot ask for a shape the
stack does not provision. The user container gets what Pathways needs in production: the host's
/tmp (shared with a Pathways worker on the same host; the controller v0.1.4 mounts it in the
workers, not in the resource manager or proxy), explicit resources that fit the head's node, a
SIGTERM-forwarding wrapper (checkpoint on preemption), the head pinned to the CPU pool in the
default mode, priority on head and workers, and the Kueue queue label.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from components.config.schema import (
    EnvFromConfigSecret,
    EnvFromSecret,
    EnvValue,
    PathwaysDeployment,
    ProxyCredentials,
    SharedServiceConfig,
    StackConfig,
    WorkloadConfig,
    WorkloadMode,
)
from components.config.schema.contract import HeldNodePool
from components.labels import NODE_POOL_LABEL, standard_labels
from components.pathways.jobset import render_jobset
from components.pathways.service_client import (
    INSECURE_CREDENTIALS_ENV,
    INSECURE_PROXY_OPTION,
    SERVICE_NAMESPACE,
    connect_call,
    default_slice_restarts,
)
from components.pathways.spec import (
    PROXY_PORT,
    ComponentType,
    Controller,
    CustomComponent,
    DeploymentMode,
    EnvVar,
    PathwaysJobSpec,
    Worker,
    WorkerType,
    proxy_address,
    resource_manager_address,
)
from components.pathways.user_container import UserContainer
from components.resolve.storage import claim_mounts, gcs_volumes, gcsfuse_annotations
from components.vocabulary import LOCAL_QUEUE, WorkloadBackend

_DEPLOYMENT_MODES = {
    WorkloadMode.TRAINING: DeploymentMode.DEFAULT,
    WorkloadMode.INFERENCE: DeploymentMode.COLOCATE_HEAD_WITH_WORKERS,
    WorkloadMode.HEADLESS: DeploymentMode.DEFAULT,
}


def config_secrets_name(workload: PathwaysDeployment) -> str:
    """The Kubernetes Secret that carries a workload's config secrets (in its namespace)."""
    return f"{workload.name}-config-secrets"


def used_config_secrets(workload: PathwaysDeployment) -> list[str]:
    """The entries of the stack's ``secrets`` that the workload's env values name."""
    maps = [c.env for c in workload.custom_components]
    if isinstance(workload, WorkloadConfig):
        maps.append(workload.env)
    return sorted(
        {
            v.config_secret
            for env in maps
            for v in env.values()
            if isinstance(v, EnvFromConfigSecret)
        }
    )


def env_source(workload: PathwaysDeployment, value: EnvValue) -> str | dict:
    """An env value as the container gets it: plain text, or a reference (valueFrom) the
    kubelet resolves from a Secret (a config secret's value never enters the PathwaysJob)."""
    if isinstance(value, str):
        return value
    if isinstance(value, EnvFromSecret):
        ref = value.secret_key_ref
        return {"secretKeyRef": {"name": ref.name, "key": ref.key}}
    return {"secretKeyRef": {"name": config_secrets_name(workload), "key": value.config_secret}}


def env_entry(workload: PathwaysDeployment, name: str, value: EnvValue) -> dict:
    """A container env entry (``env_source``)."""
    source = env_source(workload, value)
    if isinstance(source, str):
        return {"name": name, "value": source}
    return {"name": name, "valueFrom": source}


def job_key(entry: PathwaysDeployment) -> str:
    """A job's name in its namespace, as the plan's summary keys it."""
    return f"{entry.team}/{entry.name}"


def node_pool_pins(config: StackConfig) -> dict[str, str]:
    """The GKE node pool each job is pinned to (``job_key`` -> node pool), in the TPU pools
    that run an ``inference`` (colocated) workload of this stack or of its owner.

    A colocated job's workers are bound to the node pool its head lands on, and the head
    (which selects the workers' nodeSelector plus accelerator and topology: controller v0.1.4
    makeTPUNodeSelector) is kept out of no pool another job holds. So each colocated job gets a
    node pool of its own, named in its workers' nodeSelector (which pins the head too), and the
    single-slice jobs beside it get the next ones, in config order: colocated workloads first,
    then the others, then shared services. A job that already selects a node pool keeps it, a
    node pool the owner's jobs hold (a team stack: ``SharedTpuPool.held``) is never handed out,
    and a job of several slices cannot be pinned (a nodeSelector names one pool); the preflight
    refuses any two jobs still able to meet on a colocated job's pool."""
    by_pool: dict[str, list[PathwaysDeployment]] = defaultdict(list)
    for entry in [*config.workloads, *config.shared_services]:
        by_pool[entry.pool].append(entry)
    pools = {p.name: p for p in config.tpu_pools}
    pins: dict[str, str] = {}
    for name, entries in by_pool.items():
        held = owner_held_node_pools(config, name)
        colocated = [e for e in entries if is_colocated(e)]
        owner_colocated = any(h.colocated for h in held.values())
        if not (colocated or owner_colocated) or name not in pools:
            continue
        chosen = {selected_node_pool(e) for e in entries} - {None}
        free = [n for n in pools[name].node_pool_names() if n not in chosen and n not in held]
        rest = [e for e in entries if not is_colocated(e) and e.slices == 1]
        pinnable = [e for e in colocated + rest if selected_node_pool(e) is None]
        pins.update((job_key(e), node_pool) for e, node_pool in zip(pinnable, free, strict=False))
    return pins


def owner_held_node_pools(config: StackConfig, pool: str) -> dict[str, HeldNodePool]:
    """The node pools of TPU pool ``pool`` the owner's jobs hold (a team stack; else none)."""
    owner = config.shared_cluster
    shared = next((p for p in owner.tpu_pools if p.name == pool), None) if owner else None
    return shared.held_node_pools() if shared else {}


def is_colocated(entry: PathwaysDeployment) -> bool:
    return isinstance(entry, WorkloadConfig) and entry.mode is WorkloadMode.INFERENCE


def selected_node_pool(entry: PathwaysDeployment) -> str | None:
    if isinstance(entry, WorkloadConfig):
        return entry.node_selector.get(NODE_POOL_LABEL)
    return None


def pinned_selector(
    extra: Mapping[str, str], entry: PathwaysDeployment, pins: Mapping[str, str]
) -> dict[str, str] | None:
    """The workers' nodeSelector: the entry's own labels plus its node pool pin, if any."""
    selector = dict(extra)
    if (node_pool := pins.get(job_key(entry))) is not None:
        selector[NODE_POOL_LABEL] = node_pool
    return selector or None


def default_pathways_dir(config: StackConfig, team: str, job_name: str) -> str:
    """Under the team's own prefix of the scratch bucket, the only part its grants reach."""
    return f"{config.team_scratch_url(team)}{job_name}"


def pool_worker(config: StackConfig, entry: PathwaysDeployment, **options: object) -> Worker:
    """The workers of a job: type and topology are those of the stack pool it names."""
    pool = config.pool(entry.pool)
    assert pool is not None  # guaranteed by the stack's workload checks
    return Worker(
        type=WorkerType(pool.shape.machine_type),
        topology=pool.shape.topology,
        num_slices=entry.slices,
        **options,
    )


def deployment_namespace(entry: PathwaysDeployment) -> str:
    """Where a PathwaysJob runs: a workload in its team's namespace, a shared service in the one
    namespace pathwaysutils' client reads (its team still owns it: labels, prefix, quota)."""
    return SERVICE_NAMESPACE if isinstance(entry, SharedServiceConfig) else entry.team


def insecure_proxy(entry: WorkloadConfig | SharedServiceConfig) -> bool:
    """Whether the entry's proxies (its own, or a service's clients') use insecure gRPC."""
    return entry.proxy_credentials is ProxyCredentials.INSECURE


def custom_components(entry: PathwaysDeployment) -> list[CustomComponent] | None:
    """The entry's component overrides (pinned images, flags, env), as the CRD takes them; a
    headless workload with ``proxyCredentials: insecure`` gets the proxy's env entry here too."""
    components = [
        CustomComponent(
            component_type=ComponentType(c.type),
            image=c.image,
            custom_flags=list(c.flags) or None,
            custom_env=[EnvVar.model_validate(env_entry(entry, k, v)) for k, v in c.env.items()]
            or None,
        )
        for c in entry.custom_components
    ]
    if isinstance(entry, WorkloadConfig) and insecure_proxy(entry):
        components = _with_insecure_proxy(components)
    return components or None


def _with_insecure_proxy(components: list[CustomComponent]) -> list[CustomComponent]:
    """The controller adds a proxy_server component's customEnv to the proxy container
    (AddCustomComponentEnvVars, pathways-job v0.1.4)."""
    insecure = EnvVar(name=INSECURE_CREDENTIALS_ENV, value="true")
    proxy = next(
        (c for c in components if c.component_type is ComponentType.PROXY_SERVER),
        CustomComponent(component_type=ComponentType.PROXY_SERVER),
    )
    updated = proxy.model_copy(update={"custom_env": [*(proxy.custom_env or []), insecure]})
    others = [c for c in components if c.component_type is not ComponentType.PROXY_SERVER]
    return [*others, updated]


def workload_spec(
    config: StackConfig, workload: WorkloadConfig, pins: Mapping[str, str]
) -> PathwaysJobSpec:
    """The PathwaysJob spec of a validated workload of a validated stack (``pins``: the
    stack's ``node_pool_pins``)."""
    priority = workload.priority.value if workload.priority else None
    worker = pool_worker(
        config,
        workload,
        max_slice_restarts=workload.max_slice_restarts,
        termination_grace_period_seconds=workload.termination_grace_period_seconds,
        priority_class_name=priority,
        node_selector=pinned_selector(workload.node_selector, workload, pins),
    )
    options = {
        "enable_metrics_collection": workload.enable_metrics_collection or None,
        "elastic_slices": workload.elastic_slices,
    }
    mode = _DEPLOYMENT_MODES[workload.mode]
    if workload.mode is WorkloadMode.HEADLESS:
        controller = Controller(deployment_mode=mode, **options)
    else:
        cpu_pool = (
            head_pool(config, workload.team) if workload.mode is WorkloadMode.TRAINING else None
        )
        controller = user_container(config, workload).controller(mode, cpu_pool, **options)
    return PathwaysJobSpec(
        workers=[worker],
        controller=controller,
        custom_components=custom_components(workload),
        max_restarts=workload.max_restarts,
        pathways_dir=workload.pathways_dir
        or default_pathways_dir(config, workload.team, workload.name),
        pathways_version=config.pathways_version_of(workload),
    )


def user_container(config: StackConfig, workload: WorkloadConfig) -> UserContainer:
    """The workload's user container, with the team's service account."""
    team = next(t for t in config.teams if t.name == workload.team)
    return UserContainer(
        image=workload.image or "",
        command=workload.command,
        cpu=workload.resources.cpu,
        memory=workload.resources.memory,
        env={k: env_source(workload, v) for k, v in workload.env.items()},
        service_account=team.service_account,
        priority_class_name=workload.priority.value if workload.priority else None,
        termination_grace_period_seconds=workload.termination_grace_period_seconds,
        volumes=tuple(gcs_volumes(config, workload)),
        claims=tuple(claim_mounts(config, workload)),
    )


def user_pod_template(config: StackConfig, workload: WorkloadConfig) -> dict:
    """The head pod's user part: the controller adds the resource manager and proxy to it."""
    mode = _DEPLOYMENT_MODES[workload.mode]
    cpu_pool = head_pool(config, workload.team) if workload.mode is WorkloadMode.TRAINING else None
    return user_container(config, workload).pod_template(mode, cpu_pool)


def port_forward_command(name: str, namespace: str) -> str:
    """How a notebook reaches a headless job's proxy on localhost (the proxy's own port)."""
    selector = (
        f"jobset.sigs.k8s.io/jobset-name={name},jobset.sigs.k8s.io/replicatedjob-name=pathways-head"
    )
    return (
        f"kubectl port-forward -n {namespace} "
        f"$(kubectl get pods -n {namespace} -l {selector} -o name | head -n 1) "
        f"{PROXY_PORT}:{PROXY_PORT}"
    )


@dataclass(frozen=True)
class WorkloadEndpoints:
    proxy: str
    port_forward: str | None


def workload_endpoints(workload: WorkloadConfig) -> WorkloadEndpoints:
    headless = workload.mode is WorkloadMode.HEADLESS
    forward = port_forward_command(workload.name, workload.team) if headless else None
    return WorkloadEndpoints(proxy_address(workload.name, workload.team), forward)


def shared_service_address(service: SharedServiceConfig) -> str:
    """Where pathwaysutils clients reach the service's resource manager (fully qualified, so it
    resolves whatever namespace a client's proxy runs in)."""
    return resource_manager_address(service.name, SERVICE_NAMESPACE)


def service_slice_restarts(config: StackConfig, service: SharedServiceConfig) -> int:
    pool = config.pool(service.pool)
    assert pool is not None  # guaranteed by the stack's workload checks
    if service.max_slice_restarts is not None:
        return service.max_slice_restarts
    return default_slice_restarts(pool.shape.hosts)


def shared_service_spec(
    config: StackConfig, service: SharedServiceConfig, pins: Mapping[str, str]
) -> PathwaysJobSpec:
    """A headless job in the default mode: resource manager and workers, no user container
    (``pins``: the stack's ``node_pool_pins``).

    The v0.1.4 controller gives each slice's Job a backoffLimit of hosts x maxSliceRestarts
    only when elasticSlices > 0 (else hosts x 4: pathwaysjob_controller.go ~692-715), and
    elasticSlices reaches nothing but the head's own proxy (``--num_elastic_slices``, ~632),
    which no client of a shared service uses: so elasticSlices 1 is what makes a worker
    failure restart its slice instead of, after four, the whole service."""
    worker = pool_worker(
        config,
        service,
        max_slice_restarts=service_slice_restarts(config, service),
        node_selector=pinned_selector({}, service, pins),
    )
    return PathwaysJobSpec(
        workers=[worker],
        controller=Controller(deployment_mode=DeploymentMode.DEFAULT, elastic_slices=1),
        custom_components=custom_components(service),
        max_restarts=service.max_restarts,
        pathways_dir=default_pathways_dir(config, service.team, service.name),
        pathways_version=config.pathways_version_of(service),
    )


def service_queue_name(service: SharedServiceConfig) -> str:
    """The service's own LocalQueue in ``default`` (named after it: unique there, as it is)."""
    return service.name


def shared_service_connect(config: StackConfig, service: SharedServiceConfig) -> str:
    """The ``isc_pathways.connect(...)`` call a client pastes."""
    pool = config.pool(service.pool)
    assert pool is not None  # guaranteed by the stack's workload checks
    return connect_call(
        cluster=config.cluster.name,
        project=config.gcp.project,
        location=config.cluster_location,
        gcs_bucket=default_pathways_dir(config, service.team, service.name),
        pathways_service=shared_service_address(service),
        expected_tpu_instances={pool.shape.pathways_instance_type: service.slices},
        proxy_options=[INSECURE_PROXY_OPTION] if insecure_proxy(service) else [],
    )


def team_service_account(config: StackConfig, entry: PathwaysDeployment) -> str:
    """The Kubernetes service account of the entry's team (its Workload Identity)."""
    return next(t.service_account for t in config.teams if t.name == entry.team)


def workload_queue_name(config: StackConfig) -> str | None:
    """The LocalQueue a workload's JobSet is admitted through (None without Kueue)."""
    return LOCAL_QUEUE if config.queues_jobs else None


def workload_jobset(config: StackConfig, workload: WorkloadConfig, pins: Mapping[str, str]) -> dict:
    """The JobSet a jobset-backend workload runs as: the spec the PathwaysJob would carry,
    rendered as XPK 1.16 does, queued on the team's LocalQueue, a headless head pinned to the
    CPU pool, and off the host network as the team's service account when asked."""
    return render_jobset(
        workload.name,
        workload.team,
        workload_spec(config, workload, pins),
        queue_name=workload_queue_name(config),
        host_network=workload.host_network,
        service_account=None if workload.host_network else team_service_account(config, workload),
        head_node_selector=cpu_pool_selector(config, workload.team),
        head_annotations=gcsfuse_annotations(config, workload),
    )


def head_pool(config: StackConfig, team: str | None) -> str:
    """The CPU pool a team's heads run on: the one dedicated to it, else the shared one."""
    dedicated = config.team_cpu_pool(team) if team is not None else None
    return dedicated.name if dedicated is not None else config.cpu_pool.name


def cpu_pool_selector(config: StackConfig, team: str | None = None) -> dict[str, str]:
    """Where a head without a user container runs (the controller's headless head has no
    nodeSelector; the JobSet backend places it on the CPU pool, as XPK pins its head to it)."""
    return {NODE_POOL_LABEL: head_pool(config, team)}


def service_jobset(
    config: StackConfig, service: SharedServiceConfig, pins: Mapping[str, str]
) -> dict:
    """The JobSet a jobset-backend shared service runs as: its head runs the resource manager
    only, as pathwaysutils 0.1.13's deployer runs it (experimental/gke/jobset.py,
    ``shared_pathways_service=True``: "runs no proxy"): each client brings its own proxy."""
    return render_jobset(
        service.name,
        SERVICE_NAMESPACE,
        shared_service_spec(config, service, pins),
        labels=standard_labels(service.team),
        queue_name=service_queue_name(service) if config.queues_jobs else None,
        head_node_selector=cpu_pool_selector(config, service.team),
        head_proxy=False,
    )


def deployment_jobset(
    config: StackConfig, entry: PathwaysDeployment, pins: Mapping[str, str]
) -> dict | None:
    """The JobSet of a jobset-backend workload or service; None for the PathwaysJob backend."""
    if config.backend_of(entry) is not WorkloadBackend.JOBSET:
        return None
    if isinstance(entry, WorkloadConfig):
        return workload_jobset(config, entry, pins)
    return service_jobset(config, entry, pins)


def holds_client_port(config: StackConfig, entry: PathwaysDeployment) -> bool:
    """Whether the entry's head holds the proxy's host port on a CPU node, where a shared
    service's client proxy (host port 29000 too) then cannot run: a head with a proxy on the
    host network and not colocated with its workers. A jobset-backend service head runs no
    proxy; a workload off the host network holds no host port."""
    if isinstance(entry, SharedServiceConfig):
        return config.backend_of(entry) is WorkloadBackend.PATHWAYS_JOB
    return entry.mode is not WorkloadMode.INFERENCE and entry.host_network
