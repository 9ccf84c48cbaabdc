"""ReleaseManifest from its Args: the manifest applied through the given provider, after what
it must wait for."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s
import pytest

from components.addons.installs import (
    ManifestDigestError,
    ReleaseManifest,
    ReleaseManifestArgs,
    verified_manifest,
)
from tests.components.harness import k8s_provider, register, urn

URL = "https://github.com/kubernetes-sigs/jobset/releases/download/v0.10.1/manifests.yaml"


@pytest.fixture(scope="module")
def release():
    def build():
        provider = k8s_provider()
        before = k8s.core.v1.Namespace("before", opts=pulumi.ResourceOptions(provider=provider))
        args = ReleaseManifestArgs(URL, "v0.10.1", provider, depends_on=[before])
        ReleaseManifest("jobset", args)

    return register(build)


def test_the_manifest(release):
    manifest = release.one("kubernetes:yaml/v2:ConfigFile", "jobset")
    assert manifest.inputs["file"] == URL
    assert manifest.parent == urn("tpu-pathways:installs:ReleaseManifest", "jobset")
    assert manifest.provider == f"{urn('pulumi:providers:kubernetes', 'k8s')}"


def test_it_waits_for_its_dependencies(release):
    manifest = release.one("kubernetes:yaml/v2:ConfigFile", "jobset")
    assert manifest.dependencies == [urn("kubernetes:core/v1:Namespace", "before")]


# --- a pinned digest ----------------------------------------------------------------------

BODY = b"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: jobset-system\n"
# sha256 of BODY (printf '%s' "$BODY" | sha256sum)
BODY_SHA256 = "db1ec92c575fd576a2a1745807244e1e87370b7f520090b264da43b18b290b59"


def pinned(fetched: bytes, monkeypatch, tmp_path, dry_run: bool):
    """A ReleaseManifest pinned to BODY_SHA256 whose fetch returns ``fetched``, as a preview
    (``dry_run``) or as `pulumi up` runs it."""
    monkeypatch.setattr("components.addons.installs.is_dry_run", lambda: dry_run)
    monkeypatch.setattr("components.addons.installs.VERIFIED_DIR", tmp_path)
    fetches: list[str] = []

    def fetch(url: str) -> bytes:
        fetches.append(url)
        return fetched

    def build():
        args = ReleaseManifestArgs(URL, "v0.10.1", k8s_provider(), sha256=BODY_SHA256, fetch=fetch)
        ReleaseManifest("jobset", args)

    return register(build), fetches


def test_a_preview_reads_the_url_and_fetches_nothing(monkeypatch, tmp_path):
    release, fetches = pinned(b"anything", monkeypatch, tmp_path, dry_run=True)
    assert release.one("kubernetes:yaml/v2:ConfigFile", "jobset").inputs["file"] == URL
    assert fetches == []


def test_up_applies_the_verified_copy(monkeypatch, tmp_path):
    release, fetches = pinned(BODY, monkeypatch, tmp_path, dry_run=False)
    applied = tmp_path / f"{BODY_SHA256}.yaml"
    assert release.one("kubernetes:yaml/v2:ConfigFile", "jobset").inputs["file"] == str(applied)
    assert applied.read_bytes() == BODY
    assert fetches == [URL]


def test_up_fails_on_other_content_before_applying_anything(monkeypatch, tmp_path):
    with pytest.raises(Exception, match="not the pinned db1ec92c") as failure:
        pinned(BODY + b"# changed\n", monkeypatch, tmp_path, dry_run=False)
    assert URL in str(failure.value)
    assert list(tmp_path.iterdir()) == []


def test_verified_manifest_names_both_digests(tmp_path):
    with pytest.raises(ManifestDigestError) as failure:
        verified_manifest(URL, "0" * 64, lambda _: BODY, tmp_path)
    assert str(failure.value) == (
        f"{URL} has sha256 {BODY_SHA256}, not the pinned {'0' * 64}: the release was changed "
        "or the mirror serves something else; nothing was applied"
    )
