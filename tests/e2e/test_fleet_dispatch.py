"""The example fleet dispatches, read from the objects the plans render, not from the config: the
manager's JobSets, queues and MultiKueue objects from the fleet's plan; each worker's
namespaces, LocalQueues and ClusterQueues from the worker's own plan, and the manager's Roles,
ClusterRoles and bindings there from the fleet's plan (through that worker's provider), with
RBAC evaluated here for the manager's service account. The MultiKueue model then follows each
JobSet as Kueue v0.17.1 would; the routes expected are literal."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

import yaml

from components.pathways.multikueue_model import (
    Access,
    AdmissionCheck,
    ClusterQueue,
    Manager,
    QueuedJobSet,
    Route,
    Worker,
    jobset_verdicts,
    queue_verdicts,
)
from components.pathways.multikueue_rights import PolicyRule
from components.plan.engine import plan_file
from components.plan.render import manifest

STACKS = Path(__file__).resolve().parents[2] / "stacks"

SUBJECT = {"kind": "ServiceAccount", "name": "multikueue-manager", "namespace": "kueue-system"}
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"


def objects(plan, provider: str) -> list[dict]:
    """The Kubernetes objects a plan sends through provider ``provider`` (its resource name)."""
    return [
        manifest(r)
        for r in plan.resources
        if r.is_kubernetes_object and (r.provider or "").rsplit("::", 1)[-1] == provider
    ]


def of(kind: str, found: Iterable[dict]) -> list[dict]:
    return [o for o in found if o["kind"] == kind]


def key(o: dict) -> tuple[str, str]:
    return o["metadata"].get("namespace", ""), o["metadata"]["name"]


def selected(spec: dict) -> tuple[str, ...] | None:
    """The namespaces a ClusterQueue's namespaceSelector names (None: all; only the forms the
    fleet writes are read)."""
    expressions = spec.get("namespaceSelector", {}).get("matchExpressions", [])
    names = [e["values"] for e in expressions if e["key"] == "kubernetes.io/metadata.name"]
    return tuple(names[0]) if names else None


def manager_of(plan) -> Manager:
    found = objects(plan, "pathways-fleet-k8s")
    secrets = {key(o) for o in of("Secret", found)}
    return Manager(
        kueue_version="v0.17.1",
        jobsets=tuple(
            QueuedJobSet(
                *key(o), o["metadata"]["labels"].get(QUEUE_LABEL), o["spec"].get("managedBy")
            )
            for o in of("JobSet", found)
        ),
        local_queues={key(o): o["spec"]["clusterQueue"] for o in of("LocalQueue", found)},
        cluster_queues={
            o["metadata"]["name"]: ClusterQueue(
                tuple(
                    (c["name"], tuple(c.get("onFlavors", [])))
                    for c in o["spec"]["admissionChecksStrategy"]["admissionChecks"]
                ),
                selected(o["spec"]),
            )
            for o in of("ClusterQueue", found)
        },
        admission_checks={
            o["metadata"]["name"]: AdmissionCheck(
                o["spec"]["controllerName"],
                o["spec"]["parameters"]["apiGroup"],
                o["spec"]["parameters"]["kind"],
                o["spec"]["parameters"]["name"],
            )
            for o in of("AdmissionCheck", found)
        },
        configs={
            o["metadata"]["name"]: tuple(o["spec"]["clusters"])
            for o in of("MultiKueueConfig", found)
        },
        clusters={
            o["metadata"]["name"]: (
                "kueue-system",
                o["spec"]["clusterSource"]["kubeConfig"]["location"],
            )
            in secrets
            for o in of("MultiKueueCluster", found)
        },
    )


def rules(o: dict) -> tuple[PolicyRule, ...]:
    return tuple(
        PolicyRule(tuple(r["apiGroups"]), tuple(r["resources"]), tuple(r["verbs"]))
        for r in o.get("rules", [])
    )


def access_of(found: list[dict]) -> Access:
    """What SUBJECT may do, from the Roles, ClusterRoles and their bindings."""
    roles = {key(o): rules(o) for o in of("Role", found)}
    cluster_roles = {o["metadata"]["name"]: rules(o) for o in of("ClusterRole", found)}
    cluster: tuple[PolicyRule, ...] = ()
    for binding in of("ClusterRoleBinding", found):
        if SUBJECT in binding["subjects"]:
            cluster += cluster_roles.get(binding["roleRef"]["name"], ())
    namespaced: dict[str, tuple[PolicyRule, ...]] = {}
    for binding in of("RoleBinding", found):
        if SUBJECT not in binding["subjects"]:
            continue
        namespace, ref = binding["metadata"]["namespace"], binding["roleRef"]
        granted = (
            roles.get((namespace, ref["name"]), ())
            if ref["kind"] == "Role"
            else cluster_roles.get(ref["name"], ())
        )
        namespaced[namespace] = namespaced.get(namespace, ()) + granted
    return Access(cluster, namespaced)


def worker_of(own, fleet_plan, name: str) -> Worker:
    """Worker ``name`` from its own plan ``own`` and what the fleet's plan puts on it."""
    found = objects(own, f"{own.outputs['shared_cluster']['cluster_name']}-k8s")
    found += objects(fleet_plan, f"pathways-fleet-worker-{name}-k8s")
    versions = own.outputs["shared_cluster"]["versions"]
    return Worker(
        kueue_version=versions.get("kueue"),
        jobset_crd="jobset" in versions,
        namespaces=frozenset(o["metadata"]["name"] for o in of("Namespace", found)),
        local_queues={key(o): o["spec"]["clusterQueue"] for o in of("LocalQueue", found)},
        cluster_queues=frozenset(o["metadata"]["name"] for o in of("ClusterQueue", found)),
        access=access_of(found),
    )


def test_every_jobset_of_the_example_fleet_is_dispatched_to_its_teams_worker(example_plan):
    fleet = example_plan("fleet")
    manager = manager_of(fleet)
    workers = {name: worker_of(example_plan(name), fleet, name) for name in ("research-v5p", "dev")}
    verdicts = jobset_verdicts(manager, workers)
    assert {k: (v.route, [f.missing for f in v.findings]) for k, v in verdicts.items()} == {
        "research/v5p-train": (
            Route(
                "research",
                "multislice-queue",
                "mk-research-v5p",
                "mk-research-v5p",
                "mk-research-v5p",
                ("research-v5p",),
            ),
            [],
        ),
        "pathways/v5e-notebook": (
            Route("pathways", "multislice-queue", "mk-dev", "mk-dev", "mk-dev", ("dev",)),
            [],
        ),
    }
    assert all(v.dispatches for v in queue_verdicts(manager, workers).values())


def test_the_rendered_grants_are_read_as_rbac_reads_them(example_plan):
    # The reader above can fail: without the fleet's objects on dev, the manager has no rights
    # in dev's namespace pathways, and the model says so.
    fleet = example_plan("fleet")
    dev = worker_of(example_plan("dev"), fleet, "dev")
    assert set(dev.access.namespaced) == {"pathways"}
    bare = Worker(**{**dev.__dict__, "access": Access()})
    verdicts = jobset_verdicts(manager_of(fleet), {"research-v5p": bare, "dev": bare})
    assert [f.missing for f in verdicts["pathways/v5e-notebook"].findings] == [
        "the manager's rights cluster-wide (list, watch workloads; list, watch jobsets)",
        "the manager's rights in namespace pathways (get, create, update, delete workloads; "
        "patch workloads/status; get, create, delete jobsets)",
    ]


def test_a_workloads_own_worker_set_has_its_queue_on_the_manager_and_on_each_worker(tmp_path):
    # dev-b: dev in another project; v5e-notebook may go to dev or dev-b, its team only to dev.
    for name in ("research-v5p", "dev"):
        shutil.copy(STACKS / f"Pulumi.{name}.yaml", tmp_path)
    other = yaml.safe_load((STACKS / "Pulumi.dev.yaml").read_text())
    other["config"]["tpu-pathways:gcp"] |= {"project": "tpu-pathways-dev-b"}
    other["config"]["tpu-pathways:cluster"]["name"] = "pathways-dev-b"
    (tmp_path / "Pulumi.dev-b.yaml").write_text(yaml.safe_dump(other))
    fleet = yaml.safe_load((STACKS / "Pulumi.fleet.yaml").read_text())
    fleet["config"]["tpu-pathways:fleet"]["workers"] = ["research-v5p", "dev", "dev-b"]
    notebook = fleet["config"]["tpu-pathways:workloads"][1]
    notebook |= {"workers": ["dev", "dev-b"], "pathwaysDir": "gs://fleet-shared/v5e-notebook"}
    (tmp_path / "Pulumi.fleet.yaml").write_text(yaml.safe_dump(fleet))
    plan = plan_file("fleet", tmp_path)
    names = ("research-v5p", "dev", "dev-b")
    workers = {name: worker_of(plan_file(name, tmp_path), plan, name) for name in names}
    assert workers["dev-b"].local_queues == {
        ("pathways", "multislice-queue"): "cluster-queue",
        ("pathways", "mk-dev-dev-b"): "cluster-queue",
    }
    verdicts = jobset_verdicts(manager_of(plan), workers)
    notebook = verdicts["pathways/v5e-notebook"]
    assert (notebook.route, notebook.findings) == (
        Route(
            "pathways",
            "mk-dev-dev-b",
            "mk-dev-dev-b",
            "mk-dev-dev-b",
            "mk-dev-dev-b",
            ("dev", "dev-b"),
        ),
        (),
    )
    assert all(v.dispatches for v in queue_verdicts(manager_of(plan), workers).values())
