"""ExistingCluster from its Args: only the provider that reaches the cluster is created."""

from __future__ import annotations

from components.gke.cluster import ExistingCluster, ExistingClusterArgs
from tests.components.harness import register

PROVIDER = "pulumi:providers:kubernetes"


def existing(**overrides):
    args = ExistingClusterArgs(project="acme-ml", name="shared", location="us-east5", **overrides)

    def build():
        cluster = ExistingCluster("ex", args)
        return {"name": cluster.cluster_name, "location": cluster.location}

    return register(build)


def test_by_name_reads_the_cluster_and_creates_only_a_provider():
    found = existing()
    assert [r.type for r in found.resources if r.custom] == [PROVIDER]
    provider = found.one(PROVIDER, "ex-k8s")
    assert provider.inputs["enableServerSideApply"] == "true"
    assert "context" not in provider.inputs
    assert found.outputs == {"name": "shared", "location": "us-east5"}


def test_by_kubeconfig_context():
    found = existing(kubeconfig_context="gke_acme-ml_us-east5_shared")
    provider = found.one(PROVIDER, "ex-k8s")
    assert provider.inputs["context"] == "gke_acme-ml_us-east5_shared"
    assert found.outputs == {"name": "shared", "location": "us-east5"}
