"""An existing subnetwork looked up, and the teams' Pod ranges on it checked, while `pulumi
preview` or `pulumi up` runs: before any resource of the stack is registered, so a failed
check stops every resource (``GkeCluster`` looks it up before it registers itself; the program
registers nothing before ``GkeCluster``).

Why before, and blocking (pulumi/pulumi sdk/python/lib/pulumi, read in the 3.272.0 wheel the
lock pins): the engine learns of a resource only from its constructor (``resource.py``
``Resource.__init__`` calls ``runtime/resource.py`` ``register_resource``, which schedules the
``RegisterResource`` RPC), and the plain form of an invoke (``gcp.compute.get_subnetwork``,
not ``get_subnetwork_output``) returns only once the provider has answered (``runtime/
invoke.py`` ``invoke`` pumps the running event loop until the invoke's RPC is done:
``runtime/sync_await.py``, pulumi/pulumi#3019). So an error raised on the answer before the
first constructor runs leaves the engine without any resource of the stack. A check inside an
Output (``get_subnetwork_output(...).apply``) stops only the resources that wait for it:
``prepare_resource`` awaits a resource's ``depends_on``, its own inputs
(``rpc.serialize_properties``) and its parent's URN before it sends it, nothing else, so every
other resource (the node service accounts, their IAM, the buckets) is sent as soon as those
resolve, whatever the check says.

What registers before it: nothing in ``__main__.py`` but the root Stack the engine itself
makes; in the component package, the ``tpu-pathways:index:Cluster`` that wraps the stack
(it registers first, and its ``Construct`` then fails). Neither creates anything in GCP.

A subnetwork GCP does not give is a ``ConfigError``: ``__main__.py`` reports it as the
update's failure without a traceback, the component package's provider as an error of its
inputs. Any other failed lookup is a ``pulumi.RunError``: pulumi-language-python-exec (pulumi/
pulumi sdk/python/cmd) logs a RunError as its message, without a traceback, and the package's
provider (``provider/server.py`` ``Construct``) passes it on as the construct's error.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import pulumi
import pulumi_gcp as gcp

from components.errors import ConfigError, ConfigIssue
from components.gke.subnetwork_ranges import (
    RangeClaim,
    SecondaryRange,
    range_issues,
    unchecked_note,
)
from components.tokens import DEPLOY_TIME, GET_SUBNETWORK

GCP_PACKAGE = "gcp"

if TYPE_CHECKING:  # not at run time: it would load pulumi_gcp.compute (about 0.3 s of CPU) for a
    # stack that uses none of it (a team stack, a fleet's manager)
    FoundRanges = Sequence[gcp.compute.outputs.GetSubnetworkSecondaryIpRangeResult]

# What GCP answers for a subnetwork that is not there or that the credentials may not read, as
# the provider passes it on. pulumi-gcp 10.x bridges terraform-provider-google, whose data
# source reads the subnetwork with ``HandleDataSourceNotFoundError`` (google/services/compute/
# data_source_google_compute_subnetwork.go, google/transport/transport.go): a 404 is
# "<projects/p/regions/r/subnetworks/n> not found"; any other error is wrapped as it came,
# and a GCP error reads "googleapi: Error <code>: <message>, <reason>" (google.golang.org/api
# googleapi ``Error.Error``). Only these two are the stack file's to fix: a 403 of another
# reason (an API not enabled, a rate limit), a 5xx, missing credentials, a default provider
# disabled or the engine shutting down are not.
_GCP_NOT_FOUND = re.compile(r"googleapi: Error 404\b")
_GCP_FORBIDDEN = re.compile(r"googleapi: Error 403\b.*\bforbidden\b")


def invoke_options(opts: pulumi.ResourceOptions | None) -> pulumi.InvokeOptions:
    """The options of a gcp invoke a component makes before it registers (it cannot be the
    invoke's parent yet): the gcp provider its children will get, and its parent. That
    provider is, as pulumi sdk/python/lib/pulumi/resource.py ``Resource._get_providers`` picks
    it (3.272.0): the gcp entry of ``opts.providers`` (a map, or a list by package), else
    ``opts.provider`` if it is gcp's, else the parent's providers map, which ``runtime/
    invoke.py`` reads itself when the options name a parent and no provider."""
    if opts is None:
        return pulumi.InvokeOptions()
    providers = opts.providers or {}
    if not isinstance(providers, Mapping):
        providers = {p.package: p for p in providers}
    provider = providers.get(GCP_PACKAGE)
    if provider is None and opts.provider is not None and opts.provider.package == GCP_PACKAGE:
        provider = opts.provider
    return pulumi.InvokeOptions(parent=opts.parent, provider=provider)


def look_up_subnetwork(
    project: str,
    region: str,
    subnetwork: str,
    claims: Sequence[RangeClaim],
    key: str,
    opts: pulumi.InvokeOptions | None = None,
) -> str:
    """The primary range (the nodes' addresses) of ``subnetwork``, once it has each of the
    ``claims`` with its addresses (``check_pod_ranges``). Blocks until GCP answers: call it
    before registering anything that must not exist on a failed check (the module's
    docstring). ``opts``: the invoke's provider (that of the component's gcp resources, so the
    lookup uses their credentials and default project). A subnetwork GCP does not give (none
    of that name in that region and project, or not readable with the credentials) is a
    ``ConfigError`` at ``key``, the key that named it, with GCP's answer; any other failed
    lookup a ``pulumi.RunError`` with the provider's answer (reported in one line, no traceback,
    by the language host and by the component package's provider)."""
    try:
        found = gcp.compute.get_subnetwork(
            name=subnetwork, region=region, project=project, opts=opts
        )
    except Exception as error:
        # A failed invoke raises a plain Exception, "invoke of <token> failed: <the provider's
        # error>" (pulumi sdk/python/lib/pulumi/runtime/invoke.py ``do_invoke``, 3.272.0), for
        # the provider's failures and for its gRPC error alike; anything else is not an answer
        # of the provider and stays as it is.
        prefix = f"invoke of {GET_SUBNETWORK} failed: "
        if not str(error).startswith(prefix):
            raise
        answer = one_line(str(error).removeprefix(prefix))
        if not _not_there(answer, f"projects/{project}/regions/{region}/subnetworks/{subnetwork}"):
            raise pulumi.RunError(
                f"the lookup of subnetwork {subnetwork!r} in region {region!r} of project "
                f"{project!r} failed: {answer}"
            ) from None
        issue = _not_found(project, region, subnetwork, key, answer)
        raise ConfigError([issue], f"the existing subnetwork {subnetwork!r}") from None
    if claims:
        answered = found.ip_cidr_range != DEPLOY_TIME
        check_pod_ranges(subnetwork, claims, found.secondary_ip_ranges, answered)
    return found.ip_cidr_range


def one_line(text: str) -> str:
    """A provider's answer in one line (they come as "1 error occurred:\\n\\t* ...\\n\\n"):
    the report has one issue a line."""
    return " ".join(text.split())


def _not_there(answer: str, subnetwork_id: str) -> bool:
    """GCP's answer means the subnetwork is not there, or not readable (the comment above)."""
    return (
        f"{subnetwork_id} not found" in answer
        or _GCP_NOT_FOUND.search(answer) is not None
        or _GCP_FORBIDDEN.search(answer) is not None
    )


def _not_found(project: str, region: str, subnetwork: str, key: str, answer: str) -> ConfigIssue:
    return ConfigIssue(
        key,
        f"subnetwork {subnetwork!r} could not be read in region {region!r} of project "
        f"{project!r} ({answer}); name a subnetwork of that region the deploying credentials "
        "can read (compute.subnetworks.get)",
    )


def check_pod_ranges(
    subnetwork: str, claims: Sequence[RangeClaim], found: FoundRanges | None, answered: bool
) -> None:
    """The teams' ranges checked against the subnetwork's (``found``, from its lookup): a
    ``ConfigError`` naming every range it lacks or has with other addresses. ``answered``:
    whether GCP answered: only the offline plan's mock engine does not (its placeholder,
    ``DEPLOY_TIME``, for the primary range), and the plan warns that they are checked at deploy
    time; any other answer, with or without a primary range, is checked. An answer without
    secondary ranges (the provider may send an empty list as null) is a subnetwork without any,
    in a preview too."""
    if not answered:
        pulumi.log.warn(unchecked_note(subnetwork, claims))
        return
    has = [SecondaryRange(r.range_name, r.ip_cidr_range) for r in found or ()]
    issues = range_issues(subnetwork, claims, has)
    if issues:
        raise ConfigError(issues, f"the secondary ranges of subnetwork {subnetwork!r}")
