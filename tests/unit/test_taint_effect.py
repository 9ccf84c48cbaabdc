"""Taint effects (``components.labels.TaintEffect``): Kubernetes' spelling, which nodes and
tolerations carry, and GKE's, which a node pool's config asks for (google.container.v1
``NodeTaint.Effect``), written out as each API spells them."""

from __future__ import annotations

import pytest

from components.labels import DEDICATED_TAINT_EFFECT, SYSTEM_TAINT_EFFECT, TaintEffect


@pytest.mark.parametrize(
    ("effect", "kubernetes", "gke"),
    [
        (TaintEffect.NO_SCHEDULE, "NoSchedule", "NO_SCHEDULE"),
        (TaintEffect.PREFER_NO_SCHEDULE, "PreferNoSchedule", "PREFER_NO_SCHEDULE"),
        (TaintEffect.NO_EXECUTE, "NoExecute", "NO_EXECUTE"),
    ],
)
def test_each_effect_is_spelt_as_kubernetes_and_gke_spell_it(effect, kubernetes, gke):
    assert effect == kubernetes
    assert TaintEffect(kubernetes) is effect
    assert effect.gke == gke
    assert type(effect.gke) is str


def test_the_effects_are_the_three_both_apis_know():
    assert {e.value: e.gke for e in TaintEffect} == {
        "NoSchedule": "NO_SCHEDULE",
        "PreferNoSchedule": "PREFER_NO_SCHEDULE",
        "NoExecute": "NO_EXECUTE",
    }


def test_the_system_pool_taint_is_noschedule_and_a_dedicated_pools_noexecute():
    """A dedicated pool's taint must be NoExecute: the kubelet refuses a pod bound to the node
    outright only for that effect (labels.py, DEDICATED_TO_LABEL)."""
    assert (SYSTEM_TAINT_EFFECT, SYSTEM_TAINT_EFFECT.gke) == ("NoSchedule", "NO_SCHEDULE")
    assert (DEDICATED_TAINT_EFFECT, DEDICATED_TAINT_EFFECT.gke) == ("NoExecute", "NO_EXECUTE")
