"""Regenerate tests/data/controller-pods.json: where the pinned releases' own manifests place
their controller's pods (the fields of the Deployment's pod template a ``ControllerPatch``
also sets), so a test can hold the patch to keep them.

    .venv/bin/python scripts/refresh_controller_pods.py          # downloads the manifests
    .venv/bin/python scripts/refresh_controller_pods.py --manifest jobset=FILE ...

Under server-side apply ``tolerations`` is an atomic list and ``nodeSelector`` an atomic map
(Kubernetes OpenAPI ``x-kubernetes-list-type: atomic``, ``x-kubernetes-map-type: atomic`` of
PodSpec): the patch's values replace the release's whole list or map, so the patch must carry
the release's own entries (``ControllerDeployment.release_tolerations`` and
``release_node_selector`` in components/addons/installs.py). Bump a release's version in
components/config/schema/addons.py, run this, and the contract test says what to update.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from components.addons.installs import INSTALLS  # noqa: E402
from scripts.refresh_crd_schemas import DATA, REFRESH, load  # noqa: E402

OUT = DATA / "controller-pods.json"
FIELDS = ("tolerations", "nodeSelector", "affinity", "priorityClassName")


def controller_pods(documents: list[Any], namespace: str, name: str) -> dict[str, Any]:
    """The placement fields of Deployment ``namespace/name``'s pod template (None: unset)."""
    for document in documents:
        if not isinstance(document, dict) or document.get("kind") != "Deployment":
            continue
        metadata = document.get("metadata", {})
        if (metadata.get("namespace"), metadata.get("name")) == (namespace, name):
            spec = document["spec"]["template"]["spec"]
            return {field: spec.get(field) for field in FIELDS}
    raise SystemExit(f"no Deployment {namespace}/{name} in the manifest")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifest", action="append", default=[], metavar="KEY=FILE")
    args = parser.parse_args(argv)
    local = dict(item.partition("=")[::2] for item in args.manifest)
    releases: dict[str, Any] = {}
    for install in INSTALLS:
        release, _ = REFRESH[install.name]
        files = [Path(local[install.name])] if install.name in local else []
        target = install.controller
        releases[install.name] = {
            "repo": release.repo,
            "version": release.version,
            "url": release.url,
            "deployment": f"{target.namespace}/{target.name}",
            **controller_pods(load(release, files), target.namespace, target.name),
        }
    document = {
        "$comment": "Placement fields of each pinned release's controller Deployment pod "
        "template (null: unset), from the release manifests; written by "
        "scripts/refresh_controller_pods.py.",
        "releases": releases,
    }
    OUT.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
