"""The guardrail checks of a GKE cluster and its node pools: Workload Identity, who reaches the
control plane, the nodes' service account, TPU placement and capacity, maintenance windows and
how slices upgrade (``rules.RULES`` names them; the module doc of ``rules`` says how a check
reads a resource)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from components.config.address_sets import everywhere, exposure
from components.plan.views import MISSING, Bound, NodePoolView, is_unknown, number, value_at
from components.policy.model import (
    DEFAULT_COMPUTE_SA_SUFFIX,
    Resource,
    StackContext,
    as_list,
    show,
)
from components.tpu import catalog
from components.vocabulary import UpgradeStrategy


def workload_identity(resource: Resource, _: StackContext) -> Iterator[str]:
    pool = value_at(resource.inputs, "workloadIdentityConfig.workloadPool")
    if pool is MISSING or pool == "":
        yield (
            "workloadIdentityConfig.workloadPool is not set (pods on the pod network would have "
            "to use the node's service account instead of Workload Identity; Pathways pods run "
            "on the host network and act as the node's service account either way)"
        )


def control_plane_access(resource: Resource, _: StackContext) -> Iterator[str]:
    authorized = value_at(resource.inputs, "masterAuthorizedNetworksConfig")
    dns_endpoint = value_at(resource.inputs, "controlPlaneEndpointsConfig.dnsEndpointConfig")
    if authorized is MISSING and dns_endpoint is MISSING:
        yield (
            "neither masterAuthorizedNetworksConfig nor "
            "controlPlaneEndpointsConfig.dnsEndpointConfig is set (limit the IP endpoint to "
            "authorized networks, or reach the control plane through the IAM-gated DNS endpoint)"
        )


def authorized_networks_closed(resource: Resource, _: StackContext) -> Iterator[str]:
    blocks = value_at(resource.inputs, "masterAuthorizedNetworksConfig.cidrBlocks")
    cidrs = []
    for block in as_list(blocks):
        cidr = block.get("cidrBlock") if isinstance(block, Mapping) else None
        if not isinstance(cidr, str):
            continue
        cidrs.append(cidr)
        if (every := everywhere(cidr)) is not None:
            spelled = "" if every == cidr else f" (it is {every})"
            yield (
                f"masterAuthorizedNetworksConfig.cidrBlocks has {cidr!r}{spelled}: the control "
                "plane's IP endpoint would take traffic from the whole internet; list your "
                "networks' CIDRs or use the IAM-gated DNS endpoint"
            )
    exposed = exposure(cidrs)
    if exposed is not None and not any(everywhere(cidr) for cidr in cidrs):
        listed = f"{', '.join(cidrs[:4])}{', ...' if len(cidrs) > 4 else ''}"
        yield (
            f"masterAuthorizedNetworksConfig.cidrBlocks together {exposed.what} ({listed}): the "
            f"control plane's IP endpoint would take traffic from {exposed.reach}; list your "
            "networks' CIDRs or use the IAM-gated DNS endpoint"
        )


def control_plane_endpoints(resource: Resource, _: StackContext) -> Iterator[str]:
    authorized = value_at(resource.inputs, "masterAuthorizedNetworksConfig")
    if is_unknown(authorized):
        return
    blocks = as_list(value_at(resource.inputs, "masterAuthorizedNetworksConfig.cidrBlocks"))
    public = value_at(resource.inputs, "masterAuthorizedNetworksConfig.gcpPublicCidrsAccessEnabled")
    if authorized is not MISSING and public is not False and not is_unknown(public):
        yield (
            f"masterAuthorizedNetworksConfig.gcpPublicCidrsAccessEnabled is {show(public)}, must "
            "be false (GKE's default lets every Google Cloud public IP reach the IP endpoint)"
        )
    ip_endpoint = value_at(resource.inputs, "controlPlaneEndpointsConfig.ipEndpointsConfig.enabled")
    if not blocks and ip_endpoint is not False and not is_unknown(ip_endpoint):
        yield (
            "no authorized network is listed but controlPlaneEndpointsConfig.ipEndpointsConfig."
            f"enabled is {show(ip_endpoint)}: turn the IP endpoint off (false) and use the "
            "IAM-gated DNS endpoint"
        )


def node_service_account(resource: Resource, _: StackContext) -> Iterator[str]:
    account = value_at(resource.inputs, "nodeConfig.serviceAccount")
    if is_unknown(account):
        return
    if account is MISSING or account in ("", "default"):
        shown = "not set" if account is MISSING else json.dumps(account)
        yield (
            f"nodeConfig.serviceAccount is {shown}: nodes would run as the Compute Engine default "
            "service account (Editor on the project); use a dedicated node service account"
        )
    elif isinstance(account, str) and account.endswith(DEFAULT_COMPUTE_SA_SUFFIX):
        yield (
            f"nodeConfig.serviceAccount {account!r} is the Compute Engine default service "
            "account (Editor on the project); use a dedicated node service account"
        )


def _tpu_hosts(machine_type: str, topology: str) -> int | None:
    """Hosts of the slice, from the TPU catalog; None for a machine type it does not know.
    Raises CatalogError when the topology does not exist for the machine type."""
    generation = catalog.generation_of_machine_type(machine_type)
    if generation is None:
        return None
    return catalog.shape_for(generation, topology, machine_type).hosts


def tpu_placement(resource: Resource, _: StackContext) -> Iterator[str]:
    pool = NodePoolView(resource.inputs)
    if not pool.is_tpu:
        return
    machine = pool.machine_type
    placement = value_at(resource.inputs, "placementPolicy")
    if is_unknown(placement):
        return
    placement = placement if isinstance(placement, Mapping) else {}
    topology = placement.get("tpuTopology")
    kind = placement.get("type")
    nodes = pool.node_count(Bound.MAXIMUM).nodes

    hosts = None
    if isinstance(topology, str) and not is_unknown(topology):
        try:
            hosts = _tpu_hosts(machine, topology)
        except catalog.CatalogError as exc:
            yield f"placementPolicy.tpuTopology: {exc}"
            return
    if hosts == 1:
        yield (
            f"placementPolicy.tpuTopology {topology!r} is a single-host slice of {machine}; "
            "a single-host TPU pool must not set a TPU topology (GKE rejects it)"
        )
        return
    if (hosts or 0) <= 1 and (nodes or 0) <= 1:
        return  # a single-host slice without a topology: nothing to place

    slice_text = f"{hosts} hosts" if hosts else f"{nodes} nodes"
    if catalog.places_with_workload_policy(machine):
        yield from _workload_policy_placement(placement, machine, slice_text)
        return
    if not placement:
        yield (
            f"multi-host TPU slice ({slice_text} of {machine}) has no placementPolicy; it needs "
            "type COMPACT with its tpuTopology so GKE places the hosts on one ICI-connected block"
        )
        return
    if topology is None:
        yield f"multi-host TPU slice ({slice_text} of {machine}) needs placementPolicy.tpuTopology"
    if kind != "COMPACT" and not is_unknown(kind):
        yield (
            f"placementPolicy.type is {show(kind if kind is not None else MISSING)}, "
            f'must be "COMPACT" for a multi-host TPU slice ({slice_text} of {machine})'
        )
    if hosts and nodes is not None and nodes != hosts:
        yield (
            f"the pool has {nodes} nodes but TPU topology {topology!r} of {machine} has {hosts} "
            "hosts; a slice's node pool has exactly one node per host"
        )


def _workload_policy_placement(
    placement: Mapping[str, Any], machine: str, slice_text: str
) -> Iterator[str]:
    """Multi-host Ironwood slices: GKE places them with a workload policy named in
    placementPolicy.policyName; Compute Engine refuses COMPACT (group) placement for these
    machine types (GKE docs, "About Ironwood (TPU7x) in GKE"; XPK 1.16 xpk/core/nodepool.py)."""
    if value_at(placement, "policyName") in (MISSING, None, ""):
        yield (
            f"multi-host TPU slice ({slice_text} of {machine}) needs placementPolicy.policyName: "
            "a HIGH_THROUGHPUT workload policy with the slice's accelerator topology (GKE "
            "refuses COMPACT placement with a TPU topology for this machine type)"
        )
    kind = placement.get("type")
    if kind == "COMPACT":
        yield (
            f'placementPolicy.type is "COMPACT"; a multi-host TPU slice of {machine} is placed '
            "by its workload policy alone (COMPACT adds a group placement policy, which Compute "
            "Engine refuses next to a workload policy): leave the type empty"
        )


def capacity_type(resource: Resource, _: StackContext) -> Iterator[str]:
    node_config = value_at(resource.inputs, "nodeConfig")
    if not isinstance(node_config, Mapping):
        return
    reservation = value_at(node_config, "reservationAffinity.consumeReservationType")
    flags = {
        "spot": node_config.get("spot") is True,
        "preemptible": node_config.get("preemptible") is True,
        "flexStart": node_config.get("flexStart") is True,
        "reservationAffinity SPECIFIC_RESERVATION": reservation == "SPECIFIC_RESERVATION",
    }
    chosen = [name for name, on in flags.items() if on]
    if len(chosen) > 1:
        yield (
            f"nodeConfig chooses more than one capacity type ({', '.join(chosen)}); choose "
            "exactly one of spot, flexStart or a specific reservation (none = on-demand)"
        )
    if flags["flexStart"] and reservation != "NO_RESERVATION" and not is_unknown(reservation):
        yield (
            "nodeConfig.flexStart needs nodeConfig.reservationAffinity.consumeReservationType "
            f'"NO_RESERVATION" (it is {show(reservation)})'
        )


# Where a GKE cluster's maintenance policy can set its window (pulumi-gcp
# ClusterMaintenancePolicyArgs: recurring_window, daily_maintenance_window,
# recurring_maintenance_window).
_WINDOW_KEYS = ("recurringWindow", "dailyMaintenanceWindow", "recurringMaintenanceWindow")


# GKE's surge settings when a node pool sets none: one extra node, none unavailable.
_DEFAULT_MAX_SURGE = 1


_DEFAULT_MAX_UNAVAILABLE = 0


def maintenance_window(resource: Resource, _: StackContext) -> Iterator[str]:
    policy = value_at(resource.inputs, "maintenancePolicy")
    if is_unknown(policy):
        return
    policy = policy if isinstance(policy, Mapping) else {}
    if not any(value_at(policy, key) is not MISSING for key in _WINDOW_KEYS):
        yield (
            "maintenancePolicy sets no maintenance window: GKE may upgrade the control plane and "
            "nodes at any hour, and upgrading one host of a TPU slice interrupts the whole slice "
            "and its job; set maintenancePolicy.recurringWindow"
        )


def slice_upgrade(resource: Resource, _: StackContext) -> Iterator[str]:
    """A TPU slice's pool upgrades every host at once with no surge VM (``SliceUpgrade``);
    flex-start pools get GKE's short-lived upgrades and are left alone."""
    pool = NodePoolView(resource.inputs)
    if not pool.is_tpu or pool.flex_start:
        return
    settings = value_at(resource.inputs, "upgradeSettings")
    if is_unknown(settings):
        return
    settings = settings if isinstance(settings, Mapping) else {}
    strategy = settings.get("strategy", UpgradeStrategy.SURGE.value)
    if strategy == UpgradeStrategy.BLUE_GREEN.value:
        yield (
            'upgradeSettings.strategy is "BLUE_GREEN": GKE would need a second slice of TPU '
            'capacity of this shape to upgrade it; use "SURGE" with maxSurge 0 and maxUnavailable '
            "equal to the slice's hosts"
        )
        return
    surge = number(settings.get("maxSurge", _DEFAULT_MAX_SURGE))
    if surge != 0 and not is_unknown(settings.get("maxSurge")):
        yield (
            f"upgradeSettings.maxSurge is {show(settings.get('maxSurge', MISSING))} "
            f"(GKE's default {_DEFAULT_MAX_SURGE} when unset): an upgrade would wait for spare "
            "TPU VMs of this shape; set it to 0"
        )
    nodes = pool.node_count(Bound.MAXIMUM).nodes
    unavailable = number(settings.get("maxUnavailable", _DEFAULT_MAX_UNAVAILABLE))
    if nodes and unavailable != nodes and not is_unknown(settings.get("maxUnavailable")):
        yield (
            f"upgradeSettings.maxUnavailable is {show(settings.get('maxUnavailable', MISSING))} "
            f"(GKE's default {_DEFAULT_MAX_UNAVAILABLE} when unset) for a slice of {nodes} "
            f"hosts: an upgrade would take the slice host by host, interrupting its job once "
            f"per batch; set it to {nodes} so the slice is recreated once, whole"
        )
