"""Kueue's validating webhooks on the kinds the project renders, the rules beyond the CRD schemas
(``webhook_errors``): what the API server would refuse on create, through Kueue's webhook, that
the CRD's OpenAPI schema and CEL rules let through.

Source: kubernetes-sigs/kueue v0.17.1 (the pinned release, ``KueueAddon().version``),
pkg/webhooks/:

- clusterqueue_webhook.go ``ValidateClusterQueue`` -> ``validateClusterQueueSpec``:
  ``validateResourceGroups`` (a covered resource's name is a qualified name,
  ``common.go validateResourceName``; a resource is covered by one resource group only; a flavor
  appears in one resource group only, in all of the ClusterQueue), ``validateFlavorQuotas`` (a
  flavor's resources are named as ``coveredResources`` are, in their order; quantities are not
  negative), ``validateLimit`` (``borrowingLimit`` and ``lendingLimit`` need a ``cohortName``:
  "must be nil when cohort is empty"), ``validateLendingLimit`` (``lendingLimit`` at most
  ``nominalQuota``); the ``namespaceSelector`` is a valid LabelSelector
  (apimachinery ``ValidateLabelSelector``: In/NotIn with values, Exists/DoesNotExist without);
  and ``validateAdmissionCheckOnFlavors`` (an admission check's ``onFlavors`` are flavors of the
  ClusterQueue). ``validatePreemption`` and ``validateFlavorFungibility`` repeat the CRD's CEL
  rules (tests/crd_cel.py evaluates those); the 256/512 totals are not reached here.
- resourceflavor_webhook.go ``ValidateResourceFlavor``: ``nodeLabels`` are valid labels and
  ``validateNodeTaints`` (keys qualified names, values label values, unique by key and effect).

LocalQueues, AdmissionChecks and the MultiKueue kinds have no webhook in v0.17.1 (pkg/webhooks
holds clusterqueue, cohort, resourceflavor and workload webhooks only): their CRD schemas and
CEL rules are all the API server checks.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

Document = dict[str, Any]
SOURCE = "kueue v0.17.1 pkg/webhooks/"

# apimachinery pkg/util/validation: a qualified name (an optional DNS-subdomain prefix and '/',
# then at most 63 alphanumerics, '-', '_', '.', starting and ending alphanumeric), a label value.
_NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]"
_PREFIX = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
QUALIFIED_NAME = re.compile(rf"({_PREFIX}/)?{_NAME}")
LABEL_VALUE = re.compile(rf"({_NAME})?")

# k8s.io/apimachinery/pkg/api/resource/quantity.go: <signedNumber><suffix>
_QUANTITY = re.compile(
    r"(?P<number>[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[mkMGTPE]|[eE][+-]?[0-9]+|)"
)
_FACTORS = {"m": Decimal("0.001"), "": Decimal(1)} | {
    s: Decimal(10) ** (3 * (i + 1)) for i, s in enumerate("kMGTPE")
}
_FACTORS |= {f"{s}i": Decimal(2) ** (10 * (i + 1)) for i, s in enumerate("KMGTPE")}


def quantity(value: str | int) -> Decimal:
    """A resource.Quantity's value (the CRD's pattern has already checked its form)."""
    match = _QUANTITY.fullmatch(str(value).strip())
    if match is None:
        raise ValueError(f"{value!r} is not a Kubernetes quantity")
    suffix = match["suffix"]
    if suffix[:1] in ("e", "E") and suffix not in _FACTORS:
        return Decimal(match["number"]) * Decimal(10) ** int(suffix[1:])
    return Decimal(match["number"]) * _FACTORS[suffix]


def _invalid(path: str, value: Any, detail: str, where: str) -> str:
    return f"{path}: Invalid value: {value!r}: {detail} ({SOURCE}{where})"


def _quota_errors(quota: Document, covered: str | None, cohort: bool, path: str) -> list[str]:
    """clusterqueue_webhook.go validateFlavorQuotas for one resource of a flavor."""
    where = "clusterqueue_webhook.go validateFlavorQuotas"
    found = []
    if quota["name"] != covered:
        detail = "must match the name in coveredResources"
        found.append(_invalid(f"{path}.name", quota["name"], detail, where))
    for key in ("nominalQuota", "borrowingLimit", "lendingLimit"):
        if key in quota and quantity(quota[key]) < 0:
            found.append(
                _invalid(f"{path}.{key}", quota[key], "must be greater than or equal to 0", where)
            )
    for key in ("borrowingLimit", "lendingLimit"):
        if key in quota and not cohort:
            detail = "must be nil when cohort is empty"
            found.append(
                _invalid(
                    f"{path}.{key}", quota[key], detail, "clusterqueue_webhook.go validateLimit"
                )
            )
    if "lendingLimit" in quota and quantity(quota["lendingLimit"]) > quantity(
        quota["nominalQuota"]
    ):
        detail = "must be less than or equal to the nominalQuota"
        where = "clusterqueue_webhook.go validateLendingLimit"
        found.append(_invalid(f"{path}.lendingLimit", quota["lendingLimit"], detail, where))
    return found


def _resource_group_errors(groups: list[Document], cohort: bool) -> list[str]:
    """clusterqueue_webhook.go validateResourceGroups."""
    where = "clusterqueue_webhook.go validateResourceGroups"
    found: list[str] = []
    resources: set[str] = set()
    flavors: set[str] = set()
    for i, group in enumerate(groups):
        path = f"spec.resourceGroups[{i}]"
        covered = group.get("coveredResources", [])
        for j, name in enumerate(covered):
            if not QUALIFIED_NAME.fullmatch(name):
                detail = "must be a qualified name"
                found.append(
                    _invalid(
                        f"{path}.coveredResources[{j}]",
                        name,
                        detail,
                        "common.go validateResourceName",
                    )
                )
            if name in resources:
                detail = "Duplicate value: a resource is covered by one resource group only"
                found.append(_invalid(f"{path}.coveredResources[{j}]", name, detail, where))
            resources.add(name)
        for j, flavor in enumerate(group.get("flavors", [])):
            for k, quota in enumerate(flavor.get("resources", [])[: len(covered)]):
                found += _quota_errors(
                    quota, covered[k], cohort, f"{path}.flavors[{j}].resources[{k}]"
                )
            if flavor["name"] in flavors:
                detail = "Duplicate value: a flavor is in one resource group of a ClusterQueue only"
                found.append(_invalid(f"{path}.flavors[{j}].name", flavor["name"], detail, where))
            flavors.add(flavor["name"])
    return found


def _selector_errors(selector: Document | None, path: str) -> list[str]:
    """apimachinery pkg/apis/meta/v1/validation ValidateLabelSelector, as the ClusterQueue
    webhook calls it on ``namespaceSelector``."""
    where = "clusterqueue_webhook.go validateClusterQueueSpec (ValidateLabelSelector)"
    found = []
    for key, value in ((selector or {}).get("matchLabels") or {}).items():
        if not QUALIFIED_NAME.fullmatch(key) or not LABEL_VALUE.fullmatch(value):
            found.append(_invalid(f"{path}.matchLabels", key, "must be a valid label", where))
    for i, expression in enumerate((selector or {}).get("matchExpressions") or []):
        values, operator = expression.get("values") or [], expression["operator"]
        if operator in ("In", "NotIn") and not values:
            detail = "must be specified when `operator` is 'In' or 'NotIn'"
            found.append(_invalid(f"{path}.matchExpressions[{i}].values", values, detail, where))
        if operator in ("Exists", "DoesNotExist") and values:
            detail = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            found.append(_invalid(f"{path}.matchExpressions[{i}].values", values, detail, where))
        if not QUALIFIED_NAME.fullmatch(expression["key"]):
            key = f"{path}.matchExpressions[{i}].key"
            found.append(_invalid(key, expression["key"], "must be a qualified name", where))
    return found


def _on_flavors_errors(spec: Document) -> list[str]:
    """clusterqueue_webhook.go validateAdmissionCheckOnFlavors: onFlavors name flavors of the
    ClusterQueue (util/queue AllFlavors: every resource group's)."""
    where = "clusterqueue_webhook.go validateAdmissionCheckOnFlavors"
    flavors = {f["name"] for g in spec.get("resourceGroups", []) for f in g.get("flavors", [])}
    checks = (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []
    return [
        _invalid(
            f"spec.admissionChecksStrategy.admissionChecks[{i}].onFlavors[{j}]",
            flavor,
            f"Unsupported value: not a flavor of the ClusterQueue {sorted(flavors)}",
            where,
        )
        for i, check in enumerate(checks)
        for j, flavor in enumerate(check.get("onFlavors") or [])
        if flavor not in flavors
    ]


def cluster_queue_errors(document: Document) -> list[str]:
    """clusterqueue_webhook.go ValidateClusterQueue (a create)."""
    spec = document.get("spec", {})
    cohort = bool(spec.get("cohortName"))
    return [
        *_resource_group_errors(spec.get("resourceGroups", []), cohort),
        *_selector_errors(spec.get("namespaceSelector"), "spec.namespaceSelector"),
        *_on_flavors_errors(spec),
    ]


def resource_flavor_errors(document: Document) -> list[str]:
    """resourceflavor_webhook.go ValidateResourceFlavor."""
    spec = document.get("spec", {})
    found = []
    for key, value in (spec.get("nodeLabels") or {}).items():
        if not QUALIFIED_NAME.fullmatch(key) or not LABEL_VALUE.fullmatch(value):
            detail = "must be a valid label"
            where = "resourceflavor_webhook.go ValidateResourceFlavor (ValidateLabels)"
            found.append(_invalid("spec.nodeLabels", f"{key}={value}", detail, where))
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(spec.get("nodeTaints") or []):
        where, path = "resourceflavor_webhook.go validateNodeTaints", f"spec.nodeTaints[{i}]"
        if not QUALIFIED_NAME.fullmatch(taint["key"]):
            found.append(_invalid(f"{path}.key", taint["key"], "must be a qualified name", where))
        if not LABEL_VALUE.fullmatch(taint.get("value", "")):
            found.append(_invalid(f"{path}.value", taint["value"], "must be a label value", where))
        pair = (taint["key"], taint.get("effect", ""))
        if pair in seen:
            detail = "Duplicate value: taints must be unique by key and effect pair"
            found.append(_invalid(path, taint, detail, where))
        seen.add(pair)
    return found


def webhook_errors(document: Document) -> list[str]:
    """What Kueue's webhooks refuse in a Kueue object (empty: nothing, or no webhook)."""
    checks = {"ClusterQueue": cluster_queue_errors, "ResourceFlavor": resource_flavor_errors}
    check = checks.get(document["kind"])
    return check(document) if check else []
