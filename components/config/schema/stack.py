"""The root of the schema: StackConfig, the keys of one stack file and the facts that follow
from them alone (the cluster's location, the bucket's name, a job's backend). The checks across
the stack's keys are the resolve layer's (``components.resolve.stack_checks``)."""

from __future__ import annotations

from collections import Counter
from functools import cached_property
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    PrivateAttr,
    SecretStr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from components.config import grammars
from components.config.schema.addons import AddonsConfig
from components.config.schema.base import NAMESPACE, ImageTag, Label
from components.config.schema.cluster import ClusterConfig, GcpConfig
from components.config.schema.contract import SharedCluster
from components.config.schema.maintenance import DEFAULT_EXCLUSION, MaintenanceExclusionConfig
from components.config.schema.observability import ObservabilityConfig
from components.config.schema.pools import (
    CpuPoolConfig,
    SystemPoolConfig,
    TeamCpuPoolConfig,
    TpuPoolConfig,
)
from components.config.schema.storage import HomeDirsConfig, LustreConfig
from components.config.schema.teams import DataBucketConfig, ScratchBucketConfig, TeamConfig
from components.config.schema.workloads import (
    EnvValue,
    PathwaysDeployment,
    SecretName,
    SharedServiceConfig,
    WaitForRunningConfig,
    WorkloadConfig,
)
from components.errors import ConfigIssue, KeyedError
from components.gke_versions import CHANNEL_FLOOR, GkeVersion
from components.model import ConfigModel
from components.pathways.controller_model import PATHWAYS_RELEASE
from components.pathways.preflight import PreflightReport
from components.tpu.pricing import PricingOverrides
from components.vocabulary import (
    Environment,
    ReleaseChannel,
    WorkloadBackend,
    default_bucket_name,
    team_prefix,
)


class StackConfig(ConfigModel):
    """Everything under the ``tpu-pathways:`` namespace of one stack file."""

    environment: Environment = Environment.DEV
    """dev, staging or production. Production protects the cluster, pools and bucket."""
    team: Label = ""
    """Team label put on every node pool and bucket."""
    gcp: GcpConfig
    """Project, region and zone."""
    cluster: ClusterConfig
    """The GKE cluster (or the existing one to target)."""
    cpu_pool: CpuPoolConfig = CpuPoolConfig()
    """The CPU pool for Pathways head pods."""
    system_pool: SystemPoolConfig = SystemPoolConfig()
    """The pool for kube-system and the controllers (stacks that own their cluster)."""
    tpu_pools: list[TpuPoolConfig] = []
    """TPU pools; each is one or more identical slices."""
    team_cpu_pools: list[TeamCpuPoolConfig] = []
    """CPU pools dedicated to one team namespace's Pathways heads (with its dedicated TPU
    pools, tpuPools[].team: the team's own node service account and nodes)."""
    addons: AddonsConfig = AddonsConfig()
    """JobSet, PathwaysJob controller and Kueue installs."""
    scratch_bucket: ScratchBucketConfig = ScratchBucketConfig()
    """The Pathways scratch bucket."""
    data_buckets: list[DataBucketConfig] = []
    """Existing buckets the Pathways pods read or write (datasets, prompts, checkpoints): the
    node service account gets objectViewer or objectUser on each, no project-wide role. The
    preflight refuses a gs:// path in a workload that no grant reaches."""
    pathways_version: ImageTag = PATHWAYS_RELEASE
    """Pathways release (server and proxy_server image tag) of every workload and shared service
    that does not set its own; 'latest' only in environment dev."""
    teams: list[TeamConfig] = [TeamConfig(name="pathways")]
    """Team namespaces (each with its workload service account and Kueue LocalQueue)."""
    workload_backend: WorkloadBackend = WorkloadBackend.PATHWAYS_JOB
    """What workloads and shared services are created as, unless they set ``backend``:
    pathwaysjob (a PathwaysJob; needs the PathwaysJob controller) or jobset (the JobSet XPK 1.16
    renders, no controller: a stack whose jobs all use it does not install the controller)."""
    workloads: list[WorkloadConfig] = []
    """Pathways workloads (PathwaysJobs)."""
    shared_services: list[SharedServiceConfig] = []
    """Shared Pathways services."""
    wait_for_running: WaitForRunningConfig = WaitForRunningConfig()
    """Whether and how long `pulumi up` waits for PathwaysJobs to be Running."""
    lustre: list[LustreConfig] = []
    """Managed Lustre file systems (high-throughput checkpoints) in the cluster's VPC, each
    mounted by the teams it lists (docs/storage.md); needs a network this stack creates."""
    home_dirs: HomeDirsConfig | None = None
    """Shared home directories: a Filestore share per team, mounted by workloads with
    ``homeDir: true``."""
    observability: ObservabilityConfig = ObservabilityConfig()
    """Managed Service for Prometheus, controller metrics, the stack's Cloud Monitoring dashboard
    and alerts (stacks that own their cluster; docs/operations.md)."""
    pricing: PricingOverrides = PricingOverrides()
    """Price overrides for the plan's cost estimate (e.g. your reservation's chip-hour rate)."""
    owner: Annotated[str, AfterValidator(lambda v: _owner_ref(v))] | None = None
    """Team stack: the stack that owns the cluster (a stack name of this project, or
    <org>/<project>/<stack> with the organization this stack deploys in: `pulumi up` refuses
    another). Its pools, bucket and queues are read from it (StackReference); this stack then
    owns only its team namespaces and what is in them."""

    _owner: SharedCluster | None = PrivateAttr(None)
    # The preflight the parse ran against this stack's own pools and grants (None: not run, or
    # run with jobs left out); ``preflight.run_preflight`` reuses it, so a plan runs it once.
    _preflight: PreflightReport | None = PrivateAttr(None)

    secrets: dict[SecretName, SecretStr] = {}
    """Pulumi config secrets that env values name with {configSecret: NAME}; set each with
    `pulumi config set --secret --path 'tpu-pathways:secrets.NAME' VALUE` (stored encrypted;
    the offline plan, which has no key, shows them as [secret])."""

    @field_validator("secrets", mode="before")
    @classmethod
    def _secret_texts(cls, value: object) -> object:
        """Type errors here must not echo the value, as pydantic's messages would."""
        if not isinstance(value, dict):
            raise ValueError("must be a mapping of names to secret values")
        for name, secret in value.items():
            if not isinstance(secret, str):
                raise KeyedError.at(
                    str(name), f"must be text, not {type(secret).__name__} (value not shown)"
                )
            # It reaches a container as an environment value: the same bounds, never shown.
            if problem := grammars.env_value_problem(secret):
                raise KeyedError.at(str(name), f"{problem} (value not shown)")
        return value

    @model_validator(mode="after")
    def _read_owner(self, info: ValidationInfo) -> StackConfig:
        self._owner = (info.context or {}).get("owner") if self.owner is not None else None
        return self

    @field_validator("tpu_pools")
    @classmethod
    def _unique_pools(cls, pools: list[TpuPoolConfig]) -> list[TpuPoolConfig]:
        _raise_duplicates([p.name for p in pools], "pool")
        return pools

    @field_validator("lustre")
    @classmethod
    def _unique_lustre(cls, systems: list[LustreConfig]) -> list[LustreConfig]:
        _raise_duplicates([s.name for s in systems], "Lustre file system")
        return systems

    @field_validator("teams")
    @classmethod
    def _unique_teams(cls, teams: list[TeamConfig]) -> list[TeamConfig]:
        _raise_duplicates([t.name for t in teams], "team")
        return teams

    @property
    def max_node_count(self) -> int:
        """The most nodes the stack's pools can have (what the JobSet controller is sized for
        and the subnetwork's ranges must hold)."""
        cpu = self.cpu_pool.max_nodes + (self.system_pool.max_nodes if self.creates_cluster else 0)
        cpu += sum(pool.max_nodes for pool in self.team_cpu_pools)
        return cpu + sum(pool.slices * pool.shape.hosts for pool in self.tpu_pools)

    def team_cpu_pool(self, team: str) -> TeamCpuPoolConfig | None:
        """The CPU pool dedicated to team namespace ``team`` (None: it has none)."""
        return next((p for p in self.team_cpu_pools if p.team == team), None)

    @property
    def dedicated_teams(self) -> list[str]:
        """Team namespaces that pools are dedicated to, each once, in the config's order."""
        teams = [p.team for p in self.team_cpu_pools] + [p.team for p in self.tpu_pools if p.team]
        return list(dict.fromkeys(teams))

    def backend_of(self, entry: PathwaysDeployment) -> WorkloadBackend:
        """The backend a workload or shared service uses: its own, else the stack's."""
        return entry.backend or self.workload_backend

    @property
    def needs_pathways_controller(self) -> bool:
        """Whether the stack's jobs need the PathwaysJob controller: a stack with no jobs needs
        it when its default backend does (team stacks may deploy on its cluster)."""
        backends = {self.backend_of(entry) for _, entry in self.deployments()}
        backends.add(self.workload_backend)
        return WorkloadBackend.PATHWAYS_JOB in backends

    def deployments(self) -> list[tuple[str, PathwaysDeployment]]:
        """Every PathwaysJob the stack declares, workloads then shared services, with its key."""
        entries: list[tuple[str, PathwaysDeployment]] = [
            (f"workloads[{i}]", w) for i, w in enumerate(self.workloads)
        ]
        entries += [(f"sharedServices[{i}]", s) for i, s in enumerate(self.shared_services)]
        return entries

    def env_maps(self) -> list[tuple[str, dict[str, EnvValue]]]:
        """Every env map of the stack with its config key: workloads' and their components',
        and shared services' components'."""
        return [found for key, entry in self.deployments() for found in entry.env_maps(key)]

    @property
    def kueue_enabled(self) -> bool:
        """Kueue's setting, or its default: on when the stack owns its cluster."""
        enabled = self.addons.kueue.enabled
        return self.creates_cluster if enabled is None else enabled

    @property
    def shared_cluster(self) -> SharedCluster | None:
        """The owner's exported contract, for a team stack (``owner:``)."""
        return self._owner

    @property
    def queues_jobs(self) -> bool:
        """Whether Kueue (this stack's, or the owner's) admits the stack's jobs."""
        if self._owner is not None:
            return self._owner.queues.enabled
        return self.kueue_enabled

    @property
    def cluster_location(self) -> str:
        return self.gcp.region if self.cluster.regional else self.gcp.zone

    @property
    def provisioned_chips(self) -> int:
        return sum(pool.slices * pool.shape.chips for pool in self.tpu_pools)

    @property
    def bucket_name(self) -> str:
        return self.scratch_bucket.name or default_bucket_name(self.gcp.project, self.cluster.name)

    def scratch_prefix(self, team: str) -> str:
        """The team's own prefix of the scratch bucket: ``_/<team>/`` when pools are dedicated
        to it (in this stack, or in a team stack's owner), else ``<team>/``."""
        return team_prefix(team, dedicated=team in self.dedicated_teams)

    def team_scratch_url(self, team: str) -> str:
        """gs:// URL of the team's own prefix of the scratch bucket (its pathwaysDir default)."""
        return f"gs://{self.bucket_name}/{self.scratch_prefix(team)}"

    @property
    def protects_state(self) -> bool:
        """Production stacks protect the cluster, node pools and bucket from deletion."""
        return self.environment is Environment.PRODUCTION

    @property
    def private_nodes(self) -> bool:
        """Private nodes unless the stack says otherwise; production stacks default to them."""
        explicit = self.cluster.private_nodes
        return self.environment is Environment.PRODUCTION if explicit is None else explicit

    @property
    def release_channel(self) -> ReleaseChannel:
        """The cluster's channel: as given, else RAPID in dev and REGULAR elsewhere."""
        if self.cluster.release_channel is not None:
            return self.cluster.release_channel
        dev = self.environment is Environment.DEV
        return ReleaseChannel.RAPID if dev else ReleaseChannel.REGULAR

    @property
    def maintenance_exclusions(self) -> list[MaintenanceExclusionConfig]:
        """The cluster's exclusions: as given, else, in staging and production off the RAPID
        channel, no minor or node upgrades until end of support. None in dev, and none by default
        on RAPID: XPK 1.16 adds this exclusion only off RAPID
        (xpk/core/blueprint/blueprint_generator.py), whose versions reach end of support too soon
        for it to hold."""
        explicit = self.cluster.maintenance.exclusions
        if explicit is not None:
            return explicit
        rapid = self.release_channel is ReleaseChannel.RAPID
        return [] if self.environment is Environment.DEV or rapid else [DEFAULT_EXCLUSION]

    @property
    def creates_cluster(self) -> bool:
        return self.cluster.existing is None

    @property
    def gke_version_floor(self) -> GkeVersion | None:
        """The oldest GKE version the stack's cluster runs, as far as the stack knows: a cluster
        an owner stack creates is on a release channel (``gke_versions.CHANNEL_FLOOR``, or its
        ``minMasterVersion`` if higher), and so is a team stack's owner's; an existing cluster's
        is what ``cluster.existing.gkeVersion`` says (None: not known)."""
        existing = self.cluster.existing
        if existing is not None and self.owner is None:
            return GkeVersion.parse(existing.gke_version) if existing.gke_version else None
        pinned = self.cluster.min_master_version
        return max(CHANNEL_FLOOR, GkeVersion.parse(pinned)) if pinned else CHANNEL_FLOOR

    def pathways_version_of(self, entry: PathwaysDeployment) -> str:
        """The release a workload or shared service runs: its own, else the stack's."""
        return entry.pathways_version or self.pathways_version

    def pool(self, name: str) -> TpuPoolConfig | None:
        return self._pools_by_name.get(name)

    @cached_property
    def _pools_by_name(self) -> dict[str, TpuPoolConfig]:
        """Pools by name, the first of a (refused) duplicate name: ``pool`` is asked per job."""
        return {p.name: p for p in reversed(self.tpu_pools)}


def _owner_ref(value: str) -> str:
    grammars.parse_owner_ref(value)
    return value


def _raise_duplicates(names: list[str], what: str) -> None:
    counts = Counter(names)
    issues = [
        ConfigIssue(f"[{i}].name", f"{name!r} is used by more than one {what}")
        for i, name in enumerate(names)
        if counts[name] > 1
    ]
    if issues:
        raise KeyedError(issues)


def namespace_values(config: dict[str, Any]) -> dict[str, Any]:
    """Pick this project's keys out of a Pulumi config map ({'tpu-pathways:gcp': ...})."""
    prefix = NAMESPACE + ":"
    return {k[len(prefix) :]: v for k, v in config.items() if k.startswith(prefix)}
