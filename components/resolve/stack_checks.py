"""The checks across a stack's keys, each a rule no single key can hold: names that would meet
in one resource, buckets, config secrets, what only one backend runs, settings of
an install that does not happen, and what a created cluster needs for the isolation it promises.
``cross_check_issues`` runs them with the quota checks (``quota_checks``), the size checks
(``capacity``) and a team stack's ownership check (``tenancy.shared_cluster``);
``checks.parse_stack_config`` runs it once the schema holds.
"""

from __future__ import annotations

from components.config import grammars
from components.config.schema import StackConfig, WorkloadConfig, WorkloadMode
from components.config.schema.workloads import EnvFromConfigSecret
from components.errors import ConfigIssue, shown_value
from components.pathways.jobset import COLOCATED_UNSUPPORTED
from components.resolve.capacity import size_issues
from components.resolve.quota_checks import (
    kueue_quota_issues,
    namespace_quota_issues,
    team_quota_issues,
)
from components.resolve.storage_checks import stack_storage_issues
from components.resolve.tenancy.isolation import isolation_issues
from components.resolve.tenancy.pod_ranges import pod_range_issues
from components.resolve.tenancy.shared_cluster import ownership_issues
from components.vocabulary import Environment, WorkloadBackend, network_project


def cross_check_issues(config: StackConfig, whole_pools: bool = True) -> list[ConfigIssue]:
    """The checks across the stack's keys. ``checks.parse_stack_config`` runs them, with the
    workload checks and the preflight, also when entries of a list were refused and left
    out; ``whole_pools`` False then skips the checks that add up every TPU pool."""
    issues = [*_pool_named_like_cpu_pool(config), *_shared_bucket(config)]
    if whole_pools:
        issues += kueue_quota_issues(config)
    issues += team_quota_issues(config, whole_pools) + ownership_issues(config)
    issues += _config_secret_refs(config) + _joined_name_collisions(config)
    issues += _bucket_name_rules(config) + _data_bucket_issues(config) + _team_bucket_issues(config)
    issues += _backend_issues(config) + size_issues(config)
    issues += _isolation_issues(config) + namespace_quota_issues(config)
    issues += isolation_issues(config) + pod_range_issues(config)
    issues += _unused_addon_settings(config) + stack_storage_issues(config)
    return issues + _shared_vpc_issues(config)


def _shared_vpc_issues(config: StackConfig) -> list[ConfigIssue]:
    """An existing network of another project (a Shared VPC host) is refused: GKE takes a
    Shared VPC subnetwork's secondary ranges only by name, made first by the host's network
    admin ("user-managed" ranges: GKE docs, "Create a VPC-native cluster", how-to/alias-ips),
    while this stack has GKE add its own (podsCidr, servicesCidr) and names none; and a
    firewall rule belongs to its network's project, where the Pathways ports rules would need
    creating. Until both are expressible, no half-working path."""
    network = config.cluster.network.existing_network
    project = config.gcp.project
    if not config.creates_cluster or network is None:
        return []
    host = network_project(network, project)
    if host == project:
        return []
    return [
        ConfigIssue(
            "cluster.network.existingNetwork",
            f"{network!r} is a network of project {host!r} (a Shared VPC host), not of "
            f"gcp.project {project!r}; the stack cannot create a cluster there yet (GKE takes "
            "only the host's named secondary ranges for the cluster's Pods and Services, and "
            "the Pathways ports firewall rules would belong to the host project): name a "
            f"network of {project!r}, by name or as projects/{project}/global/networks/<name>",
        )
    ]


def _pool_named_like_cpu_pool(config: StackConfig) -> list[ConfigIssue]:
    taken = {config.cpu_pool.name: "the CPU pool's name"}
    taken.setdefault(config.system_pool.name, "the system pool's name")
    issues = []
    for i, pool in enumerate(config.team_cpu_pools):
        if pool.name in taken:
            issues.append(
                ConfigIssue(f"teamCpuPools[{i}].name", f"{pool.name!r} is {taken[pool.name]}")
            )
        taken.setdefault(pool.name, f"the name of the CPU pool of team {pool.team!r}")
    issues += [
        ConfigIssue(f"tpuPools[{i}].name", f"{pool.name!r} is {taken[pool.name]}")
        for i, pool in enumerate(config.tpu_pools)
        if pool.name in taken
    ]
    if config.creates_cluster and config.system_pool.name == config.cpu_pool.name:
        issues.append(
            ConfigIssue("systemPool.name", f"{config.cpu_pool.name!r} is the CPU pool's name")
        )
    return issues


def _joined_name_collisions(config: StackConfig) -> list[ConfigIssue]:
    """Resource names join config names with '-', so distinct entries can meet in one name
    (team 'a' + workload 'b-c' and team 'a-b' + workload 'c'); Pulumi would then see one
    resource, and GKE one node pool."""
    jobs = [(f"workloads[{i}]", (w.team, w.name)) for i, w in enumerate(config.workloads)]
    jobs += [
        (f"sharedServices[{i}]", (s.team, s.name)) for i, s in enumerate(config.shared_services)
    ]
    accounts = [(f"teams[{i}]", (t.name, t.service_account)) for i, t in enumerate(config.teams)]
    slices = {n: i for i, p in enumerate(config.tpu_pools) for n in p.node_pool_names()}
    cpu_pools = {"cpuPool.name": config.cpu_pool.name}
    if config.creates_cluster:
        cpu_pools["systemPool.name"] = config.system_pool.name
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


def _shared_bucket(config: StackConfig) -> list[ConfigIssue]:
    """On a cluster another stack owns, the default bucket name is that stack's bucket."""
    bucket = config.scratch_bucket
    if config.creates_cluster or not bucket.create or bucket.name is not None:
        return []
    return [
        ConfigIssue(
            "scratchBucket",
            f"this stack targets an existing cluster, so creating the default bucket "
            f"{config.bucket_name!r} would collide with the owning stack's; set create: false "
            "and name the owner's bucket, or give this stack's own bucket a name",
        )
    ]


def _bucket_name_rules(config: StackConfig) -> list[ConfigIssue]:
    """The bucket name, given or derived from project and cluster, against GCS's rules
    (e.g. a cluster named 'google-...' makes a default name GCS refuses)."""
    problem = grammars.bucket_problem(config.bucket_name)
    if problem is None:
        return []
    key = "scratchBucket.name" if config.scratch_bucket.name else "scratchBucket"
    return [ConfigIssue(key, problem)]


def _data_bucket_issues(config: StackConfig) -> list[ConfigIssue]:
    """One grant per bucket, not the scratch bucket (granted already: a second binding of the
    same role would drop it when removed), and only where this stack owns the nodes."""
    issues = []
    seen: set[str] = set()
    for i, bucket in enumerate(config.data_buckets):
        key = f"dataBuckets[{i}].name"
        if bucket.name in seen:
            issues.append(ConfigIssue(key, f"{bucket.name!r} is listed more than once"))
        if bucket.name == config.bucket_name:
            issues.append(
                ConfigIssue(
                    key,
                    f"{bucket.name!r} is the scratch bucket, which the node service account "
                    "already has read-write access to; remove it from dataBuckets",
                )
            )
        seen.add(bucket.name)
    dedicated = set(config.dedicated_teams)
    mine = {team.name for team in config.teams}
    issues += [
        ConfigIssue(
            f"dataBuckets[{i}].team",
            f"no pools are dedicated to {bucket.team!r}: its pods on the host network act as "
            "the shared pools' account (leave team unset for that)",
        )
        for i, bucket in enumerate(config.data_buckets)
        if bucket.team is not None and bucket.team not in dedicated
    ]
    # Another stack's cluster: only its pools dedicated to one of this stack's teams.
    foreign = [b for b in config.data_buckets if b.team is None or b.team not in mine]
    if foreign and not config.creates_cluster:
        issues.append(ConfigIssue("dataBuckets", _foreign_nodes_message(config)))
    return issues


def _team_bucket_issues(config: StackConfig) -> list[ConfigIssue]:
    """A team's ``buckets`` never name the scratch bucket: its account already has its own
    prefix there, and every other prefix is another team's (under ``_/``, the dedicated
    teams'), which a grant of this team's would open to it."""
    return [
        ConfigIssue(
            f"teams[{i}].buckets[{j}].name",
            f"{bucket.name!r} is the scratch bucket: the service account of team {team.name!r} "
            f"already has read-write access to its own prefix there "
            f"({config.team_scratch_url(team.name)}), and every other prefix of it belongs to "
            "another team; remove it from the team's buckets",
        )
        for i, team in enumerate(config.teams)
        for j, bucket in enumerate(team.buckets)
        if bucket.name == config.bucket_name
    ]


def _foreign_nodes_message(config: StackConfig) -> str:
    if config.owner is not None:
        return (
            f"this team stack's Pathways pods act as the node service account of owner stack "
            f"{config.owner!r} (host network), which only that stack grants, but for the pools "
            "it dedicates to one of this stack's teams (dataBuckets[].team); ask it to add the "
            "buckets to its dataBuckets and remove them here"
        )
    return (
        "needs a cluster this stack creates: the grants go to its node service account; on "
        "an existing cluster, grant the buckets to its nodes' service account where that "
        "cluster is managed"
    )


def _config_secret_refs(config: StackConfig) -> list[ConfigIssue]:
    known = ", ".join(config.secrets) or "none"
    return [
        ConfigIssue(
            f"{key}.{name}",
            f"configSecret {value.config_secret!r} is not an entry of `secrets` (known: "
            f"{known}); set it with pulumi config set --secret --path "
            f"'tpu-pathways:secrets.{value.config_secret}' VALUE",
        )
        for key, env in config.env_maps()
        for name, value in env.items()
        if isinstance(value, EnvFromConfigSecret) and value.config_secret not in config.secrets
    ]


def _backend_issues(config: StackConfig) -> list[ConfigIssue]:
    """What only one backend can run: colocated heads (PathwaysJob only) and pods off the
    host network (JobSet only)."""
    issues = []
    for i, workload in enumerate(config.workloads):
        backend = config.backend_of(workload)
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


def _backend_key(index: int, workload: WorkloadConfig) -> str:
    """Where a workload's backend comes from, for messages."""
    if workload.backend is not None:
        return f"workloads[{index}].backend {workload.backend.value!r}"
    return "the stack's workloadBackend"


def _unused_addon_settings(config: StackConfig) -> list[ConfigIssue]:
    """Settings of an install that does not happen are refused, not silently ignored
    (install: false and enabled: false themselves agree with it; teamQuotas without Kueue
    is refused by ``quota_checks.team_quota_issues``)."""
    addons = config.addons
    skipped = {
        "jobset": (addons.jobset, _jobset_skipped(config)),
        "pathwaysJob": (addons.pathways_job, _pathways_job_skipped(config)),
        "kueue": (addons.kueue, _kueue_skipped(config)),
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


def _jobset_skipped(config: StackConfig) -> str | None:
    if config.addons.jobset.install:
        return None
    return "addons.jobset.install is false, so this stack installs no JobSet; remove it"


def _pathways_job_skipped(config: StackConfig) -> str | None:
    if not config.addons.pathways_job.install:
        return (
            "addons.pathwaysJob.install is false, so this stack installs no PathwaysJob "
            "controller; remove it"
        )
    if config.needs_pathways_controller:
        return None
    return (
        "every workload and shared service of this stack runs on the JobSet backend "
        f"(workloadBackend: {WorkloadBackend.JOBSET.value}), so no PathwaysJob controller is "
        "installed; remove addons.pathwaysJob, or set backend: "
        f"{WorkloadBackend.PATHWAYS_JOB.value} on a job that needs the controller"
    )


def _kueue_skipped(config: StackConfig) -> str | None:
    if config.kueue_enabled:
        return None
    if config.addons.kueue.enabled is False:
        return "addons.kueue.enabled is false, so this stack installs no Kueue; remove it"
    return (
        "Kueue is off on a cluster this stack does not create (addons.kueue.enabled "
        "defaults to false there); remove it, or set enabled: true"
    )


def _isolation_issues(config: StackConfig) -> list[ConfigIssue]:
    """What a cluster this stack creates needs for the isolation it promises: a KMS key for
    Secrets in production, and Google Groups for RBAC where a team names its group."""
    if not config.creates_cluster:
        return []
    issues = []
    if config.environment is Environment.PRODUCTION and config.cluster.secrets_encryption is None:
        issues.append(
            ConfigIssue(
                "cluster.secretsEncryption",
                "required in production: set kmsKey to a Cloud KMS key "
                "(projects/<project>/locations/<region>/keyRings/<ring>/cryptoKeys/<key>) "
                "so Secrets are encrypted in etcd with a key you control",
            )
        )
    issues += _kms_location_issues(config)
    if config.cluster.security_group is None:
        issues += [
            ConfigIssue(
                f"teams[{i}].group",
                f"{team.group!r} matches nobody unless the cluster has Google Groups for "
                "RBAC: set cluster.securityGroup to gke-security-groups@<your domain>",
            )
            for i, team in enumerate(config.teams)
            if team.group is not None
        ]
    return issues


def _kms_location_issues(config: StackConfig) -> list[ConfigIssue]:
    """GKE encrypts Secrets only with a key in the cluster's location (GKE docs, "Encrypt
    secrets at the application layer": the key must be in the same location as the
    cluster). A regional cluster is in gcp.region, and a zonal one's zone is in it too:
    Cloud KMS has no zonal locations, so gcp.region is the one place that fits."""
    encryption = config.cluster.secrets_encryption
    if encryption is None or encryption.location == config.gcp.region:
        return []
    region = repr(config.gcp.region)
    where = (
        f"the cluster's region {region}"
        if config.cluster.regional
        else f"{region}, the region of the cluster's zone {config.gcp.zone!r}"
    )
    return [
        ConfigIssue(
            "cluster.secretsEncryption.kmsKey",
            f"{encryption.kms_key!r} is in location {encryption.location!r}; GKE encrypts "
            "Secrets only with a key in the cluster's location, so its key ring must be in "
            f"{where} (not 'global' nor a multi-region): projects/<project>/locations/"
            f"{config.gcp.region}/keyRings/<ring>/cryptoKeys/<key>",
        )
    ]
