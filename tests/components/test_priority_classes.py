"""PriorityClasses from its Args: XPK's classes by default, or the ones given."""

from __future__ import annotations

from components.addons.kueue import PriorityClasses, PriorityClassesArgs
from components.vocabulary import Priority
from tests.components.harness import k8s_provider, register

PRIORITY_CLASS = "kubernetes:scheduling.k8s.io/v1:PriorityClass"


def values(**overrides) -> dict[str, int]:
    def build():
        PriorityClasses("p", PriorityClassesArgs(k8s_provider(), **overrides))

    registered = register(build)
    return {
        r.inputs["metadata"]["name"]: r.inputs["value"] for r in registered.of_type(PRIORITY_CLASS)
    }


def test_xpk_classes_by_default():
    assert values() == {
        "very-low": 100,
        "low": 250,
        "medium": 500,
        "high": 750,
        "very-high": 1000,
    }


def test_classes_given():
    assert values(classes={Priority.HIGH: 900}) == {"high": 900}
