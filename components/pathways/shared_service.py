"""A shared Pathways service: a long-running headless PathwaysJob that many clients share."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.pathways.job import PathwaysJob, PathwaysJobArgs
from components.pathways.spec import PathwaysJobSpec, wait_for_running


@dataclass(frozen=True)
class SharedPathwaysServiceArgs:
    """What a shared Pathways service is made of.

    ``job_name``, ``namespace``, ``spec``, ``provider``, ``controller_install``, ``labels`` and
    ``prerequisites`` are those of its PathwaysJob (see ``PathwaysJobArgs``); the spec should be
    headless (no user pod template). ``address`` is where pathwaysutils clients reach its
    resource manager (``spec.resource_manager_address``) and ``instance_type`` the Pathways
    instance type of its workers (``TpuShape.pathways_instance_type``, e.g. ``tpuv5:2x2x4``):
    both become outputs that clients pass to ``isc_pathways.connect``. ``wait_timeout_seconds``
    bounds how long `pulumi up` waits for the service to run (it fails after that).
    """

    job_name: str
    namespace: pulumi.Input[str]
    spec: PathwaysJobSpec
    address: str
    instance_type: str
    provider: k8s.Provider
    wait_timeout_seconds: int
    controller_install: pulumi.Resource | None = None
    labels: dict[str, str] | None = None
    prerequisites: Sequence[pulumi.Resource] = ()


class SharedPathwaysService(pulumi.ComponentResource):
    """A long-running headless Pathways deployment (resource manager + workers) that many
    clients share through pathwaysutils' ``isc_pathways.connect``."""

    pathways_service: pulumi.Output[str]
    expected_tpu_instances: pulumi.Output[dict[str, int]]

    def __init__(
        self,
        name: str,
        args: SharedPathwaysServiceArgs,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("tpu-pathways:workloads:SharedPathwaysService", name, None, opts)
        PathwaysJob(
            name,
            PathwaysJobArgs(
                name=args.job_name,
                namespace=args.namespace,
                spec=args.spec,
                provider=args.provider,
                controller_install=args.controller_install,
                labels=args.labels,
                # A service is only useful once it runs: `pulumi up` waits for it, or fails.
                annotations=wait_for_running(args.wait_timeout_seconds),
                prerequisites=args.prerequisites,
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.pathways_service = pulumi.Output.from_input(args.address)
        self.expected_tpu_instances = pulumi.Output.from_input(
            {args.instance_type: args.spec.workers[0].num_slices}
        )
        self.register_outputs(
            {
                "pathways_service": self.pathways_service,
                "expected_tpu_instances": self.expected_tpu_instances,
            }
        )
