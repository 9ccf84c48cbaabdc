"""What pathwaysutils' shared-service client expects of a shared Pathways service, and what each
of its clients costs the cluster. Pure: no Pulumi.

Facts from pathwaysutils 0.1.13 (PyPI), ``pathwaysutils/experimental/shared_pathways_service``:
- ``isc_pathways.connect(*, cluster, project, region, gcs_bucket, pathways_service,
  expected_tpu_instances, proxy_job_name=None, proxy_server_image=None, proxy_options=None,
  collect_service_metrics=False)``; ``region`` is passed to ``gcloud container clusters
  get-credentials --location`` (so it is the cluster's location, a zone for a zonal cluster)
  and ``gcs_bucket`` becomes the client proxy's ``--gcs_scratch_location``.
- ``gke_utils.get_pathways_service_images`` reads the service's JobSet in namespace ``default``
  (the JobSet is named after ``pathways_service`` up to ``-pathways-head``, and its ``worker``
  replicated job's ``pathways-worker`` image picks the client's proxy image), and
  ``start_port_forwarding``/``delete_gke_resource`` use ``-n default``; the proxy Job itself is
  applied to the kubeconfig's current namespace. So the service lives in ``default`` and
  clients set that as their current namespace.
- ``yamls/pw-proxy.yaml``: each client's proxy is a Job with ``hostNetwork: true``, container
  port 29000 and limits 16 CPU / 100G, no nodeSelector: one client proxy per node (the host
  port), on any node with room for it.
- ``ProxyOptions``: ``proxy_options=["use_insecure_credentials:true"]`` sets
  ``IFRT_PROXY_USE_INSECURE_GRPC_CREDENTIALS=true`` on the client's proxy (without it the IFRT
  proxy uses ALTS credentials, which only work between Google Cloud machines).
- ``deploy_pathways_service.run_deployment`` (the upstream service deployer): namespace
  ``default``, ``max_restarts`` 30, ``max_slice_restarts=1000000`` (``experimental/gke/jobset.py``
  makes each slice Job's backoffLimit hosts x that), a pinned ``server:jax-<version>`` image.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from components.pathways.controller_model import PodModel
from components.pathways.head_sizing import PodResources
from components.pathways.scheduler_model import NodePoolModel, pools_that_fit
from components.pathways.spec import INT32_MAX, PROXY_PORT

# The only namespace the client reads the service from (see above).
SERVICE_NAMESPACE = "default"
# Kubernetes' own Service in `default`; JobSet names the service's headless Service after the
# job, so a service of this name would collide with it.
RESERVED_NAMES = ("kubernetes",)
# ``gke_utils.extract_jobset_name`` (pathwaysutils 0.1.13) takes the JobSet name as the service
# address's host name up to the first occurrence of this, so a name containing it is cut short.
HEAD_HOST_MARKER = "-pathways-head"
# The client runs the Pathways proxy server, on the proxy's own port.
CLIENT_PROXY_PORT = PROXY_PORT
CLIENT_PROXY = PodResources(16_000, 100 * 10**9)
# The upstream deployer's restarts for a long-lived service.
SERVICE_MAX_RESTARTS = 30
SERVICE_MAX_SLICE_RESTARTS = 1_000_000
INSECURE_CREDENTIALS_ENV = "IFRT_PROXY_USE_INSECURE_GRPC_CREDENTIALS"
INSECURE_PROXY_OPTION = "use_insecure_credentials:true"


def slice_restarts_limit(hosts: int) -> int:
    """The most slice restarts whose worker backoffLimit (hosts x restarts, an int32 in the v0.1.4
    controller: pathwaysjob_controller.go ~714) does not overflow."""
    return INT32_MAX // hosts


def default_slice_restarts(hosts: int) -> int:
    """Upstream's effectively unbounded slice restarts, as far as the backoffLimit can hold."""
    return min(SERVICE_MAX_SLICE_RESTARTS, slice_restarts_limit(hosts))


def client_proxy_pod() -> PodModel:
    """One client's proxy pod as the scheduler sees it (pw-proxy.yaml)."""
    return PodModel(
        role="client-proxy",
        groups=1,
        per_group=1,
        node_selector={},
        tolerations=(),
        resources=CLIENT_PROXY,
        tpu_chips=0,
        host_network=True,
        service_account=None,
        exclusive_topology=None,
        images=(),
    )


def client_capacity(pools: Sequence[NodePoolModel], heads: int) -> dict[str, int | str]:
    """How many clients can hold a proxy at once: one per node (host port 29000) of the pools a
    client's proxy fits, at their maximum sizes, less one node per Pathways head whose proxy
    holds the same host port on a CPU node (``heads``), whether or not its clients use it: a
    head on the host network and not colocated with its workers. A shared service's head on
    the JobSet backend runs no proxy, as pathwaysutils' own deployer runs it."""
    client = client_proxy_pod()
    fitting = pools_that_fit(client, pools)
    nodes = sum(p.max_nodes for p in fitting)
    groups = ", ".join(sorted({p.group for p in fitting})) or "no pool"
    return {
        "atOnce": max(nodes - heads, 0),
        "counted": (
            f"{nodes} node(s) of {groups} at most, less {heads} held by this stack's Pathways "
            f"heads; one client proxy ({client.resources}, host port {CLIENT_PROXY_PORT}) per "
            "node"
        ),
    }


def capacity_problem(capacity: Mapping[str, int | str], owned: bool) -> str | None:
    """The message when not a single client fits (``owned``: this stack owns the CPU pool)."""
    if capacity["atOnce"]:
        return None
    where = "" if owned else " (on the owner stack)"
    return (
        f"no node is left for a client of the shared services ({capacity['counted']}); raise "
        f"cpuPool.maxNodes{where} by the number of clients to hold at once"
    )


def connect_call(
    *,
    cluster: str,
    project: str,
    location: str,
    gcs_bucket: str,
    pathways_service: str,
    expected_tpu_instances: Mapping[str, int],
    proxy_options: Sequence[str] = (),
) -> str:
    """The ``isc_pathways.connect(...)`` call a user pastes, as Python source (JSON string and
    dict literals are Python literals too)."""
    arguments = [
        ("cluster", json.dumps(cluster)),
        ("project", json.dumps(project)),
        ("region", json.dumps(location)),
        ("gcs_bucket", json.dumps(gcs_bucket)),
        ("pathways_service", json.dumps(pathways_service)),
        ("expected_tpu_instances", json.dumps(dict(expected_tpu_instances))),
    ]
    if proxy_options:
        arguments.append(("proxy_options", json.dumps(list(proxy_options))))
    return f"isc_pathways.connect({', '.join(f'{k}={v}' for k, v in arguments)})"
