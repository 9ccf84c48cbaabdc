"""A large diff base: a stack's ``plan --json`` plus N extra resources its current plan lacks.

    .venv/bin/python benchmarks/diff_base.py PLAN.json N OUT.json

The extras are what a big cluster's plan has many of: copies of the plan's node pools,
workloads, team objects, local queues, resource flavors and bucket grants (``GROWS``, custom
resources), with their inputs and options, renamed ``<name>-x<k>`` for the k-th round of
copies (URN, name, ``inputs.name``, ``inputs.metadata.name``). A copy keeps the original's
parent, provider and dependencies: the extras join the plan's own components (a TPU pool
component with thousands of slices' node pools, one Kueue install with thousands of queues),
wait for its one cluster and use its one provider, as the resources of one big cluster do.
``plan --stack S --diff OUT.json`` then shows the N extras as removed.

Written as ``plan --json`` writes a plan (``components.plan.json_text``: indented by 2), the
file the PR workflow saves of the base commit: about 1.9 KB a resource.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

PROJECT_DIR = Path(__file__).resolve().parent.parent
if str(PROJECT_DIR) not in sys.path:  # run as a script: the project's modules (json_text)
    sys.path.insert(0, str(PROJECT_DIR))

# The custom resources a big cluster's plan has many of (per slice, workload, team, queue).
GROWS = frozenset(
    {
        "gcp:container/nodePool:NodePool",
        "gcp:storage/bucketIAMMember:BucketIAMMember",
        "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob",
        "kubernetes:core/v1:Namespace",
        "kubernetes:core/v1:ServiceAccount",
        "kubernetes:core/v1:ResourceQuota",
        "kubernetes:networking.k8s.io/v1:NetworkPolicy",
        "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
        "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue",
        "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor",
    }
)


def _copy(resource: dict[str, Any], suffix: str) -> dict[str, Any]:
    extra = copy.deepcopy(resource)
    extra["urn"] = resource["urn"] + suffix
    extra["name"] = resource["name"] + suffix
    inputs = extra.get("inputs") or {}
    if isinstance(inputs.get("name"), str):
        inputs["name"] += suffix
    metadata = inputs.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("name"), str):
        metadata["name"] += suffix
    return extra


def extras(resources: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """``count`` renamed copies of the resources of ``GROWS`` types: whole rounds of them in
    plan order, then the first ones of one more round."""
    growing = [r for r in resources if r["type"] in GROWS and r.get("custom", True)]
    if not growing:
        raise ValueError("the plan has no resources of a type that grows to copy")
    return [_copy(growing[i % len(growing)], f"-x{i // len(growing)}") for i in range(count)]


def diff_base(plan: dict[str, Any], count: int) -> dict[str, Any]:
    """``plan`` with ``count`` extra resources after its own (its summary counts them)."""
    resources = [*plan["resources"], *extras(plan["resources"], count)]
    return {
        **plan,
        "resources": resources,
        "summary": {**plan["summary"], "resources": len(resources)},
    }


def write_diff_base(plan: dict[str, Any], count: int, out: Path) -> Path:
    from components.plan.json_text import dumps

    out.write_text(dumps(diff_base(plan, count)) + "\n")
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    source, count, out = Path(argv[0]), int(argv[1]), Path(argv[2])
    write_diff_base(json.loads(source.read_text()), count, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
