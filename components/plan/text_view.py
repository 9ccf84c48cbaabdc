"""The plain ``plan`` view a person scans: resources grouped by deployment stage, the inputs that
matter (every input with ``--verbose``), each workload's pods, readable outputs and a closing
total. Every line fits ``WIDTH`` columns unless a single word (a long name or URL) is longer.

``plan --json`` is the complete record; this view picks from it and never adds a fact of its own.
"""

from __future__ import annotations

import json
import shlex
import textwrap
from collections import Counter
from collections.abc import Iterator
from enum import Enum
from typing import Any

from components.plan.cost import pool_chips, unpriced_chips
from components.plan.model import Plan, PlannedResource
from components.plan.views import MISSING, WorkloadView, is_workload, value_at
from components.tokens import (
    ALERT_POLICY,
    BUCKET,
    BUCKET_IAM_MEMBER,
    CLUSTER,
    CONFIG_FILE,
    DASHBOARD,
    FILESTORE_INSTANCE,
    KUBERNETES_PREFIX,
    KUBERNETES_YAML_PREFIX,
    LUSTRE_INSTANCE,
    NETWORK,
    NODE_POOL,
    PROJECT_IAM_MEMBER,
    PULUMI_PREFIX,
    RESOURCE_POLICY,
    SERVICE_ACCOUNT,
    STACK_REFERENCE,
    SUBNETWORK,
)

WIDTH = 120
"""Columns of the plain view (a long word, such as a URL, may overflow on a line of its own)."""


class Stage(Enum):
    """Groups of the plain view, in the order `pulumi up` creates them."""

    CLUSTER = "Cluster, network and identity"
    NODE_POOLS = "Node pools"
    INSTALLS = "Installs (JobSet, PathwaysJob, Kueue and their controller patches)"
    NAMESPACES = "Namespaces and queues"
    STORAGE = "Buckets, file systems and who may use them"
    WORKLOADS = "Workloads (pods as the PathwaysJob controller v0.1.4 or the JobSet makes them)"
    MONITORING = "Monitoring (dashboard and alert policies)"
    OTHER = "Other resources"


_STORAGE_PREFIX = ("gcp:storage/", "gcp:lustre/", "gcp:filestore/")
_MONITORING_PREFIX = "gcp:monitoring/"
_PROVIDERS = "pulumi:providers:"


def stage_of(resource: PlannedResource) -> Stage:
    """The stage a resource is created in, from its type."""
    kind = resource.type
    if kind in (NODE_POOL, RESOURCE_POLICY):
        return Stage.NODE_POOLS
    if is_workload(kind):
        return Stage.WORKLOADS
    if kind.startswith(KUBERNETES_YAML_PREFIX) or kind.endswith("Patch"):
        return Stage.INSTALLS
    if kind.startswith(_STORAGE_PREFIX):
        return Stage.STORAGE
    if kind.startswith(_MONITORING_PREFIX):
        return Stage.MONITORING
    if kind.startswith(KUBERNETES_PREFIX):
        return Stage.NAMESPACES
    if kind.startswith(("gcp:", PULUMI_PREFIX)):
        return Stage.CLUSTER
    return Stage.OTHER


def kind_of(resource: PlannedResource) -> str:
    """A short kind: the type token's last part (``Cluster``, ``NodePool``, ``LocalQueue``), or
    ``kubernetes provider`` for a provider."""
    last = resource.type.rpartition(":")[2]
    if resource.type.startswith(_PROVIDERS):
        return f"{last} provider"
    return last


# Inputs worth showing per resource type (``--verbose`` shows all; ``--json`` has all); a
# workload's are its backend's (``WorkloadView.key_inputs``).
_KEY_INPUTS: dict[str, tuple[str, ...]] = {
    CLUSTER: (
        "location",
        "nodeLocations",
        "releaseChannel.channel",
        "datapathProvider",
        "deletionProtection",
        "privateClusterConfig.enablePrivateNodes",
    ),
    NODE_POOL: (
        "nodeConfig.machineType",
        "nodeCount",
        "autoscaling",
        "placementPolicy.tpuTopology",
        "nodeConfig.spot",
        "nodeConfig.flexStart",
        "nodeConfig.reservationAffinity.values",
    ),
    NETWORK: ("mtu",),
    RESOURCE_POLICY: ("region", "workloadPolicy.type", "workloadPolicy.acceleratorTopology"),
    SUBNETWORK: ("ipCidrRange",),
    SERVICE_ACCOUNT: ("accountId",),
    PROJECT_IAM_MEMBER: ("role",),
    BUCKET: ("location", "publicAccessPrevention"),
    BUCKET_IAM_MEMBER: ("bucket", "role", "member"),
    CONFIG_FILE: ("file",),
    LUSTRE_INSTANCE: ("location", "capacityGib", "perUnitStorageThroughput"),
    FILESTORE_INSTANCE: ("location", "tier", "fileShares.capacityGb"),
    ALERT_POLICY: ("severity", "displayName"),
    DASHBOARD: ("dashboardJson",),
}


def _compact(value: Any) -> str:
    """A value on one line; JSON with spaces after its commas, so a long one wraps."""
    return value if isinstance(value, str) else json.dumps(value, separators=(", ", ": "))


def _workers(value: Any) -> str:
    """``spec.workers`` as ``2 x ct5p-hightpu-4t 2x2x2`` per entry (the rest: ``--verbose``)."""
    if not isinstance(value, list) or not all(isinstance(w, dict) for w in value):
        return _compact(value)
    return ", ".join(
        f"{w.get('numSlices', 1)} x {w.get('type')} {w.get('topology')}" for w in value
    )


# How a key input reads, where the JSON of it is not the clearest form.
def _dashboard(value: Any) -> str:
    """A dashboard's JSON as its title and tile count (``plan --out`` writes it whole)."""
    try:
        document = json.loads(value)
        tiles = len(document["mosaicLayout"]["tiles"])
        return f"{json.dumps(document['displayName'])} ({tiles} tiles; plan --out writes the JSON)"
    except (TypeError, ValueError, KeyError):
        return _compact(value)


_FORMATS = {"spec.workers": _workers, "dashboardJson": _dashboard}


def _wrapped(text: str, indent: int, hang: int = 4) -> list[str]:
    """``text`` at ``indent`` spaces, wrapped at WIDTH, continuation lines ``hang`` further in;
    a word longer than the line is kept whole on a line of its own."""
    return textwrap.wrap(
        text,
        WIDTH,
        initial_indent=" " * indent,
        subsequent_indent=" " * (indent + hang),
        break_long_words=False,
        break_on_hyphens=False,
    ) or [" " * indent]


def display_name(resource: PlannedResource) -> str:
    """A Kubernetes object as ``namespace/name`` (its own name); anything else by its resource
    name, with its cloud name when that differs."""
    if resource.is_kubernetes_object:
        name = value_at(resource.inputs, "metadata.name")
        namespace = value_at(resource.inputs, "metadata.namespace")
        if isinstance(name, str):
            return f"{namespace}/{name}" if isinstance(namespace, str) else name
    cloud_name = resource.inputs.get("name")
    if isinstance(cloud_name, str) and cloud_name != resource.name:
        return f"{resource.name} (name {cloud_name})"
    return resource.name


def _key_inputs(resource: PlannedResource) -> str:
    workload = WorkloadView.of(resource.type, resource.inputs)
    keys = workload.key_inputs if workload else _KEY_INPUTS.get(resource.type, ())
    shown = [(key, value_at(resource.inputs, key)) for key in keys]
    return "  ".join(
        f"{key.rsplit('.', 1)[-1]}={_FORMATS.get(key, _compact)(value)}"
        for key, value in shown
        if value is not MISSING
    )


def flat_inputs(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every leaf of a resource's inputs as (dotted path, value); lists of scalars whole."""
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from flat_inputs(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
        for index, item in enumerate(value):
            yield from flat_inputs(item, f"{path}[{index}]")
    else:
        yield path, value


def resource_lines(resource: PlannedResource, verbose: bool, depth: int = 2) -> list[str]:
    """One resource: ``+ Kind name  key=value ...`` (wrapped); with ``verbose`` every input on
    a line of its own under it."""
    head = f"+ {kind_of(resource)} {display_name(resource)}"
    if resource.options.get("read"):
        head = f"= {kind_of(resource)} {display_name(resource)} (read, not created)"
    details = "" if verbose else _key_inputs(resource)
    lines = _wrapped(f"{head}  {details}".rstrip(), depth)
    if verbose:
        for path, value in flat_inputs(resource.inputs):
            lines += _wrapped(f"{path}: {_compact(value)}", depth + 4)
    return lines


def _shell_word(arg: str) -> str:
    """An argument as a shell would take it, in double quotes where that reads best."""
    if arg == shlex.quote(arg) or '"' in arg or "$" in arg or "`" in arg or "\\" in arg:
        return shlex.quote(arg)
    return f'"{arg}"'


def _labelled(label: str, text: str, indent: int) -> list[str]:
    return _wrapped(f"{label:<9}{text}", indent, hang=9)


def workload_lines(job: dict[str, Any], indent: int = 6) -> list[str]:
    """A workload's pods as the summary records them: image and command, where head and
    workers land, the Pathways images, its buckets, pinning, clients and how to connect."""
    head, workers = job["head"], job["workers"]
    lines = _labelled("image", job.get("image") or "headless (no user container)", indent)
    if job.get("command"):
        lines += _labelled("command", " ".join(map(_shell_word, job["command"])), indent)
    lines += _labelled(
        "head", f"{head['resources']} on {','.join(head['landsOn']) or 'NO NODE'}", indent
    )
    lines += _labelled(
        "workers",
        f"{counted(workers['pods'], 'pod')} ({workers['podsPerSlice']}/slice) x "
        f"{workers['tpuChipsPerPod']} "
        f"chips on {','.join(workers['landsOn']) or 'NO NODE'}",
        indent,
    )
    images = job["images"]
    lines += _labelled(
        "pathways",
        f"server {images['pathways_server']}, proxy {images['proxy_server']}, "
        f"worker {images['worker']}",
        indent,
    )
    buckets = job["buckets"]
    if isinstance(buckets, dict):
        buckets = ", ".join(f"{name} ({access})" for name, access in buckets.items()) or "none"
    lines += _labelled("buckets", buckets, indent)
    if job.get("nodePool"):
        lines += _labelled("pinned", f"to node pool {job['nodePool']}", indent)
    if clients := job.get("clients"):
        lines += _labelled("clients", f"at once {clients['atOnce']} ({clients['counted']})", indent)
    if connect := job.get("connect"):
        lines += _labelled("connect", str(connect), indent)
    for volume in job.get("volumes") or []:
        lines += _labelled("mounts", volume, indent)
    if logs := job.get("logs"):
        lines += _labelled("logs", logs, indent)
    if dashboard := job.get("dashboard"):
        lines += _labelled("dashboard", dashboard, indent)
    return lines


def listed(resource: PlannedResource) -> bool:
    """Shown in the plain view: every resource that is not a component, and the release
    manifests (pulumi-kubernetes' ConfigFile is a component, but it is what an install is)."""
    return resource.custom or resource.type.startswith(KUBERNETES_YAML_PREFIX)


def created(plan: Plan) -> list[PlannedResource]:
    """What `pulumi up` creates, in stage order: no components, providers or reads."""
    made = [
        r
        for r in plan.resources
        if listed(r) and not r.options.get("read") and not r.type.startswith(_PROVIDERS)
    ]
    return sorted(made, key=lambda r: list(Stage).index(stage_of(r)))


def render_stages(plan: Plan, verbose: bool = False) -> str:
    """The resources `pulumi up` registers, grouped by stage, each stage in plan order (the
    plan orders every resource after what it depends on)."""
    jobs = plan.summary.get("workloads") or {}
    shown = [r for r in plan.resources if listed(r) and r.type != STACK_REFERENCE]
    reads = [r for r in plan.resources if r.type == STACK_REFERENCE]
    components = sum(1 for r in plan.resources if not listed(r))
    hint = "every input shown" if verbose else "--verbose: every input"
    lines = _wrapped(
        f"Plan for stack '{plan.stack}' of {plan.project}: creates {len(created(plan))} "
        f"resources ({components} components); {hint}, --json: all",
        0,
    )
    for stage in Stage:
        members = [r for r in [*shown, *reads] if stage_of(r) == stage]
        if not members:
            continue
        lines += ["", f"{stage.value}:"]
        for resource in members:
            lines += resource_lines(resource, verbose)
            workload = WorkloadView.of(resource.type, resource.inputs)
            if workload and (job := jobs.get(workload.key)):
                lines += workload_lines(job)
    return "\n".join(line.rstrip() for line in lines)


_MAX_OUTPUT_DEPTH = 4


def output_lines(label: str, value: Any, indent: int = 2, depth: int = 1) -> list[str]:
    """One output (``label``: its key, or ``-`` for a list item): a value that fits on its line
    as it is; a mapping or list too long for it one entry per line, nested up to
    ``_MAX_OUTPUT_DEPTH`` (deeper: a count and a pointer to ``--json``)."""
    lead = "- " if label == "-" else f"{label}: "
    text = lead + _compact(value)
    if not isinstance(value, dict | list) or not value or indent + len(text) <= WIDTH:
        return _wrapped(text, indent)
    if depth >= _MAX_OUTPUT_DEPTH:
        return _wrapped(f"{lead}{len(value)} entries (see --json)", indent)
    lines = [f"{' ' * indent}{lead.rstrip()}"]
    items = value.items() if isinstance(value, dict) else (("-", v) for v in value)
    for sub_label, item in items:
        lines += output_lines(str(sub_label), item, indent + 2, depth + 1)
    if label == "-" and isinstance(value, dict):  # YAML's form: the first key on the dash line
        lines = [lines[1][:indent] + "- " + lines[1][indent + 2 :], *lines[2:]]
    return lines


def render_outputs(plan: Plan) -> str:
    """The stack outputs ('' when there are none: no empty section)."""
    if not plan.outputs:
        return ""
    lines = ["Outputs:"]
    for key, value in plan.outputs.items():
        lines += output_lines(key, value)
    return "\n".join(lines)


def counted(n: int, noun: str, plural: str = "s") -> str:
    """``1 pod``, ``2 pods`` (``plural``: the ending of more than one, e.g. ``es``)."""
    return f"{n} {noun}{'' if n == 1 else plural}"


def render_totals(plan: Plan) -> str:
    """The closing lines: what is created, by kind, then TPU chips and the estimated cost (with
    the chips the cost leaves out)."""
    resources = created(plan)
    kinds = Counter(kind_of(r) for r in resources)
    listing = ", ".join(f"{n} {kind}" for kind, n in kinds.items())
    lines = _wrapped(f"Creates {len(resources)} resources: {listing or 'none'}", 0, hang=2)
    return "\n".join([*lines, *_wrapped(totals_line(plan), 0, hang=2)])


def totals_line(plan: Plan) -> str:
    """``Total: N TPU chips, X USD/hour, Y USD/month``, and how many chips that leaves out."""
    tpu = plan.summary.get("tpu") or {}
    cost = plan.summary.get("cost") or {}
    chips = sum(int(row.get("chips", 0)) for row in tpu.values())
    generations = "/".join(tpu)
    if not tpu:  # a program of your own exports no TPU summary: its pools' chips
        chips = pool_chips(cost)
        generations = "/".join(dict.fromkeys(p["generation"] for p in _tpu_pools(cost)))
    text = f"Total: {chips} TPU chips" + (f" ({generations})" if generations else "")
    if not cost.get("pools"):
        return text + ", no node pools to price"
    currency = cost.get("currency", "USD")
    text += (
        f", {cost['hourly']:,.2f} {currency}/hour, {cost['monthly']:,.2f} {currency}/month "
        "(an estimate at list prices)"
    )
    if unpriced := unpriced_chips(cost):
        text += f"; the cost leaves out {unpriced} of {pool_chips(cost)} chips (not priced)"
    return text


def _tpu_pools(cost: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in cost.get("pools") or [] if p.get("generation")]
