"""The network and IAM rules a plan renders, read as Google Cloud and Kubernetes apply them, for
the isolation tests:

- VPC firewall (GCP "VPC firewall rules"): among the rules of the target's network whose target
  service accounts include the target node's, the direction, protocol and port match, and
  whose source matches (a source range containing the sender's address, OR a source service
  account that is the sender's: it matches a VM's primary address only, where host-network
  pods send from), the lowest priority number wins and a deny beats an allow of the same
  priority; none matching: the implied deny of ingress.
- NetworkPolicy (Kubernetes "Network Policies"): a pod selected by some Egress policy may send
  only what one of their egress rules allows (a peer and, if given, a port).
- IAM Conditions (Cloud Storage): the binding's CEL condition over ``resource.name`` and
  ``api.getAttribute``, evaluated with the same CEL implementation as the admission policies.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

import cel
from cel import stdlib


@dataclass(frozen=True)
class Sender:
    """Where a connection comes from: an address, and the service account of the node it is
    the primary address of (None: a pod address, or outside)."""

    address: str
    node_account: str | None = None


def _ports_match(entries: list[dict[str, Any]], port: int) -> bool:
    for entry in entries:
        if entry["protocol"] not in ("tcp", "all"):
            continue
        ports = entry.get("ports")
        if not ports or str(port) in ports:
            return True
    return False


def _source_matches(rule: dict[str, Any], sender: Sender) -> bool:
    address = ipaddress.ip_address(sender.address)
    ranges = rule.get("sourceRanges") or []
    if any(address in ipaddress.ip_network(cidr) for cidr in ranges):
        return True
    return sender.node_account is not None and sender.node_account in (
        rule.get("sourceServiceAccounts") or []
    )


def firewall_allows(
    rules: list[dict[str, Any]], sender: Sender, target_account: str, port: int
) -> bool:
    """Whether ingress from ``sender`` to a node running as ``target_account`` on TCP ``port``
    is allowed (only rules that name their targets by account are read: the project's)."""
    matching = []
    for rule in rules:
        if rule.get("direction", "INGRESS") != "INGRESS":
            continue
        if target_account not in (rule.get("targetServiceAccounts") or []):
            continue
        if not _source_matches(rule, sender):
            continue
        for kind in ("allows", "denies"):
            if _ports_match(rule.get(kind) or [], port):
                matching.append((rule.get("priority", 1000), kind == "allows"))
    if not matching:
        return False
    return min(matching, key=lambda m: (m[0], m[1]))[1]


@dataclass(frozen=True)
class Destination:
    """Where a team pod sends to: an address and port, or a pod of a namespace."""

    port: int
    protocol: str = "TCP"
    address: str | None = None
    pod_namespace: str | None = None
    pod_labels: dict[str, str] | None = None


def _peer_matches(
    peer: dict[str, Any], namespace: str, destination: Destination, labels: dict[str, dict]
) -> bool:
    if "ipBlock" in peer:
        if destination.address is None:
            return False
        address = ipaddress.ip_address(destination.address)
        block = peer["ipBlock"]
        if address not in ipaddress.ip_network(block["cidr"]):
            return False
        return not any(address in ipaddress.ip_network(c) for c in block.get("except", []))
    if destination.pod_namespace is None:
        return False
    if "namespaceSelector" in peer:
        wanted = peer["namespaceSelector"].get("matchLabels", {})
        ns_labels = labels.get(destination.pod_namespace, {})
        ns_labels = {"kubernetes.io/metadata.name": destination.pod_namespace, **ns_labels}
        if any(ns_labels.get(k) != v for k, v in wanted.items()):
            return False
    elif destination.pod_namespace != namespace:
        return False
    wanted_pods = peer.get("podSelector", {}).get("matchLabels", {})
    pod_labels = destination.pod_labels or {}
    return all(pod_labels.get(k) == v for k, v in wanted_pods.items())


def egress_allows(
    policies: list[dict[str, Any]],
    namespace: str,
    destination: Destination,
    labels: dict[str, dict] | None = None,
) -> bool:
    """Whether a pod (off the host network) of ``namespace`` may send to ``destination``."""
    selecting = [
        p["spec"]
        for p in policies
        if p["metadata"]["namespace"] == namespace and "Egress" in p["spec"]["policyTypes"]
    ]
    if not selecting:
        return True
    for spec in selecting:
        for rule in spec.get("egress", []):
            ports = rule.get("ports")
            if ports and not any(
                p["protocol"] == destination.protocol and p["port"] == destination.port
                for p in ports
            ):
                continue
            if any(
                _peer_matches(peer, namespace, destination, labels or {}) for peer in rule["to"]
            ):
                return True
    return False


def iam_condition_admits(expression: str, resource_name: str, list_prefix: str = "") -> bool:
    """A Cloud Storage IAM condition for a request on ``resource_name`` (an object, or the
    bucket for a list with ``list_prefix``)."""
    context = cel.Context()
    stdlib.add_stdlib_to_context(context)
    context.add_variable("resource", {"name": resource_name})
    context.add_variable("api", {})

    def get_attribute(_api: Any, name: str, default: str) -> str:
        if name == "storage.googleapis.com/objectListPrefix":
            return list_prefix
        return default

    context.add_function("getAttribute", get_attribute)
    return cel.evaluate(expression, context) is True
