"""The JobSet backend's resource: a Pathways workload as one ``jobset.x-k8s.io/v1alpha2`` JobSet
(``components.pathways.jobset.render_jobset``, the way XPK 1.16 renders it), for clusters that
run no PathwaysJob controller. Users still write a ``PathwaysJobSpec``.

Change semantics, as ``PathwaysJob``'s: JobSet v0.10.1 refuses most changes to a JobSet's
spec (its webhook keeps replicatedJobs immutable), so any spec change is declared as a
replacement, the old JobSet deleted first (the name is fixed). A job switched from the
PathwaysJob backend keeps its logical name but changes type, so it is a new resource: the
``PathwaysJob`` alias makes Pulumi replace the old object (delete, then create) instead of
creating the JobSet beside the PathwaysJob whose own JobSet still holds the name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.errors import ConfigError, ConfigIssue
from components.pathways.jobset import render_jobset
from components.pathways.jobset_names import STARTED_CONDITION
from components.pathways.preflight import preflight_job
from components.pathways.scheduler_model import NodePoolModel
from components.pathways.spec import (
    TIMEOUT_ANNOTATION,
    WAIT_FOR_ANNOTATION,
    PathwaysJobSpec,
    job_name_problem,
)
from components.tokens import PATHWAYS_JOB


def wait_for_started(timeout_seconds: int) -> dict[str, str]:
    """Annotations that make `pulumi up` wait until the JobSet's head and workers are all ready
    (its StartupPolicyCompleted condition), and fail after ``timeout_seconds``."""
    return {
        WAIT_FOR_ANNOTATION: f"condition={STARTED_CONDITION}",
        TIMEOUT_ANNOTATION: str(timeout_seconds),
    }


@dataclass(frozen=True)
class PathwaysJobSetArgs:
    """What a Pathways JobSet is made of.

    ``name``, ``namespace``, ``spec``, ``provider``, ``labels``, ``annotations``,
    ``prerequisites`` and ``node_pools`` are those of ``PathwaysJobArgs`` (with ``node_pools``
    and a plain-string namespace the pods are checked first, read from the rendered JobSet).
    ``jobset_install`` is the JobSet install it waits for (None when another stack owns it).
    ``queue_name`` is the Kueue LocalQueue that admits it (None: not queued). ``host_network``
    False runs every pod on the pod network as ``service_account`` (Workload Identity applies);
    ``head_node_selector`` places a head without a user container (e.g. on the CPU pool);
    ``head_proxy`` False leaves the proxy out of such a head (a shared service's);
    ``head_annotations`` go on the head's pod template (the Cloud Storage FUSE sidecar's). A
    colocated spec (``DeploymentMode.COLOCATE_HEAD_WITH_WORKERS``) is refused: XPK 1.16 dropped
    it.
    """

    name: str
    namespace: pulumi.Input[str]
    spec: PathwaysJobSpec
    provider: k8s.Provider
    jobset_install: pulumi.Resource | None = None
    labels: Mapping[str, str] | None = None
    annotations: Mapping[str, str] | None = None
    queue_name: str | None = None
    host_network: bool = True
    service_account: str | None = None
    head_node_selector: Mapping[str, str] | None = None
    head_proxy: bool = True
    prerequisites: Sequence[pulumi.Resource] = ()
    node_pools: Sequence[NodePoolModel] | None = None
    managed_by: str | None = None
    """spec.managedBy (a fleet's JobSets: kueue.x-k8s.io/multikueue)."""
    head_annotations: Mapping[str, str] | None = None


class PathwaysJobSet(k8s.apiextensions.CustomResource):
    """A Pathways workload as a JobSet, with a validated name and spec (see
    ``PathwaysJobSetArgs``)."""

    def __init__(
        self,
        resource_name: str,
        args: PathwaysJobSetArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        problem = job_name_problem(args.name)
        if problem:
            raise ConfigError([ConfigIssue("metadata.name", problem)], "PathwaysJobSet")
        # Rendered with a placeholder namespace when it is an output: the namespace is set on
        # the object's metadata below, and nothing else of the manifest depends on it.
        namespace = args.namespace if isinstance(args.namespace, str) else "default"
        manifest = render_jobset(
            args.name,
            namespace,
            args.spec,
            labels=args.labels,
            annotations=args.annotations,
            queue_name=args.queue_name,
            host_network=args.host_network,
            service_account=args.service_account,
            head_node_selector=args.head_node_selector,
            head_proxy=args.head_proxy,
            managed_by=args.managed_by,
            head_annotations=args.head_annotations,
        )
        if args.node_pools is not None and isinstance(args.namespace, str):
            preflight_job(
                args.name, args.namespace, args.spec, args.node_pools, jobset=manifest
            ).raise_if_failed()
        install = [args.jobset_install] if args.jobset_install else []
        required = pulumi.ResourceOptions(
            provider=args.provider,
            depends_on=[*install, *args.prerequisites],
            replace_on_changes=["spec"],
            delete_before_replace=True,
            aliases=[pulumi.Alias(type_=PATHWAYS_JOB)],
        )
        metadata = manifest["metadata"]
        super().__init__(
            resource_name,
            api_version=manifest["apiVersion"],
            kind=manifest["kind"],
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=args.name,
                namespace=args.namespace,
                labels=metadata.get("labels"),
                annotations=metadata.get("annotations"),
            ),
            spec=manifest["spec"],
            opts=pulumi.ResourceOptions.merge(opts, required),
        )
        self.job_name = args.name
