"""In-cluster installs from pinned upstream release manifests: JobSet, the PathwaysJob CRD and
controller, Kueue.

Each is a `kubernetes:yaml/v2:ConfigFile` of the project's official release manifest, applied
server-side through the cluster's explicit provider (the CRDs are too large for client-side
apply). The manifest URL is the only thing that varies, so one component serves all three.
Why manifests rather than Helm charts: JobSet and PathwaysJob publish a single install manifest
per release, `helm.v4.Chart` children do not inherit the chart's explicit provider
(pulumi-kubernetes issue 3684) and its previews fail while the cluster does not exist yet
(issue 3027).
"""

from __future__ import annotations

import hashlib
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pulumi
import pulumi_kubernetes as k8s
from pulumi.runtime import is_dry_run

# The class itself, not ``k8s.yaml.v2.ConfigFile``: reading ``k8s.yaml`` runs that package's
# ``__init__``, which imports the v1 YAML module and with it ``requests`` (about 45 ms of every
# plan, for a module the program never uses).
from pulumi_kubernetes.yaml.v2 import ConfigFile

from components.pathways.controller_model import Toleration

# Where `pulumi up` keeps the manifests it verified (content-addressed; relative to the project
# directory, the program's working directory, so every run names the same file).
VERIFIED_DIR = Path(".manifests")
_FETCH_TIMEOUT_S = 60
_MAX_MANIFEST_BYTES = 16 * 1024 * 1024


class ManifestDigestError(Exception):
    """A fetched release manifest is not the one its sha256 pins."""


def fetch_manifest(url: str) -> bytes:
    """The manifest's bytes, over https (at most 16 MiB)."""
    with urllib.request.urlopen(url, timeout=_FETCH_TIMEOUT_S) as response:
        body = response.read(_MAX_MANIFEST_BYTES + 1)
    if len(body) > _MAX_MANIFEST_BYTES:
        raise ManifestDigestError(f"{url} is larger than {_MAX_MANIFEST_BYTES} bytes")
    return body


def verified_manifest(
    url: str, sha256: str, fetch: Callable[[str], bytes], directory: Path
) -> Path:
    """Fetch ``url``, check its sha256 and keep it as ``<directory>/<sha256>.yaml``: the file
    the manifest is applied from, so what is applied is what was checked."""
    body = fetch(url)
    actual = hashlib.sha256(body).hexdigest()
    if actual != sha256:
        raise ManifestDigestError(
            f"{url} has sha256 {actual}, not the pinned {sha256}: the release was changed or "
            "the mirror serves something else; nothing was applied"
        )
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{sha256}.yaml"
    path.write_bytes(body)
    return path


@dataclass(frozen=True)
class ReleaseManifestArgs:
    """Inputs of a ``ReleaseManifest``: the manifest and the cluster it is applied to."""

    url: str
    """The release manifest (https URL of a YAML file)."""
    version: str
    """Its release tag (reported as an output)."""
    provider: k8s.Provider
    """The cluster's explicit Kubernetes provider."""
    depends_on: Sequence[pulumi.Resource] = ()
    """What the manifest's objects wait for (the control plane, the system pool)."""
    sha256: str | None = None
    """The manifest's pinned digest: `pulumi up` fetches it, refuses any other content and
    applies the verified copy. None: applied from the URL as served."""
    fetch: Callable[[str], bytes] = fetch_manifest
    """How the manifest is fetched for verification."""


class ReleaseManifest(pulumi.ComponentResource):
    """One upstream release manifest, applied server-side; ready when its workloads are."""

    def __init__(
        self, name: str, args: ReleaseManifestArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:installs:ReleaseManifest", name, None, opts)
        url, version, provider, depends_on = args.url, args.version, args.provider, args.depends_on
        # A preview applies nothing and reads the URL as served; `pulumi up` applies only the
        # content whose digest was checked, before any object of it is registered.
        source = url
        if args.sha256 is not None and not is_dry_run():
            source = str(verified_manifest(url, args.sha256, args.fetch, VERIFIED_DIR))
        # Awaited (no skip_await): dependents wait until the controller Deployment is available,
        # which matters because JobSet's webhooks fail closed until then.
        self.manifest = ConfigFile(
            name,
            file=source,
            opts=pulumi.ResourceOptions(
                parent=self, provider=provider, depends_on=list(depends_on)
            ),
        )
        self.register_outputs({"url": url, "version": version, "sha256": args.sha256})


@dataclass(frozen=True)
class ControllerDeployment:
    """Where an install's controller runs: its Deployment, and the container that is it."""

    namespace: str
    name: str
    container: str = "manager"
    release_tolerations: tuple[Toleration, ...] = ()
    """The tolerations the release manifest gives the controller's pods. Under server-side
    apply a pod's ``tolerations`` is an atomic list (Kubernetes PodSpec
    ``x-kubernetes-list-type: atomic``): a patch that sets it replaces the whole list, so the
    patch carries these too. None in the pinned releases (tests/data/controller-pods.json,
    written from their manifests by scripts/refresh_controller_pods.py)."""
    release_node_selector: tuple[tuple[str, str], ...] = ()
    """The release manifest's ``nodeSelector`` of the controller's pods (an atomic map under
    server-side apply, ``x-kubernetes-map-type: atomic``): kept beside the patch's. None in the
    pinned releases."""

    @property
    def username(self) -> str:
        """Who the controller is to the API server (``request.userInfo.username``): its service
        account, named as its Deployment in these releases (jobset v0.10.1 config/default
        namePrefix ``jobset-`` + rbac ``controller-manager``; pathways-job v0.1.4
        release/install.yaml ServiceAccount ``pathways-job-controller-manager``; kueue v0.17.1
        namePrefix ``kueue-`` + ``controller-manager``)."""
        return f"system:serviceaccount:{self.namespace}:{self.name}"


# The controllers' Deployments as their pinned release manifests name them: kubernetes-sigs/jobset
# v0.10.1 manifests.yaml; google/pathways-job v0.1.4 release/install.yaml (config/default:
# namespace pathways-job-system, namePrefix pathways-job-, Deployment controller-manager);
# kubernetes-sigs/kueue v0.17.1 manifests.yaml.
JOBSET_CONTROLLER = ControllerDeployment("jobset-system", "jobset-controller-manager")
PATHWAYS_JOB_CONTROLLER = ControllerDeployment(
    "pathways-job-system", "pathways-job-controller-manager"
)
KUEUE_CONTROLLER = ControllerDeployment("kueue-system", "kueue-controller-manager")


@dataclass(frozen=True)
class Install:
    """An in-cluster install a stack registers (``INSTALLS``): its release manifest is named
    ``<cluster>-<name>``, and its controller (``controller``) is patched onto the system pool of
    a stack that has one (``<cluster>-<name>-controller``) unless ``system_pool`` is False."""

    name: str
    controller: ControllerDeployment
    system_pool: bool = True


JOBSET = Install("jobset", JOBSET_CONTROLLER)
PATHWAYS_JOB = Install("pathways-job", PATHWAYS_JOB_CONTROLLER)
KUEUE = Install("kueue", KUEUE_CONTROLLER)
INSTALLS: tuple[Install, ...] = (JOBSET, PATHWAYS_JOB, KUEUE)
"""Every install of a stack, in order of need: ``stack/installs.py`` registers each through
this table, so its controller lands on the system pool; a test holds every entry to it."""


CONTROLLER_PRIORITY_CLASS = "tpu-pathways-controllers"
CONTROLLER_PRIORITY = 1_000_000
"""The installs' controllers' priority: above every class a team may name (at most 1000,
``vocabulary.PRIORITY_CLASSES``), so no team pod preempts them; below Kubernetes' own
system-cluster-critical (2000000000); user classes go up to 1000000000 (kubernetes
pkg/apis/scheduling ``HighestUserDefinablePriority``). No team namespace lists it (the pod
policy admits only the classes of the namespace's label)."""


@dataclass(frozen=True)
class ControllerPatchArgs:
    """Inputs of a ``ControllerPatch``: the controller, and what is changed in its pods."""

    deployment: ControllerDeployment
    provider: k8s.Provider
    install: pulumi.Resource
    """The install whose Deployment is patched (it must exist first)."""
    node_selector: Mapping[str, str] | None = None
    """Node labels the controller's pods must land on (the system pool's)."""
    memory_mib: int | None = None
    """The controller container's memory request and limit."""
    pod_annotations: Mapping[str, str] | None = None
    """Annotations of the controller's pod template: a new value rolls its pods (e.g. a digest of
    a config file the controller reads only at start)."""
    tolerations: Sequence[Toleration] = ()
    """Taints the controller's pods tolerate (the system pool's)."""
    priority_class: str | None = None
    """The PriorityClass of the controller's pods (it must exist first: ``after``)."""
    after: Sequence[pulumi.Resource] = ()
    """What else the patch waits for (the PriorityClass it names)."""

    def __post_init__(self) -> None:
        changes = (self.node_selector, self.memory_mib, self.pod_annotations, self.tolerations)
        if not any(c for c in changes if c is not None) and self.priority_class is None:
            raise ValueError(
                "a ControllerPatch changes a node selector, memory, pod annotations, "
                "tolerations or the priority class"
            )


CONTROLLER_PATCH_TYPE = "tpu-pathways:installs:ControllerPatch"


class ControllerPatch(pulumi.ComponentResource):
    """An installed controller's Deployment, changed by a server-side patch: only the fields
    given, every other one stays the release manifest's (no copied manifest to keep in step).
    The one home of the pattern for every install."""

    deployment: pulumi.Output[str]
    """``<namespace>/<name>`` of the patched Deployment."""

    def __init__(
        self, name: str, args: ControllerPatchArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__(CONTROLLER_PATCH_TYPE, name, None, opts)
        target = args.deployment
        memory = f"{args.memory_mib}Mi" if args.memory_mib is not None else None
        patch = k8s.apps.v1.DeploymentPatch(
            name,
            metadata=k8s.meta.v1.ObjectMetaPatchArgs(
                name=target.name,
                namespace=target.namespace,
                # The release manifest's field manager owns these fields; take them over.
                annotations={"pulumi.com/patchForce": "true"},
            ),
            spec=k8s.apps.v1.DeploymentSpecPatchArgs(
                template=k8s.core.v1.PodTemplateSpecPatchArgs(
                    metadata=k8s.meta.v1.ObjectMetaPatchArgs(annotations=dict(args.pod_annotations))
                    if args.pod_annotations
                    else None,
                    spec=k8s.core.v1.PodSpecPatchArgs(
                        node_selector=_node_selector(target, args.node_selector),
                        containers=[_memory(target.container, memory)] if memory else None,
                        tolerations=_tolerations(target, args.tolerations),
                        priority_class_name=args.priority_class,
                    ),
                )
            ),
            opts=pulumi.ResourceOptions(
                parent=self, provider=args.provider, depends_on=[args.install, *args.after]
            ),
        )
        self.deployment = patch.metadata.apply(lambda m: f"{m.namespace}/{m.name}")
        self.register_outputs({"deployment": self.deployment})


@dataclass(frozen=True)
class ControllerPriorityClassArgs:
    """Inputs of ``ControllerPriorityClass``."""

    provider: k8s.Provider
    depends_on: Sequence[pulumi.Resource] = ()
    """What it waits for (the control plane)."""


class ControllerPriorityClass(pulumi.ComponentResource):
    """The PriorityClass of the installs' controllers (``CONTROLLER_PRIORITY_CLASS``)."""

    def __init__(
        self,
        name: str,
        args: ControllerPriorityClassArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tpu-pathways:installs:ControllerPriorityClass", name, None, opts)
        self.priority_class = k8s.scheduling.v1.PriorityClass(
            name,
            metadata=k8s.meta.v1.ObjectMetaArgs(name=CONTROLLER_PRIORITY_CLASS),
            value=CONTROLLER_PRIORITY,
            global_default=False,
            description="The cluster's JobSet, PathwaysJob and Kueue controllers: above every "
            "team's class",
            opts=pulumi.ResourceOptions(
                parent=self, provider=args.provider, depends_on=list(args.depends_on)
            ),
        )
        self.register_outputs({})


def _memory(container: str, memory: str) -> k8s.core.v1.ContainerPatchArgs:
    return k8s.core.v1.ContainerPatchArgs(
        name=container,
        resources=k8s.core.v1.ResourceRequirementsPatchArgs(
            limits={"memory": memory}, requests={"memory": memory}
        ),
    )


def _tolerations(
    target: ControllerDeployment, added: Sequence[Toleration]
) -> list[k8s.core.v1.TolerationPatchArgs] | None:
    """The release's own tolerations and ``added`` (once each): the patch owns the whole list."""
    if not added:
        return None
    union = dict.fromkeys([*target.release_tolerations, *added])
    return [
        k8s.core.v1.TolerationPatchArgs(
            key=t.key, operator=t.operator, value=t.value, effect=t.effect
        )
        for t in union
    ]


def _node_selector(
    target: ControllerDeployment, added: Mapping[str, str] | None
) -> dict[str, str] | None:
    """The release's own node selector and ``added``: the patch owns the whole map."""
    return {**dict(target.release_node_selector), **added} if added else None
