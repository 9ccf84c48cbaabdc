"""The controllers' Deployments as the pinned release manifests ship them
(tests/data/controller-pods.json, written from the manifests by
scripts/refresh_controller_pods.py): a ``ControllerPatch`` sets the pods' ``tolerations`` and
``nodeSelector``, which server-side apply treats as one atomic value each (PodSpec
``x-kubernetes-list-type: atomic``, ``x-kubernetes-map-type: atomic``), so the patch must carry
whatever the release sets there. None of the pinned releases sets either today; these tests fail
the day a refreshed release does and ``installs.py`` does not say so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from components.addons.installs import INSTALLS, JOBSET, KUEUE, PATHWAYS_JOB
from components.config.schema import JobSetAddon, KueueAddon, PathwaysJobAddon
from components.pathways.controller_model import Toleration

DATA = Path(__file__).resolve().parents[1] / "data" / "controller-pods.json"
RELEASES = json.loads(DATA.read_text())["releases"]
ADDONS = {
    JOBSET.name: JobSetAddon(),
    PATHWAYS_JOB.name: PathwaysJobAddon(),
    KUEUE.name: KueueAddon(),
}


def test_the_file_holds_the_pinned_releases():
    assert {name: r["version"] for name, r in RELEASES.items()} == {
        "jobset": "v0.10.1",
        "kueue": "v0.17.1",
        "pathways-job": "v0.1.4",
    }
    assert {name: RELEASES[name]["version"] for name in ADDONS} == {
        name: addon.version for name, addon in ADDONS.items()
    }


@pytest.mark.parametrize("install", INSTALLS, ids=lambda i: i.name)
def test_the_release_ships_the_deployment_the_patch_names(install):
    controller = install.controller
    assert RELEASES[install.name]["deployment"] == f"{controller.namespace}/{controller.name}"


@pytest.mark.parametrize("install", INSTALLS, ids=lambda i: i.name)
def test_the_patch_knows_the_releases_own_placement(install):
    release = RELEASES[install.name]
    own = tuple(Toleration.from_manifest(t) for t in release["tolerations"] or ())
    assert install.controller.release_tolerations == own
    assert dict(install.controller.release_node_selector) == (release["nodeSelector"] or {})


def test_no_pinned_release_places_its_controller_itself():
    """The known answer today: the patch's tolerations and node selector are the project's
    alone, and it clobbers no affinity or priority class (it sets no affinity)."""
    for release in RELEASES.values():
        assert [release[f] for f in ("tolerations", "nodeSelector", "affinity")] == [None] * 3
        assert release["priorityClassName"] is None
