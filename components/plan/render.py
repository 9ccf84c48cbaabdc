"""Human-readable views of a plan: the resource tree, the TPU summary, Kubernetes manifests."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from components.plan.model import Plan, PlannedResource

# Inputs worth a line in the tree, per resource type (the JSON has all of them).
_KEY_INPUTS: dict[str, tuple[str, ...]] = {
    "gcp:container/cluster:Cluster": (
        "name",
        "location",
        "nodeLocations",
        "releaseChannel.channel",
        "datapathProvider",
        "deletionProtection",
        "workloadIdentityConfig.workloadPool",
        "privateClusterConfig",
    ),
    "gcp:container/nodePool:NodePool": (
        "name",
        "nodeConfig.machineType",
        "nodeCount",
        "autoscaling",
        "placementPolicy",
        "nodeConfig.spot",
        "nodeConfig.flexStart",
        "nodeConfig.reservationAffinity.values",
    ),
    "gcp:compute/network:Network": ("name", "mtu"),
    "gcp:compute/subnetwork:Subnetwork": ("name", "ipCidrRange"),
    "gcp:serviceaccount/account:Account": ("accountId",),
    "gcp:projects/iAMMember:IAMMember": ("role",),
    "gcp:storage/bucket:Bucket": ("name", "location", "publicAccessPrevention"),
    "gcp:storage/bucketIAMMember:BucketIAMMember": ("role", "member"),
    "kubernetes:yaml/v2:ConfigFile": ("file",),
    "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob": (
        "metadata.name",
        "metadata.namespace",
        "spec.workers",
        "spec.controller.deploymentMode",
    ),
}
_DEFAULT_KEYS = ("name", "metadata.name", "metadata.namespace")


def lookup(inputs: dict[str, Any], path: str) -> Any:
    value: Any = inputs
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _compact(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def _describe(resource: PlannedResource) -> str:
    keys = _KEY_INPUTS.get(resource.type, _DEFAULT_KEYS)
    shown = [(k, lookup(resource.inputs, k)) for k in keys]
    return " ".join(f"{k}={_compact(v)}" for k, v in shown if v is not None)


def render_tree(plan: Plan) -> str:
    children: dict[str | None, list[PlannedResource]] = {}
    urns = {r.urn for r in plan.resources}
    for resource in plan.resources:
        parent = resource.parent if resource.parent in urns else None
        children.setdefault(parent, []).append(resource)

    lines = [f"Plan for stack '{plan.stack}' of {plan.project}: {len(plan.resources)} resources"]

    def walk(parent: str | None, depth: int) -> None:
        for resource in children.get(parent, []):
            details = _describe(resource)
            marker = "+" if resource.custom else "+ (component)"
            lines.append(
                f"{'  ' * depth}{marker} {resource.type} {resource.name}  {details}".rstrip()
            )
            walk(resource.urn, depth + 1)

    walk(None, 1)
    return "\n".join(lines)


def render_summary(plan: Plan) -> str:
    tpu = plan.summary.get("tpu", {})
    if not tpu:
        return "TPU summary: no TPU pools"
    lines = [
        "TPU summary:",
        f"  {'generation':<10} {'pools':>5} {'slices':>6} {'hosts':>6} {'chips':>6}",
    ]
    for generation, row in tpu.items():
        counts = f"{row['pools']:>5} {row['slices']:>6} {row['hosts']:>6} {row['chips']:>6}"
        lines.append(f"  {generation:<10} {counts}")
    return "\n".join(lines)


def render_outputs(plan: Plan) -> str:
    lines = ["Outputs:"]
    for key, value in plan.outputs.items():
        lines.append(f"  {key}: {_compact(value)}")
    return "\n".join(lines)


def render_text(plan: Plan) -> str:
    return "\n\n".join([render_tree(plan), render_summary(plan), render_outputs(plan)])


def render_json(plan: Plan) -> str:
    return json.dumps(plan.to_dict(), indent=2, sort_keys=False) + "\n"


def manifest(resource: PlannedResource) -> dict[str, Any]:
    """A Kubernetes object as `kubectl apply` takes it, from the resource's inputs."""
    body = {k: v for k, v in resource.inputs.items() if k not in ("apiVersion", "kind", "metadata")}
    return {
        "apiVersion": resource.inputs["apiVersion"],
        "kind": resource.inputs["kind"],
        "metadata": resource.inputs.get("metadata", {}),
        **body,
    }


class OutputExists(Exception):
    """``--out`` would overwrite something: an existing file, or two objects one file."""


def manifest_filename(resource: PlannedResource) -> str:
    """<kind>-<namespace>-<name>.yaml, lowercased, other characters as '-'."""
    doc = manifest(resource)
    meta = doc["metadata"]
    parts = [doc["kind"].lower(), meta.get("namespace"), meta.get("name", resource.name)]
    return re.sub(r"[^a-z0-9.-]+", "-", "-".join(str(p) for p in parts if p).lower()) + ".yaml"


def write_manifests(plan: Plan, out_dir: Path) -> list[Path]:
    """One YAML file per Kubernetes object, into a directory that is new or empty: nothing is
    ever overwritten (raises OutputExists before writing anything)."""
    objects = [r for r in plan.resources if r.is_kubernetes_object]
    by_file: dict[str, PlannedResource] = {}
    for resource in objects:
        filename = manifest_filename(resource)
        if filename in by_file:
            raise OutputExists(
                f"{by_file[filename].urn} and {resource.urn} would both be written to {filename}"
            )
        by_file[filename] = resource
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise OutputExists(
            f"{str(out_dir)!r} already exists and is not an empty directory; nothing is "
            "overwritten, so give a new directory (or remove the old output first)"
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for filename, resource in by_file.items():
        path = out_dir / filename
        with path.open("x") as stream:  # "x": fails rather than replace a file
            stream.write(yaml.safe_dump(manifest(resource), sort_keys=False))
        written.append(path)
    return written
