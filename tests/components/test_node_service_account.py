"""NodeServiceAccount from its Args: a dedicated account with the node roles, and no others."""

from __future__ import annotations

import pytest

from components.gke.node_identity import NodeServiceAccount, NodeServiceAccountArgs
from tests.components.harness import register

EMAIL = "pathways-dev-nodes@acme-ml.iam.gserviceaccount.com"


@pytest.fixture(scope="module")
def identity():
    def build():
        account = NodeServiceAccount("nodes", NodeServiceAccountArgs("acme-ml", "pathways-dev"))
        return {"email": account.email}

    return register(build)


def test_the_account(identity):
    account = identity.one("gcp:serviceaccount/account:Account", "nodes")
    assert account.inputs["accountId"] == "pathways-dev-nodes"
    assert account.inputs["displayName"] == "GKE nodes of pathways-dev"
    assert identity.outputs == {"email": EMAIL}


def test_its_roles(identity):
    members = identity.of_type("gcp:projects/iAMMember:IAMMember")
    assert sorted(m.inputs["role"] for m in members) == [
        "roles/artifactregistry.reader",
        "roles/autoscaling.metricsWriter",
        "roles/logging.logWriter",
        "roles/monitoring.metricWriter",
        "roles/monitoring.viewer",
        "roles/stackdriver.resourceMetadata.writer",
    ]
    assert {m.inputs["member"] for m in members} == {f"serviceAccount:{EMAIL}"}
    assert identity.one("gcp:projects/iAMMember:IAMMember", "nodes-logging-logWriter")


def test_a_long_cluster_name_keeps_the_id_within_30_characters():
    def build():
        args = NodeServiceAccountArgs("acme-ml", "a-very-long-cluster-name-for-tpus")
        return {"email": NodeServiceAccount("nodes", args).email}

    long = register(build)
    # 17 characters of the cluster name, 6 hex digits of its SHA-256, "-nodes": 30 in all
    email = "a-very-long-clust-1a7375-nodes@acme-ml.iam.gserviceaccount.com"
    assert long.outputs == {"email": email}
