"""In-cluster installs (JobSet, PathwaysJob controller, Kueue): pinned release manifests applied
through the cluster's explicit provider, in order, waiting for the system pool and never for
TPU or head pools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from components.addons.installs import INSTALLS
from components.policy.rules import rule
from components.resolve.tenancy.ownership import owner_stacks
from tests.examples import EXAMPLES_DIR
from tests.helpers import assert_error_report, uses_jobset_backend

EXAMPLE_STACKS = owner_stacks(
    EXAMPLES_DIR
)  # the stacks that install (team stacks leave it to them)
# The stacks that install the PathwaysJob controller: not those whose jobs all run as JobSets.
CONTROLLER_STACKS = [s for s in EXAMPLE_STACKS if not uses_jobset_backend(s)]

CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
CONFIG_MAP = "kubernetes:core/v1:ConfigMapPatch"
K8S_PROVIDER = "pulumi:providers:kubernetes"
CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
PATHWAYS_JOB = "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob"

JOBSET_URL = "https://github.com/kubernetes-sigs/jobset/releases/download/v0.10.1/manifests.yaml"
PATHWAYS_URL = "https://github.com/google/pathways-job/releases/download/v0.1.4/install.yaml"
KUEUE_URL = "https://github.com/kubernetes-sigs/kueue/releases/download/v0.17.1/manifests.yaml"

NOTEBOOK = {"name": "notebook", "pool": "v5e", "mode": "headless"}

# A manifest digest (sha256 of some content; only its form matters to a plan).
DIGEST = "3f" * 32


def config_files(plan) -> dict[str, object]:
    """URL -> the ConfigFile resource applying it (each URL exactly once)."""
    files = plan.by_type(CONFIG_FILE)
    urls = [r.inputs["file"] for r in files]
    assert len(urls) == len(set(urls)), urls
    return {r.inputs["file"]: r for r in files}


def the_provider(plan):
    (provider,) = plan.by_type(K8S_PROVIDER)
    return provider


def closure(plan, resource) -> set[str]:
    """Every URN ``resource`` waits for: dependencies, provider and parent, transitively."""
    by_urn = {r.urn: r for r in plan.resources}
    seen: set[str] = set()
    todo = [resource.urn]
    while todo:
        current = by_urn.get(todo.pop())
        if current is None:
            continue
        for urn in [*current.dependencies, current.provider, current.parent]:
            if urn and urn not in seen:
                seen.add(urn)
                todo.append(urn)
    return seen


def node_pools_in(plan, urns: set[str]) -> set[str]:
    """GKE names of the node pools among ``urns``."""
    return {r.inputs["name"] for r in plan.by_type(NODE_POOL) if r.urn in urns}


def types_of(plan, urns: set[str]) -> set[str]:
    by_urn = {r.urn: r.type for r in plan.resources}
    return {by_urn[u] for u in urns if u in by_urn}


# --- every example stack --------------------------------------------------------------------


def test_the_example_stacks_are_found():
    assert {"dev", "research-v5p", "serving-v6e"} <= set(EXAMPLE_STACKS)


@pytest.mark.parametrize("stack", CONTROLLER_STACKS)
def test_jobset_and_pathways_job_are_pinned_release_manifests(example_plan, stack):
    files = config_files(example_plan(stack))
    assert JOBSET_URL in files
    assert PATHWAYS_URL in files


def test_a_stack_of_jobsets_installs_jobset_but_no_pathways_controller(example_plan):
    assert [s for s in EXAMPLE_STACKS if s not in CONTROLLER_STACKS] == ["research-jobset"]
    plan = example_plan("research-jobset")
    files = config_files(plan)
    assert sorted(files) == [JOBSET_URL, KUEUE_URL]
    assert sorted(patches(plan)) == [
        "jobset-system/jobset-controller-manager",
        "kueue-system/kueue-controller-manager",
    ]
    assert plan.by_type("kubernetes:pathways-job.pathways.domain/v1:PathwaysJob") == []


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_installs_use_the_clusters_explicit_provider(example_plan, stack):
    plan = example_plan(stack)
    provider = the_provider(plan)
    files = config_files(plan)
    assert JOBSET_URL in files
    for url in files:
        assert files[url].provider == provider.urn, url


@pytest.mark.parametrize("stack", CONTROLLER_STACKS)
def test_pathways_controller_waits_for_jobset(example_plan, stack):
    files = config_files(example_plan(stack))
    assert files[JOBSET_URL].urn in files[PATHWAYS_URL].dependencies
    assert files[PATHWAYS_URL].urn not in files[JOBSET_URL].dependencies


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_installs_wait_for_the_system_pool_but_never_for_tpu_or_head_pools(example_plan, stack):
    plan = example_plan(stack)
    files = config_files(plan)
    for url in files:
        waits_for = closure(plan, files[url])
        assert CLUSTER in types_of(plan, waits_for), url
        # the controllers run on the system pool, and nothing else holds them up
        assert node_pools_in(plan, waits_for) == {"system-np"}, url


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_every_kubernetes_resource_has_an_explicit_provider(example_plan, stack):
    plan = example_plan(stack)
    provider = the_provider(plan)
    kubernetes = [r for r in plan.resources if r.type.startswith("kubernetes:")]
    assert kubernetes
    for resource in kubernetes:
        assert resource.provider == provider.urn, resource.urn
        assert "default" not in resource.provider


def test_provider_urn_of_the_dev_stack(example_plan):
    provider = the_provider(example_plan("dev"))
    assert provider.urn == (
        "urn:pulumi:dev::tpu-pathways::tpu-pathways:cluster:GkeCluster"
        "$pulumi:providers:kubernetes::pathways-dev-k8s"
    )
    assert provider.inputs["enableServerSideApply"] in (True, "true")


def test_kueue_install_only_where_enabled(example_plan):
    assert KUEUE_URL in config_files(example_plan("research-v5p"))
    assert KUEUE_URL in config_files(example_plan("dev"))  # on by default: dev owns its cluster
    assert KUEUE_URL not in config_files(example_plan("serving-v6e"))  # turned off


def test_kueue_waits_for_jobset_and_the_system_pool(example_plan):
    plan = example_plan("research-v5p")
    files = config_files(plan)
    kueue = files[KUEUE_URL]
    assert kueue.provider == the_provider(plan).urn
    assert files[JOBSET_URL].urn in kueue.dependencies
    assert node_pools_in(plan, set(kueue.dependencies)) == {"system-np"}


PATCH = "kubernetes:apps/v1:DeploymentPatch"


def patches(plan) -> dict[str, object]:
    """namespace/name of each patched Deployment -> its DeploymentPatch (one each)."""
    found = plan.by_type(PATCH)
    keys = [f"{p.inputs['metadata']['namespace']}/{p.inputs['metadata']['name']}" for p in found]
    assert len(keys) == len(set(keys)), keys
    return dict(zip(keys, found, strict=True))


def test_jobset_controller_memory_is_a_server_side_patch(example_plan):
    plan = example_plan("dev")
    patch = patches(plan)["jobset-system/jobset-controller-manager"]
    assert patch.inputs["metadata"]["annotations"] == {"pulumi.com/patchForce": "true"}
    (container,) = patch.inputs["spec"]["template"]["spec"]["containers"]
    assert container["name"] == "manager"
    # XPK: max(1.2 MiB per node, 4096 MiB); dev has at most 3 + 3 + 2 nodes
    assert container["resources"] == {
        "limits": {"memory": "4096Mi"},
        "requests": {"memory": "4096Mi"},
    }
    assert config_files(plan)[JOBSET_URL].urn in patch.dependencies
    assert patch.provider == the_provider(plan).urn


# Each controller Deployment, as its release manifest names it, and the stacks that install it.
CONTROLLERS = {
    "dev": [
        "jobset-system/jobset-controller-manager",
        "kueue-system/kueue-controller-manager",
        "pathways-job-system/pathways-job-controller-manager",
    ],
    "research-v5p": [
        "jobset-system/jobset-controller-manager",
        "kueue-system/kueue-controller-manager",
        "pathways-job-system/pathways-job-controller-manager",
    ],
    "serving-v6e": [  # Kueue off
        "jobset-system/jobset-controller-manager",
        "pathways-job-system/pathways-job-controller-manager",
    ],
}


@pytest.mark.parametrize("stack", sorted(CONTROLLERS))
def test_every_controller_is_pinned_to_the_system_pool(example_plan, stack):
    plan = example_plan(stack)
    found = patches(plan)
    assert sorted(found) == CONTROLLERS[stack]
    files = config_files(plan)
    for patch in found.values():
        spec = patch.inputs["spec"]["template"]["spec"]
        assert spec["nodeSelector"] == {"cloud.google.com/gke-nodepool": "system-np"}
        assert patch.inputs["metadata"]["annotations"] == {"pulumi.com/patchForce": "true"}
        # patched once its install (Kueue's: its configuration) exists, through the cluster's
        # provider
        installed = {f.urn for f in files.values()} | {c.urn for c in plan.by_type(CONFIG_MAP)}
        assert set(patch.dependencies) & installed
        assert patch.provider == the_provider(plan).urn


def test_a_custom_system_pool_name_is_selected(plan_of, stack_values):
    plan = plan_of(stack_values(systemPool={"name": "ops"}))
    assert len(patches(plan)) == 3
    for patch in patches(plan).values():
        assert patch.inputs["spec"]["template"]["spec"]["nodeSelector"] == {
            "cloud.google.com/gke-nodepool": "ops"
        }


def test_on_an_existing_cluster_only_the_jobset_memory_is_patched(plan_of, stack_values):
    values = stack_values(
        cluster={"existing": {"kubeconfigContext": "ctx"}},
        scratchBucket={"name": "team-scratch", "create": False},
    )
    del values["cluster"]["deletionProtection"]
    found = patches(plan_of(values))
    # no system pool here: where the controllers run is the owning stack's business
    assert sorted(found) == ["jobset-system/jobset-controller-manager"]
    assert (
        "nodeSelector"
        not in found["jobset-system/jobset-controller-manager"].inputs["spec"]["template"]["spec"]
    )


def test_the_jobset_patch_keeps_the_urns_it_had_as_jobset_controller_memory(example_plan):
    (component,) = [
        r
        for r in example_plan("dev").by_type("tpu-pathways:installs:ControllerPatch")
        if r.name == "pathways-dev-jobset-controller"
    ]
    # the engine maps the old component (and its child of the same name) onto the new one
    assert component.options["aliases"] == [
        {
            "name": "pathways-dev-jobset-memory",
            "type": "tpu-pathways:installs:JobSetControllerMemory",
        }
    ]


def test_production_protects_the_controller_patches(example_plan):
    components = example_plan("serving-v6e").by_type("tpu-pathways:installs:ControllerPatch")
    assert len(components) == 2
    for component in components:
        assert component.options["protect"] is True, component.name


def test_jobset_controller_memory_grows_with_the_node_count():
    from components.vocabulary import jobset_memory_mib

    assert jobset_memory_mib(10) == 4096
    assert jobset_memory_mib(4000) == 4800  # 4000 x 1.2 MiB
    assert jobset_memory_mib(3414) == 4097  # 4096.8 rounded up


# --- overrides ------------------------------------------------------------------------------


def test_version_overrides_change_the_urls(plan_of, stack_values):
    plan = plan_of(
        stack_values(
            addons={
                "jobset": {"version": "v0.11.0"},
                "pathwaysJob": {"version": "v0.1.3"},
                "kueue": {"enabled": False},
            }
        )
    )
    assert set(config_files(plan)) == {
        "https://github.com/kubernetes-sigs/jobset/releases/download/v0.11.0/manifests.yaml",
        "https://github.com/google/pathways-job/releases/download/v0.1.3/install.yaml",
    }


def test_kueue_version_override(plan_of, stack_values):
    plan = plan_of(stack_values(addons={"kueue": {"enabled": True, "version": "v0.19.2"}}))
    assert (
        "https://github.com/kubernetes-sigs/kueue/releases/download/v0.19.2/manifests.yaml"
        in config_files(plan)
    )


def test_manifest_mirrors_are_used_verbatim(plan_of, stack_values):
    jobset = "https://mirror.example.com/k8s/jobset-v0.10.1/manifests.yaml"
    pathways = "https://mirror.example.com/k8s/pathways-job-v0.1.4/install.yml"
    kueue = "https://mirror.example.com/k8s/kueue/v0.17.1.yaml"
    mirror = {"allowAnyManifestHost": True, "sha256": DIGEST}
    plan = plan_of(
        stack_values(
            addons={
                "jobset": {"manifestUrl": jobset, **mirror},
                "pathwaysJob": {"manifestUrl": pathways, **mirror},
                "kueue": {"enabled": True, "manifestUrl": kueue, **mirror},
            }
        )
    )
    files = config_files(plan)
    assert set(files) == {jobset, pathways, kueue}
    assert files[jobset].urn in files[pathways].dependencies


def test_a_github_release_mirror_needs_no_host_override(plan_of, stack_values):
    fork = "https://github.com/acme/jobset/releases/download/v0.10.1/manifests.yaml"
    plan = plan_of(stack_values(addons={"jobset": {"manifestUrl": fork, "sha256": DIGEST}}))
    assert fork in config_files(plan)


def test_jobset_install_false(plan_of, stack_values):
    addons = {"jobset": {"install": False}, "kueue": {"enabled": False}}
    plan = plan_of(stack_values(addons=addons, workloads=[NOTEBOOK]))
    files = config_files(plan)
    assert set(files) == {PATHWAYS_URL}
    (job,) = plan.by_type(PATHWAYS_JOB)
    assert files[PATHWAYS_URL].urn in job.dependencies


def test_pathways_job_install_false(plan_of, stack_values):
    addons = {"pathwaysJob": {"install": False}, "kueue": {"enabled": False}}
    plan = plan_of(stack_values(addons=addons, workloads=[NOTEBOOK]))
    files = config_files(plan)
    assert set(files) == {JOBSET_URL}
    (job,) = plan.by_type(PATHWAYS_JOB)
    assert files[JOBSET_URL].urn not in job.dependencies
    assert job.provider == the_provider(plan).urn


def test_nothing_installed(plan_of, stack_values):
    plan = plan_of(
        stack_values(
            addons={
                "jobset": {"install": False},
                "pathwaysJob": {"install": False},
                "kueue": {"enabled": False},
            }
        )
    )
    assert plan.by_type(CONFIG_FILE) == []
    assert len(plan.by_type(K8S_PROVIDER)) == 1


# --- bad addon config: a clear error naming the key, exit 2, nothing registered --------------

BAD_ADDONS = [
    pytest.param(
        {"addons": {"jobset": {"version": "0.10.1"}}},
        "addons.jobset.version",
        "'0.10.1' is not a release tag such as 'v0.10.1'",
        id="jobset-version-without-v",
    ),
    pytest.param(
        {"addons": {"jobset": {"version": "v0.5.0"}}},
        "addons.jobset.version",
        "'v0.5.0' is older than v0.8.0",
        id="jobset-too-old",
    ),
    pytest.param(
        {"addons": {"pathwaysJob": {"version": "latest"}}},
        "addons.pathwaysJob.version",
        "'latest' is not a release tag",
        id="pathways-job-version-not-a-tag",
    ),
    pytest.param(
        {"addons": {"jobsett": {"version": "v0.10.1"}}},
        "addons.jobsett",
        "unknown key 'jobsett'; did you mean 'jobset'?",
        id="unknown-addon",
    ),
    pytest.param(
        # the dev pool is one v5e 2x4 slice: 8 chips
        {"addons": {"kueue": {"enabled": True, "tpuQuota": 16}}},
        "addons.kueue.tpuQuota",
        "16 does not match the 8 TPU chips",
        id="kueue-quota-mismatch",
    ),
    pytest.param(
        # v0.14 serves only kueue.x-k8s.io/v1beta1 (v1beta2 arrives in v0.15.0)
        {"addons": {"kueue": {"enabled": True, "version": "v0.14.3"}}},
        "addons.kueue.version",
        "'v0.14.3' is not supported; use v0.15.0 or newer (the queue objects use "
        "kueue.x-k8s.io/v1beta2, which Kueue serves from v0.15.0)",
        id="kueue-v0.14",
    ),
    pytest.param(
        {"addons": {"jobset": {"manifestUrl": "http://mirror.example.com/manifests.yaml"}}},
        "addons.jobset.manifestUrl",
        "https://",
        id="mirror-not-https",
    ),
    pytest.param(
        {"addons": {"jobset": {"manifestUrl": "https://mirror.example.com/manifests.yaml"}}},
        "addons.jobset.sha256",
        "required with manifestUrl: a mirror's content must be pinned (sha256sum of the "
        "manifest you mirrored)",
        id="mirror-without-digest",
    ),
    pytest.param(
        {
            "addons": {
                "kueue": {
                    "manifestUrl": "https://mirror.example.com/kueue.yaml",
                    "sha256": "a" * 64,
                }
            }
        },
        "addons.kueue.manifestUrl",
        "'https://mirror.example.com/kueue.yaml' is not a GitHub release asset "
        "(https://github.com/<org>/<repo>/releases/download/<tag>/<file>); set "
        "allowAnyManifestHost: true to use another host",
        id="mirror-on-another-host",
    ),
    pytest.param(
        {"addons": {"pathwaysJob": {"sha256": "A" * 64}}},
        "addons.pathwaysJob.sha256",
        "is not a sha256 digest (64 lowercase hex digits)",
        id="digest-not-hex",
    ),
]


@pytest.mark.parametrize(("overrides", "key", "message"), BAD_ADDONS)
def test_bad_addon_config_names_the_key(stack_values, config_error, overrides, key, message):
    error = config_error(stack_values(**overrides))
    assert [issue.key for issue in error.issues] == [key]
    assert message in error.issues[0].message


@pytest.mark.parametrize(("overrides", "key", "message"), BAD_ADDONS)
def test_bad_addon_config_exits_2_before_registering(
    cli_plan, stack_values, overrides, key, message
):
    code, out, err, registered = cli_plan(stack_values(**overrides))
    assert code == 2
    assert key in err and message in err
    assert_error_report(err)
    assert out == ""
    assert registered == 0


def test_matching_kueue_quota_is_accepted(plan_of, stack_values):
    plan = plan_of(stack_values(addons={"kueue": {"enabled": True, "tpuQuota": 8}}))
    assert KUEUE_URL in config_files(plan)


def test_good_stack_through_the_same_cli_path_registers(cli_plan, stack_values):
    # the counterpart of the exit-2 tests: the harness does see registrations
    code, out, err, registered = cli_plan(stack_values())
    assert code == 0, err
    assert registered > 10
    assert JOBSET_URL in out


# --- the install registry ----------------------------------------------------------------

RELEASE = "tpu-pathways:installs:ReleaseManifest"
CONTROLLER_PATCH = "tpu-pathways:installs:ControllerPatch"


def test_every_install_of_the_registry_lands_on_the_system_pool(example_plan):
    """A new install in ``INSTALLS`` gets its controller placed without code of its own (dev
    installs every one of them)."""
    found = patches(example_plan("dev"))
    for install in INSTALLS:
        assert install.system_pool, install.name
        patch = found[f"{install.controller.namespace}/{install.controller.name}"]
        assert patch.name == f"pathways-dev-{install.name}-controller"
        assert patch.inputs["spec"]["template"]["spec"]["nodeSelector"] == {
            "cloud.google.com/gke-nodepool": "system-np"
        }


RELEASE_PODS = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "controller-pods.json").read_text()
)["releases"]


def test_each_patched_controller_tolerates_what_its_release_does_and_the_system_pool(
    example_plan,
):
    """Server-side apply: the patch owns the whole (atomic) tolerations list, so it is the
    release manifest's own tolerations (tests/data/controller-pods.json) and the system
    pool's taint."""
    found = patches(example_plan("dev"))
    system = {
        "key": "components.gke.io/gke-managed-components",
        "operator": "Equal",
        "value": "true",
    }
    for install in INSTALLS:
        spec = found[RELEASE_PODS[install.name]["deployment"]].inputs["spec"]["template"]["spec"]
        own = RELEASE_PODS[install.name]["tolerations"] or []
        assert spec["tolerations"] == [*own, {**system, "effect": "NoSchedule"}], install.name


@pytest.mark.parametrize("stack", EXAMPLE_STACKS)
def test_every_release_a_stack_registers_is_an_install_of_the_registry(example_plan, stack):
    plan = example_plan(stack)
    (cluster,) = plan.by_type(CLUSTER)
    registered = {f"{cluster.inputs['name']}-{install.name}" for install in INSTALLS}
    assert {r.name for r in plan.by_type(RELEASE)} <= registered


def test_production_protect_guards_everything_an_install_registers(example_plan):
    """Each kind an install registers (its manifest, its controller's patch) is one the
    production-protect rule holds to `protect`: a new kind needs a rule before it ships."""
    plan = example_plan("dev")
    installs = {r.urn for r in plan.resources if r.type in (RELEASE, CONTROLLER_PATCH)}
    kinds = {r.type for r in plan.resources if r.parent in installs}
    assert kinds == {CONFIG_FILE, PATCH}
    production_protect = rule("production-protect")
    assert production_protect.production_only
    assert {kind for kind in kinds if not production_protect.applies_to(kind)} == set()
