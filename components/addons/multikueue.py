"""Kueue MultiKueue: a manager cluster's Kueue dispatching JobSets to worker clusters.

Objects and fields are Kueue v0.17.1's ``kueue.x-k8s.io/v1beta2`` API
(kubernetes-sigs/kueue v0.17.1, apis/kueue/v1beta2/multikueue_types.go,
admissioncheck_types.go, clusterqueue_types.go):

- MultiKueueCluster ``spec.clusterSource.kubeConfig {location, locationType: Secret}``: the
  Secret is in the namespace Kueue runs in (kueue-system) and holds the worker's kubeconfig
  under key ``kubeconfig`` (``MultiKueueConfigSecretKey``). Kueue refuses kubeconfigs with exec
  plugins (pkg/controller/admissionchecks/multikueue/multikueuecluster.go), so the worker's
  kubeconfig carries a service-account token, not gke-gcloud-auth-plugin. It points at the
  worker's DNS-based endpoint, whose certificate a public Google CA signs (GKE, "About network
  isolation": only the IP-based endpoints serve the cluster root CA's), so it pins no CA: the
  cluster CA there fails TLS verification.
- MultiKueueConfig ``spec.clusters``: the MultiKueueCluster names.
- AdmissionCheck ``spec.controllerName: kueue.x-k8s.io/multikueue`` with ``spec.parameters``
  naming the MultiKueueConfig.
- ClusterQueue ``spec.admissionChecksStrategy.admissionChecks[].name`` (v1beta2 has no plain
  ``admissionChecks`` list).

The manager's quota is the sum of its workers' (site/content/en/docs/concepts/multikueue.md:
"the quota in the manager cluster should equal the total quota available in all worker
clusters"); each worker's own Kueue then admits the dispatched JobSet against its own quota.

The manager's Kueue dispatches JobSets only (``integrations.frameworks: [jobset]``): its remote
client watches the kind of every integration it has enabled on each worker and stays
disconnected if one watch fails (multikueuecluster.go ``setConfig``; kubernetes-sigs/kueue issue
3582), and the release's default list names a dozen kinds (MPIJob, RayJob, ...) whose CRDs a
worker does not have. Kueue reads its Configuration only at start, so the ConfigMap is patched
and the controller rolled (``ManagerKueueConfig``).

On each worker, the manager acts as a service account with only what MultiKueue needs
(site/static/examples/multikueue/create-multikueue-kubeconfig.sh, trimmed to the JobSet
integration): in the team namespaces, JobSets, Workloads and their status, Pods and their logs
to read; cluster-wide, list and watch of Workloads and JobSets, because the remote client
watches and garbage-collects them in every namespace at once (multikueuecluster.go,
``startWatcher`` and ``runGC``: no namespace given), and a refused watch leaves the
MultiKueueCluster inactive.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.addons.kueue import (
    TpuFlavor,
    cpu_flavor_name,
    cpu_quota_group,
    local_queues,
    tpu_quota_group,
)
from components.addons.kueue_config import (
    JOBSET_FRAMEWORK,
    KUEUE_NAMESPACE,
    config_text,
    kueue_configuration,
    write_kueue_config,
)
from components.labels import tpu_node_labels
from components.vocabulary import CLUSTER_QUEUE, KUEUE_API_VERSION

MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"
"""AdmissionCheck controller name, and the value of a JobSet's spec.managedBy."""
ADMISSION_CHECK = "multikueue"
MULTIKUEUE_CONFIG = "fleet"
KUBECONFIG_KEY = "kubeconfig"
MANAGER_ACCOUNT = "multikueue-manager"
"""The manager's service account on each worker (in kueue-system)."""
MANAGER_WATCH_ROLE = f"{MANAGER_ACCOUNT}-watch"
"""Its ClusterRole and ClusterRoleBinding on each worker: the cluster-wide watches."""
HEADS_POOL = "heads"
CPU_FLAVOR = cpu_flavor_name(HEADS_POOL)
"""The manager's flavor for the heads' CPU and memory (they run on the workers' CPU pools)."""


def manager_kueue_configuration() -> dict:
    """The manager's Kueue Configuration: the v0.17.1 release's own with JobSet the only
    integration (``kueue_config``)."""
    return kueue_configuration([JOBSET_FRAMEWORK])


def manager_kueue_config_text() -> str:
    return config_text(manager_kueue_configuration())


def worker_secret_name(worker: str) -> str:
    return f"multikueue-{worker}"


def multikueue_cluster_spec(worker: str) -> dict:
    return {
        "clusterSource": {
            "kubeConfig": {"locationType": "Secret", "location": worker_secret_name(worker)}
        }
    }


def multikueue_config_spec(workers: Sequence[str]) -> dict:
    return {"clusters": list(workers)}


def admission_check_spec() -> dict:
    return {
        "controllerName": MULTIKUEUE_CONTROLLER,
        "parameters": {
            "apiGroup": KUEUE_API_VERSION.split("/")[0],
            "kind": "MultiKueueConfig",
            "name": MULTIKUEUE_CONFIG,
        },
    }


def manager_cluster_queue_spec(tpu: Sequence[TpuFlavor], cpu: str, memory: str) -> dict:
    """The manager's one ClusterQueue: the workers' chips per flavor summed, the workers' CPU
    pools' CPU and memory, every JobSet through the MultiKueue admission check."""
    return {
        "namespaceSelector": {},
        "queueingStrategy": "BestEffortFIFO",
        "resourceGroups": [
            tpu_quota_group(tpu, {f.name: f.chips for f in tpu}, None),
            cpu_quota_group(HEADS_POOL, cpu, memory),
        ],
        "admissionChecksStrategy": {"admissionChecks": [{"name": ADMISSION_CHECK}]},
    }


def worker_role_rules() -> list[dict]:
    """What the manager may do in a team namespace of a worker (RBAC rules)."""
    manage = ["create", "delete", "get", "list", "watch"]
    return [
        {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets"], "verbs": manage},
        {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets/status"], "verbs": ["get"]},
        # update: MultiKueue updates the remote Workload itself to drop its finalizer and to
        # carry a priority change (pkg/controller/admissionchecks/multikueue/workload.go).
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"], "verbs": [*manage, "update"]},
        {
            "apiGroups": ["kueue.x-k8s.io"],
            "resources": ["workloads/status"],
            "verbs": ["get", "patch", "update"],
        },
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]},
    ]


def worker_watch_rules() -> list[dict]:
    """What the manager may do in every namespace of a worker: the watches of its remote client
    (module doc), which name no namespace."""
    watch = ["list", "watch"]
    return [
        {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"], "verbs": watch},
        {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets"], "verbs": watch},
    ]


def worker_kubeconfig(worker: str, server: str, token: str) -> str:
    """A token kubeconfig for the worker's DNS-based endpoint (no exec plugin: MultiKueue
    refuses those; no CA: the endpoint's certificate is publicly trusted, module doc)."""
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": worker, "cluster": {"server": server}}],
        "users": [{"name": MANAGER_ACCOUNT, "user": {"token": token}}],
        "contexts": [{"name": worker, "context": {"cluster": worker, "user": MANAGER_ACCOUNT}}],
        "current-context": worker,
    }
    return json.dumps(document, indent=2)


@dataclass(frozen=True)
class ManagerKueueConfigArgs:
    """The manager's Kueue install to configure (``manager_kueue_configuration``)."""

    provider: k8s.Provider
    kueue_install: pulumi.Resource


class ManagerKueueConfig(pulumi.ComponentResource):
    """The manager's Kueue Configuration written over the release's (a server-side patch of its
    ConfigMap), then its controller rolled to read it: a digest of it in the pod template."""

    def __init__(
        self, name: str, args: ManagerKueueConfigArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:multikueue:ManagerKueueConfig", name, None, opts)
        text = manager_kueue_config_text()
        self.restart = write_kueue_config(name, self, args.provider, args.kueue_install, text)
        self.register_outputs({})


@dataclass(frozen=True)
class MultiKueueManagerArgs:
    """The manager's MultiKueue objects and queues (Kueue installed on ``provider``)."""

    provider: k8s.Provider
    kueue_install: pulumi.Resource
    """Kueue installed and configured for MultiKueue (``ManagerKueueConfig``)."""
    workers: Sequence[str]
    """Worker stack names (one MultiKueueCluster each; their Secrets come from WorkerAccess)."""
    kubeconfigs: Sequence[pulumi.Resource]
    """The workers' kubeconfig Secrets (a MultiKueueCluster waits for its Secret)."""
    tpu_flavors: Sequence[TpuFlavor]
    """The workers' chips per flavor, summed."""
    cpu_quota: str
    memory_quota: str
    namespaces: Mapping[str, pulumi.Input[str]]
    """Team -> its namespace on the manager (a LocalQueue each)."""


class MultiKueueManager(pulumi.ComponentResource):
    """Flavors, MultiKueueClusters, the MultiKueueConfig, the AdmissionCheck, the ClusterQueue
    and LocalQueues of the manager."""

    def __init__(
        self, name: str, args: MultiKueueManagerArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:multikueue:MultiKueueManager", name, None, opts)
        child = pulumi.ResourceOptions(
            parent=self, provider=args.provider, depends_on=[args.kueue_install]
        )

        def kueue(kind: str, object_name: str, spec: dict, opts=child):
            return k8s.apiextensions.CustomResource(
                f"{name}-{kind.lower()}-{object_name}",
                api_version=KUEUE_API_VERSION,
                kind=kind,
                metadata=k8s.meta.v1.ObjectMetaArgs(name=object_name),
                spec=spec,
                opts=opts,
            )

        for flavor in args.tpu_flavors:
            kueue("ResourceFlavor", flavor.name, {"nodeLabels": tpu_node_labels(flavor.shape)})
        kueue("ResourceFlavor", CPU_FLAVOR, {})
        after_secrets = pulumi.ResourceOptions.merge(
            child, pulumi.ResourceOptions(depends_on=list(args.kubeconfigs))
        )
        clusters = [
            kueue("MultiKueueCluster", w, multikueue_cluster_spec(w), after_secrets)
            for w in args.workers
        ]
        config = kueue(
            "MultiKueueConfig",
            MULTIKUEUE_CONFIG,
            multikueue_config_spec(args.workers),
            pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=clusters)),
        )
        check = kueue(
            "AdmissionCheck",
            ADMISSION_CHECK,
            admission_check_spec(),
            pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[config])),
        )
        queue = kueue(
            "ClusterQueue",
            CLUSTER_QUEUE,
            manager_cluster_queue_spec(args.tpu_flavors, args.cpu_quota, args.memory_quota),
            pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[check])),
        )
        local_queues(
            name,
            args.namespaces,
            dict.fromkeys(args.namespaces, CLUSTER_QUEUE),
            pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(depends_on=[queue])),
        )
        self.register_outputs({})


@dataclass(frozen=True)
class WorkerAccessArgs:
    """The manager's access to one worker: objects on the worker (``worker_provider``) and the
    kubeconfig Secret on the manager (``manager_provider``)."""

    worker: str
    worker_provider: k8s.Provider
    manager_provider: k8s.Provider
    namespaces: Sequence[str]
    """The worker's team namespaces the fleet dispatches to."""
    server: pulumi.Input[str]
    """The worker's API server URL (its DNS-based endpoint)."""
    manager_kueue: pulumi.Resource
    """Kueue's install on the manager: its namespace kueue-system holds the Secret."""


class WorkerAccess(pulumi.ComponentResource):
    """On the worker: the manager's service account, a Role and RoleBinding per team namespace,
    a ClusterRole and ClusterRoleBinding for its cluster-wide watches, a token Secret; on the
    manager: the kubeconfig Secret built from the token, a Pulumi secret (never plain text in a
    plan, preview or state)."""

    def __init__(
        self, name: str, args: WorkerAccessArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:multikueue:WorkerAccess", name, None, opts)
        on_worker = pulumi.ResourceOptions(parent=self, provider=args.worker_provider)
        account = k8s.core.v1.ServiceAccount(
            f"{name}-account",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=MANAGER_ACCOUNT, namespace=KUEUE_NAMESPACE),
            # No pod runs as it: the manager reads its token from the Secret below.
            automount_service_account_token=False,
            opts=on_worker,
        )
        self._grants(name, args.namespaces, on_worker)
        token = k8s.core.v1.Secret(
            f"{name}-token",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=f"{MANAGER_ACCOUNT}-token",
                namespace=KUEUE_NAMESPACE,
                annotations={"kubernetes.io/service-account.name": MANAGER_ACCOUNT},
            ),
            type="kubernetes.io/service-account-token",
            opts=pulumi.ResourceOptions.merge(
                on_worker,
                # The token controller fills data.token: a secret from the first read on.
                pulumi.ResourceOptions(depends_on=[account], additional_secret_outputs=["data"]),
            ),
        )
        kubeconfig = pulumi.Output.all(args.server, token.data).apply(
            lambda parts: worker_kubeconfig(
                args.worker, parts[0], _decoded((parts[1] or {}).get("token", ""))
            )
        )
        self.kubeconfig_secret = k8s.core.v1.Secret(
            f"{name}-kubeconfig",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=worker_secret_name(args.worker), namespace=KUEUE_NAMESPACE
            ),
            type="Opaque",
            string_data={KUBECONFIG_KEY: pulumi.Output.secret(kubeconfig)},
            opts=pulumi.ResourceOptions(
                parent=self, provider=args.manager_provider, depends_on=[args.manager_kueue]
            ),
        )
        self.register_outputs({})

    def _grants(
        self, name: str, namespaces: Sequence[str], on_worker: pulumi.ResourceOptions
    ) -> None:
        """The manager's account may manage the dispatched jobs in each team namespace and
        watch what MultiKueue reads cluster-wide."""
        subject = k8s.rbac.v1.SubjectArgs(
            kind="ServiceAccount", name=MANAGER_ACCOUNT, namespace=KUEUE_NAMESPACE
        )
        for namespace in namespaces:
            role = k8s.rbac.v1.Role(
                f"{name}-{namespace}-role",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=MANAGER_ACCOUNT, namespace=namespace),
                rules=[k8s.rbac.v1.PolicyRuleArgs(**_snake(r)) for r in worker_role_rules()],
                opts=on_worker,
            )
            k8s.rbac.v1.RoleBinding(
                f"{name}-{namespace}-binding",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=MANAGER_ACCOUNT, namespace=namespace),
                role_ref=k8s.rbac.v1.RoleRefArgs(
                    api_group="rbac.authorization.k8s.io", kind="Role", name=MANAGER_ACCOUNT
                ),
                subjects=[subject],
                opts=pulumi.ResourceOptions.merge(
                    on_worker, pulumi.ResourceOptions(depends_on=[role])
                ),
            )
        watch = k8s.rbac.v1.ClusterRole(
            f"{name}-watch-role",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=MANAGER_WATCH_ROLE),
            rules=[k8s.rbac.v1.PolicyRuleArgs(**_snake(r)) for r in worker_watch_rules()],
            opts=on_worker,
        )
        k8s.rbac.v1.ClusterRoleBinding(
            f"{name}-watch-binding",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=MANAGER_WATCH_ROLE),
            role_ref=k8s.rbac.v1.RoleRefArgs(
                api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=MANAGER_WATCH_ROLE
            ),
            subjects=[subject],
            opts=pulumi.ResourceOptions.merge(
                on_worker, pulumi.ResourceOptions(depends_on=[watch])
            ),
        )


def _decoded(value: str) -> str:
    return base64.b64decode(value).decode() if value else ""


def _snake(rule: dict) -> dict:
    return {"api_groups": rule["apiGroups"], "resources": rule["resources"], "verbs": rule["verbs"]}
