"""NodeServiceAccount from its Args: a dedicated account with GKE's node role on the project,
image pulls granted per repository, and nothing else."""

from __future__ import annotations

import pytest

from components.gke.node_identity import (
    ImageRepository,
    NodeServiceAccount,
    NodeServiceAccountArgs,
)
from tests.components.harness import register

EMAIL = "pathways-dev-nodes@acme-ml.iam.gserviceaccount.com"
PROJECT_MEMBER = "gcp:projects/iAMMember:IAMMember"
REPOSITORY_MEMBER = "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember"


@pytest.fixture(scope="module")
def identity():
    def build():
        repositories = (
            ImageRepository("acme-ml", "us", "trainers"),
            ImageRepository("acme-shared", "us-east5", "base"),
        )
        args = NodeServiceAccountArgs("acme-ml", "pathways-dev", repositories)
        return {"email": NodeServiceAccount("nodes", args).email}

    return register(build)


def test_the_account(identity):
    account = identity.one("gcp:serviceaccount/account:Account", "nodes")
    assert account.inputs["accountId"] == "pathways-dev-nodes"
    assert account.inputs["displayName"] == "GKE nodes of pathways-dev"
    assert identity.outputs == {"email": EMAIL}


def test_one_project_role_gkes_default_node_role(identity):
    (member,) = identity.of_type(PROJECT_MEMBER)
    assert member.name == "nodes-default-node-sa"
    assert member.inputs == {
        "project": "acme-ml",
        "role": "roles/container.defaultNodeServiceAccount",
        "member": f"serviceAccount:{EMAIL}",
    }


def test_image_pulls_only_from_the_named_repositories(identity):
    assert identity.names(REPOSITORY_MEMBER) == [
        "nodes-pull-acme-ml-us-trainers",
        "nodes-pull-acme-shared-us-east5-base",
    ]
    assert identity.one(REPOSITORY_MEMBER, "nodes-pull-acme-shared-us-east5-base").inputs == {
        "project": "acme-shared",
        "location": "us-east5",
        "repository": "base",
        "role": "roles/artifactregistry.reader",
        "member": f"serviceAccount:{EMAIL}",
    }


def test_a_long_cluster_name_keeps_the_id_within_30_characters():
    def build():
        args = NodeServiceAccountArgs("acme-ml", "a-very-long-cluster-name-for-tpus")
        return {"email": NodeServiceAccount("nodes", args).email}

    long = register(build)
    # 17 characters of the cluster name, 6 hex digits of its SHA-256, "-nodes": 30 in all
    email = "a-very-long-clust-1a7375-nodes@acme-ml.iam.gserviceaccount.com"
    assert long.outputs == {"email": email}
    assert long.of_type(REPOSITORY_MEMBER) == []
