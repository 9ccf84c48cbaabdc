"""The names and fixed values of a Pathways JobSet, as XPK 1.16 renders it and the PathwaysJob
controller v0.1.4 builds it: its API, replicated jobs and containers, the labels and annotations
JobSet puts on its pods, the head's limits, restarts and pull policy. One home for the renderer
(``jobset``) and the reader of a rendered JobSet's pods (``jobset_pods``)."""

from __future__ import annotations

from enum import StrEnum

from components.labels import TPU_RESOURCE

API_VERSION = "jobset.x-k8s.io/v1alpha2"


KIND = "JobSet"


HEAD_JOB = "pathways-head"


WORKER_JOB = "worker"


RM_CONTAINER = "pathways-rm"


PROXY_CONTAINER = "pathways-proxy"


WORKER_CONTAINER = "pathways-worker"


PYTHON_SIDECAR_CONTAINER = "colocated-python-sidecar"


PATHWAYS_CONTAINERS = frozenset({RM_CONTAINER, PROXY_CONTAINER, WORKER_CONTAINER})


DEFAULT_MAIN_CONTAINER = "main"  # the CRD's default for controller.mainContainerName


# JobSet puts these on every pod it creates; the Pathways components read them (downward API).
EXCLUSIVE_TOPOLOGY = "alpha.jobset.sigs.k8s.io/exclusive-topology"


COORDINATOR_LABEL = "jobset.sigs.k8s.io/coordinator"


REPLICAS_LABEL = "jobset.sigs.k8s.io/replicatedjob-replicas"


JOB_INDEX_LABEL = "jobset.sigs.k8s.io/job-index"


JOBSET_NAME_ANNOTATION = "jobset.sigs.k8s.io/jobset-name"


REPLICATED_JOB_ANNOTATION = "jobset.sigs.k8s.io/replicatedjob-name"


# Limits of the head's components (the same in XPK 1.16 and the controller v0.1.4).
RM_LIMITS = {"cpu": "8", "memory": "32G"}


PROXY_LIMITS = {"cpu": "16", "memory": "100G"}


# Worker restarts per host without elastic slices (XPK and the controller: "suspend/resume").
DEFAULT_RESTARTS_PER_HOST = 4


# The CRD's default for workers[].maxSliceRestarts.
DEFAULT_MAX_SLICE_RESTARTS = 1


# pathwaysutils 0.1.13 sets this on the proxy and the user container of the JobSets it runs
# off the host network.
INSECURE_GRPC_ENV = {"name": "IFRT_PROXY_USE_INSECURE_GRPC_CREDENTIALS", "value": "true"}


TPU_TOLERATION = {"key": TPU_RESOURCE, "operator": "Exists"}


class RestartPolicy(StrEnum):
    """Kubernetes restart policies: of a pod, or of an init container (``ALWAYS`` makes it a
    native sidecar). Manifests carry ``.value``: YAML dumpers refuse str subclasses."""

    ALWAYS = "Always"
    NEVER = "Never"
    ON_FAILURE = "OnFailure"


# What `pulumi up` waits for: JobSet v0.10.1 sets StartupPolicyCompleted once every replicated
# job is ready in startupPolicyOrder InOrder (kubernetes-sigs/jobset v0.10.1,
# api/jobset/v1alpha2/jobset_types.go, JobSetStartupPolicyCompleted): the head, then the workers.
STARTED_CONDITION = "StartupPolicyCompleted"


# Components pull on every start: with an unpinned pathwaysVersion "latest" moves (both sources).
PULL_ALWAYS = "Always"
