"""The team namespaces' admission policies, evaluated by a real CEL implementation as the API
server evaluates them (``tests/kube_cel.py``), against Kubernetes' own Pod Security baseline
fixtures (``tests/data/psa_baseline.py``) and the pods the project's plans make, in every team
namespace of every example stack.

A namespace that enforces Pod Security baseline itself (no host-network pods) is checked too:
the policies are bound to every team namespace, and must hold wherever Pod Security is set to
``privileged`` for Pathways."""

from __future__ import annotations

import pytest

from components.addons.team_admission import job_policy, jobset_policy, pod_policy
from components.pathways.spec import PATHWAYS_PORTS
from tests.admission import EXAMPLE_STACKS, Cluster, cluster_of
from tests.cluster_objects import (
    DEPLOYER,
    JOB_CONTROLLER,
    JOBSET_CONTROLLER,
    MEMBER,
    PATHWAYS_CONTROLLER,
    as_kueue_created,
    inputs,
    jobset_jobs,
    pathwaysjob_jobset,
)
from tests.data import psa_baseline
from tests.kube_cel import Request, api_defaults, lint

# A team member acts as themselves, or as any service account of their namespace (`edit` may
# impersonate them).
MEMBERS = (MEMBER, "system:serviceaccount:{ns}:pathways")


@pytest.fixture(scope="module")
def clusters(example_plan) -> dict[str, Cluster]:
    return {stack: cluster_of(example_plan, stack) for stack in EXAMPLE_STACKS}


def _team_namespaces(clusters):
    return [(stack, ns) for stack, c in clusters.items() for ns in c.namespaces if c.policies]


def test_every_example_stack_has_team_namespaces_under_the_policies(clusters):
    """The policies bind every team namespace of every stack that owns its cluster or joins an
    owner; a fleet's manager runs no team pod, and its namespaces enforce baseline."""
    for stack, cluster in clusters.items():
        assert cluster.namespaces, stack
        if not cluster.policies:
            for labels in cluster.namespaces.values():
                assert labels["pod-security.kubernetes.io/enforce"] == "baseline", stack
    assert len(_team_namespaces(clusters)) >= 5


def pod_request(pod, namespace, username, **more) -> Request:
    return Request(api_defaults(pod), namespace, username.format(ns=namespace), **more)


@pytest.mark.parametrize("fixture", sorted(psa_baseline.FAIL))
def test_every_baseline_fail_fixture_is_denied_in_every_team_namespace(clusters, fixture):
    pod = psa_baseline.pod(fixture, psa_baseline.FAIL[fixture])
    for stack, namespace in _team_namespaces(clusters):
        for member in MEMBERS:
            found = clusters[stack].denials(pod_request(pod, namespace, member))
            assert found, f"{fixture} admitted in {stack}/{namespace} for {member}"


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
        jobsets = [(j, DEPLOYER) for j in inputs(plan, "JobSet")]
        jobsets += [
            (pathwaysjob_jobset(j), PATHWAYS_CONTROLLER) for j in inputs(plan, "PathwaysJob")
        ]
        for jobset, creator in jobsets:
            namespace = jobset["metadata"]["namespace"]
            if namespace not in cluster.namespaces:
                continue  # shared services run in `default`, no team namespace
            created = as_kueue_created(jobset)
            request = Request(
                created,
                namespace,
                creator,
                resource="jobsets",
                group="jobset.x-k8s.io",
                version="v1alpha2",
            )
            assert cluster.denials(request) == [], (stack, jobset["metadata"]["name"])
            for job, pod in jobset_jobs(jobset, cluster.plans):
                job_request = Request(
                    job, namespace, JOBSET_CONTROLLER, resource="jobs", group="batch"
                )
                assert cluster.denials(job_request) == [], (stack, job["metadata"]["name"])
                found = cluster.denials(Request(pod, namespace, JOB_CONTROLLER))
                assert found == [], (stack, pod["metadata"]["name"], found)
                checked += 1
    assert checked >= 10


def test_every_expression_is_one_the_api_server_reads():
    for policy in (
        pod_policy("p", PATHWAYS_PORTS, True),
        job_policy("j", True),
        jobset_policy("s", True),
    ):
        expressions = [e for _, e in policy.variables] + [c.expression for c in policy.validations]
        for expression in expressions:
            assert lint(expression) == [], expression


def test_the_lint_catches_what_the_python_libraries_accept():
    assert lint("object.metadata.namespace == 'a'")
    assert lint("object.?spec.orValue(1)")
    assert lint("object.spec.containers.sortBy(c, c.name)")
    assert lint("'object.metadata.namespace' == request.namespace") == []
