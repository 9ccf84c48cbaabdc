"""The manager's access to one worker cluster, created through the worker's own provider: a
service account, what it may do there, a bounded token of it, and the kubeconfig Secret built
from that token on the manager.

What it may do is what the manager's Kueue calls on a worker and nothing more
(``components.pathways.multikueue_rights``: the rules are written out there and the plan checks
them against the table of the manager's Kueue minor): in each team namespace the manager
dispatches to on this worker, a Role to get, create, update and delete Workloads, patch their
status, and get, create and delete JobSets; cluster-wide, a ClusterRole to list and watch
Workloads and JobSets, because Kueue's watches and garbage collector name no namespace (only an
origin label, which RBAC cannot scope). No pods, logs, events or Secrets.

The token (``ManagerToken``) is a TokenRequest bound to an anchor Secret
(``kueue-system/multikueue-manager-anchor[-<rotation>]``): it expires after the fleet's
``credentials.tokenLifetimeDays`` and `pulumi up` mints a new one within
``renewBeforeDays`` of that; replacing the anchor (a new ``rotation``) revokes every token bound
to the old one. The kubeconfig points at the worker's DNS-based endpoint, whose certificate a
public Google CA signs (GKE, "About network isolation"), so it pins no CA, and carries the token
inline: MultiKueue refuses exec plugins and token files
(pkg/controller/admissionchecks/multikueue/multikueuecluster.go, kubernetes-sigs/kueue v0.17.1).

A workload's own worker set (``components.resolve.tenancy.fleet_sets``) also needs its
LocalQueue on each worker of the set, in the team's namespace, on the worker's ClusterQueue for
the team: created here too.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.addons.kueue import local_queue
from components.addons.kueue_config import KUEUE_NAMESPACE
from components.addons.manager_token import ManagerToken, ManagerTokenArgs
from components.pathways.multikueue_rights import (
    MANAGER_ROLE_RULES,
    MANAGER_WATCH_RULES,
    PolicyRule,
)

KUBECONFIG_KEY = "kubeconfig"
MANAGER_ACCOUNT = "multikueue-manager"
"""The manager's service account on each worker (in kueue-system)."""
MANAGER_WATCH_ROLE = f"{MANAGER_ACCOUNT}-watch"
"""Its ClusterRole and ClusterRoleBinding on each worker: the cluster-wide watches."""
ANCHOR = f"{MANAGER_ACCOUNT}-anchor"
DAY = 86_400
# A LocalQueue's spec.clusterQueue is immutable (kueue v0.17.1 localqueue_types.go, CEL
# self == oldSelf): a change replaces it, deleting first, as its name stays.
LOCAL_QUEUE_REPLACEMENT = pulumi.ResourceOptions(
    replace_on_changes=["spec.clusterQueue"], delete_before_replace=True
)


def worker_secret_name(worker: str) -> str:
    return f"multikueue-{worker}"


def anchor_name(rotation: str | None) -> str:
    return f"{ANCHOR}-{rotation}" if rotation else ANCHOR


def worker_kubeconfig(worker: str, server: str, token: str) -> str:
    """A token kubeconfig for the worker's DNS-based endpoint (module doc)."""
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
class WorkerQueueArgs:
    """A LocalQueue the fleet creates on the worker (a workload's own worker set)."""

    namespace: str
    name: str
    cluster_queue: str
    """The worker's ClusterQueue for the team."""


@dataclass(frozen=True)
class TokenLifetime:
    """The fleet's ``credentials``, in days."""

    lifetime_days: int
    renew_before_days: int
    rotation: str | None = None


@dataclass(frozen=True)
class WorkerAccessArgs:
    """The manager's access to one worker: objects on the worker (``worker_provider``) and the
    kubeconfig Secret on the manager (``manager_provider``)."""

    worker: str
    worker_provider: k8s.Provider
    manager_provider: k8s.Provider
    namespaces: Sequence[str]
    """The worker's team namespaces the manager dispatches to."""
    server: pulumi.Input[str]
    """The worker's API server URL (its DNS-based endpoint)."""
    manager_kueue: pulumi.Resource
    """Kueue's install on the manager: its namespace kueue-system holds the Secret."""
    lifetime: TokenLifetime
    access_token: pulumi.Input[str]
    """The deployer's Google access token, to mint the manager's token with (a secret)."""
    queues: Sequence[WorkerQueueArgs] = ()


class WorkerAccess(pulumi.ComponentResource):
    """On the worker: the manager's service account, a Role and RoleBinding per team namespace,
    a ClusterRole and ClusterRoleBinding for its watches, an anchor Secret and a bounded token
    bound to it, a workload set's LocalQueues; on the manager: the kubeconfig Secret built from
    the token, a Pulumi secret (never plain text in a plan, preview or state)."""

    def __init__(
        self, name: str, args: WorkerAccessArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:multikueue:WorkerAccess", name, None, opts)
        on_worker = pulumi.ResourceOptions(parent=self, provider=args.worker_provider)
        account = k8s.core.v1.ServiceAccount(
            f"{name}-account",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=MANAGER_ACCOUNT, namespace=KUEUE_NAMESPACE),
            # No pod runs as it: the manager holds a token minted for it.
            automount_service_account_token=False,
            opts=on_worker,
        )
        self._grants(name, args.namespaces, on_worker)
        for queue in args.queues:
            local_queue(
                f"{name}-{queue.namespace}-{queue.name}",
                queue.name,
                queue.namespace,
                queue.cluster_queue,
                pulumi.ResourceOptions.merge(on_worker, LOCAL_QUEUE_REPLACEMENT),
            )
        self.token = self._token(name, args, account, on_worker)
        kubeconfig = pulumi.Output.all(args.server, self.token.token).apply(
            lambda parts: worker_kubeconfig(args.worker, parts[0], parts[1] or "")
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
        self.register_outputs({"expires_at": self.token.expires_at})

    def _token(
        self,
        name: str,
        args: WorkerAccessArgs,
        account: k8s.core.v1.ServiceAccount,
        on_worker: pulumi.ResourceOptions,
    ) -> ManagerToken:
        """The anchor Secret and the token bound to it (module doc)."""
        anchor = k8s.core.v1.Secret(
            f"{name}-anchor",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=anchor_name(args.lifetime.rotation), namespace=KUEUE_NAMESPACE
            ),
            type="Opaque",
            opts=on_worker,
        )
        return ManagerToken(
            f"{name}-token",
            ManagerTokenArgs(
                server=args.server,
                namespace=KUEUE_NAMESPACE,
                service_account=MANAGER_ACCOUNT,
                anchor_name=anchor_name(args.lifetime.rotation),
                anchor_uid=anchor.metadata.apply(lambda m: m.uid),
                lifetime_seconds=args.lifetime.lifetime_days * DAY,
                renew_before_seconds=args.lifetime.renew_before_days * DAY,
                access_token=args.access_token,
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[account, anchor]),
        )

    def _grants(
        self, name: str, namespaces: Sequence[str], on_worker: pulumi.ResourceOptions
    ) -> None:
        """The Role in each team namespace and the ClusterRole, bound to the account."""
        subject = k8s.rbac.v1.SubjectArgs(
            kind="ServiceAccount", name=MANAGER_ACCOUNT, namespace=KUEUE_NAMESPACE
        )
        for namespace in namespaces:
            role = k8s.rbac.v1.Role(
                f"{name}-{namespace}-role",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=MANAGER_ACCOUNT, namespace=namespace),
                rules=rule_args(MANAGER_ROLE_RULES),
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
            rules=rule_args(MANAGER_WATCH_RULES),
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


def rule_args(rules: Sequence[PolicyRule]) -> list[k8s.rbac.v1.PolicyRuleArgs]:
    return [
        k8s.rbac.v1.PolicyRuleArgs(
            api_groups=list(r.api_groups), resources=list(r.resources), verbs=list(r.verbs)
        )
        for r in rules
    ]
