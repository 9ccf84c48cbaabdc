"""The schemas the plan's Kubernetes objects are checked against (tests/contract/
test_schema_contract.py says which and from where): Kubernetes' own kinds per GKE minor
(kubernetes-validate, strict) and the custom resources' CRDs (Kueue, PathwaysJob, JobSet,
PodMonitoring). ``schema_errors`` checks one planned resource, ``custom_resource_errors`` one
custom resource's manifest (None: not a custom resource checked here). A custom resource is
checked as the API server admits it on create: the CRD's OpenAPI schema and CEL rules
(tests/crd_schema.py, tests/crd_cel.py), and for Kueue's kinds Kueue's validating webhooks
(tests/kueue_webhooks.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import referencing
from kubernetes_validate import utils as kv_utils

from components.config.schema import JobSetAddon, KueueAddon, PathwaysJobAddon
from components.plan.model import SECRET, PlannedResource
from components.plan.render import is_patch, manifest
from components.vocabulary import KUEUE_API_VERSION
from tests.crd_schema import crd_schema_errors
from tests.kueue_webhooks import webhook_errors

DATA = Path(__file__).resolve().parent / "data"
GKE_MINORS = ("1.34", "1.35", "1.36", "1.37")
KUEUE_SCHEMAS = DATA / f"kueue-{KueueAddon().version}-openapi-schemas.json"
PATHWAYS_JOB_SCHEMA = DATA / f"pathwaysjob-{PathwaysJobAddon().version}-openapi-schema.json"
PATHWAYS_JOB_API = "pathways-job.pathways.domain/v1"
JOBSET_SCHEMA = DATA / f"jobset-{JobSetAddon().version}-openapi-schema.json"
JOBSET_API = "jobset.x-k8s.io/v1alpha2"
PODMONITORING_SCHEMA = DATA / "gmp-podmonitoring-v1-schema.json"
PODMONITORING_API = "monitoring.googleapis.com/v1"


# --- Kubernetes' own kinds -------------------------------------------------------------------


@cache
def kubernetes_validator(minor: str, api_version: str, kind: str) -> jsonschema.Validator | None:
    """The strict schema kubernetes-validate ships for one kind of one Kubernetes minor (None:
    that minor has no such kind/apiVersion). Built once: kubernetes_validate.validate() parses
    the 1.5 MB definitions file on every call and stops at the first error."""
    directory = _schema_directory(minor)
    # the package's file naming (as kubernetes_validate.validate builds it):
    # scheduling.k8s.io/v1 PriorityClass -> priorityclass-scheduling-v1.json
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    try:
        schema = kv_utils.schema_contents(f"{directory}/{kind.lower()}-{group_version}.json", minor)
    except FileNotFoundError:
        return None
    registry = referencing.Resource.from_contents(schema) @ _definitions(minor)
    return jsonschema.Draft202012Validator(schema, registry=registry)


def _schema_directory(minor: str) -> str:
    (version,) = {v for v in kv_utils.all_versions() if kv_utils.major_minor(v) == minor}
    return f"kubernetes-json-schema/v{version}-local-strict"


@cache
def _definitions(minor: str) -> referencing.Registry:
    """A registry holding one minor's definitions (1.5 MB of JSON), parsed once for every kind
    of that minor, not once per kind."""
    definitions = kv_utils.schema_contents(f"{_schema_directory(minor)}/_definitions.json", minor)
    return referencing.Resource.from_contents(definitions) @ referencing.Registry()


def kubernetes_errors(document: dict[str, Any], patch: bool = False) -> list[str]:
    found = []
    for minor in GKE_MINORS:
        validator = kubernetes_validator(minor, document["apiVersion"], document["kind"])
        if validator is None:
            kind, api_version = document["kind"], document["apiVersion"]
            found.append(f"Kubernetes {minor} has no {kind} in {api_version}")
            continue
        for error in validator.iter_errors(document):
            if patch and error.validator == "required":
                continue
            where = ".".join(str(p) for p in error.absolute_path) or "<root>"
            found.append(f"Kubernetes {minor}: {where}: {error.message}")
    return found


def object_meta_errors(document: dict[str, Any]) -> list[str]:
    """A custom resource's metadata is an ObjectMeta: checked as a ConfigMap's (the CRD schemas
    say only ``type: object``; the API server checks the rest)."""
    carrier = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": document.get("metadata", {})}
    return kubernetes_errors(carrier)


# --- custom resources ------------------------------------------------------------------------


@cache
def kueue_extracted() -> dict[str, Any]:
    return json.loads(KUEUE_SCHEMAS.read_text())


def kueue_file() -> dict[str, Any]:
    """Schemas and deprecated versions of Kueue's kinds."""
    return kueue_extracted()


@cache
def kueue_validator(key: str) -> Callable[[dict[str, Any]], list[str]]:
    return crd_schema_errors(kueue_file()["schemas"][key])


@cache
def pathways_job_validator() -> Callable[[dict[str, Any]], list[str]]:
    return crd_schema_errors(json.loads(PATHWAYS_JOB_SCHEMA.read_text()))


@cache
def jobset_validator() -> Callable[[dict[str, Any]], list[str]]:
    return crd_schema_errors(json.loads(JOBSET_SCHEMA.read_text()))


@cache
def pod_monitoring_validator() -> Callable[[dict[str, Any]], list[str]]:
    return crd_schema_errors(json.loads(PODMONITORING_SCHEMA.read_text()))


def custom_resource_errors(document: dict[str, Any]) -> list[str] | None:
    """Problems of a Kueue object (its CRD's and Kueue's webhooks'), PathwaysJob, JobSet or
    PodMonitoring; None for any other kind."""
    api_version, kind = document["apiVersion"], document["kind"]
    if api_version.split("/")[0] == KUEUE_API_VERSION.split("/")[0]:
        key = f"{api_version}/{kind}"
        if key in kueue_file()["deprecated"]:
            return [f"{key}: deprecated in Kueue: {kueue_file()['deprecated'][key]}"]
        if key not in kueue_file()["schemas"]:
            # (v1beta1 MultiKueueConfig is served, not deprecated, but not the stored version)
            return [f"{key}: Kueue {KueueAddon().version} stores no such kind and version"]
        problems = kueue_validator(key)(document) + object_meta_errors(document)
        # Validating admission (Kueue's webhooks) sees only what the API server validated.
        return problems or webhook_errors(document)
    if api_version.split("/")[0] == PATHWAYS_JOB_API.split("/")[0]:
        if (api_version, kind) != (PATHWAYS_JOB_API, "PathwaysJob"):
            return [f"{api_version}/{kind}: the PathwaysJob CRD serves only {PATHWAYS_JOB_API}"]
        return pathways_job_validator()(document) + object_meta_errors(document)
    if api_version.split("/")[0] == JOBSET_API.split("/")[0]:
        if (api_version, kind) != (JOBSET_API, "JobSet"):
            return [f"{api_version}/{kind}: the JobSet CRD serves only {JOBSET_API} JobSet"]
        return jobset_validator()(document) + object_meta_errors(document)
    if api_version.split("/")[0] == PODMONITORING_API.split("/")[0]:
        if (api_version, kind) != (PODMONITORING_API, "PodMonitoring"):
            return [f"{api_version}/{kind}: only {PODMONITORING_API} PodMonitoring is checked"]
        return pod_monitoring_validator()(document) + object_meta_errors(document)
    return None


def schema_errors(resource: PlannedResource) -> list[str]:
    document = manifest(resource)
    if document["kind"] == "Secret" and document.get("stringData") == SECRET:
        # pulumi-kubernetes marks a Secret's stringData secret as a whole: the plan never sees it.
        document = {k: v for k, v in document.items() if k != "stringData"}
    custom = custom_resource_errors(document)
    if custom is not None:
        return custom
    return kubernetes_errors(document, patch=is_patch(resource))
