"""Regenerate the CRD schemas the contract tests validate against, from the pinned releases.

    .venv/bin/python scripts/refresh_crd_schemas.py        # downloads the release manifests
    .venv/bin/python scripts/refresh_crd_schemas.py \
        --manifest kueue=FILE --manifest pathways-job=FILE   # local copies of them
    .venv/bin/python scripts/refresh_crd_schemas.py --only jobset --manifest jobset=FILE
    .venv/bin/python scripts/refresh_crd_schemas.py --only kueue \
        --manifest kueue=clusterqueues.yaml --manifest kueue=localqueues.yaml ...  # one per CRD

The release tags are the addons' defaults in components/config/schema/addons.py (KueueAddon,
PathwaysJobAddon, JobSetAddon), so bumping one there and running this script keeps the two in
step; the tests find the files by those tags. Each file keeps the CRD's ``openAPIV3Schema``
verbatim except that ``description`` texts are dropped (x-kubernetes-* keys stay: the tests read
them). ``--only`` refreshes some files without downloading the other releases. Kueue's
file holds, per kind, the schema of the version the release stores (the one the program must
emit) and names the versions it still serves but marks deprecated, so a test can say why an old
apiVersion is refused. The tests only read the files; they never download anything.

``--manifest KEY=FILE`` may be repeated: the files' documents are read together, so a release
can be refreshed from one CRD file per kind (as config/components/crd/bases holds them). A wanted
kind none of the files holds is kept, as it is, from the current file of the same release
version, and the script says so; with no such file it is an error. A hand-written schema file
(kueue-<version>-multikueue-schemas.json, once used for the MultiKueue kinds) is removed when a
refresh extracts every kind it held, so each schema keeps one home.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from components.config.schema import JobSetAddon, KueueAddon, PathwaysJobAddon  # noqa: E402

DATA = ROOT / "tests" / "data"


@dataclass(frozen=True)
class Release:
    key: str  # --manifest KEY=FILE
    repo: str
    version: str
    url: str
    kinds: tuple[str, ...]


KUEUE = Release(
    "kueue",
    "kubernetes-sigs/kueue",
    KueueAddon().version,
    KueueAddon().url,
    (
        "ClusterQueue",
        "LocalQueue",
        "ResourceFlavor",
        "WorkloadPriorityClass",
        "MultiKueueCluster",
        "MultiKueueConfig",
        "AdmissionCheck",
    ),
)
PATHWAYS_JOB = Release(
    "pathways-job",
    "google/pathways-job",
    PathwaysJobAddon().version,
    PathwaysJobAddon().url,
    ("PathwaysJob",),
)
JOBSET = Release(
    "jobset",
    "kubernetes-sigs/jobset",
    JobSetAddon().version,
    JobSetAddon().url,
    ("JobSet",),
)


def kueue_schema_file(version: str) -> Path:
    return DATA / f"kueue-{version}-openapi-schemas.json"


def kueue_hand_written_file(version: str) -> Path:
    return DATA / f"kueue-{version}-multikueue-schemas.json"


def pathways_job_schema_file(version: str) -> Path:
    return DATA / f"pathwaysjob-{version}-openapi-schema.json"


def jobset_schema_file(version: str) -> Path:
    return DATA / f"jobset-{version}-openapi-schema.json"


def without_descriptions(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: without_descriptions(v)
            for k, v in node.items()
            # a property *named* description (WorkloadPriorityClass has one) is a dict: it stays
            if not (k == "description" and isinstance(v, str))
        }
    if isinstance(node, list):
        return [without_descriptions(v) for v in node]
    return node


def crds(
    documents: Iterable[Any], kinds: tuple[str, ...], kept: Iterable[str] = ()
) -> dict[str, dict[str, Any]]:
    """kind -> CustomResourceDefinition, for the wanted kinds the documents hold; a wanted kind
    neither there nor in ``kept`` (kinds the current file can supply) ends the script."""
    found = {
        d["spec"]["names"]["kind"]: d
        for d in documents
        if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"
    }
    missing = sorted(set(kinds) - set(found) - set(kept))
    if missing:
        raise SystemExit(f"the manifest has no CRD for {', '.join(missing)}")
    return {kind: found[kind] for kind in kinds if kind in found}


def stored_version(crd: dict[str, Any]) -> dict[str, Any]:
    (version,) = [v for v in crd["spec"]["versions"] if v.get("storage")]
    return version


def write_json(path: Path, document: dict[str, Any]) -> None:
    path.write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {path.relative_to(ROOT)}")


def current_kueue_entries(path: Path) -> dict[str, dict[str, Any]]:
    """kind -> its schema and deprecated entries in the current file (none: no file)."""
    if not path.exists():
        return {}
    document = json.loads(path.read_text())
    entries: dict[str, dict[str, Any]] = {}
    for part in ("schemas", "deprecated"):
        for key, value in document[part].items():
            entries.setdefault(key.rsplit("/", 1)[-1], {"schemas": {}, "deprecated": {}})
            entries[key.rsplit("/", 1)[-1]][part][key] = value
    return entries


def kind_entries(crd: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A CRD's schema of the version it stores and its deprecated served versions."""
    group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
    stored = stored_version(crd)
    schema = without_descriptions(stored["schema"]["openAPIV3Schema"])
    deprecated = {
        f"{group}/{version['name']}/{kind}": version.get("deprecationWarning") or "deprecated"
        for version in crd["spec"]["versions"]
        if version.get("served") and version.get("deprecated")
    }
    return {"schemas": {f"{group}/{stored['name']}/{kind}": schema}, "deprecated": deprecated}


def refresh_kueue(documents: list[Any]) -> None:
    release = KUEUE
    path = kueue_schema_file(release.version)
    current = current_kueue_entries(path)
    group_crds = crds(documents, release.kinds, kept=current)
    schemas: dict[str, Any] = {}
    deprecated: dict[str, str] = {}
    for kind in release.kinds:
        if kind in group_crds:
            entries = kind_entries(group_crds[kind])
        else:
            entries = current[kind]
            print(f"kept {kind} from {path.relative_to(ROOT)} (no CRD for it in the manifests)")
        schemas.update(entries["schemas"])
        deprecated.update(entries["deprecated"])
    write_json(
        path,
        {
            "$comment": (
                f"openAPIV3Schema of the {', '.join(release.kinds)} CRDs of {release.repo} "
                f"release {release.version} ({release.url}, or its CRD files, one per kind), "
                "each of the version the release stores, keyed group/version/kind; extracted "
                "verbatim except that 'description' texts were dropped. 'deprecated': versions "
                "the release still serves with a deprecation warning. Written by "
                "scripts/refresh_crd_schemas.py."
            ),
            "schemas": schemas,
            "deprecated": deprecated,
        },
    )
    remove_superseded(kueue_hand_written_file(release.version), schemas)


def remove_superseded(hand_written: Path, extracted: dict[str, Any]) -> None:
    """Delete the hand-written schemas once every kind they cover has been extracted."""
    if not hand_written.exists():
        return
    if set(json.loads(hand_written.read_text())["schemas"]) <= set(extracted):
        hand_written.unlink()
        print(f"removed {hand_written.relative_to(ROOT)} (its kinds are extracted now)")


def refresh_single_crd(release: Release, documents: list[Any], path: Path) -> None:
    """A release with one CRD of interest: the openAPIV3Schema of the version it stores."""
    (kind,) = release.kinds
    crd = crds(documents, release.kinds)[kind]
    version = stored_version(crd)
    schema = without_descriptions(version["schema"]["openAPIV3Schema"])
    manifest_file = release.url.rsplit("/", 1)[-1]  # install.yaml, manifests.yaml
    comment = (
        f"openAPIV3Schema of the {kind} CRD ({crd['metadata']['name']}, version "
        f"{version['name']}) from the {manifest_file} of {release.repo} release "
        f"{release.version} ({release.url}), extracted verbatim except that 'description' "
        "texts were dropped; x-kubernetes-* keys are kept (JSON Schema validators ignore "
        "them; the tests read x-kubernetes-list-map-keys and "
        "x-kubernetes-preserve-unknown-fields)."
    )
    write_json(path, {"$comment": comment, **schema})


def refresh_pathways_job(documents: list[Any]) -> None:
    refresh_single_crd(PATHWAYS_JOB, documents, pathways_job_schema_file(PATHWAYS_JOB.version))


def refresh_jobset(documents: list[Any]) -> None:
    refresh_single_crd(JOBSET, documents, jobset_schema_file(JOBSET.version))


def load(release: Release, local: list[Path]) -> list[Any]:
    """The YAML documents of the local files (all of them, in order), else of the downloaded
    release manifest; a file or download that cannot be read or parsed ends the script with a
    message naming it (not a traceback)."""
    if not local:
        return _documents(release, release.url)
    return [document for path in local for document in _documents(release, path)]


def _documents(release: Release, source: Path | str) -> list[Any]:
    try:
        if isinstance(source, Path):
            text = source.read_text()
        else:
            with urllib.request.urlopen(source, timeout=60) as response:
                text = response.read().decode()
        return list(yaml.safe_load_all(text))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise SystemExit(f"{release.key} manifest {source}: {exc}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--manifest",
        action="append",
        default=[],
        metavar="KEY=FILE",
        help=f"read a local copy of a release manifest (KEY: {', '.join(REFRESH)}); repeat a "
        "KEY to read several files together",
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=list(REFRESH),
        help="refresh only this release's file (repeatable; default: all)",
    )
    args = parser.parse_args(argv)
    local: dict[str, list[Path]] = {}
    for item in args.manifest:
        key, _, path = item.partition("=")
        if key not in REFRESH or not path:
            parser.error(f"--manifest {item!r}: use KEY=FILE with KEY one of {', '.join(REFRESH)}")
        local.setdefault(key, []).append(Path(path))
    for key in args.only or REFRESH:
        release, refresh = REFRESH[key]
        refresh(load(release, local.get(key, [])))
    return 0


REFRESH = {
    KUEUE.key: (KUEUE, refresh_kueue),
    PATHWAYS_JOB.key: (PATHWAYS_JOB, refresh_pathways_job),
    JOBSET.key: (JOBSET, refresh_jobset),
}


if __name__ == "__main__":
    sys.exit(main())
