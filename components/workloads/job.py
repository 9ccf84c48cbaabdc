"""The PathwaysJob resource: a ``pathways-job.pathways.domain/v1`` custom resource (controller
v0.1.4) built from a validated ``PathwaysJobSpec`` (``components.pathways.spec``).

Change semantics (the JobSet backend's ``PathwaysJobSet`` has the same): the controller never
updates the JobSet of an existing PathwaysJob and the CRD marks most of the spec immutable, so
any spec change is declared as a replacement (delete, then create): a preview then shows it for
what it is instead of an update that does nothing."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.errors import ConfigError, ConfigIssue
from components.pathways.preflight import preflight_job
from components.pathways.scheduler_model import NodePoolModel
from components.pathways.spec import API_VERSION, KIND, PathwaysJobSpec, job_name_problem
from components.tokens import JOBSET


@dataclass(frozen=True)
class PathwaysJobArgs:
    """What a PathwaysJob is made of.

    ``name`` is the Kubernetes object's name (DNS-1035, at most 22 characters: see
    ``job_name_problem``) and ``namespace`` where it lives. ``provider`` is required: the
    cluster's Kubernetes provider, never the ambient kubeconfig. ``controller_install`` is the
    PathwaysJob controller install the job must wait for (None when another stack owns it);
    ``prerequisites`` are other objects it needs first (Kueue queues, priority classes, the
    scratch bucket's grants, the Secret of its config secrets). ``labels`` go on the object (the
    controller copies them to the JobSet Kueue admits) and ``annotations`` too (for example
    ``spec.wait_for_running``). With ``node_pools`` (``scheduler_model.NodePoolModel``s) and a
    plain-string ``namespace``, the job is checked against them first, as the stack's preflight
    does, and refused with a ConfigError when its pods would not schedule.
    """

    name: str
    namespace: pulumi.Input[str]
    spec: PathwaysJobSpec
    provider: k8s.Provider
    controller_install: pulumi.Resource | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    prerequisites: Sequence[pulumi.Resource] = ()
    node_pools: Sequence[NodePoolModel] | None = None


_job_listeners: list[Callable[[PathwaysJobArgs], None]] = []


@contextmanager
def jobs_built(listener: Callable[[PathwaysJobArgs], None]) -> Iterator[None]:
    """Within the block, ``listener`` gets the args of every PathwaysJob built: the offline plan
    of a program of your own checks them as a stack's preflight would
    (``components.plan.program_checks``)."""
    _job_listeners.append(listener)
    try:
        yield
    finally:
        _job_listeners.remove(listener)


class PathwaysJob(k8s.apiextensions.CustomResource):
    """A PathwaysJob custom resource with a validated name and spec (see ``PathwaysJobArgs``)."""

    def __init__(
        self, resource_name: str, args: PathwaysJobArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        problem = job_name_problem(args.name)
        if problem:
            raise ConfigError([ConfigIssue("metadata.name", problem)], "PathwaysJob")
        if args.node_pools is not None and isinstance(args.namespace, str):
            report = preflight_job(
                args.name,
                args.namespace,
                args.spec,
                args.node_pools,
                annotations=args.annotations,
            )
            report.raise_if_failed()
        for listener in _job_listeners:
            listener(args)
        install = [args.controller_install] if args.controller_install else []
        required = pulumi.ResourceOptions(
            provider=args.provider,
            depends_on=[*install, *args.prerequisites],
            replace_on_changes=["spec"],
            # The name is fixed, so the old job must go before its replacement is created.
            delete_before_replace=True,
            # A job switched between backends keeps its logical name and changes type; each
            # backend's resource aliases the other's type, so Pulumi replaces the object.
            aliases=[pulumi.Alias(type_=JOBSET)],
        )
        super().__init__(
            resource_name,
            api_version=API_VERSION,
            kind=KIND,
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=args.name,
                namespace=args.namespace,
                labels=args.labels,
                annotations=args.annotations,
            ),
            spec=args.spec.manifest(),
            opts=pulumi.ResourceOptions.merge(opts, required),
        )
        self.job_name = args.name
