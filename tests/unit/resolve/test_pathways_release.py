"""The Pathways release every job runs: one pinned per stack (pathwaysVersion), overridable per
workload or shared service, 'latest' only in dev; the resolved images in the plan."""

from __future__ import annotations

import pytest

from components.plan.render import render_text

PATHWAYS_JOB = "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob"
REGISTRY = "us-docker.pkg.dev/cloud-tpu-v2-images/pathways"
NOTEBOOK = {"name": "notebook", "pool": "v5e", "mode": "headless"}
SERVICE = {"name": "shared", "pool": "v5e"}


def test_every_job_runs_the_pinned_release_by_default(example_plan):
    plan = example_plan("dev")
    for job in plan.by_type(PATHWAYS_JOB):
        assert job.inputs["spec"]["pathwaysVersion"] == "jax-0.9.0"
    assert plan.summary["workloads"]["pathways/hello-train"]["images"] == {
        "pathways_server": f"{REGISTRY}/server:jax-0.9.0",
        "proxy_server": f"{REGISTRY}/proxy_server:jax-0.9.0",
        "worker": f"{REGISTRY}/server:jax-0.9.0",
        "user": "us-docker.pkg.dev/cloud-tpu-images/maxtext-images/tpu_pre_training:0.2.3",
    }


def test_an_entry_overrides_the_stack_release_and_a_custom_image_wins(plan_of, stack_values):
    notebook = {
        **NOTEBOOK,
        "pathwaysVersion": "jax-0.8.1",
        "customComponents": [{"type": "worker", "image": "gcr.io/acme/worker:7"}],
    }
    plan = plan_of(
        stack_values(
            pathwaysVersion="jax-0.7.2",
            workloads=[notebook],
            sharedServices=[SERVICE],
            addons={"kueue": {"enabled": True}},
        )
    )
    jobs = plan.summary["workloads"]
    assert jobs["pathways/notebook"]["images"] == {
        "pathways_server": f"{REGISTRY}/server:jax-0.8.1",
        "proxy_server": f"{REGISTRY}/proxy_server:jax-0.8.1",
        "worker": "gcr.io/acme/worker:7",
        "user": None,
    }
    assert jobs["default/shared"]["images"]["pathways_server"] == f"{REGISTRY}/server:jax-0.7.2"
    spec = plan.get(PATHWAYS_JOB, "pathways-dev-pathways-shared").inputs["spec"]
    assert spec["pathwaysVersion"] == "jax-0.7.2"


@pytest.mark.parametrize("environment", ["staging", "production"])
def test_latest_is_refused_outside_dev_naming_each_key(config_error, stack_values, environment):
    values = stack_values(
        environment=environment,
        pathwaysVersion="latest",
        workloads=[{**NOTEBOOK, "pathwaysVersion": "latest"}],
        sharedServices=[{**SERVICE, "pathwaysVersion": "latest"}],
    )
    issues = config_error(values).issues
    message = (
        f"'latest' is allowed only in environment dev (this stack is {environment}): the "
        "controller pulls images with imagePullPolicy Always, so a restarted worker could run "
        "another build than the resource manager; use a Pathways release such as 'jax-0.9.0' "
        "(the default)"
    )
    assert [str(i) for i in issues if "latest" in str(i)] == [
        f"pathwaysVersion: {message}",
        f"workloads[0].pathwaysVersion: {message}",
        f"sharedServices[0].pathwaysVersion: {message}",
    ]


def test_latest_is_allowed_in_dev(config_of, stack_values):
    config = config_of(stack_values(pathwaysVersion="latest", workloads=[NOTEBOOK]))
    assert config.pathways_version == "latest"


def test_the_plan_lines_name_the_images_and_buckets(example_plan):
    lines = render_text(example_plan("dev")).splitlines()
    start = lines.index(
        "  + PathwaysJob pathways/notebook  workers=1 x ct5lp-hightpu-4t 2x4  "
        "deploymentMode=default"
    )
    assert lines[start + 4 : start + 8] == [
        f"      pathways server {REGISTRY}/server:jax-0.9.0, proxy",
        f"               {REGISTRY}/proxy_server:jax-0.9.0, worker",
        f"               {REGISTRY}/server:jax-0.9.0",
        "      buckets  tpu-pathways-dev-pathways-dev-pathways (readWrite)",
    ]


def test_latest_in_any_case_is_refused_outside_dev(config_error, stack_values):
    values = stack_values(environment="production", pathwaysVersion="LATEST", workloads=[NOTEBOOK])
    assert [str(i) for i in config_error(values).issues] == [
        "pathwaysVersion: 'LATEST' is allowed only in environment dev (this stack is "
        "production): the controller pulls images with imagePullPolicy Always, so a restarted "
        "worker could run another build than the resource manager; use a Pathways release such "
        "as 'jax-0.9.0' (the default)"
    ]


UNPINNED = (
    "an unpinned image is allowed only in environment dev (this stack is production): the "
    "controller pulls images with imagePullPolicy Always, so a restarted worker could run "
    "another build than the resource manager; pin a tag or a digest"
)


def test_unpinned_component_images_are_refused_outside_dev_naming_the_key(
    config_error, stack_values
):
    server = f"{REGISTRY}/server"
    notebook = {
        **NOTEBOOK,
        "customComponents": [
            {"type": "pathways_server", "image": f"{server}:latest"},
            {"type": "worker", "image": f"{server}:Latest"},
            {"type": "proxy_server", "image": "localhost:5000/proxy_server"},
        ],
    }
    service = {**SERVICE, "customComponents": [{"type": "worker", "image": server}]}
    values = stack_values(environment="production", workloads=[notebook], sharedServices=[service])
    assert [str(i) for i in config_error(values).issues if "unpinned" in str(i)] == [
        f"workloads[0].customComponents[0].image: '{server}:latest' is tagged 'latest', which "
        f"names no fixed build; {UNPINNED}",
        f"workloads[0].customComponents[1].image: '{server}:Latest' is tagged 'Latest', which "
        f"names no fixed build; {UNPINNED}",
        "workloads[0].customComponents[2].image: 'localhost:5000/proxy_server' has no tag or "
        f"digest, so it runs whatever 'latest' is; {UNPINNED}",
        f"sharedServices[0].customComponents[0].image: '{server}' has no tag or digest, so it "
        f"runs whatever 'latest' is; {UNPINNED}",
    ]


def test_pinned_component_images_are_accepted_outside_dev(config_of, stack_values):
    digest = "sha256:" + "a" * 64
    images = [f"{REGISTRY}/server:jax-0.9.0", f"{REGISTRY}/server@{digest}"]
    notebook = {
        **NOTEBOOK,
        "customComponents": [
            {"type": "pathways_server", "image": images[0]},
            {"type": "worker", "image": images[1]},
        ],
    }
    config = config_of(stack_values(environment="production", workloads=[notebook]))
    assert [c.image for c in config.workloads[0].custom_components] == images


def test_unpinned_component_images_are_allowed_in_dev(config_of, stack_values):
    notebook = {**NOTEBOOK, "customComponents": [{"type": "worker", "image": "gcr.io/a/w"}]}
    config = config_of(stack_values(workloads=[notebook]))
    assert config.workloads[0].custom_components[0].image == "gcr.io/a/w"


TRAIN = {
    "name": "train",
    "pool": "v5e",
    "command": ["python3", "train.py"],
    "resources": {"cpu": "8", "memory": "32Gi"},
}


@pytest.mark.parametrize("environment", ["staging", "production"])
def test_an_untagged_or_latest_user_image_is_refused_outside_dev(
    config_error, stack_values, environment
):
    jobs = [
        {**TRAIN, "image": "us-docker.pkg.dev/acme/train"},
        {**TRAIN, "name": "serve", "image": "us-docker.pkg.dev/acme/serve:latest"},
        {**TRAIN, "name": "ok", "image": "us-docker.pkg.dev/acme/ok:1.0"},
    ]
    issues = config_error(stack_values(environment=environment, workloads=jobs)).issues
    found = [(i.key, i.message.split(";")[0]) for i in issues if i.key.endswith(".image")]
    assert found == [
        (
            "workloads[0].image",
            "'us-docker.pkg.dev/acme/train' has no tag or digest, so it runs whatever 'latest' is",
        ),
        (
            "workloads[1].image",
            "'us-docker.pkg.dev/acme/serve:latest' is tagged 'latest', which names no fixed build",
        ),
    ]


def test_an_untagged_user_image_is_warned_about_in_dev(cli_plan, stack_values):
    values = stack_values(workloads=[{**TRAIN, "image": "us-docker.pkg.dev/acme/train"}])
    code, _, err, _ = cli_plan(values, "devimage")
    assert code == 0, err
    assert (
        "warning: Pulumi.devimage.yaml: workloads[0].image: 'us-docker.pkg.dev/acme/train' has "
        "no tag or digest, so it runs whatever 'latest' is; allowed in dev, refused in staging "
        "and production (pin a tag or a digest)"
    ) in err
