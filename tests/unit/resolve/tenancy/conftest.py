"""The shared cluster of the attack tests: research-v5p (the owner: team namespace research on
the shared pools, pools dedicated to nlp) with team-research's namespace nlp on it."""

from __future__ import annotations

import pytest

from tests.admission import Cluster, cluster_of


@pytest.fixture(scope="module")
def cluster(example_plan) -> Cluster:
    """research-v5p's cluster with both stacks' namespaces on it."""
    own = cluster_of(example_plan, "research-v5p")
    team = cluster_of(example_plan, "team-research")
    return Cluster(own.policies, {**own.namespaces, **team.namespaces}, team.plans)


@pytest.fixture(scope="module")
def owner(example_plan):
    return example_plan("research-v5p")
