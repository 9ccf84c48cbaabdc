"""``TeamTenant``: a team's namespace on a cluster, its workload identity, isolation and queue."""

from typing import NotRequired, TypedDict

import pulumi

from components.addons.kueue import LocalQueues, LocalQueuesArgs
from components.addons.teams import TeamNamespace
from components.config.schema.teams import TeamConfig
from components.stack.args import team_namespace_args
from tpu_pathways_provider.checks import Problems
from tpu_pathways_provider.kube import child_options, cluster_provider
from tpu_pathways_provider.types import ResourceQuota
from tpu_pathways_provider.wire import stack_values


class TeamTenantArgs(TypedDict):
    """A team of a cluster (the stack file's `teams` entry), on the cluster its kubeconfig reaches."""

    kubeconfig: pulumi.Input[str]
    """A kubeconfig for the cluster (a Cluster's kubeconfig output)."""
    name: str
    """The team: its namespace's name."""
    service_account: NotRequired[str]
    """Kubernetes service account of the team's workloads (default pathways)."""
    group: NotRequired[str]
    """Google group given `edit` in the namespace."""
    resource_quota: NotRequired[ResourceQuota]
    """The namespace's ResourceQuota."""
    cluster_queue: NotRequired[str]
    """A Kueue ClusterQueue: the team gets a LocalQueue pointing at it."""


class TeamTenant(pulumi.ComponentResource):
    """A team's namespace with its workload service account, Pod Security, quota and isolation, and a Kueue LocalQueue."""

    namespace: pulumi.Output[str]
    """The team's namespace."""

    def __init__(
        self, name: str, args: TeamTenantArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:index:TeamTenant", name, None, opts)
        values = stack_values(TeamTenantArgs, args)
        team_keys = ("name", "serviceAccount", "group", "resourceQuota")
        problems = Problems(f"TeamTenant {name!r}")
        team = problems.model(TeamConfig, "", {k: values[k] for k in team_keys if k in values})
        problems.raise_any()
        assert team is not None
        provider = cluster_provider(name, args["kubeconfig"], self)
        children = child_options(self, opts)
        tenant = TeamNamespace(name, team_namespace_args(team, provider), children)
        if queue := args.get("cluster_queue"):
            LocalQueues(
                f"{name}-queue",
                LocalQueuesArgs(provider, {team.name: tenant.namespace}, {team.name: queue}),
                children,
            )
        self.namespace = tenant.namespace
        self.register_outputs({"namespace": self.namespace})
