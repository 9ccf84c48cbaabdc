"""Human-readable views of a plan: the plain view (stages: ``text_view``), the TPU summary, the
cost estimate, Kubernetes manifests."""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from components.plan import json_text
from components.plan.cost import pool_chips, unpriced_chips
from components.plan.model import SECRET, UNKNOWN, Plan, PlannedResource
from components.plan.text_view import (
    WIDTH,
    counted,
    render_outputs,
    render_stages,
    render_totals,
)
from components.resolve.stack_files import PROJECT
from components.tokens import DASHBOARD, KUBERNETES_YAML_PREFIX


def render_summary(plan: Plan) -> str:
    tpu = plan.summary.get("tpu", {})
    if not tpu:
        if pool_chips(plan.summary.get("cost") or {}):  # a program that exports no summary
            return "TPU summary: not exported by the program (the cost estimate counts its chips)"
        return "TPU summary: no TPU pools"
    lines = [
        "TPU summary:",
        f"  {'generation':<10} {'pools':>5} {'slices':>6} {'hosts':>6} {'chips':>6}",
    ]
    for generation, row in tpu.items():
        counts = f"{row['pools']:>5} {row['slices']:>6} {row['hosts']:>6} {row['chips']:>6}"
        lines.append(f"  {generation:<10} {counts}")
    return "\n".join(lines)


# The cost table: (header, row key, right-aligned).
_COST_COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("pool", "pool", False),
    ("machine type", "machineType", False),
    ("capacity", "capacity", False),
    ("nodes", "nodes", True),
    ("chips", "chips", True),
    ("per hour", "hourly", True),
    ("per month", "monthly", True),
    ("basis", "basis", False),
)


def _money(value: float | None) -> str:
    return "not priced" if value is None else f"{value:,.2f}"


def _cost_cells(row: dict[str, Any], hours_per_month: float) -> list[str]:
    hourly = row.get("hourly")
    values = {
        **row,
        "hourly": _money(hourly),
        "monthly": _money(None if hourly is None else hourly * hours_per_month),
    }
    return ["-" if values.get(key) is None else str(values[key]) for _, key, _ in _COST_COLUMNS]


def _aligned(lines: list[list[str]]) -> list[str]:
    """Columns as wide as their widest cell; a basis (the last column) too long for WIDTH
    continues on lines of its own under its column."""
    widths = [max(len(line[i]) for line in lines[:-1] or lines) for i in range(len(_COST_COLUMNS))]
    basis_at = 2 + sum(w + 2 for w in widths[:-1])
    out = []
    for line in lines:
        cells = [
            v.rjust(w) if right else v.ljust(w)
            for v, w, (_, _, right) in zip(line[:-1], widths, _COST_COLUMNS, strict=False)
        ]
        text = f"  {'  '.join(cells)}  "
        basis = textwrap.wrap(line[-1], max(WIDTH - basis_at, 20), break_on_hyphens=False) or [""]
        out.append((text + basis[0]).rstrip())
        out += [" " * basis_at + more for more in basis[1:]]
    return out


def render_cost(plan: Plan) -> str:
    """Hourly and monthly cost of every node pool and in total, from ``summary.cost``; the
    total says how many TPU chips it leaves out and how to price them."""
    cost = plan.summary.get("cost")
    if not cost or not cost.get("pools"):
        return "Cost estimate: no node pools"
    hours = float(cost["hoursPerMonth"])
    table = cost.get("priceTable", {})
    head = (
        f"Cost estimate ({cost['currency']} list prices of {table.get('source')}, taken "
        f"{table.get('taken')}; {hours:g} hours a month; not a bill):"
    )
    rows = [[h for h, _, _ in _COST_COLUMNS]]
    rows += [_cost_cells(pool, hours) for pool in cost["pools"]]
    left_out = unpriced_chips(cost)
    note = f"leaves out {left_out} of {pool_chips(cost)} TPU chips" if left_out else ""
    total = ["total", "", "", "", "", _money(cost["hourly"]), _money(cost["monthly"]), note]
    head_lines = textwrap.wrap(head, WIDTH, subsequent_indent="  ", break_on_hyphens=False)
    lines = [*head_lines, *_aligned([*rows, total])]
    if cost.get("notPriced"):
        lines += not_priced_lines(cost)
    lines += storage_lines(cost)
    return "\n".join(lines)


_SERVICES = {"lustre": "Managed Lustre", "filestore": "Filestore"}
_OVERRIDES = {"lustre": "lustreGibMonth", "filestore": "filestoreGibMonth"}


def storage_lines(cost: dict[str, Any]) -> list[str]:
    """The file systems the stack creates, per month at their capacity (the total above
    includes the priced ones), and the override that prices the others."""
    rows = cost.get("storage") or []
    if not rows:
        return []
    lines = ["  storage (per month, in the total):"]
    for row in rows:
        size = f"{row['gib']:,} GiB" if row.get("gib") is not None else "size unknown"
        tier = f"{row['tier']} MB/s per TiB" if row["kind"] == "lustre" else row["tier"]
        price = row.get("basis", "")
        if row.get("monthly") is not None:
            price = f"{_money(row['monthly'])} ({price})"
        lines += textwrap.wrap(
            f"{row['name']}: {_SERVICES[row['kind']]} {tier}, {size}, {price}",
            WIDTH,
            initial_indent="    ",
            subsequent_indent="      ",
            break_on_hyphens=False,
        )
    for row in (r for r in rows if r.get("monthly") is None and r.get("gib") is not None):
        key = _OVERRIDES[row["kind"]]
        lines.append(
            f"    to price {row['name']}: tpu-pathways:pricing: {{{key}: {{{row['tier']}: RATE}}}}"
        )
    return lines


def not_priced_lines(cost: dict[str, Any]) -> list[str]:
    """Which pools the total leaves out, with their chips, and the override that prices them."""
    pools = [p for p in cost["pools"] if p.get("hourly") is None]
    named = ", ".join(
        f"{p['pool']} ({p['chips']} {p.get('generation')} {p['capacity']} chips)"
        if p.get("chips")
        else p["pool"]
        for p in pools
    )
    lines = textwrap.wrap(
        f"not priced, left out of the total: {named}",
        WIDTH,
        initial_indent="  ",
        subsequent_indent="    ",
        break_on_hyphens=False,
    )
    example = next((p for p in pools if p.get("generation") and p.get("chips")), None)
    if example is not None:
        rate = f"{{{example['generation']}: {{{example['capacity']}: RATE}}}}"
        lines += [
            "  to price them, give USD per chip-hour in the stack (sources: "
            f"{cost.get('priceTable', {}).get('source')}):",
            f"    tpu-pathways:pricing: {{tpuChipHour: {rate}}}",
        ]
    return lines


def render_text(plan: Plan, verbose: bool = False) -> str:
    """The plain view: resources by stage (every input with ``verbose``), the TPU summary, the
    cost estimate, the outputs and a closing total."""
    parts = [
        render_stages(plan, verbose),
        render_summary(plan),
        render_cost(plan),
        render_outputs(plan),
        render_totals(plan) + "\n" + deploy_time_line(plan),
        next_steps(plan),
    ]
    return "\n\n".join(part for part in parts if part)


def deploy_time_line(plan: Plan) -> str:
    """The modeled `pulumi up` time, on one line (``--critical-path`` shows the chain)."""
    from components.plan.critical_path import critical_path, minutes

    if not any(r.custom for r in plan.resources):
        return "Deploy time: nothing to create"
    total = critical_path(plan.resources).parallel
    return (
        f"Deploy time (modeled `pulumi up`): about {minutes(total['typical'])} (low "
        f"{minutes(total['low'])}, high {minutes(total['high'])}); --critical-path: the chain"
    )


def next_steps(plan: Plan) -> str:
    """What to run next: the stack created in Pulumi and deployed (a program of your own: from
    its directory)."""
    stack = plan.stack
    where = "" if plan.project == PROJECT else " (in your program's directory)"
    steps = [
        (f"pulumi stack select {stack} --create", "once: the stack in your Pulumi backend"),
        (f"pulumi preview -s {stack}", "what would change, with credentials"),
        (f"pulumi up -s {stack}", "create it"),
    ]
    width = max(len(command) for command, _ in steps)
    return "\n".join(
        [
            f"Next steps (docs/getting-started.md, step 4){where}:",
            *(f"  {command:<{width}}  # {why}" for command, why in steps),
        ]
    )


def render_json(plan: Plan) -> str:
    """The plan document; ValueError if it holds a number JSON has no form for (infinite or
    NaN): never the ``Infinity`` Python's json would otherwise write."""
    return json_text.dumps(plan.to_dict(), end="\n")  # json.dumps(indent=2)'s bytes, faster


def manifest(resource: PlannedResource) -> dict[str, Any]:
    """A Kubernetes object as `kubectl apply` takes it, from the resource's inputs."""
    body = {k: v for k, v in resource.inputs.items() if k not in ("apiVersion", "kind", "metadata")}
    return {
        "apiVersion": resource.inputs["apiVersion"],
        "kind": resource.inputs["kind"],
        "metadata": resource.inputs.get("metadata", {}),
        **body,
    }


def is_patch(resource: PlannedResource) -> bool:
    """A server-side apply patch of an object someone else owns (pulumi-kubernetes ``*Patch``
    types, e.g. ``kubernetes:apps/v1:DeploymentPatch``): its inputs are a partial object."""
    return resource.type.endswith("Patch")


RELEASE_MANIFESTS = "release-manifests.txt"
_RELEASE_HEADER = "# <resource name> <URL>: applied server-side, in this order, before the rest\n"
_PATCH_HEADER = (
    "# A patch, not a whole object ({type}): Pulumi applies it server-side to the object an\n"
    "# install created. By hand: kubectl apply --server-side --field-manager=tpu-pathways -f FILE\n"
)


PLACEHOLDER_SUFFIX = ".example"
"""Appended to the file of an object the plan cannot write out whole: ``kubectl apply -f DIR``
reads only .yaml, .yml and .json files, so it is never applied."""
_PLACEHOLDER_HEADER = (
    "# NOT APPLIED (the {suffix} suffix keeps `kubectl apply -f DIR` away from it): the plan\n"
    "# does not hold every value of this object. [secret] stands for a secret the plan never\n"
    "# shows, [unknown] for a value known only once the cloud creates it. `pulumi up` creates\n"
    "# the object with the real values; applying this file as it is would replace them with\n"
    "# these placeholders.\n"
)


def holds_placeholder(value: Any) -> bool:
    """Whether a value holds [secret] or [unknown] anywhere."""
    if isinstance(value, dict):
        return any(holds_placeholder(v) for v in value.values())
    if isinstance(value, list):
        return any(holds_placeholder(v) for v in value)
    return value in (SECRET, UNKNOWN)


class OutputExists(Exception):
    """``--out`` would overwrite something: an existing file, or two objects one file."""


@dataclass(frozen=True)
class Written:
    """What ``write_manifests`` wrote."""

    objects: list[Path]
    patches: list[Path]
    release_manifests: list[str]  # URLs, listed in RELEASE_MANIFESTS
    placeholders: list[Path] = field(default_factory=list)  # *.example: never applied
    dashboards: list[Path] = field(default_factory=list)  # monitoring/*.json

    @property
    def count(self) -> int:
        files = len(self.objects) + len(self.patches) + len(self.placeholders)
        return files + len(self.dashboards) + (1 if self.release_manifests else 0)

    def summary(self, out_dir: Path) -> str:
        text = (
            f"wrote {counted(self.count, 'file')} to {out_dir}: "
            f"{counted(len(self.objects), 'Kubernetes object')}, "
            f"{counted(len(self.patches), 'server-side patch', 'es')}"
        )
        if self.placeholders:
            names = ", ".join(p.name for p in self.placeholders)
            text += (
                f", {counted(len(self.placeholders), 'object')} with [secret] or [unknown] "
                f"values as {PLACEHOLDER_SUFFIX} files that are not applied ({names})"
            )
        if self.release_manifests:
            urls = counted(len(self.release_manifests), "release manifest")
            text += f", {RELEASE_MANIFESTS} (the {urls} installed by URL)"
        if self.dashboards:
            names = ", ".join(f"{MONITORING_DIR}/{p.name}" for p in self.dashboards)
            text += f", Cloud Monitoring dashboard JSON to import ({names})"
        return text


def manifest_filename(resource: PlannedResource) -> str:
    """<kind>-<namespace>-<name>.yaml (patches: patch-<kind>-...), lowercased, other
    characters as '-'; with PLACEHOLDER_SUFFIX when the object holds placeholders."""
    doc = manifest(resource)
    meta = doc.get("metadata") or {}
    kind = ("patch-" if is_patch(resource) else "") + str(doc["kind"]).lower()
    parts = [kind, meta.get("namespace"), meta.get("name", resource.name)]
    name = re.sub(r"[^a-z0-9.-]+", "-", "-".join(str(p) for p in parts if p).lower()) + ".yaml"
    return name + PLACEHOLDER_SUFFIX if holds_placeholder(resource.inputs) else name


def _file_text(resource: PlannedResource) -> str:
    text = yaml.safe_dump(manifest(resource), sort_keys=False)
    if is_patch(resource):
        text = _PATCH_HEADER.format(type=resource.type) + text
    if holds_placeholder(resource.inputs):
        text = _PLACEHOLDER_HEADER.format(suffix=PLACEHOLDER_SUFFIX) + text
    return text


def provider_dir(resource: PlannedResource) -> str:
    """The name of the Kubernetes provider an object is created through (its cluster)."""
    # A provider reference is its URN, whose last part is its name (an ``::<id>`` may follow).
    parts = (resource.provider or "").split("::")
    name = parts[3] if len(parts) > 3 else ""
    return re.sub(r"[^a-z0-9.-]+", "-", name.lower()) or "default"


MONITORING_DIR = "monitoring"
"""Where ``--out`` writes dashboards: a directory of its own, which `kubectl apply -f DIR` does
not read (it reads .json files, and a dashboard is no Kubernetes object)."""


def write_dashboards(plan: Plan, out_dir: Path) -> list[Path]:
    """Each Cloud Monitoring dashboard's JSON, indented, ready for `gcloud monitoring dashboards
    create --config-from-file` or the console's JSON import."""
    written = []
    for resource in plan.resources:
        text = resource.inputs.get("dashboardJson") if resource.type == DASHBOARD else None
        if not isinstance(text, str) or holds_placeholder(text):
            continue
        path = (
            out_dir
            / MONITORING_DIR
            / f"dashboard-{re.sub(r'[^a-z0-9.-]+', '-', resource.name.lower())}.json"
        )
        path.parent.mkdir(exist_ok=True)
        with path.open("x") as stream:
            stream.write(json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n")
        written.append(path)
    return written


def check_out_dir(out_dir: Path) -> None:
    """``--out`` must be new or an empty directory (nothing is ever overwritten): checked
    before the plan runs, and again before writing."""
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise OutputExists(
            f"{str(out_dir)!r} already exists and is not an empty directory; nothing is "
            "overwritten, so give a new directory (or remove the old output first)"
        )


def write_manifests(plan: Plan, out_dir: Path) -> Written:
    """Everything the program declares on the cluster, into a directory that is new or empty
    (nothing is ever overwritten; raises OutputExists before writing anything): one YAML file
    per Kubernetes object, one per server-side patch (with a comment saying how it applies),
    and the release manifests the installs apply by URL (release-manifests.txt; `kubectl apply
    -f DIR` reads only the YAML files). An object holding [secret] or [unknown] values goes to
    a ``.yaml.example`` file with a comment saying why, never to one `kubectl apply` reads."""
    urls = [
        f"{r.name} {r.inputs['file']}"
        for r in plan.resources
        if r.type.startswith(KUBERNETES_YAML_PREFIX) and "file" in r.inputs
    ]
    by_file: dict[str, PlannedResource] = {}
    objects_ = [r for r in plan.resources if r.is_kubernetes_object]
    # A stack reaching several clusters (a fleet: manager and workers) writes one directory
    # per cluster, named after its Kubernetes provider.
    several = len({r.provider for r in objects_}) > 1
    for resource in objects_:
        filename = manifest_filename(resource)
        if several:
            filename = f"{provider_dir(resource)}/{filename}"
        if filename in by_file:
            raise OutputExists(
                f"{by_file[filename].urn} and {resource.urn} would both be written to {filename}"
            )
        by_file[filename] = resource
    check_out_dir(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    objects: list[Path] = []
    patches: list[Path] = []
    placeholders: list[Path] = []
    for filename, resource in by_file.items():
        path = out_dir / filename
        path.parent.mkdir(exist_ok=True)
        with path.open("x") as stream:  # "x": fails rather than replace a file
            stream.write(_file_text(resource))
        if holds_placeholder(resource.inputs):
            placeholders.append(path)
        else:
            (patches if is_patch(resource) else objects).append(path)
    if urls:
        with (out_dir / RELEASE_MANIFESTS).open("x") as stream:
            stream.write(_RELEASE_HEADER + "\n".join(urls) + "\n")
    return Written(objects, patches, urls, placeholders, write_dashboards(plan, out_dir))
