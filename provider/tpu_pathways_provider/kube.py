"""The Kubernetes provider of a component that is given a cluster's kubeconfig."""

import pulumi
import pulumi_kubernetes as k8s


def cluster_provider(name: str, kubeconfig: pulumi.Input[str], parent: pulumi.Resource):
    """An explicit provider for the cluster ``kubeconfig`` reaches (never the ambient one),
    with server-side apply as the project's clusters use (``GkeCluster``): the JobSet and
    PathwaysJob CRDs are too large for client-side apply."""
    return k8s.Provider(
        f"{name}-k8s",
        kubeconfig=kubeconfig,
        enable_server_side_apply=True,
        opts=pulumi.ResourceOptions(parent=parent),
    )


def child_options(parent: pulumi.Resource, opts: pulumi.ResourceOptions | None):
    """A wrapper's children: parented to it, and waiting for what it waits for (the SDK does
    not pass a component's ``depends_on`` on to its children's registrations)."""
    return pulumi.ResourceOptions(parent=parent, depends_on=opts.depends_on if opts else None)
