"""Views of a plan: manifests per Kubernetes object, the text tree and summary, JSON."""

from __future__ import annotations

import json

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s
import pytest
import yaml

from components.plan.engine import run_program
from components.plan.model import Plan, PlannedResource
from components.plan.render import (
    render_json,
    render_summary,
    render_text,
    write_manifests,
)


def k8s_program() -> dict:
    provider = k8s.Provider("k8s", kubeconfig=pulumi.Output.secret("{}"))
    opts = pulumi.ResourceOptions(provider=provider)
    k8s.core.v1.ConfigMap(
        "settings",
        metadata={"name": "settings", "namespace": "team-a"},
        data={"mode": "test", "replicas": "2"},
        opts=opts,
    )
    k8s.core.v1.Namespace("ns", metadata={"name": "team-a"}, opts=opts)
    k8s.yaml.v2.ConfigFile("jobset", file="https://example.com/jobset/manifests.yaml", opts=opts)
    k8s.apps.v1.DeploymentPatch(
        "jobset-memory",
        metadata={"name": "jobset-controller-manager", "namespace": "jobset-system"},
        spec={"template": {"spec": {"containers": [{"name": "manager"}]}}},
        opts=opts,
    )
    gcp.compute.Network("net", mtu=1500)
    return {}


@pytest.fixture(scope="module")
def k8s_plan() -> Plan:
    resources, outputs = run_program(k8s_program, "t")
    return Plan("t", "tpu-pathways", resources, outputs, {"tpu": {}})


def test_write_manifests_writes_objects_patches_and_release_urls(k8s_plan, tmp_path):
    out = tmp_path / "manifests"
    written = write_manifests(k8s_plan, out)
    assert sorted(p.name for p in written.objects) == [
        "configmap-team-a-settings.yaml",
        "namespace-team-a.yaml",
    ]
    assert [p.name for p in written.patches] == [
        "patch-deployment-jobset-system-jobset-controller-manager.yaml"
    ]
    assert written.release_manifests == ["jobset https://example.com/jobset/manifests.yaml"]
    assert sorted(p.name for p in out.iterdir()) == [
        "configmap-team-a-settings.yaml",
        "namespace-team-a.yaml",
        "patch-deployment-jobset-system-jobset-controller-manager.yaml",
        "release-manifests.txt",
    ]
    assert written.count == 4
    assert written.summary(out) == (
        f"wrote 4 files to {out}: 2 Kubernetes objects, 1 server-side patch, "
        "release-manifests.txt (the 1 release manifest installed by URL)"
    )


def test_a_patch_is_written_as_the_partial_object_it_applies(k8s_plan, tmp_path):
    write_manifests(k8s_plan, tmp_path)
    path = tmp_path / "patch-deployment-jobset-system-jobset-controller-manager.yaml"
    text = path.read_text()
    assert text.startswith("# A patch, not a whole object (kubernetes:apps/v1:DeploymentPatch)")
    assert "kubectl apply --server-side" in text
    assert yaml.safe_load(text) == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "jobset-controller-manager", "namespace": "jobset-system"},
        "spec": {"template": {"spec": {"containers": [{"name": "manager"}]}}},
    }
    urls = (tmp_path / "release-manifests.txt").read_text().splitlines()
    assert urls[1:] == ["jobset https://example.com/jobset/manifests.yaml"]


def test_manifest_content(k8s_plan, tmp_path):
    write_manifests(k8s_plan, tmp_path)
    text = (tmp_path / "configmap-team-a-settings.yaml").read_text()
    assert yaml.safe_load(text) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "team-a"},
        "data": {"mode": "test", "replicas": "2"},
    }
    # kubectl's conventional key order
    assert [line.split(":")[0] for line in text.splitlines() if not line.startswith(" ")] == [
        "apiVersion",
        "kind",
        "metadata",
        "data",
    ]
    namespace = yaml.safe_load((tmp_path / "namespace-team-a.yaml").read_text())
    assert namespace == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}


def test_no_manifests_for_cloud_resources_or_providers(k8s_plan, tmp_path):
    written = write_manifests(k8s_plan, tmp_path)
    assert all("net" not in p.name and "k8s" not in p.name for p in written.objects)


def plan_with_summary(tpu: dict) -> Plan:
    resource = PlannedResource(
        urn="urn:pulumi:s::p::gcp:compute/network:Network::net",
        type="gcp:compute/network:Network",
        name="net",
        parent=None,
        custom=True,
        provider=None,
        inputs={"name": "net", "mtu": 8896},
        dependencies=[],
    )
    return Plan("s", "p", [resource], {"secret": "[secret]"}, {"tpu": tpu, "resources": 1})


def test_render_summary():
    assert render_summary(plan_with_summary({})) == "TPU summary: no TPU pools"
    text = render_summary(
        plan_with_summary({"v5p": {"pools": 1, "slices": 2, "hosts": 4, "chips": 16}})
    )
    assert text.splitlines()[0] == "TPU summary:"
    assert text.splitlines()[-1].split() == ["v5p", "1", "2", "4", "16"]


def test_render_text():
    text = render_text(plan_with_summary({}))
    assert text.splitlines()[:4] == [
        "Plan for stack 's' of p: creates 1 resources (0 components); --verbose: every input, "
        "--json: all",
        "",
        "Cluster, network and identity:",
        "  + Network net  mtu=8896",
    ]
    assert "Outputs:\n  secret: [secret]" in text
    lines = text.splitlines()
    assert lines[lines.index("Creates 1 resources: 1 Network") :][:3] == [
        "Creates 1 resources: 1 Network",
        "Total: 0 TPU chips, no node pools to price",
        "Deploy time (modeled `pulumi up`): about 0m40s (low 0m20s, high 1m00s); --critical-path: "
        "the chain",
    ]


def test_verbose_text_shows_every_input():
    lines = render_text(plan_with_summary({}), verbose=True).splitlines()
    assert lines[3:6] == ["  + Network net", "      name: net", "      mtu: 8896"]


def test_render_json_round_trips():
    document = json.loads(render_json(plan_with_summary({})))
    assert document["stack"] == "s"
    assert document["resources"][0]["inputs"] == {"name": "net", "mtu": 8896}
    assert document["resources"][0]["options"] == {}
    assert document["summary"] == {"tpu": {}, "resources": 1}


def placeholder_program() -> dict:
    """A Secret whose data the plan hides, and a ConfigMap with a value only the cloud knows."""
    provider = k8s.Provider("k8s", kubeconfig=pulumi.Output.secret("{}"))
    opts = pulumi.ResourceOptions(provider=provider)
    network = gcp.compute.Network("net", mtu=1500)
    k8s.core.v1.Secret(
        "token",
        metadata={"name": "token", "namespace": "team-a"},
        string_data={"token": pulumi.Output.secret("value")},
        opts=opts,
    )
    k8s.core.v1.ConfigMap(
        "who",
        metadata={"name": "who", "namespace": "team-a"},
        data={"network": network.self_link},
        opts=opts,
    )
    k8s.core.v1.Namespace("ns", metadata={"name": "team-a"}, opts=opts)
    return {}


def test_objects_with_placeholders_are_written_where_kubectl_apply_never_reads(tmp_path):
    resources, outputs = run_program(placeholder_program, "t")
    written = write_manifests(Plan("t", "tpu-pathways", resources, outputs, {}), tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "configmap-team-a-who.yaml.example",
        "namespace-team-a.yaml",
        "secret-team-a-token.yaml.example",
    ]
    assert [p.name for p in written.objects] == ["namespace-team-a.yaml"]
    secret = (tmp_path / "secret-team-a-token.yaml.example").read_text()
    assert secret.startswith("# NOT APPLIED (the .example suffix keeps `kubectl apply -f DIR`")
    assert yaml.safe_load(secret)["stringData"] == "[secret]"
    config_map = yaml.safe_load((tmp_path / "configmap-team-a-who.yaml.example").read_text())
    assert config_map["data"] == {"network": "[unknown]"}
    assert written.summary(tmp_path) == (
        f"wrote 3 files to {tmp_path}: 1 Kubernetes object, 0 server-side patches, 2 objects "
        "with [secret] or [unknown] values as .example files that are not applied "
        "(configmap-team-a-who.yaml.example, secret-team-a-token.yaml.example)"
    )
