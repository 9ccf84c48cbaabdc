"""The team namespaces' admission policies, evaluated by a real CEL implementation as the API
server evaluates them (``tests/kube_cel.py``), against Kubernetes' own Pod Security baseline
fixtures (``tests/data/psa_baseline.py``) and the pods the project's plans make, in every team
namespace of every example stack.

A namespace that enforces Pod Security baseline itself (no host-network pods) is checked too:
the policies are bound to every team namespace, and must hold wherever Pod Security is set to
``privileged`` for Pathways."""

from __future__ import annotations

import copy

import pytest
import yaml

from components.addons.namespace_admission import network_policy_policy, service_policy
from components.addons.team_admission import job_policy, jobset_policy, pod_policy
from components.pathways.spec import PATHWAYS_PORTS
from components.plan.engine import plan_file
from components.plan.model import Plan
from tests.admission import EXAMPLE_STACKS, Cluster, cluster_of, cluster_policies, rendered
from tests.cluster_objects import (
    JOB_CONTROLLER,
    JOBSET_CONTROLLER,
    MEMBER,
    as_kueue_created,
    team_namespaces,
)
from tests.data import psa_baseline
from tests.helpers import STACKS_DIR
from tests.kube_cel import Request, api_defaults, evaluate, lint

# A team member acts as themselves, or as any service account of their namespace (`edit` may
# impersonate them).
MEMBERS = (MEMBER, "system:serviceaccount:{ns}:pathways")


@pytest.fixture(scope="module")
def clusters(example_plan) -> dict[str, Cluster]:
    return {stack: cluster_of(example_plan, stack) for stack in EXAMPLE_STACKS}


def _team_namespaces(clusters):
    """Each team namespace whose pods meet the team policies (none of a fleet's manager: no pod
    is created there)."""
    return [
        (stack, ns)
        for stack, c in clusters.items()
        for ns in c.namespaces
        if c.policies and c.runs_team_pods
    ]


def test_every_example_stack_has_team_namespaces_under_the_policies(clusters):
    """The policies bind every team namespace of every stack that owns its cluster or joins an
    owner; a fleet's manager runs no team pod (its own policies refuse every one), and its
    namespaces enforce baseline."""
    for stack, cluster in clusters.items():
        assert cluster.namespaces, stack
        if not cluster.policies:
            for labels in cluster.namespaces.values():
                assert labels["pod-security.kubernetes.io/enforce"] == "baseline", stack
    assert len(_team_namespaces(clusters)) >= 5


def pod_request(pod, namespace, username, **more) -> Request:
    return Request(api_defaults(pod), namespace, username.format(ns=namespace), **more)


# The checks of the team namespaces' pod policy (tests/admission.py CHECKS) that refuse each
# family of Pod Security Admission's baseline fixtures (named after PSA's own checks).
PSA_CHECKS = {
    "apparmorprofile": {"apparmor"},
    "capabilities_baseline": {"capabilities"},
    "hostnamespaces": {"host-network", "host-pid", "host-ipc"},
    "hostpathvolumes": {"host-path"},
    "hostports": {"host-port"},
    "hostprobesandhostlifecycle": {"probe-host"},
    "privileged": {"privileged"},
    "procmount": {"proc-mount"},
    "seccompprofile_baseline": {"seccomp"},
    "selinuxoptions": {"selinux"},
    "sysctls": {"sysctls"},
    "windowshostprocess": {"windows-host-process"},
}


@pytest.mark.parametrize("fixture", sorted(psa_baseline.FAIL))
def test_every_baseline_fail_fixture_is_denied_in_every_team_namespace(clusters, fixture):
    """Denied by the baseline check of its own family (not only by an unrelated one: a
    Windows hostProcess fixture is on the host network too, which is refused as well)."""
    pod = psa_baseline.pod(fixture, psa_baseline.FAIL[fixture])
    family = PSA_CHECKS[fixture.rstrip("0123456789")]
    for stack, namespace in _team_namespaces(clusters):
        for member in MEMBERS:
            found = set(clusters[stack].denied_by(pod_request(pod, namespace, member)))
            where = f"{fixture} in {stack}/{namespace} for {member}: {sorted(found)}"
            assert found & family, where


@pytest.mark.parametrize("fixture", sorted(psa_baseline.PASS))
def test_every_baseline_pass_fixture_is_admitted_in_every_team_namespace(clusters, fixture):
    pod = psa_baseline.pod(fixture, psa_baseline.PASS[fixture])
    for stack, namespace in _team_namespaces(clusters):
        for member in MEMBERS:
            found = clusters[stack].denials(pod_request(pod, namespace, member))
            assert found == [], f"{fixture} denied in {stack}/{namespace}: {found}"


def test_the_1_37_sysctls_are_refused_here(clusters):
    """Baseline v1.37 admits two more sysctls; the policies follow v1.36 (stricter)."""
    pod = psa_baseline.pod("sysctls1", psa_baseline.SYSCTLS_1_37_PASS)
    for stack, namespace in _team_namespaces(clusters):
        assert clusters[stack].denials(pod_request(pod, namespace, MEMBER)), (stack, namespace)


def test_the_projects_pathways_pods_are_admitted(clusters, example_plan):
    """Both backends: every Job and pod of every JobSet and PathwaysJob a plan renders, created
    by their controllers, after Kueue admitted them on the namespace's flavors."""
    checked = 0
    for stack in EXAMPLE_STACKS:
        plan, cluster = example_plan(stack), clusters[stack]
        if not cluster.policies:
            continue
        for made in rendered(plan, cluster):
            namespace = made.jobset["metadata"]["namespace"]
            request = Request(
                as_kueue_created(made.jobset),
                namespace,
                made.creator,
                resource="jobsets",
                group="jobset.x-k8s.io",
                version="v1alpha2",
            )
            assert cluster.denials(request) == [], (stack, made.jobset["metadata"]["name"])
            job_request = Request(
                made.job, namespace, JOBSET_CONTROLLER, resource="jobs", group="batch"
            )
            assert cluster.denials(job_request) == [], (stack, made.job["metadata"]["name"])
            found = cluster.denials(Request(made.pod, namespace, JOB_CONTROLLER))
            assert found == [], (stack, made.pod["metadata"]["name"], found)
            checked += 1
    assert checked >= 10


# --- file systems: no inline volume reaches another team's instance ---------------------------

FUSE = "gcsfuse.csi.storage.gke.io"
# Another team's instances, by the address a member reads off the VPC: a Filestore share (NFS,
# and the Filestore CSI driver's attributes) and a Managed Lustre instance (its driver's).
THEIRS = {
    "nfs": {"name": "theirs", "nfs": {"server": "10.20.0.2", "path": "/home"}},
    "filestore-csi": {
        "name": "theirs",
        "csi": {
            "driver": "filestore.csi.storage.gke.io",
            "volumeAttributes": {"ip": "10.20.0.2", "volume": "home"},
        },
    },
    "lustre-csi": {
        "name": "theirs",
        "csi": {
            "driver": "lustre.csi.storage.gke.io",
            "volumeAttributes": {"ip": "10.20.0.3", "filesystem": "lfs"},
        },
    },
}
FILE_SYSTEM_DENIAL = (
    "inline nfs volumes, and inline csi volumes of a driver other than Cloud Storage FUSE's "
    "(gcsfuse.csi.storage.gke.io; e.g. lustre.csi.storage.gke.io, filestore.csi.storage.gke.io), "
    "are not allowed: a Lustre or Filestore share is mounted through the namespace's "
    "PersistentVolumeClaim"
)


def mounting(pod: dict, volume: dict) -> dict:
    """``pod`` with ``volume`` added and mounted into its first container."""
    pod = copy.deepcopy(pod)
    pod["spec"]["volumes"] = [*pod["spec"].get("volumes", []), volume]
    container = pod["spec"]["containers"][0]
    mount = {"name": volume["name"], "mountPath": "/mnt/theirs"}
    container["volumeMounts"] = [*container.get("volumeMounts", []), mount]
    return pod


@pytest.mark.parametrize("kind", sorted(THEIRS))
def test_a_members_inline_file_system_volume_is_denied_in_every_team_namespace(clusters, kind):
    """A pod baseline admits but for its volume: denied for that volume alone."""
    pod = mounting(psa_baseline.pod("mount", psa_baseline.PASS["base"]), THEIRS[kind])
    for stack, namespace in _team_namespaces(clusters):
        for member in MEMBERS:
            found = clusters[stack].denials(pod_request(pod, namespace, member))
            assert found == [FILE_SYSTEM_DENIAL], (stack, namespace, member, found)


@pytest.mark.parametrize("kind", sorted(THEIRS))
def test_a_pathways_pod_with_an_inline_file_system_volume_is_denied(clusters, example_plan, kind):
    """The trusted chain does not carry it: the Job controller's pod of a PathwaysJob whose
    template a member wrote (the head's pod is the user's own template)."""
    checked = 0
    for stack in ("dev", "research-v5p", "research-jobset"):
        cluster = clusters[stack]
        for made in rendered(example_plan(stack), cluster):
            pod = mounting(made.pod, THEIRS[kind])
            namespace = made.jobset["metadata"]["namespace"]
            found = cluster.denials(Request(pod, namespace, JOB_CONTROLLER))
            assert found == [FILE_SYSTEM_DENIAL], (stack, pod["metadata"]["name"], found)
            checked += 1
    assert checked >= 4


@pytest.fixture(scope="module")
def jobset_backend(tmp_path_factory) -> dict[str, Plan]:
    """dev and research-v5p planned on the JobSet backend (stacks/ copied), dev's training job
    off the host network (its FUSE volume then without hostNetworkPodKSA)."""
    directory = tmp_path_factory.mktemp("stacks")
    for path in STACKS_DIR.glob("Pulumi.*.yaml"):
        document = yaml.safe_load(path.read_text())
        config = document["config"]
        if path.name in ("Pulumi.dev.yaml", "Pulumi.research-v5p.yaml"):
            config["tpu-pathways:workloadBackend"] = "jobset"
        if path.name == "Pulumi.dev.yaml":
            (train,) = [w for w in config["tpu-pathways:workloads"] if w["name"] == "hello-train"]
            train["hostNetwork"] = False
        (directory / path.name).write_text(yaml.safe_dump(document))
    return {stack: plan_file(stack, directory) for stack in ("dev", "research-v5p")}


def _mounts(pod: dict) -> set[str]:
    """The file system volumes of ``pod``: fuse (inline, Cloud Storage FUSE's driver), claim."""
    found = set()
    for volume in pod["spec"].get("volumes", []):
        if "persistentVolumeClaim" in volume:
            found.add("claim")
        if "csi" in volume:
            assert volume["csi"]["driver"] == FUSE, volume
            found.add("fuse")
    return found


def test_the_projects_fuse_and_claim_mounts_are_admitted_on_both_backends(
    clusters, example_plan, jobset_backend
):
    """What the storage code renders: Cloud Storage FUSE inline (with hostNetworkPodKSA on the
    host network, without off it) and Lustre and Filestore through the namespace's claim."""
    plans = [(stack, example_plan(stack), clusters[stack]) for stack in EXAMPLE_STACKS]
    plans += [
        (stack, plan, Cluster(cluster_policies(plan), team_namespaces(plan), (plan,)))
        for stack, plan in jobset_backend.items()
    ]
    seen = set()
    for stack, plan, cluster in plans:
        for made in rendered(plan, cluster) if cluster.policies else []:
            mounts = _mounts(made.pod)
            if not mounts:
                continue
            namespace = made.jobset["metadata"]["namespace"]
            found = cluster.denials(Request(made.pod, namespace, JOB_CONTROLLER))
            assert found == [], (stack, made.pod["metadata"]["name"], found)
            host = "host" if made.pod["spec"].get("hostNetwork") else "pod"
            seen |= {(made.backend, mount, host) for mount in mounts}
    assert seen >= {
        ("pathwaysjob", "fuse", "host"),
        ("pathwaysjob", "claim", "host"),
        ("jobset", "fuse", "host"),
        ("jobset", "fuse", "pod"),
        ("jobset", "claim", "pod"),
    }


def test_every_expression_is_one_the_api_server_reads():
    for policy in (
        pod_policy("p", PATHWAYS_PORTS, True),
        job_policy("j", True),
        jobset_policy("s", True),
        network_policy_policy("n"),
        service_policy("s"),
    ):
        expressions = [e for _, e in policy.variables] + [c.expression for c in policy.validations]
        for expression in expressions:
            assert lint(expression) == [], expression


def test_the_lint_catches_what_the_python_libraries_accept():
    assert lint("object.metadata.namespace == 'a'")
    assert lint("object.?spec.orValue(1)")
    assert lint("object.spec.containers.sortBy(c, c.name)")
    assert lint("'object.metadata.namespace' == request.namespace") == []


def test_the_authorizer_answers_from_the_requesters_grants():
    """``kube_cel``'s ``authorizer``: allowed when a grant holds the group, resource and verb
    (``*`` for any), as RBAC answers the API server's authorizer."""
    ask = "authorizer.group('').resource('namespaces').name('nlp').check('update').allowed()"

    def allowed(*grants: tuple[str, str, str]) -> bool:
        request = Request({}, "nlp", MEMBER, grants=frozenset(grants))
        return evaluate(ask, request.activation())

    assert allowed(("*", "*", "*"))
    assert allowed(("", "namespaces", "update"))
    assert allowed(("", "namespaces", "*"))
    assert not allowed()
    assert not allowed(("", "namespaces", "get"), ("", "pods", "update"))
    assert not allowed(("apps", "namespaces", "update"))
