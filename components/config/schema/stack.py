"""The root of the schema: StackConfig, its cross-checks and the parse entry point."""

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

from components.config import capacity, grammars
from components.config.schema.addons import AddonsConfig
from components.config.schema.base import NAMESPACE, ImageTag, Label
from components.config.schema.cluster import ClusterConfig, GcpConfig
from components.config.schema.contract import SharedCluster
from components.config.schema.maintenance import DEFAULT_EXCLUSION, MaintenanceExclusionConfig
from components.config.schema.pools import CpuPoolConfig, SystemPoolConfig, TpuPoolConfig
from components.config.schema.teams import DataBucketConfig, ScratchBucketConfig, TeamConfig
from components.config.schema.workloads import (
    EnvFromConfigSecret,
    EnvValue,
    PathwaysDeployment,
    SecretName,
    SharedServiceConfig,
    WaitForRunningConfig,
    WorkloadConfig,
    WorkloadMode,
)
from components.errors import ConfigIssue, KeyedError, key_part, shown_value
from components.model import ConfigModel
from components.pathways.controller_model import LATEST, PATHWAYS_RELEASE
from components.pathways.jobset import COLOCATED_UNSUPPORTED
from components.pathways.preflight import PreflightReport
from components.tpu import catalog
from components.tpu.pricing import PricingOverrides
from components.vocabulary import (
    Environment,
    ReleaseChannel,
    WorkloadBackend,
    default_bucket_name,
    jobset_memory_mib,
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
    pricing: PricingOverrides = PricingOverrides()
    """Price overrides for the plan's cost estimate (e.g. your reservation's chip-hour rate)."""
    owner: Annotated[str, AfterValidator(lambda v: _owner_ref(v))] | None = None
    """Team stack: the stack that owns the cluster (a stack name of this project, or
    <org>/<project>/<stack>). Its pools, bucket and queues are read from it (StackReference);
    this stack then owns only its team namespaces and what is in them."""

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

    def cross_check_issues(self, whole_pools: bool = True) -> list[ConfigIssue]:
        """The checks across the stack's keys. ``checks.parse_stack_config`` runs them, with the
        workload checks and the preflight, also when entries of a list were refused and left
        out; ``whole_pools`` False then skips the checks that add up every TPU pool."""
        issues = [*self._pool_named_like_cpu_pool(), *self._shared_bucket()]
        if whole_pools:
            issues += self._kueue_quota()
        issues += self._team_quota_issues(whole_pools) + self._ownership_issues()
        issues += self._config_secret_refs() + self._joined_name_collisions()
        issues += self._bucket_name_rules() + self._data_bucket_issues()
        issues += self._latest_pathways() + self._backend_issues() + self._size_issues()
        issues += self._isolation_issues() + self._namespace_quota_issues()
        issues += self._unused_addon_settings()
        return issues

    @field_validator("tpu_pools")
    @classmethod
    def _unique_pools(cls, pools: list[TpuPoolConfig]) -> list[TpuPoolConfig]:
        _raise_duplicates([p.name for p in pools], "pool")
        return pools

    @field_validator("teams")
    @classmethod
    def _unique_teams(cls, teams: list[TeamConfig]) -> list[TeamConfig]:
        _raise_duplicates([t.name for t in teams], "team")
        return teams

    def _size_issues(self) -> list[ConfigIssue]:
        """What the pools may scale to against GKE's node limit and, in a cluster this stack
        creates, against its ranges and the system pool (``capacity``)."""
        nodes = self.max_node_count
        found = {"tpuPools": capacity.node_count_problem(nodes)}
        if self.creates_cluster:
            found |= self._cluster_size_problems(nodes)
        return [ConfigIssue(key, problem) for key, problem in found.items() if problem]

    def _cluster_size_problems(self, nodes: int) -> dict[str, str | None]:
        network = self.cluster.network
        found = {
            "cluster.network.podsCidr": capacity.pod_range_problem(network.pods_cidr, nodes),
            "cluster.authorizedNetworks": capacity.authorized_networks_problem(
                len(self.cluster.authorized_networks), self.private_nodes
            ),
        }
        if network.create:  # an existing subnetwork's primary range is not this stack's
            found["cluster.network.nodesCidr"] = capacity.node_range_problem(
                network.nodes_cidr, nodes
            )
        if self.addons.jobset.install:  # the patched controller runs on the system pool
            found["systemPool.machineType"] = capacity.controller_memory_problem(
                jobset_memory_mib(nodes), self.system_pool.machine, nodes
            )
        return found

    @property
    def max_node_count(self) -> int:
        """The most nodes the stack's pools can have (what the JobSet controller is sized for
        and the subnetwork's ranges must hold)."""
        cpu = self.cpu_pool.max_nodes + (self.system_pool.max_nodes if self.creates_cluster else 0)
        return cpu + sum(pool.slices * pool.shape.hosts for pool in self.tpu_pools)

    def _latest_pathways(self) -> list[ConfigIssue]:
        """An unpinned release or component image lets a restarted worker pull another build
        than the running resource manager (the controller pulls with imagePullPolicy Always)."""
        if self.environment is Environment.DEV:
            return []
        why = (
            f"allowed only in environment dev (this stack is {self.environment.value}): the "
            "controller pulls images with imagePullPolicy Always, so a restarted worker could "
            "run another build than the resource manager"
        )
        return [
            ConfigIssue(
                key,
                f"{version!r} is {why}; use a Pathways release such as "
                f"'{PATHWAYS_RELEASE}' (the default)",
            )
            for key, version in self._pathways_versions()
            if version is not None and version.lower() == LATEST
        ] + [
            ConfigIssue(key, f"{problem}; an unpinned image is {why}; pin a tag or a digest")
            for key, image in self._component_images()
            if (problem := grammars.unpinned_image_problem(image))
        ]

    def _pathways_versions(self) -> list[tuple[str, str | None]]:
        keys = [("pathwaysVersion", self.pathways_version)]
        keys += [
            (f"{key}.pathwaysVersion", entry.pathways_version) for key, entry in self.deployments()
        ]
        return keys

    def _component_images(self) -> list[tuple[str, str]]:
        return [
            (f"{key}.customComponents[{i}].image", custom.image)
            for key, entry in self.deployments()
            for i, custom in enumerate(entry.custom_components)
            if custom.image is not None
        ]

    def _backend_issues(self) -> list[ConfigIssue]:
        """What only one backend can run: colocated heads (PathwaysJob only) and pods off the
        host network (JobSet only)."""
        issues = []
        for i, workload in enumerate(self.workloads):
            backend = self.backend_of(workload)
            where = _backend_key(i, workload)
            if backend is WorkloadBackend.JOBSET and workload.mode is WorkloadMode.INFERENCE:
                issues.append(
                    ConfigIssue(
                        f"workloads[{i}].mode",
                        f"workload {workload.name!r} runs as a JobSet ({where}), and mode "
                        f"inference {COLOCATED_UNSUPPORTED}; use mode training or headless "
                        "(head on the CPU pool), or set "
                        f"workloads[{i}].backend: {WorkloadBackend.PATHWAYS_JOB.value}",
                    )
                )
            if backend is WorkloadBackend.PATHWAYS_JOB and not workload.host_network:
                issues.append(
                    ConfigIssue(
                        f"workloads[{i}].hostNetwork",
                        f"workload {workload.name!r}: false needs backend "
                        f"{WorkloadBackend.JOBSET.value} (the PathwaysJob controller v0.1.4 "
                        f"always sets hostNetwork: true; this workload uses {where}); set "
                        f"backend: {WorkloadBackend.JOBSET.value} or remove hostNetwork",
                    )
                )
        return issues

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

    def _unused_addon_settings(self) -> list[ConfigIssue]:
        """Settings of an install that does not happen are refused, not silently ignored
        (install: false and enabled: false themselves agree with it; teamQuotas without Kueue
        is refused by ``_team_quota_issues``)."""
        addons = self.addons
        skipped = {
            "jobset": (addons.jobset, self._jobset_skipped()),
            "pathwaysJob": (addons.pathways_job, self._pathways_job_skipped()),
            "kueue": (addons.kueue, self._kueue_skipped()),
        }
        issues = []
        for key, (addon, why) in skipped.items():
            if why is None:
                continue
            fields = type(addon).model_fields
            issues += [
                ConfigIssue(
                    f"addons.{key}.{fields[field].alias or field}",
                    f"{shown_value(value)} is not used: {why}",
                )
                for field in fields
                if field in addon.model_fields_set
                and field not in ("enabled", "team_quotas")
                and (value := getattr(addon, field)) is not False  # install: false asks for nothing
            ]
        return issues

    def _jobset_skipped(self) -> str | None:
        if self.addons.jobset.install:
            return None
        return "addons.jobset.install is false, so this stack installs no JobSet; remove it"

    def _pathways_job_skipped(self) -> str | None:
        if not self.addons.pathways_job.install:
            return (
                "addons.pathwaysJob.install is false, so this stack installs no PathwaysJob "
                "controller; remove it"
            )
        if self.needs_pathways_controller:
            return None
        return (
            "every workload and shared service of this stack runs on the JobSet backend "
            f"(workloadBackend: {WorkloadBackend.JOBSET.value}), so no PathwaysJob controller is "
            "installed; remove addons.pathwaysJob, or set backend: "
            f"{WorkloadBackend.PATHWAYS_JOB.value} on a job that needs the controller"
        )

    def _kueue_skipped(self) -> str | None:
        if self.kueue_enabled:
            return None
        if self.addons.kueue.enabled is False:
            return "addons.kueue.enabled is false, so this stack installs no Kueue; remove it"
        return (
            "Kueue is off on a cluster this stack does not create (addons.kueue.enabled "
            "defaults to false there); remove it, or set enabled: true"
        )

    def _namespace_quota_issues(self) -> list[ConfigIssue]:
        """A team's ResourceQuota its own workloads could never fit. Pathways worker pods request
        no CPU or memory (PathwaysJob controller v0.1.4, and XPK's JobSet: google.com/tpu only),
        and a quota on requests.cpu or requests.memory refuses every pod that does not request
        them; a job needs its head and every worker pod, and every chip of its slices, at once."""
        issues = []
        for i, team in enumerate(self.teams):
            quota, key = team.resource_quota, f"teams[{i}].resourceQuota"
            jobs = [w for w in self.workloads if w.team == team.name]
            if not jobs:
                continue
            for name, value in (("cpu", quota.cpu), ("memoryGib", quota.memory_gib)):
                if value is not None:
                    issues.append(
                        ConfigIssue(
                            f"{key}.{name}",
                            f"{value} would refuse the team's Pathways worker pods, which request "
                            "no CPU or memory (a quota on requests refuses every pod that does "
                            "not make one); remove it and bound pods or tpuChips instead",
                        )
                    )
            for job in jobs:
                pool = self.pool(job.pool)
                if pool is None:
                    continue
                hosts = job.slices * pool.shape.hosts
                needs = {"tpuChips": hosts * pool.shape.chips_per_host, "pods": hosts + 1}
                have = {"tpuChips": quota.tpu_chips, "pods": quota.pods}
                issues += [
                    ConfigIssue(
                        f"{key}.{name}",
                        f"{have[name]} is less than workload {job.name!r} needs at once "
                        f"({needs[name]}: its head and {hosts} worker pod(s) on {job.slices} "
                        f"slice(s) of pool {job.pool!r}); it would never start",
                    )
                    for name in needs
                    if have[name] is not None and needs[name] > have[name]
                ]
        return issues

    def _isolation_issues(self) -> list[ConfigIssue]:
        """What a cluster this stack creates needs for the isolation it promises: a KMS key for
        Secrets in production, and Google Groups for RBAC where a team names its group."""
        if not self.creates_cluster:
            return []
        issues = []
        if self.environment is Environment.PRODUCTION and self.cluster.secrets_encryption is None:
            issues.append(
                ConfigIssue(
                    "cluster.secretsEncryption",
                    "required in production: set kmsKey to a Cloud KMS key "
                    "(projects/<project>/locations/<region>/keyRings/<ring>/cryptoKeys/<key>) "
                    "so Secrets are encrypted in etcd with a key you control",
                )
            )
        issues += self._kms_location_issues()
        if self.cluster.security_group is None:
            issues += [
                ConfigIssue(
                    f"teams[{i}].group",
                    f"{team.group!r} matches nobody unless the cluster has Google Groups for "
                    "RBAC: set cluster.securityGroup to gke-security-groups@<your domain>",
                )
                for i, team in enumerate(self.teams)
                if team.group is not None
            ]
        return issues

    def _kms_location_issues(self) -> list[ConfigIssue]:
        """GKE encrypts Secrets only with a key in the cluster's location (GKE docs, "Encrypt
        secrets at the application layer": the key must be in the same location as the
        cluster). A regional cluster is in gcp.region, and a zonal one's zone is in it too:
        Cloud KMS has no zonal locations, so gcp.region is the one place that fits."""
        encryption = self.cluster.secrets_encryption
        if encryption is None or encryption.location == self.gcp.region:
            return []
        region = repr(self.gcp.region)
        where = (
            f"the cluster's region {region}"
            if self.cluster.regional
            else f"{region}, the region of the cluster's zone {self.gcp.zone!r}"
        )
        return [
            ConfigIssue(
                "cluster.secretsEncryption.kmsKey",
                f"{encryption.kms_key!r} is in location {encryption.location!r}; GKE encrypts "
                "Secrets only with a key in the cluster's location, so its key ring must be in "
                f"{where} (not 'global' nor a multi-region): projects/<project>/locations/"
                f"{self.gcp.region}/keyRings/<ring>/cryptoKeys/<key>",
            )
        ]

    def _data_bucket_issues(self) -> list[ConfigIssue]:
        """One grant per bucket, not the scratch bucket (granted already: a second binding of the
        same role would drop it when removed), and only where this stack owns the nodes."""
        issues = []
        seen: set[str] = set()
        for i, bucket in enumerate(self.data_buckets):
            key = f"dataBuckets[{i}].name"
            if bucket.name in seen:
                issues.append(ConfigIssue(key, f"{bucket.name!r} is listed more than once"))
            if bucket.name == self.bucket_name:
                issues.append(
                    ConfigIssue(
                        key,
                        f"{bucket.name!r} is the scratch bucket, which the node service account "
                        "already has read-write access to; remove it from dataBuckets",
                    )
                )
            seen.add(bucket.name)
        if self.data_buckets and not self.creates_cluster:
            issues.append(ConfigIssue("dataBuckets", self._foreign_nodes_message()))
        return issues

    def _foreign_nodes_message(self) -> str:
        if self.owner is not None:
            return (
                f"this team stack's Pathways pods act as the node service account of owner stack "
                f"{self.owner!r} (host network), which only that stack grants; ask it to add the "
                "buckets to its dataBuckets and remove them here"
            )
        return (
            "needs a cluster this stack creates: the grants go to its node service account; on "
            "an existing cluster, grant the buckets to its nodes' service account where that "
            "cluster is managed"
        )

    def _bucket_name_rules(self) -> list[ConfigIssue]:
        """The bucket name, given or derived from project and cluster, against GCS's rules
        (e.g. a cluster named 'google-...' makes a default name GCS refuses)."""
        problem = grammars.bucket_problem(self.bucket_name)
        if problem is None:
            return []
        key = "scratchBucket.name" if self.scratch_bucket.name else "scratchBucket"
        return [ConfigIssue(key, problem)]

    def _joined_name_collisions(self) -> list[ConfigIssue]:
        """Resource names join config names with '-', so distinct entries can meet in one name
        (team 'a' + workload 'b-c' and team 'a-b' + workload 'c'); Pulumi would then see one
        resource, and GKE one node pool."""
        jobs = [(f"workloads[{i}]", (w.team, w.name)) for i, w in enumerate(self.workloads)]
        jobs += [
            (f"sharedServices[{i}]", (s.team, s.name)) for i, s in enumerate(self.shared_services)
        ]
        accounts = [(f"teams[{i}]", (t.name, t.service_account)) for i, t in enumerate(self.teams)]
        slices = {n: i for i, p in enumerate(self.tpu_pools) for n in p.node_pool_names()}
        cpu_pools = {"cpuPool.name": self.cpu_pool.name}
        if self.creates_cluster:
            cpu_pools["systemPool.name"] = self.system_pool.name
        issues = name_collisions(jobs, "team and name")
        issues += name_collisions(accounts, "name and serviceAccount")
        issues += [
            ConfigIssue(
                key,
                f"{name!r} is also the GKE node pool name of a slice of tpuPools[{slices[name]}]"
                " (slices are named <pool>-<index>); rename one of them",
            )
            for key, name in cpu_pools.items()
            if name in slices
        ]
        return issues

    def _config_secret_refs(self) -> list[ConfigIssue]:
        known = ", ".join(self.secrets) or "none"
        return [
            ConfigIssue(
                f"{key}.{name}",
                f"configSecret {value.config_secret!r} is not an entry of `secrets` (known: "
                f"{known}); set it with pulumi config set --secret --path "
                f"'tpu-pathways:secrets.{value.config_secret}' VALUE",
            )
            for key, env in self.env_maps()
            for name, value in env.items()
            if isinstance(value, EnvFromConfigSecret) and value.config_secret not in self.secrets
        ]

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

    def _pool_named_like_cpu_pool(self) -> list[ConfigIssue]:
        taken = {self.cpu_pool.name: "the CPU pool's name"}
        taken.setdefault(self.system_pool.name, "the system pool's name")
        issues = [
            ConfigIssue(f"tpuPools[{i}].name", f"{pool.name!r} is {taken[pool.name]}")
            for i, pool in enumerate(self.tpu_pools)
            if pool.name in taken
        ]
        if self.creates_cluster and self.system_pool.name == self.cpu_pool.name:
            issues.append(
                ConfigIssue("systemPool.name", f"{self.cpu_pool.name!r} is the CPU pool's name")
            )
        return issues

    @property
    def kueue_enabled(self) -> bool:
        """Kueue's setting, or its default: on when the stack owns its cluster."""
        enabled = self.addons.kueue.enabled
        return self.creates_cluster if enabled is None else enabled

    def _shared_bucket(self) -> list[ConfigIssue]:
        """On a cluster another stack owns, the default bucket name is that stack's bucket."""
        bucket = self.scratch_bucket
        if self.creates_cluster or not bucket.create or bucket.name is not None:
            return []
        return [
            ConfigIssue(
                "scratchBucket",
                f"this stack targets an existing cluster, so creating the default bucket "
                f"{self.bucket_name!r} would collide with the owning stack's; set create: false "
                "and name the owner's bucket, or give this stack's own bucket a name",
            )
        ]

    def _kueue_quota(self) -> list[ConfigIssue]:
        expected = self.addons.kueue.tpu_quota
        chips = self.provisioned_chips
        if expected is None or expected == chips:
            return []
        return [
            ConfigIssue(
                "addons.kueue.tpuQuota",
                f"{expected} does not match the {chips} TPU chips the tpuPools provision; the "
                "ClusterQueue quota is computed from the pools, so remove tpuQuota or fix it",
            )
        ]

    def _team_quota_issues(self, whole_pools: bool = True) -> list[ConfigIssue]:
        """Quotas name shapes the stack provisions and add up to at most what it provisions."""
        kueue, issues = self.addons.kueue, []
        if kueue.team_quotas and not self.kueue_enabled:
            issues.append(ConfigIssue("addons.kueue.teamQuotas", "needs addons.kueue.enabled"))
        _duplicate_quota_teams(
            issues, [q.team for q in kueue.team_quotas], "addons.kueue.teamQuotas"
        )
        if not whole_pools:
            return issues
        provisioned: dict[catalog.TpuShape, int] = {}
        for pool in self.tpu_pools:
            provisioned[pool.shape] = (
                provisioned.get(pool.shape, 0) + pool.slices * pool.shape.chips
            )
        assigned: dict[catalog.TpuShape, int] = {}
        for i, quota in enumerate(kueue.team_quotas):
            for name, chips in quota.chips.items():
                key = f"addons.kueue.teamQuotas[{i}].chips.{key_part(name)}"
                try:
                    shape = catalog.resolve_accelerator(name)
                except catalog.CatalogError as exc:
                    issues.append(ConfigIssue(key, str(exc)))
                    continue
                if shape not in provisioned:
                    have = ", ".join(sorted(s.accelerator_name for s in provisioned)) or "none"
                    issues.append(ConfigIssue(key, f"no TPU pool of this stack is {name}; {have}"))
                    continue
                assigned[shape] = assigned.get(shape, 0) + chips
        for shape, chips in assigned.items():
            if chips > provisioned[shape]:
                issues.append(
                    ConfigIssue(
                        "addons.kueue.teamQuotas",
                        f"quotas give {chips} {shape.accelerator_name} chips to teams but the "
                        f"pools provision {provisioned[shape]}",
                    )
                )
        return issues

    def _ownership_issues(self) -> list[ConfigIssue]:
        """A team stack owns its namespaces and what is in them, nothing cluster-wide."""
        owner = self._owner
        if self.owner is None:
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
            for i, team in enumerate(self.teams)
            if team.name in taken
        ]

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

    def team_scratch_url(self, team: str) -> str:
        """gs:// URL of the team's own prefix of the scratch bucket (its pathwaysDir default)."""
        return f"gs://{self.bucket_name}/{team_prefix(team)}"

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

    def pathways_version_of(self, entry: PathwaysDeployment) -> str:
        """The release a workload or shared service runs: its own, else the stack's."""
        return entry.pathways_version or self.pathways_version

    def pool(self, name: str) -> TpuPoolConfig | None:
        return self._pools_by_name.get(name)

    @cached_property
    def _pools_by_name(self) -> dict[str, TpuPoolConfig]:
        """Pools by name, the first of a (refused) duplicate name: ``pool`` is asked per job."""
        return {p.name: p for p in reversed(self.tpu_pools)}


def _backend_key(index: int, workload: WorkloadConfig) -> str:
    """Where a workload's backend comes from, for messages."""
    if workload.backend is not None:
        return f"workloads[{index}].backend {workload.backend.value!r}"
    return "the stack's workloadBackend"


def _owner_ref(value: str) -> str:
    grammars.parse_owner_ref(value)
    return value


def _duplicate_quota_teams(issues: list[ConfigIssue], teams: list[str], key: str) -> None:
    counts = Counter(teams)
    issues += [
        ConfigIssue(f"{key}[{i}].team", f"{team!r} has more than one quota")
        for i, team in enumerate(teams)
        if counts[team] > 1
    ]


def name_collisions(entries: list[tuple[str, tuple[str, ...]]], what: str) -> list[ConfigIssue]:
    """Entries whose names, joined with '-', are equal though the names differ (exact
    duplicates are reported by their own checks)."""
    first: dict[str, tuple[str, tuple[str, ...]]] = {}
    issues = []
    for key, parts in entries:
        joined = "-".join(parts)
        if joined in first and first[joined][1] != parts:
            issues.append(
                ConfigIssue(
                    key,
                    f"its {what} join to {joined!r}, as those of {first[joined][0]} do; the "
                    "resources would share one name, so rename one of them",
                )
            )
        first.setdefault(joined, (key, parts))
    return issues


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
