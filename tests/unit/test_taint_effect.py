"""Taint effects (``components.labels.TaintEffect``): Kubernetes' spelling, which nodes and
tolerations carry, and GKE's, which a node pool's config asks for (google.container.v1
``NodeTaint.Effect``), written out as each API spells them; and the taints of the scheduler
model, which meet tolerations whose effect is a plain string (a manifest's, a user's)."""

from __future__ import annotations

import pytest
import yaml

from components.errors import ConfigError
from components.labels import DEDICATED_TAINT_EFFECT, SYSTEM_TAINT_EFFECT, TaintEffect
from components.pathways.controller_model import Toleration
from components.pathways.scheduler_model import TPU_TAINT, Taint


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


def test_a_taint_keeps_a_string_effect_as_the_member_it_names_and_refuses_a_misspelt_one():
    assert Taint("k", "v", "NoExecute").effect is TaintEffect.NO_EXECUTE
    assert Taint("k", "v", "NoExecute") == Taint("k", "v", TaintEffect.NO_EXECUTE)
    with pytest.raises(ConfigError) as caught:
        Taint("k", "v", "NoExcute")
    (issue,) = caught.value.issues
    assert (issue.key, issue.message) == (
        "effect",
        "'NoExcute' is not allowed; one of NoSchedule, PreferNoSchedule, NoExecute",
    )


def test_the_tpu_taint_renders_as_plain_strings():
    assert str(TPU_TAINT) == "google.com/tpu=present:NoSchedule"
    toleration = TPU_TAINT.toleration()
    assert toleration == {"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"}
    assert type(toleration["effect"]) is str
    assert (
        yaml.safe_dump(toleration) == "effect: NoSchedule\nkey: google.com/tpu\noperator: Exists\n"
    )


@pytest.mark.parametrize(
    ("toleration", "tolerated"),
    [
        ({"key": "tpu-pathways/dedicated-to", "value": "nlp", "effect": "NoExecute"}, True),
        ({"key": "tpu-pathways/dedicated-to", "value": "nlp"}, True),  # every effect
        ({"key": "tpu-pathways/dedicated-to", "value": "nlp", "effect": "NoSchedule"}, False),
        ({"key": "tpu-pathways/dedicated-to", "value": "cv", "effect": "NoExecute"}, False),
        ({"operator": "Exists", "effect": "NoExecute"}, True),
    ],
)
def test_a_manifests_string_effect_meets_the_taints_member(toleration, tolerated):
    taint = Taint("tpu-pathways/dedicated-to", "nlp", TaintEffect.NO_EXECUTE)
    assert taint.tolerated_by(Toleration.from_manifest(toleration)) is tolerated


def test_a_toleration_with_a_member_and_one_with_its_string_are_one():
    """The installs deduplicate a release's tolerations (strings) and the system pool's (a
    member) in one dict: equal and of one hash."""
    from_release = Toleration.from_manifest({"key": "k", "value": "true", "effect": "NoSchedule"})
    ours = Toleration("k", value="true", effect=TaintEffect.NO_SCHEDULE)
    assert list(dict.fromkeys([from_release, ours])) == [from_release]
