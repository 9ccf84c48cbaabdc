"""The shared cluster of the attack tests (test_tenancy_attacks.py, test_review_attacks*.py):
research-v5p (the owner: team namespace research on the shared pools, pools dedicated to nlp)
with team-research's namespace nlp on it."""

from __future__ import annotations

import pytest

from tests.admission import Cluster, research_cluster


@pytest.fixture(scope="module")
def cluster(example_plan) -> Cluster:
    return research_cluster(example_plan)


@pytest.fixture(scope="module")
def owner(example_plan):
    return example_plan("research-v5p")
