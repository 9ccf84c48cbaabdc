"""The preflight of a program of your own (``plan --program``), as a stack file's gets it: each
PathwaysJob the program builds is checked against what the program registers. A job needs the
PathwaysJob controller installed (when the program creates its cluster), a namespace that is no
system namespace and that the program creates (likewise), and every ``gs://`` path it names
granted to the identity its pods act as for GCS (``pathways.storage_access``: host-network pods
act as the node service account, read from the program's node pools; the grants are its bucket
IAM members)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from components.config.schema.teams import SYSTEM_NAMESPACE_PREFIXES, SYSTEM_NAMESPACES
from components.errors import ConfigIssue
from components.pathways.gcs_access import ROLES, Access, BucketGrant, gcs_uses, kubernetes_identity
from components.pathways.preflight import CRD_KEYS, Deployment
from components.pathways.spec import proxy_address
from components.pathways.storage_access import StorageCheck, storage_access
from components.plan.model import PlannedResource
from components.plan.views import is_unknown, value_at
from components.tokens import (
    BUCKET_IAM_MEMBER,
    CLUSTER,
    CONFIG_FILE,
    NAMESPACE,
    NODE_POOL,
    PATHWAYS_JOB,
)
from components.workloads.job import PathwaysJobArgs

PATHWAYS_CONTROLLER_MANIFEST = "google/pathways-job/releases/download/"
"""What the URL of a PathwaysJob controller install holds (ReleaseManifest of install.yaml)."""
_ACCESS_OF_ROLE = {role: access for access, role in ROLES.items()}


def program_job_issues(
    jobs: Sequence[PathwaysJobArgs], resources: Sequence[PlannedResource]
) -> list[ConfigIssue]:
    """Every problem of the program's PathwaysJobs, keyed by job (``PathwaysJob 'ns/name'``)."""
    creates_cluster = any(r.type == CLUSTER for r in resources)
    controller = any(
        r.type == CONFIG_FILE and PATHWAYS_CONTROLLER_MANIFEST in str(r.inputs.get("file", ""))
        for r in resources
    )
    namespaces = {_text(r.inputs, "metadata.name") for r in resources if r.type == NAMESPACE}
    storage = StorageCheck(_grants(resources), _grant_role)
    nodes = _node_identities(resources)
    planned = {
        _text(r.inputs, "metadata.name"): _text(r.inputs, "metadata.namespace")
        for r in resources
        if r.type == PATHWAYS_JOB
    }
    issues = []
    for job in jobs:  # a namespace given as an output: as the plan recorded it
        namespace = job.namespace if isinstance(job.namespace, str) else planned.get(job.name)
        label = f"PathwaysJob '{namespace or '?'}/{job.name}'"
        problems = _namespace_problems(namespace, namespaces, creates_cluster)
        if creates_cluster and not controller:
            problems.append(
                "the program creates its cluster but installs no PathwaysJob controller (a "
                "ReleaseManifest of https://github.com/google/pathways-job/releases/download/"
                "v0.1.4/install.yaml), so nothing would ever start the job"
            )
        if namespace is not None:
            problems += _storage_problems(job, namespace, nodes, storage)
        issues += [ConfigIssue(label, problem) for problem in problems]
    return issues


def _namespace_problems(
    namespace: str | None, created: set[str | None], creates_cluster: bool
) -> list[str]:
    if namespace is None:
        return []
    if namespace in SYSTEM_NAMESPACES or namespace.startswith(SYSTEM_NAMESPACE_PREFIXES):
        return [
            f"namespace {namespace!r} is a system namespace (Kubernetes, GKE or an install owns "
            f"{', '.join(SYSTEM_NAMESPACES)} and gke-*/kube-*/gmp-*); run it in a team "
            "namespace (TeamNamespace)"
        ]
    if creates_cluster and namespace not in created:
        return [
            f"namespace {namespace!r} is not created by the program, which creates its cluster; "
            "add a TeamNamespace for it"
        ]
    return []


def _storage_problems(
    job: PathwaysJobArgs, namespace: str, nodes: frozenset[str | None], storage: StorageCheck
) -> list[str]:
    deployment = Deployment(
        "spec",
        "PathwaysJob",
        job.name,
        namespace,
        None,
        job.spec,
        proxy_address(job.name, namespace),
        keys=CRD_KEYS,
    )
    expanded = deployment.expand()
    identities: set[str | None] = set()
    for pod in (expanded.head, expanded.workers):
        if pod.host_network:
            identities |= nodes
        else:
            identities.add(kubernetes_identity(namespace, pod.service_account or "default"))
    _, problems = storage_access(gcs_uses(job.spec), frozenset(identities), storage)
    return problems


def _grant_role(bucket: str, access: Access) -> str:
    return f"grant it {ROLES[access]} on gs://{bucket} (a bucket IAM member: DataBucketGrants)"


def _grants(resources: Iterable[PlannedResource]) -> tuple[BucketGrant, ...]:
    """The program's bucket IAM members as grants (a member whose value is not known yet, or
    a role that gives no object access, grants nothing here)."""
    grants = []
    for resource in resources:
        if resource.type != BUCKET_IAM_MEMBER:
            continue
        bucket, role = _text(resource.inputs, "bucket"), _text(resource.inputs, "role")
        member = _text(resource.inputs, "member")
        access = _ACCESS_OF_ROLE.get(role or "")
        if bucket and member and access:
            identity = member.removeprefix("serviceAccount:")
            grants.append(BucketGrant(identity, bucket, access))
    return tuple(grants)


def _node_identities(resources: Iterable[PlannedResource]) -> frozenset[str | None]:
    """The service accounts the program's nodes act as (None when one is not known yet)."""
    accounts = [
        _text(r.inputs, "nodeConfig.serviceAccount") for r in resources if r.type == NODE_POOL
    ]
    return frozenset(accounts) if accounts else frozenset({None})


def _text(inputs: object, path: str) -> str | None:
    value = value_at(inputs, path) if isinstance(inputs, dict) else None
    return value if isinstance(value, str) and not is_unknown(value) else None
