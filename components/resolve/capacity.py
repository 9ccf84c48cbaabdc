"""How big a stack may grow: GKE's and GCP's limits on nodes, address ranges and control-plane
access lists, each checked against what the stack's pools may scale to.

Each check returns None or a message naming the numbers and what is allowed; ``size_issues``
places them under the stack's keys. Sources:

- nodes per cluster: 15,000 for a GKE Standard cluster (cloud.google.com/kubernetes-engine/
  quotas, "Limits per cluster"; over 5,000 also needs a cluster size quota lifted);
- node range: GCP keeps four addresses of every subnet's primary range (network, gateway,
  second-to-last, broadcast: cloud.google.com/vpc/docs/subnets, "Reserved IPv4 addresses");
- Pod range: each node takes a /24 of it at GKE's default of 110 Pods per node, which this
  stack keeps (cloud.google.com/kubernetes-engine/docs/how-to/flexible-pod-cidr, "Optimizing
  IP address allocation": 65-110 Pods per node -> a /24 per node);
- authorized networks: 50 CIDR ranges for a cluster with public nodes, 100 for a private one
  (cloud.google.com/kubernetes-engine/docs/how-to/authorized-networks, "Limitations").
"""

from __future__ import annotations

import ipaddress

from components.config.schema import StackConfig
from components.errors import ConfigIssue
from components.tpu.machines import MachineType
from components.vocabulary import jobset_memory_mib

GKE_MAX_NODES = 15_000
RESERVED_PER_SUBNET = 4
POD_RANGE_PREFIX_PER_NODE = 24
MAX_AUTHORIZED_NETWORKS = 50
MAX_AUTHORIZED_NETWORKS_PRIVATE = 100


def node_count_problem(nodes: int) -> str | None:
    if nodes <= GKE_MAX_NODES:
        return None
    return (
        f"the pools may scale to {nodes} nodes (CPU pools' maxNodes plus the hosts of every TPU "
        f"slice), over GKE's limit of {GKE_MAX_NODES} nodes per Standard cluster; use fewer or "
        "smaller slices, or split them across clusters"
    )


def node_range_problem(cidr: str, nodes: int) -> str | None:
    network = ipaddress.ip_network(cidr)
    room = network.num_addresses - RESERVED_PER_SUBNET
    if nodes <= room:
        return None
    return (
        f"{cidr!r} has {room} node addresses ({network.num_addresses} less the "
        f"{RESERVED_PER_SUBNET} GCP keeps in every subnet) but the pools may scale to {nodes} "
        f"nodes; use a /{_prefix_for(nodes + RESERVED_PER_SUBNET)} or larger"
    )


def pod_range_problem(cidr: str, nodes: int) -> str | None:
    network = ipaddress.ip_network(cidr)
    per_node = 2 ** (32 - POD_RANGE_PREFIX_PER_NODE)
    room = network.num_addresses // per_node
    if nodes <= room:
        return None
    return (
        f"{cidr!r} holds the Pod ranges of {room} node(s) (GKE gives each node a "
        f"/{POD_RANGE_PREFIX_PER_NODE} at its default of 110 Pods per node) but the pools may "
        f"scale to {nodes} nodes; use a /{_prefix_for(nodes * per_node)} or larger"
    )


def authorized_networks_problem(count: int, private_nodes: bool) -> str | None:
    limit = MAX_AUTHORIZED_NETWORKS_PRIVATE if private_nodes else MAX_AUTHORIZED_NETWORKS
    if count <= limit:
        return None
    kind = "private (privateNodes: true)" if private_nodes else "public-node"
    return (
        f"{count} ranges; GKE allows at most {limit} authorized networks on a {kind} cluster "
        f"({MAX_AUTHORIZED_NETWORKS} public, {MAX_AUTHORIZED_NETWORKS_PRIVATE} private); merge "
        "adjacent ranges"
    )


def controller_memory_problem(memory_mib: int, machine: MachineType, nodes: int) -> str | None:
    """The JobSet controller, patched onto the system pool, asks for ``memory_mib``."""
    allocatable_mib = machine.allocatable_memory_bytes // 2**20
    if memory_mib <= allocatable_mib:
        return None
    return (
        f"the JobSet controller is sized for the {nodes} nodes the pools may scale to and asks "
        f"for {memory_mib} MiB of memory, but {machine.name!r} leaves {allocatable_mib} MiB "
        "allocatable, so the controller would never be scheduled; use a system pool machine "
        "type with more memory, or fewer nodes"
    )


def _prefix_for(addresses: int) -> int:
    """The longest IPv4 prefix whose range holds ``addresses`` addresses."""
    return max(0, 32 - (max(addresses, 1) - 1).bit_length())


def size_issues(config: StackConfig) -> list[ConfigIssue]:
    """What the pools may scale to against GKE's node limit and, in a cluster this stack
    creates, against its ranges and the system pool (the checks above)."""
    nodes = config.max_node_count
    found = {"tpuPools": node_count_problem(nodes)}
    if config.creates_cluster:
        found |= _cluster_size_problems(config, nodes)
    return [ConfigIssue(key, problem) for key, problem in found.items() if problem]


def _cluster_size_problems(config: StackConfig, nodes: int) -> dict[str, str | None]:
    network = config.cluster.network
    found = {
        "cluster.network.podsCidr": pod_range_problem(network.pods_cidr, nodes),
        "cluster.authorizedNetworks": authorized_networks_problem(
            len(config.cluster.authorized_networks), config.private_nodes
        ),
    }
    if network.create:  # an existing subnetwork's primary range is not this stack's
        found["cluster.network.nodesCidr"] = node_range_problem(network.nodes_cidr, nodes)
    if config.addons.jobset.install:  # the patched controller runs on the system pool
        found["systemPool.machineType"] = controller_memory_problem(
            jobset_memory_mib(nodes), config.system_pool.machine, nodes
        )
    return found
