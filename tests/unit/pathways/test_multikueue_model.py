"""The MultiKueue model against Kueue's rules (kubernetes-sigs/kueue v0.17.1, read in
research/28-multikueue.md): the objects are written out here as the fleet renders them, and the
verdicts expected are literal, worked out from those rules by hand, not by the model.

The fleet before nomination per team: one MultiKueueConfig `fleet` listing both workers, one
ClusterQueue `cluster-queue` with the check `multikueue`; research-v5p has namespace research
only and the manager's Role there, dev has pathways only. Kueue GETs each Workload on every
cluster of the config (readGroup) and gets 403 where the manager has no Role: neither JobSet is
ever dispatched. After: one config, check and ClusterQueue per worker set, each team on the set
of the workers that have its namespace: both dispatch.
"""

from __future__ import annotations

import pytest

from components.pathways import multikueue_rights
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
from components.pathways.multikueue_rights import PolicyRule, Right, Scope

MK = "kueue.x-k8s.io/multikueue"
KUEUE, JOBSET = "kueue.x-k8s.io", "jobset.x-k8s.io"
# The main branch's Role (before this change): more than Kueue uses, enough in its namespaces.
OLD_ROLE = (
    PolicyRule((JOBSET,), ("jobsets",), ("create", "delete", "get", "list", "watch")),
    PolicyRule((JOBSET,), ("jobsets/status",), ("get",)),
    PolicyRule((KUEUE,), ("workloads",), ("create", "delete", "get", "list", "watch", "update")),
    PolicyRule((KUEUE,), ("workloads/status",), ("get", "patch", "update")),
    PolicyRule(("",), ("pods",), ("get", "list", "watch")),
    PolicyRule(("",), ("pods/log",), ("get",)),
)
ROLE = (
    PolicyRule((KUEUE,), ("workloads",), ("get", "create", "update", "delete")),
    PolicyRule((KUEUE,), ("workloads/status",), ("patch",)),
    PolicyRule((JOBSET,), ("jobsets",), ("get", "create", "delete")),
)
WATCH = (
    PolicyRule((KUEUE,), ("workloads",), ("list", "watch")),
    PolicyRule((JOBSET,), ("jobsets",), ("list", "watch")),
)
JOBSETS = (
    QueuedJobSet("research", "v5p-train", "multislice-queue", MK),
    QueuedJobSet("pathways", "v5e-notebook", "multislice-queue", MK),
)


def check(config: str) -> AdmissionCheck:
    return AdmissionCheck(MK, KUEUE, "MultiKueueConfig", config)


def worker(team: str, role=ROLE, version="v0.17.1", **changes) -> Worker:
    values = dict(
        kueue_version=version,
        jobset_crd=True,
        namespaces=frozenset({team, "default", "kueue-system"}),
        local_queues={(team, "multislice-queue"): "cluster-queue"},
        cluster_queues=frozenset({"cluster-queue"}),
        access=Access(cluster=WATCH, namespaced={team: role}),
    )
    return Worker(**{**values, **changes})


OLD_MANAGER = Manager(
    kueue_version="v0.17.1",
    jobsets=JOBSETS,
    local_queues={
        ("research", "multislice-queue"): "cluster-queue",
        ("pathways", "multislice-queue"): "cluster-queue",
    },
    cluster_queues={"cluster-queue": ClusterQueue((("multikueue", ()),))},
    admission_checks={"multikueue": check("fleet")},
    configs={"fleet": ("research-v5p", "dev")},
    clusters={"research-v5p": True, "dev": True},
)
OLD_WORKERS = {
    "research-v5p": worker("research", OLD_ROLE),
    "dev": worker("pathways", OLD_ROLE),
}
NEW_MANAGER = Manager(
    kueue_version="v0.17.1",
    jobsets=JOBSETS,
    local_queues={
        ("research", "multislice-queue"): "mk-research-v5p",
        ("pathways", "multislice-queue"): "mk-dev",
    },
    cluster_queues={
        "mk-research-v5p": ClusterQueue((("mk-research-v5p", ()),), ("research",)),
        "mk-dev": ClusterQueue((("mk-dev", ()),), ("pathways",)),
    },
    admission_checks={"mk-research-v5p": check("mk-research-v5p"), "mk-dev": check("mk-dev")},
    configs={"mk-research-v5p": ("research-v5p",), "mk-dev": ("dev",)},
    clusters={"research-v5p": True, "dev": True},
)
NEW_WORKERS = {"research-v5p": worker("research"), "dev": worker("pathways")}

ALL_RIGHTS = (
    "get, create, update, delete workloads; patch workloads/status; get, create, delete jobsets"
)
STOPS_ALL = (
    "Kueue reads each Workload on every worker of the MultiKueueConfig and stops at the first "
    "refusal (readGroup), so nothing queued there is dispatched, not even to the other workers"
)
NEVER_ADMITTED = (
    "the copy is created there and that worker's Kueue never admits it (cloneForCreate copies "
    "spec.queueName)"
)


def findings(verdict) -> list[tuple]:
    return [(f.worker, f.missing) for f in verdict.findings]


def test_the_fleet_before_nomination_dispatches_nothing():
    verdicts = jobset_verdicts(OLD_MANAGER, OLD_WORKERS)
    assert {key: findings(v) for key, v in verdicts.items()} == {
        "research/v5p-train": [
            ("dev", "namespace research"),
            ("dev", f"the manager's rights in namespace research ({ALL_RIGHTS})"),
            ("dev", "LocalQueue research/multislice-queue"),
        ],
        "pathways/v5e-notebook": [
            ("research-v5p", "namespace pathways"),
            ("research-v5p", f"the manager's rights in namespace pathways ({ALL_RIGHTS})"),
            ("research-v5p", "LocalQueue pathways/multislice-queue"),
        ],
    }
    # a 403 on dev stops research's dispatch to research-v5p too
    assert verdicts["research/v5p-train"].findings[0].effect == STOPS_ALL
    assert verdicts["research/v5p-train"].findings[2].effect == NEVER_ADMITTED
    assert verdicts["research/v5p-train"].route == Route(
        "research",
        "multislice-queue",
        "cluster-queue",
        "multikueue",
        "fleet",
        ("research-v5p", "dev"),
    )


def test_the_fleet_with_a_worker_set_per_team_dispatches_every_jobset():
    verdicts = jobset_verdicts(NEW_MANAGER, NEW_WORKERS)
    assert {key: (v.route, v.dispatches) for key, v in verdicts.items()} == {
        "research/v5p-train": (
            Route(
                "research",
                "multislice-queue",
                "mk-research-v5p",
                "mk-research-v5p",
                "mk-research-v5p",
                ("research-v5p",),
            ),
            True,
        ),
        "pathways/v5e-notebook": (
            Route("pathways", "multislice-queue", "mk-dev", "mk-dev", "mk-dev", ("dev",)),
            True,
        ),
    }
    assert all(v.dispatches for v in queue_verdicts(NEW_MANAGER, NEW_WORKERS).values())


def test_a_cluster_wide_get_turns_the_403_into_a_create_that_fails_on_that_worker_only():
    # with get everywhere, readGroup reads NotFound on dev; dev's create still fails (no
    # namespace) and is retried, while research-v5p gets its copy
    wide = Access(cluster=(*WATCH, PolicyRule((KUEUE,), ("workloads",), ("get",))))
    workers = {**OLD_WORKERS, "dev": worker("pathways", OLD_ROLE, access=wide)}
    (verdict,) = [v for k, v in jobset_verdicts(OLD_MANAGER, workers).items() if "v5p" in k]
    assert [(f.missing, f.effect) for f in verdict.findings[:2]] == [
        (
            "namespace research",
            "creating the copy there fails and is retried forever (nominateAndSynchronizeWorkers)",
        ),
        (
            "the manager's rights in namespace research (create, update, delete workloads; patch "
            "workloads/status; get, create, delete jobsets)",
            "creating the copy there fails and is retried forever (nominateAndSynchronizeWorkers)",
        ),
    ]


def one(manager=NEW_MANAGER, workers=None, key="research/v5p-train") -> list[tuple]:
    return findings(jobset_verdicts(manager, workers or NEW_WORKERS)[key])


def replace_manager(**changes) -> Manager:
    return Manager(**{**NEW_MANAGER.__dict__, **changes})


def test_a_jobset_not_managed_by_multikueue_or_without_a_queue_label_is_refused():
    manager = replace_manager(
        jobsets=(
            QueuedJobSet("research", "v5p-train", "multislice-queue", None),
            QueuedJobSet("pathways", "v5e-notebook", None, MK),
        )
    )
    assert one(manager) == [(None, "spec.managedBy: kueue.x-k8s.io/multikueue")]
    assert one(manager, key="pathways/v5e-notebook") == [
        (None, "the label kueue.x-k8s.io/queue-name")
    ]


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"local_queues": {}}, (None, "LocalQueue research/multislice-queue")),
        ({"cluster_queues": {}}, (None, "ClusterQueue mk-research-v5p")),
        (
            {"cluster_queues": {"mk-research-v5p": ClusterQueue((("mk-research-v5p", ()),), ())}},
            (None, "ClusterQueue mk-research-v5p selecting namespace research"),
        ),
        (
            {"cluster_queues": {"mk-research-v5p": ClusterQueue(())}},
            (None, "a kueue.x-k8s.io/multikueue AdmissionCheck on ClusterQueue mk-research-v5p"),
        ),
        (
            {"cluster_queues": {"mk-research-v5p": ClusterQueue((("mk-research-v5p", ("f",)),))}},
            (None, "MultiKueue check mk-research-v5p for all flavors of mk-research-v5p"),
        ),
        (
            {
                "cluster_queues": {
                    "mk-research-v5p": ClusterQueue((("mk-research-v5p", ()), ("mk-dev", ())))
                }
            },
            (None, "one MultiKueue AdmissionCheck on mk-research-v5p, not more"),
        ),
        (
            {"admission_checks": {"mk-dev": check("mk-dev")}},
            (None, "AdmissionCheck mk-research-v5p"),
        ),
        (
            {"configs": {"mk-dev": ("dev",)}},
            (
                None,
                "MultiKueueConfig mk-research-v5p (AdmissionCheck mk-research-v5p's parameters)",
            ),
        ),
        (
            {"clusters": {"dev": True, "research-v5p": False}},
            ("research-v5p", "MultiKueueCluster research-v5p with its kubeconfig Secret"),
        ),
        (
            {"kueue_version": "v0.18.2"},
            (None, "a Kueue with a row in the rights table (it runs v0.18.2)"),
        ),
    ],
)
def test_each_missing_piece_on_the_manager_is_named(changes, expected):
    assert expected in one(replace_manager(**changes))


def test_more_than_twenty_clusters_in_a_config_are_refused():
    many = tuple(f"w{i}" for i in range(21))
    manager = replace_manager(
        configs={"mk-research-v5p": many, "mk-dev": ("dev",)}, clusters=dict.fromkeys(many, True)
    )
    workers = {name: worker("research") for name in many}
    assert one(manager, workers) == [(None, "1 to 20 clusters in mk-research-v5p")]


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"access": Access(namespaced={"research": ROLE})},
            "the manager's rights cluster-wide (list, watch workloads; list, watch jobsets)",
        ),
        ({"jobset_crd": False}, "the JobSet CRD"),
        ({"local_queues": {}}, "LocalQueue research/multislice-queue"),
        (
            {"cluster_queues": frozenset()},
            "ClusterQueue cluster-queue (of LocalQueue research/multislice-queue)",
        ),
        ({"kueue_version": None}, "Kueue"),
        (
            {"access": Access(cluster=WATCH, namespaced={"research": ROLE[:1]})},
            "the manager's rights in namespace research (patch workloads/status; get, create, "
            "delete jobsets)",
        ),
    ],
)
def test_each_missing_piece_on_a_worker_is_named(changes, expected):
    workers = {**NEW_WORKERS, "research-v5p": worker("research", **changes)}
    assert one(workers=workers) == [("research-v5p", expected)]


def test_a_v0_19_manager_needs_workers_at_v0_18_or_later():
    manager = replace_manager(kueue_version="v0.19.2")
    assert one(manager) == [
        ("research-v5p", "Kueue v0.18 or later (it runs v0.17.1, the manager v0.19.2)")
    ]
    newer = {**NEW_WORKERS, "research-v5p": worker("research", version="v0.19.2")}
    assert one(manager, newer) == []
    # a v0.17 manager with a v0.19 worker links by label, which v0.19 still reads
    assert one(workers=newer) == []


def test_a_kueue_bump_whose_client_needs_more_rights_fails_until_the_grant_has_them(monkeypatch):
    table = dict(multikueue_rights.manager_rights())
    extra = multikueue_rights.Need(
        Right(Scope.CLUSTER, KUEUE, "clusterqueues", "list"), "a future Kueue"
    )
    table[(0, 20)] = (*table[(0, 19)], extra)
    monkeypatch.setattr(multikueue_rights, "manager_rights", lambda: table)
    newer = {
        "research-v5p": worker("research", version="v0.20.0"),
        "dev": worker("pathways", version="v0.20.0"),
    }
    manager = replace_manager(kueue_version="v0.20.0")
    assert one(manager, newer) == [
        ("research-v5p", "the manager's rights cluster-wide (list clusterqueues)")
    ]


def test_the_rights_table_of_v0_17_is_what_kueue_calls():
    # research/28-multikueue.md section 1, by hand
    needs = multikueue_rights.manager_needs("v0.17.1")
    assert needs is not None
    assert sorted((n.right.scope.value, n.right.resource, n.right.verb) for n in needs) == sorted(
        [
            ("namespace", "workloads", "get"),
            ("namespace", "workloads", "create"),
            ("namespace", "workloads", "update"),
            ("namespace", "workloads", "delete"),
            ("namespace", "workloads/status", "patch"),
            ("namespace", "jobsets", "get"),
            ("namespace", "jobsets", "create"),
            ("namespace", "jobsets", "delete"),
            ("cluster", "workloads", "list"),
            ("cluster", "workloads", "watch"),
            ("cluster", "jobsets", "list"),
            ("cluster", "jobsets", "watch"),
        ]
    )
    assert all(n.source.startswith("kubernetes-sigs/kueue v0.17.1 ") for n in needs)
    assert multikueue_rights.known_minors() == "v0.17, v0.19"
    assert multikueue_rights.manager_needs("v0.18.0") is None
