"""Pathways workloads and shared services: the PathwaysJobs a stack declares."""

from __future__ import annotations

from collections import Counter
from enum import StrEnum
from typing import Annotated

from pydantic import (
    AfterValidator,
    Discriminator,
    Field,
    StrictBool,
    StrictInt,
    Tag,
    field_validator,
    model_validator,
)

from components.config import grammars
from components.config.schema.base import (
    CommandArg,
    DnsLabel,
    Flag,
    GcsPath,
    ImageReference,
    ImageTag,
    LabelKey,
    LabelValue,
    PlainEnvValue,
    grammar,
    pattern,
)
from components.config.schema.storage import GcsVolumeConfig, volume_issues
from components.errors import ConfigIssue, KeyedError
from components.model import ConfigModel
from components.pathways.head_sizing import PodResources
from components.pathways.service_client import (
    HEAD_HOST_MARKER,
    INSECURE_CREDENTIALS_ENV,
    RESERVED_NAMES,
    SERVICE_MAX_RESTARTS,
    SERVICE_NAMESPACE,
)
from components.pathways.spec import INT32_MAX, ComponentType, job_name_problem
from components.tpu.quantities import normalize_quantity, parse_cpu, parse_memory
from components.vocabulary import Priority, WorkloadBackend


class WorkloadMode(StrEnum):
    """How a workload runs (maps to the PathwaysJob deployment mode)."""

    TRAINING = "training"
    INFERENCE = "inference"
    HEADLESS = "headless"


class ProxyCredentials(StrEnum):
    """What the IFRT proxy and its clients authenticate with (pathwaysutils 0.1.13: the proxy
    uses ALTS unless IFRT_PROXY_USE_INSECURE_GRPC_CREDENTIALS is set)."""

    ALTS = "alts"
    INSECURE = "insecure"


def _cpu(value: str) -> str:
    parse_cpu(value)
    return normalize_quantity(value)


def _memory(value: str) -> str:
    parse_memory(value)
    return normalize_quantity(value)


class ContainerResources(ConfigModel):
    """CPU and memory of the user container (requests = limits, so the head pod's size is known)."""

    cpu: Annotated[str, AfterValidator(_cpu)] = "24"
    """CPU cores or millicores ('24', '500m')."""
    memory: Annotated[str, AfterValidator(_memory)] = "100Gi"
    """Memory ('100Gi')."""

    @property
    def pod_resources(self) -> PodResources:
        return PodResources(parse_cpu(self.cpu), parse_memory(self.memory))


# Set by the PathwaysJob controller on the main container; a second copy would shadow it.
CONTROLLER_ENV = ("JAX_PLATFORMS", "JAX_BACKEND_TARGET", "XCLOUD_ENVIRONMENT", "PATHWAYS_HEAD")
EnvName = Annotated[str, grammar(grammars.env_name_problem)]


SecretName = Annotated[
    str,
    pattern(
        r"[A-Za-z][A-Za-z0-9_-]{0,62}",
        "a secret name (a letter, then up to 62 letters, digits, '_' or '-')",
    ),
    grammar(grammars.yaml_word_problem),
]
KubernetesSecretName = Annotated[
    str,
    pattern(
        r"(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
        "a Kubernetes Secret name (a DNS subdomain: lowercase letters, digits, '-' and '.')",
    ),
]
SecretDataKey = Annotated[
    str, pattern(r"[-._a-zA-Z0-9]{1,253}", "a Secret data key (letters, digits, '-', '_', '.')")
]


class SecretKeySelector(ConfigModel):
    """A key of a Kubernetes Secret in the workload's namespace."""

    name: KubernetesSecretName
    """Name of the Secret (created outside this stack, e.g. by an external-secrets operator)."""
    key: SecretDataKey
    """Key of the Secret's data."""


class EnvFromSecret(ConfigModel):
    """An environment value the kubelet reads from a Kubernetes Secret when the pod starts."""

    secret_key_ref: SecretKeySelector
    """The Secret and key, e.g. {name: hf-token, key: token}."""


class EnvFromConfigSecret(ConfigModel):
    """An environment value from one of this stack's Pulumi config secrets (``secrets``).

    The value is stored encrypted in the stack file and the Pulumi state, and reaches the pod
    through a Kubernetes Secret the stack creates (never in the PathwaysJob object itself)."""

    config_secret: SecretName
    """Name of the entry of ``secrets``."""


class EnvValueForm(StrEnum):
    """The forms an env value takes; a mapping's one key says which it is."""

    TEXT = "text"
    SECRET_KEY_REF = "secretKeyRef"
    CONFIG_SECRET = "configSecret"


# pydantic places a tagged union's errors under the tag; this form is one
# ``errors.issues_from_validation`` leaves out of the key it reports.
def _tag(form: EnvValueForm) -> Tag:
    return Tag(f"env-value[{form.value}]")


def _env_value_form(value: object) -> str | None:
    """Which form an env value has (None: none, reported without echoing the value)."""
    if isinstance(value, str):
        form = EnvValueForm.TEXT
    elif isinstance(value, EnvFromSecret):
        form = EnvValueForm.SECRET_KEY_REF
    elif isinstance(value, EnvFromConfigSecret):
        form = EnvValueForm.CONFIG_SECRET
    elif isinstance(value, dict) and len(value) == 1 and next(iter(value)) in _MAPPING_FORMS:
        form = EnvValueForm(next(iter(value)))
    else:
        return None
    return _tag(form).tag


_MAPPING_FORMS = {EnvValueForm.SECRET_KEY_REF.value, EnvValueForm.CONFIG_SECRET.value}


EnvValue = Annotated[
    Annotated[PlainEnvValue, _tag(EnvValueForm.TEXT)]
    | Annotated[EnvFromSecret, _tag(EnvValueForm.SECRET_KEY_REF)]
    | Annotated[EnvFromConfigSecret, _tag(EnvValueForm.CONFIG_SECRET)],
    Discriminator(
        _env_value_form,
        custom_error_type="env_value_form",
        custom_error_message=(
            "an env value is text (quote numbers and true/false), {secretKeyRef: {name: SECRET, "
            "key: KEY}} or {configSecret: NAME}"
        ),
    ),
]


def env_issues(env: dict[str, EnvValue], key: str = "env") -> list[ConfigIssue]:
    """Credentials in plain text, and the size of all plain values together."""
    issues = [
        ConfigIssue(f"{key}.{name}", _credential_problem(name))
        for name, value in env.items()
        if isinstance(value, str) and grammars.credential_name(name)
    ]
    plain = [v for v in env.values() if isinstance(v, str)]
    if problem := grammars.env_total_problem(plain):
        issues.append(ConfigIssue(key, problem))
    return issues


def _credential_problem(name: str) -> str:
    if name == INSECURE_CREDENTIALS_ENV:  # a switch, not a secret: it has a key of its own
        return (
            "is the IFRT proxy's switch to insecure gRPC credentials; set proxyCredentials: "
            "insecure on a headless workload or shared service instead"
        )
    return (
        "looks like a credential, so it may not be plain text (it would be readable in the "
        "stack file, the plan and the PathwaysJob); use {configSecret: NAME} (a Pulumi "
        "config secret under `secrets`) or {secretKeyRef: {name: SECRET, key: KEY}} (a "
        "Kubernetes Secret)"
    )


class CustomComponentConfig(ConfigModel):
    """Replace the image of, or pass flags/env to, one Pathways component."""

    type: ComponentType
    """pathways_server, worker, proxy_server or colocated_python_sidecar."""
    image: ImageReference | None = None
    """Image to use instead of the one pathwaysVersion selects; outside environment dev it
    needs a tag other than latest, or a digest."""
    flags: list[Flag] = []
    """Extra command-line flags (one line each, at most 128 KiB each and 256 KiB together). A
    flag that passes a credential (--hf_token, --api-key, --password...) takes it from the
    environment, as --hf_token=$(HF_TOKEN) with env HF_TOKEN from a secret."""
    env: dict[EnvName, EnvValue] = {}
    """Extra environment variables: text, {secretKeyRef: ...} or {configSecret: NAME}."""

    @model_validator(mode="after")
    def _env(self) -> CustomComponentConfig:
        issues = env_issues(self.env)
        secret = {name for name, value in self.env.items() if not isinstance(value, str)}
        issues += [
            ConfigIssue(f"flags[{index}]", problem)
            for index, problem in grammars.credential_flag_problems(self.flags, secret)
        ]
        if problem := grammars.args_total_problem(self.flags, "flags"):
            issues.append(ConfigIssue("flags", problem))
        if issues:
            raise KeyedError(issues)
        return self


JobName = Annotated[str, AfterValidator(lambda v: _job_name(v))]


def _job_name(value: str) -> str:
    problem = job_name_problem(value)
    if problem:
        raise ValueError(problem)
    return value


class PathwaysDeployment(ConfigModel):
    """What every PathwaysJob of the stack names: itself, its namespace and its TPU pool."""

    name: JobName
    """PathwaysJob name: at most 22 lowercase letters, digits or '-', starting with a letter."""
    team: DnsLabel = "pathways"
    """Team (namespace) it runs in; one of `teams`."""
    pool: DnsLabel
    """TPU pool of this stack the workers run on (type and topology come from it)."""
    slices: StrictInt = Field(1, ge=1, le=256)
    """Number of slices (at most the pool's slices)."""
    pathways_version: ImageTag | None = None
    """Pathways release, the server and proxy_server image tag (default: the stack's
    pathwaysVersion); 'latest' only in environment dev."""
    max_restarts: StrictInt | None = Field(None, ge=0, le=INT32_MAX)
    """Restarts of the whole job before it fails."""
    custom_components: list[CustomComponentConfig] = Field([], max_length=4)
    """Up to 4 component overrides, one per type (e.g. pinned images)."""
    backend: WorkloadBackend | None = None
    """pathwaysjob (a PathwaysJob the controller expands) or jobset (the JobSet itself, as XPK
    1.16 renders it); default: the stack's workloadBackend. Changing it replaces the job."""

    @field_validator("custom_components")
    @classmethod
    def _one_per_type(cls, components: list[CustomComponentConfig]) -> list[CustomComponentConfig]:
        types = Counter(c.type for c in components)
        repeated = [f"type {t.value!r} appears {n} times" for t, n in types.items() if n > 1]
        if repeated:
            raise ValueError("; ".join(repeated) + "; at most once each")
        return components

    def env_maps(self, key: str) -> list[tuple[str, dict[str, EnvValue]]]:
        """Its env maps with their config keys (``key``: its own): its components'."""
        return [
            (f"{key}.customComponents[{j}].env", component.env)
            for j, component in enumerate(self.custom_components)
        ]


class WorkloadConfig(PathwaysDeployment):
    """A Pathways workload on one TPU pool of the stack; becomes one PathwaysJob."""

    mode: WorkloadMode = WorkloadMode.TRAINING
    """training (head on the CPU pool), inference (head colocated with workers: one slice, on
    a node pool of its own) or headless."""
    image: ImageReference | None = None
    """User container image (training and inference); outside environment dev it needs a tag
    other than latest, or a digest (in dev an unpinned one is warned about)."""
    command: list[CommandArg] = []
    """User command; wrapped so SIGTERM reaches it and the pod waits for it to exit. No NUL
    characters; at most 128 KiB per argument (Linux's limit) and 256 KiB together."""
    env: dict[EnvName, EnvValue] = {}
    """Environment of the user container: text (at most 32 KiB each, 256 KiB together), a
    Kubernetes Secret {secretKeyRef: {name, key}} or a config secret {configSecret: NAME}.
    Credential-like names (*_TOKEN, *_KEY, *PASSWORD*, *SECRET*) must use a secret form."""
    resources: ContainerResources = ContainerResources()
    """User container CPU and memory; must fit next to the Pathways head on one node."""
    priority: Priority | None = None
    """Priority class (needs addons.kueue.enabled, which installs the classes)."""
    max_slice_restarts: StrictInt | None = Field(None, ge=0, le=INT32_MAX)
    """Restarts of one slice (elastic training); with elasticSlices, hosts x restarts must fit
    the worker Job's int32 backoffLimit."""
    elastic_slices: StrictInt | None = Field(None, ge=0, le=INT32_MAX)
    """Slices the job may lose and keep running (elastic training)."""
    termination_grace_period_seconds: StrictInt | None = Field(None, ge=0, le=86400)
    """Time a preempted pod gets to checkpoint before it is killed."""
    pathways_dir: GcsPath | None = None
    """Scratch path; default gs://<scratch bucket>/<team>/<name>. Must be under the team's
    prefix gs://<scratch bucket>/<team>/ (the only part of the bucket its grants reach), which is
    gs://<scratch bucket>/_/<team>/ for a team with dedicated pools."""
    node_selector: dict[LabelKey, LabelValue] = {}
    """Extra node labels the workers must match (e.g. a reservation name); in a pool with an
    inference workload the stack adds cloud.google.com/gke-nodepool itself."""
    enable_metrics_collection: StrictBool = False
    """Let the controller collect Pathways metrics."""
    proxy_credentials: ProxyCredentials = ProxyCredentials.ALTS
    """Headless only: alts (Google Cloud clients only) or insecure (sets
    IFRT_PROXY_USE_INSECURE_GRPC_CREDENTIALS=true on the proxy, so a client outside Google Cloud,
    e.g. a laptop over kubectl port-forward, can connect; it must set the same variable)."""

    host_network: StrictBool = True
    """false (jobset backend only): the Pathways pods run on the pod network as the team's
    Kubernetes service account, so its Workload Identity grants apply instead of the node
    service account's (docs/workloads.md: Workload backends)."""
    volumes: list[GcsVolumeConfig] = Field([], max_length=8)
    """Buckets mounted into the user container through Cloud Storage FUSE (training and
    inference; docs/storage.md). Each acts as the team's service account, which needs a grant
    in ``teams[].buckets``."""
    lustre: list[DnsLabel] = Field([], max_length=4)
    """Managed Lustre file systems of the stack (``lustre[].name``) mounted into the user
    container; each must list the workload's team."""
    home_dir: StrictBool = False
    """Mount the team's Filestore home share (``homeDirs``) into the user container."""

    @model_validator(mode="after")
    def _volumes(self) -> WorkloadConfig:
        headless = self.mode is WorkloadMode.HEADLESS
        if issues := volume_issues(self.volumes, headless, bool(self.lustre or self.home_dir)):
            raise KeyedError(issues)
        return self

    @model_validator(mode="after")
    def _mode_fields(self) -> WorkloadConfig:
        issues = []
        headless = self.mode is WorkloadMode.HEADLESS
        if headless and (self.image or self.command):
            key = "image" if self.image else "command"
            issues.append(ConfigIssue(key, "headless workloads have no user container; remove it"))
        if not headless and not self.image:
            issues.append(ConfigIssue("image", f"required for mode {self.mode.value}"))
        if not headless and not self.command:
            issues.append(ConfigIssue("command", f"required for mode {self.mode.value}"))
        issues += [
            ConfigIssue(f"env.{k}", "is set by the PathwaysJob controller; remove it")
            for k in self.env
            if k in CONTROLLER_ENV
        ]
        issues += env_issues(self.env)
        if problem := grammars.args_total_problem(self.command, "arguments"):
            issues.append(ConfigIssue("command", problem))
        issues += self._proxy_credentials_issues()
        if self.elastic_slices is not None and self.elastic_slices > self.slices:
            issues.append(
                ConfigIssue("elasticSlices", f"{self.elastic_slices} exceeds slices {self.slices}")
            )
        if issues:
            raise KeyedError(issues)
        return self

    def _proxy_credentials_issues(self) -> list[ConfigIssue]:
        if self.proxy_credentials is ProxyCredentials.ALTS or self.mode is WorkloadMode.HEADLESS:
            return []
        return [
            ConfigIssue(
                "proxyCredentials",
                f"applies to headless workloads only (mode {self.mode.value} has no "
                "port-forward address); remove it",
            )
        ]

    def env_maps(self, key: str) -> list[tuple[str, dict[str, EnvValue]]]:
        """Its user container's env, then its components' (``key``: its own)."""
        return [(f"{key}.env", self.env), *super().env_maps(key)]


def _service_name(value: str) -> str:
    if value in RESERVED_NAMES:
        raise ValueError(
            f"{value!r} is Kubernetes' own Service in namespace {SERVICE_NAMESPACE!r}, where "
            "shared services run (JobSet names a Service after the job); choose another name"
        )
    if HEAD_HOST_MARKER in value:
        raise ValueError(
            f"{value!r} contains {HEAD_HOST_MARKER!r}: pathwaysutils 0.1.13 "
            f"(gke_utils.extract_jobset_name) reads the JobSet name from the service's address "
            f"up to the first {HEAD_HOST_MARKER!r}, so clients would look for the wrong JobSet; "
            "choose another name"
        )
    return value


class SharedServiceConfig(PathwaysDeployment):
    """A long-running headless Pathways deployment that many clients share (pathwaysutils'
    ``isc_pathways.connect``). It runs in namespace ``default``, the only one the client reads;
    ``team`` owns it (labels, scratch prefix, Kueue quota)."""

    name: Annotated[JobName, AfterValidator(_service_name)]
    """PathwaysJob name in namespace default: at most 22 lowercase letters, digits or '-',
    starting with a letter; unique across the teams of the cluster; not containing
    -pathways-head (pathwaysutils cuts the service's address there to find the JobSet)."""
    team: DnsLabel = "pathways"
    """Team that owns it (its labels, scratch prefix and Kueue quota); one of `teams`. The
    service itself runs in namespace default."""
    max_restarts: StrictInt | None = Field(SERVICE_MAX_RESTARTS, ge=0, le=INT32_MAX)
    """Restarts of the whole service before it fails (the upstream deployer's 30); the
    controller's default is none, so a long-lived service would end at its first preemption."""
    max_slice_restarts: StrictInt | None = Field(None, ge=1, le=INT32_MAX)
    """Restarts of one slice's workers before the whole service restarts; default: effectively
    unbounded (the upstream deployer's 1000000, or as many as hosts x restarts fits an int32)."""
    proxy_credentials: ProxyCredentials = ProxyCredentials.ALTS
    """What the printed connect(...) call asks clients' proxies for: alts, or insecure (adds
    proxy_options=["use_insecure_credentials:true"] for clients outside Google Cloud, which must
    also set IFRT_PROXY_USE_INSECURE_GRPC_CREDENTIALS=true themselves)."""


class WaitForRunningConfig(ConfigModel):
    """Make `pulumi up` wait until jobs really run (a PathwaysJob's Running condition, a
    JobSet's StartupPolicyCompleted), and fail with the job's status when they do not in time."""

    jobs: StrictBool = False
    """Also wait for workloads (shared services always wait)."""
    timeout_seconds: StrictInt = Field(1800, ge=60, le=86400)
    """How long to wait before `pulumi up` fails (slices on flex-start or behind a queue may
    need longer)."""
