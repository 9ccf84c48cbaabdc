"""The Kubernetes API server's ValidatingAdmissionPolicy evaluation, emulated around a real CEL
implementation (common-expression-language, the Rust ``cel`` crate), so the tests judge the
policies the plan renders, not a translation of them.

What the emulation covers, after kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/
policy/validating (and the admissionregistration.k8s.io/v1 API reference):
- matching: a binding's ``matchResources.namespaceSelector`` against the namespace's labels, and
  the policy's ``matchConstraints.resourceRules`` against the request's group, version,
  resource (``pods/ephemeralcontainers`` for a subresource) and operation;
- the variables a validation sees: ``object``, ``oldObject`` (null on CREATE), ``request``
  (``userInfo.username``, ``namespace``, ``operation``, ``subResource``), ``namespaceObject``
  and ``variables``, each of ``spec.variables`` evaluated in order (an error in one is an error
  of every validation that reads it);
- ``failurePolicy: Fail``: a validation that errors (a field read where it is absent: CEL's "no
  such key") denies like one that is false;
- the CEL library functions of the Kubernetes environment the policies use: ``split`` of the
  strings extension (cel-go ext.Strings, on in Kubernetes since 1.24), which ``cel.stdlib``
  provides with the same result as Go's ``strings.Split`` (tested here); and the ``authorizer``
  variable of the authorization library (staging/src/k8s.io/apiserver/pkg/cel/library/authz.go:
  ``authorizer.group(g).resource(r).name(n).check(verb).allowed()`` asks the API server's
  authorizers whether the requester may do ``verb``), answered from the request's ``grants``
  (its RBAC: ``(group, resource, verb)`` it holds, ``*`` for any).

What it does not: type checking against the OpenAPI schema (the API server's, reported in a
policy's ``status.typeChecking``). ``lint`` stands in for the part that matters here: no field
named ``namespace`` selected (a CEL reserved word the API server refuses to read, kubernetes PR
#129514), no optional syntax (``.?``), and only functions the Kubernetes environment has.

``api_defaults`` applies what the API server's defaulting does before admission that the
policies depend on: with ``hostNetwork: true`` every container port gets ``hostPort =
containerPort`` (kubernetes pkg/apis/core/v1/defaults.go, ``defaultHostNetworkPorts``).
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import cel
from cel import stdlib

# Functions and macros of the Kubernetes CEL environment (1.34+) the policies may call.
KUBERNETES_FUNCTIONS = frozenset(
    {
        "has",
        "all",
        "exists",
        "exists_one",
        "map",
        "filter",
        "size",
        "startsWith",
        "endsWith",
        "contains",
        "matches",
        "split",
        "join",
        "lowerAscii",
        "upperAscii",
        "int",
        "string",
        # the authorization library (authorizer.group(...).resource(...)...check(...).allowed())
        "group",
        "resource",
        "name",
        "check",
        "allowed",
    }
)
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\(")
_STRING = re.compile(r"'[^']*'")


def lint(expression: str) -> list[str]:
    """What the API server would refuse or misread in an expression that both Python CEL
    libraries accept."""
    code = _STRING.sub("''", expression)  # names inside string literals are not calls
    problems = []
    if re.search(r"\bmetadata\.namespace\b", code):
        problems.append("selects a field named namespace (reserved word): use request.namespace")
    if ".?" in code:
        problems.append("optional field selection (.?) is not enabled")
    unknown = sorted(set(_CALL.findall(code)) - KUBERNETES_FUNCTIONS)
    if unknown:
        problems.append(f"functions the Kubernetes CEL environment lacks: {', '.join(unknown)}")
    return problems


def _with(key: str) -> Any:
    return lambda check, value: {**check, key: value}


def _allowed(check: dict[str, Any]) -> bool:
    """The requester's grants (``authorizer["grants"]``, ``group/resource/verb`` strings) hold
    ``check``'s verb on its group and resource."""
    wanted = (check.get("group", ""), check.get("resource", ""), check.get("verb", ""))
    for grant in check["grants"]:
        held = grant.split("/")
        if all(h in ("*", w) for h, w in zip(held, wanted, strict=True)):
            return True
    return False


AUTHORIZER_FUNCTIONS = {
    "group": _with("group"),
    "resource": _with("resource"),
    "name": _with("name"),
    "check": _with("verb"),
    "allowed": _allowed,
}


def evaluate(expression: str, activation: dict[str, Any]) -> Any:
    """The value of ``expression``; raises what the CEL evaluation raises (an error)."""
    return _compiled(expression).execute(_context(activation))


def _context(activation: dict[str, Any]) -> Any:
    """A CEL context with the library functions and ``activation``'s variables (each value
    converted when added: a later change to it needs ``add_variable`` again)."""
    context = cel.Context()
    stdlib.add_stdlib_to_context(context)
    for name, function in AUTHORIZER_FUNCTIONS.items():
        context.add_function(name, function)
    for name, value in activation.items():
        context.add_variable(name, value)
    return context


@cache
def _compiled(expression: str) -> Any:
    return cel.compile(expression)


@dataclass
class Request:
    """One admission request as a policy sees it."""

    object: dict[str, Any] | None
    namespace: str
    username: str
    operation: str = "CREATE"
    old_object: dict[str, Any] | None = None
    resource: str = "pods"
    group: str = ""
    version: str = "v1"
    sub_resource: str = ""
    namespace_labels: dict[str, str] = field(default_factory=dict)
    grants: frozenset[tuple[str, str, str]] = frozenset()
    """What the requester's RBAC allows, as ``(group, resource, verb)`` (``*``: any): what
    ``authorizer`` answers (a member with ``edit``: nothing the policies ask about)."""

    def activation(self) -> dict[str, Any]:
        labels = {"kubernetes.io/metadata.name": self.namespace, **self.namespace_labels}
        return {
            "object": self.object,
            "oldObject": self.old_object,
            "request": {
                "userInfo": {"username": self.username},
                "namespace": self.namespace,
                "operation": self.operation,
                "subResource": self.sub_resource,
            },
            "namespaceObject": {"metadata": {"name": self.namespace, "labels": labels}},
            "params": None,
            "authorizer": {"grants": sorted("/".join(grant) for grant in self.grants)},
        }


def _selector_matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """A LabelSelector (matchLabels and matchExpressions) against labels; none matches all."""
    selector = selector or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator = expression["key"], expression["operator"]
        values = expression.get("values") or []
        present = key in labels
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
    return True


def _rule_matches(rule: dict[str, Any], request: Request) -> bool:
    resource = request.resource + (f"/{request.sub_resource}" if request.sub_resource else "")
    return (
        request.group in rule["apiGroups"]
        and request.version in rule["apiVersions"]
        and resource in rule["resources"]
        and request.operation in rule["operations"]
    )


def applies(policy: dict[str, Any], binding: dict[str, Any], request: Request) -> bool:
    """Whether the API server evaluates ``policy`` (a ValidatingAdmissionPolicy's spec) through
    ``binding`` (its binding's spec) for ``request``."""
    labels = {"kubernetes.io/metadata.name": request.namespace, **request.namespace_labels}
    selector = (binding.get("matchResources") or {}).get("namespaceSelector")
    if not _selector_matches(selector, labels):
        return False
    rules = policy["matchConstraints"]["resourceRules"]
    return any(_rule_matches(rule, request) for rule in rules)


def denials(policy: dict[str, Any], request: Request) -> list[str]:
    """The messages of ``policy``'s validations that deny ``request`` (false or an error)."""
    # One context for the policy's expressions: the request (the object above all) is converted
    # once, not once per expression; only ``variables`` grows, and is added again as it does.
    context = _context(request.activation())
    values: dict[str, Any] = {}
    for variable in policy.get("variables") or []:
        context.add_variable("variables", values)
        try:
            values[variable["name"]] = _compiled(variable["expression"]).execute(context)
        except Exception:  # an error in a variable is an error where it is read
            continue
    context.add_variable("variables", values)
    denied = []
    for validation in policy["validations"]:
        try:
            allowed = _compiled(validation["expression"]).execute(context) is True
        except Exception:  # failurePolicy Fail: an evaluation error denies
            allowed = False
        if not allowed:
            denied.append(validation["message"])
    return denied


def api_defaults(pod: dict[str, Any]) -> dict[str, Any]:
    """``pod`` as the API server's defaulting leaves it for admission (only the defaults the
    policies read): host-network pods get ``hostPort = containerPort``."""
    pod = copy.deepcopy(pod)
    spec = pod.get("spec", {})
    if spec.get("hostNetwork"):
        for key in ("initContainers", "containers"):
            for container in spec.get(key, []):
                for port in container.get("ports", []):
                    port.setdefault("hostPort", port["containerPort"])
    return pod
