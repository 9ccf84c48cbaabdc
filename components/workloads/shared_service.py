"""A shared Pathways service: a long-running headless PathwaysJob (or, on the JobSet backend, the
JobSet itself, its head running the resource manager only) that many clients share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.errors import ConfigError, ConfigIssue
from components.pathways.service_client import connect_call
from components.pathways.spec import PathwaysJobSpec, wait_for_running
from components.vocabulary import WorkloadBackend
from components.workloads.job import PathwaysJob, PathwaysJobArgs
from components.workloads.jobset import PathwaysJobSet, PathwaysJobSetArgs, wait_for_started


@dataclass(frozen=True)
class SharedPathwaysServiceArgs:
    """What a shared Pathways service is made of.

    ``job_name``, ``namespace``, ``spec``, ``provider``, ``controller_install``, ``labels`` and
    ``prerequisites`` are those of its PathwaysJob (see ``PathwaysJobArgs``); the spec should be
    headless (no user pod template), and the namespace ``default`` for pathwaysutils 0.1.13's
    client to find it (``service_client.SERVICE_NAMESPACE``). ``address`` is where clients reach
    its resource manager (``spec.resource_manager_address``) and ``instance_type`` the Pathways
    instance type of its workers (``TpuShape.pathways_instance_type``, e.g. ``tpuv5:2x2x4``).
    ``cluster_name``, ``project``, ``location`` (the cluster's region, or zone if zonal) and
    ``proxy_options`` complete the ``isc_pathways.connect(...)`` call the component outputs; its
    ``gcs_bucket`` is the spec's ``pathways_dir``. ``wait_timeout_seconds`` bounds how long
    `pulumi up` waits for the service to run (it fails after that).

    ``backend`` JOBSET creates the JobSet itself (``PathwaysJobSet``, waiting for
    ``jobset_install`` instead of ``controller_install``) with a head of the resource manager
    only, as pathwaysutils 0.1.13's deployer runs it (each client brings its own proxy), placed
    by ``head_node_selector`` (e.g. the CPU pool).
    """

    job_name: str
    namespace: pulumi.Input[str]
    spec: PathwaysJobSpec
    address: str
    instance_type: str
    cluster_name: str
    project: str
    location: str
    provider: k8s.Provider
    wait_timeout_seconds: int
    proxy_options: Sequence[str] = ()

    def __post_init__(self) -> None:
        if not self.spec.pathways_dir:
            raise ConfigError(
                [
                    ConfigIssue(
                        "spec.pathways_dir",
                        "a shared service's spec needs pathways_dir: its clients' proxies use "
                        "it as their gcs_bucket (scratch location)",
                    )
                ],
                "SharedPathwaysServiceArgs",
            )

    controller_install: pulumi.Resource | None = None
    labels: dict[str, str] | None = None
    prerequisites: Sequence[pulumi.Resource] = ()
    backend: WorkloadBackend = WorkloadBackend.PATHWAYS_JOB
    jobset_install: pulumi.Resource | None = None
    head_node_selector: dict[str, str] | None = None


class SharedPathwaysService(pulumi.ComponentResource):
    """A long-running headless Pathways deployment (resource manager + workers) that many
    clients share through pathwaysutils' ``isc_pathways.connect``."""

    pathways_service: pulumi.Output[str]
    expected_tpu_instances: pulumi.Output[dict[str, int]]
    connect: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        args: SharedPathwaysServiceArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tpu-pathways:workloads:SharedPathwaysService", name, None, opts)
        _job(name, args, pulumi.ResourceOptions(parent=self))
        instances = {args.instance_type: args.spec.workers[0].num_slices}
        self.pathways_service = pulumi.Output.from_input(args.address)
        self.expected_tpu_instances = pulumi.Output.from_input(instances)
        self.connect = pulumi.Output.from_input(
            connect_call(
                cluster=args.cluster_name,
                project=args.project,
                location=args.location,
                gcs_bucket=args.spec.pathways_dir,
                pathways_service=args.address,
                expected_tpu_instances=instances,
                proxy_options=args.proxy_options,
            )
        )
        self.register_outputs(
            {
                "pathways_service": self.pathways_service,
                "expected_tpu_instances": self.expected_tpu_instances,
                "connect": self.connect,
            }
        )


def _job(name: str, args: SharedPathwaysServiceArgs, opts: pulumi.ResourceOptions) -> None:
    """The service's PathwaysJob or JobSet. A service is only useful once it runs: `pulumi up`
    waits for it, or fails."""
    if args.backend is WorkloadBackend.JOBSET:
        PathwaysJobSet(
            name,
            PathwaysJobSetArgs(
                name=args.job_name,
                namespace=args.namespace,
                spec=args.spec,
                provider=args.provider,
                jobset_install=args.jobset_install,
                labels=args.labels,
                annotations=wait_for_started(args.wait_timeout_seconds),
                head_node_selector=args.head_node_selector,
                head_proxy=False,
                prerequisites=args.prerequisites,
            ),
            opts=opts,
        )
        return
    PathwaysJob(
        name,
        PathwaysJobArgs(
            name=args.job_name,
            namespace=args.namespace,
            spec=args.spec,
            provider=args.provider,
            controller_install=args.controller_install,
            labels=args.labels,
            annotations=wait_for_running(args.wait_timeout_seconds),
            prerequisites=args.prerequisites,
        ),
        opts=opts,
    )
