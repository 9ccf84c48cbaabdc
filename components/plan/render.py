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


def render_workloads(plan: Plan) -> str:
    """One line per PathwaysJob: image, command, head resources, where head and workers land."""
    jobs = plan.summary.get("workloads")
    if not jobs:
        return "Workloads: none"
    lines = ["Workloads (pods as the PathwaysJob controller v0.1.4 makes them):"]
    lines += [f"  {key}: {_workload_line(job)}" for key, job in jobs.items()]
    return "\n".join(lines)


def _workload_line(job: dict[str, Any]) -> str:
    head, workers = job["head"], job["workers"]
    parts = [job.get("image") or "headless (no user container)"]
    if job.get("command"):
        parts.append(f"cmd [{' '.join(job['command'])}]")
    parts.append(f"head {head['resources']} on {','.join(head['landsOn']) or 'NO NODE'}")
    parts.append(
        f"workers {workers['pods']} pods ({workers['podsPerSlice']}/slice) x "
        f"{workers['tpuChipsPerPod']} chips on {','.join(workers['landsOn']) or 'NO NODE'}"
    )
    return "; ".join(parts)


def render_outputs(plan: Plan) -> str:
    lines = ["Outputs:"]
    for key, value in plan.outputs.items():
        lines.append(f"  {key}: {_compact(value)}")
    return "\n".join(lines)


def render_text(plan: Plan) -> str:
    parts = [render_tree(plan), render_summary(plan), render_workloads(plan), render_outputs(plan)]
    return "\n\n".join(parts)


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


def write_manifests(plan: Plan, out_dir: Path) -> list[Path]:
    """One YAML file per Kubernetes object: <kind>-<namespace>-<name>.yaml."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for resource in plan.resources:
        if not resource.is_kubernetes_object:
            continue
        doc = manifest(resource)
        meta = doc["metadata"]
        parts = [doc["kind"].lower(), meta.get("namespace"), meta.get("name", resource.name)]
        filename = re.sub(r"[^a-z0-9.-]+", "-", "-".join(p for p in parts if p).lower())
        path = out_dir / f"{filename}.yaml"
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        written.append(path)
    return written
