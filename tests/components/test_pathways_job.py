"""The typed PathwaysJob API (pathways-job.pathways.domain/v1, controller v0.1.4).

The three upstream samples (google/pathways-job config/samples at v0.1.4: training, elastic
training, colocated python) are written out below by hand, with our own scripts, and each is
expressed through the typed API; the emitted manifest must be exactly the sample.
"""

from __future__ import annotations

import textwrap

import pulumi
import pulumi_kubernetes as k8s
import pytest
import yaml

from components.errors import ConfigError
from components.pathways.spec import (
    ComponentType,
    Controller,
    CustomComponent,
    DeploymentMode,
    EnvVar,
    PathwaysJobSpec,
    Worker,
    WorkerType,
    job_name_problem,
)
from components.plan.engine import run_program
from components.resolve.tenancy.ownership import owner_stacks
from components.workloads.job import PathwaysJob, PathwaysJobArgs
from tests.examples import EXAMPLES_DIR
from tests.helpers import uses_jobset_backend

PATHWAYS_JOB = "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob"
K8S_PROVIDER = "pulumi:providers:kubernetes"
CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"

TRAINING_SCRIPT = """\
pip install --quiet pathwaysutils
python3 -c 'import jax, pathwaysutils; pathwaysutils.initialize(); print(jax.device_count())'
"""
ELASTIC_SCRIPT = """\
pip install --quiet pathwaysutils
python3 train_elastic.py --checkpoint-dir=/tmp/ckpt
"""
COLOCATED_SCRIPT = """\
pip install --quiet pathwaysutils
python3 -c 'import jax; print(jax.devices())'
"""


def indented(script: str) -> str:
    """A script as the body of a YAML literal block scalar in the samples below."""
    return textwrap.indent(script, " " * 12).rstrip("\n")


SIDECAR_IMAGE = "us-docker.pkg.dev/example-project/pathways/colocated-python-sidecar:2026-01"

TRAINING_SAMPLE = f"""
apiVersion: pathways-job.pathways.domain/v1
kind: PathwaysJob
metadata:
  name: pathways-trial
  namespace: default
spec:
  maxRestarts: 10
  workers:
  - type: ct4p-hightpu-4t
    topology: 2x2x2
    numSlices: 2
    nodeSelector:
      cloud.google.com/reservation-name: my-reservation
  pathwaysDir: gs://test-bucket/tmp
  controller:
    mainContainerName: main-workload
    deploymentMode: default
    template:
      spec:
        containers:
        - name: main-workload
          image: python:3.13
          imagePullPolicy: Always
          command:
          - /bin/sh
          - -c
          - |
{indented(TRAINING_SCRIPT)}
"""

ELASTIC_SAMPLE = f"""
apiVersion: pathways-job.pathways.domain/v1
kind: PathwaysJob
metadata:
  name: pathways-elastic
  namespace: default
spec:
  maxRestarts: 0
  workers:
  - type: ct4p-hightpu-4t
    topology: 2x2x2
    numSlices: 2
    maxSliceRestarts: 4
  pathwaysDir: gs://test-bucket/tmp
  controller:
    deploymentMode: default
    elasticSlices: 1
    mainContainerName: elastic-main
    template:
      spec:
        containers:
        - name: elastic-main
          image: python:3.13
          imagePullPolicy: Always
          command:
          - /bin/sh
          - -c
          - |
{indented(ELASTIC_SCRIPT)}
"""

COLOCATED_SAMPLE = f"""
apiVersion: pathways-job.pathways.domain/v1
kind: PathwaysJob
metadata:
  name: pathways-colocated
  namespace: default
spec:
  maxRestarts: 0
  customComponents:
  - componentType: colocated_python_sidecar
    image: {SIDECAR_IMAGE}
  workers:
  - type: ct4p-hightpu-4t
    topology: 2x2x2
    numSlices: 2
  pathwaysDir: gs://test-bucket/tmp
  controller:
    deploymentMode: default
    mainContainerName: main
    template:
      spec:
        containers:
        - name: main
          env:
          - name: XCLOUD_ENVIRONMENT
            value: GCP
          - name: JAX_PLATFORMS
            value: proxy
          - name: JAX_BACKEND_TARGET
            value: grpc://pathways-colocated-pathways-head-0-0.pathways-colocated:29000
          image: python:3.13
          imagePullPolicy: Always
          command:
          - /bin/sh
          - -c
          - |
{indented(COLOCATED_SCRIPT)}
"""


def container(name: str, script: str, env: list[dict] | None = None) -> dict:
    spec = {
        "name": name,
        "image": "python:3.13",
        "imagePullPolicy": "Always",
        "command": ["/bin/sh", "-c", script],
    }
    if env is not None:
        spec["env"] = env
    return {"spec": {"containers": [spec]}}


def training_spec() -> PathwaysJobSpec:
    return PathwaysJobSpec(
        max_restarts=10,
        workers=[
            Worker(
                type=WorkerType.CT4P_HIGHTPU_4T,
                topology="2x2x2",
                num_slices=2,
                node_selector={"cloud.google.com/reservation-name": "my-reservation"},
            )
        ],
        pathways_dir="gs://test-bucket/tmp",
        controller=Controller(
            main_container_name="main-workload",
            deployment_mode=DeploymentMode.DEFAULT,
            template=container("main-workload", TRAINING_SCRIPT),
        ),
    )


def elastic_spec() -> PathwaysJobSpec:
    return PathwaysJobSpec(
        max_restarts=0,
        workers=[
            Worker(
                type=WorkerType.CT4P_HIGHTPU_4T,
                topology="2x2x2",
                num_slices=2,
                max_slice_restarts=4,
            )
        ],
        pathways_dir="gs://test-bucket/tmp",
        controller=Controller(
            deployment_mode=DeploymentMode.DEFAULT,
            elastic_slices=1,
            main_container_name="elastic-main",
            template=container("elastic-main", ELASTIC_SCRIPT),
        ),
    )


def colocated_spec() -> PathwaysJobSpec:
    env = [
        {"name": "XCLOUD_ENVIRONMENT", "value": "GCP"},
        {"name": "JAX_PLATFORMS", "value": "proxy"},
        {
            "name": "JAX_BACKEND_TARGET",
            "value": "grpc://pathways-colocated-pathways-head-0-0.pathways-colocated:29000",
        },
    ]
    return PathwaysJobSpec(
        max_restarts=0,
        custom_components=[
            CustomComponent(
                component_type=ComponentType.COLOCATED_PYTHON_SIDECAR, image=SIDECAR_IMAGE
            )
        ],
        workers=[Worker(type=WorkerType.CT4P_HIGHTPU_4T, topology="2x2x2", num_slices=2)],
        pathways_dir="gs://test-bucket/tmp",
        controller=Controller(
            deployment_mode=DeploymentMode.DEFAULT,
            main_container_name="main",
            template=container("main", COLOCATED_SCRIPT, env),
        ),
    )


SAMPLES = {
    "pathways-trial": (TRAINING_SAMPLE, training_spec),
    "pathways-elastic": (ELASTIC_SAMPLE, elastic_spec),
    "pathways-colocated": (COLOCATED_SAMPLE, colocated_spec),
}


def sample_document(name: str) -> dict:
    return yaml.safe_load(SAMPLES[name][0])


def minimal(**changes) -> dict:
    spec = {
        "workers": [{"type": "ct5p-hightpu-4t", "topology": "2x2x2", "numSlices": 1}],
        "controller": {"deploymentMode": "default"},
    }
    spec.update(changes)
    return spec


# --- the samples through the typed API ------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "script"),
    [
        ("pathways-trial", TRAINING_SCRIPT),
        ("pathways-elastic", ELASTIC_SCRIPT),
        ("pathways-colocated", COLOCATED_SCRIPT),
    ],
)
def test_sample_scripts_survive_the_yaml_literals(name, script):
    (main,) = sample_document(name)["spec"]["controller"]["template"]["spec"]["containers"]
    assert main["command"] == ["/bin/sh", "-c", script]


@pytest.mark.parametrize("name", list(SAMPLES))
def test_typed_spec_emits_the_sample(name):
    _, build = SAMPLES[name]
    assert build().manifest() == sample_document(name)["spec"]


@pytest.mark.parametrize("name", list(SAMPLES))
def test_the_sample_parses_back_to_the_same_spec(name):
    _, build = SAMPLES[name]
    assert PathwaysJobSpec.parse(sample_document(name)["spec"]) == build()


@pytest.mark.parametrize("name", list(SAMPLES))
def test_samples_are_valid_for_the_crd(pathwaysjob_schema_errors, name):
    assert pathwaysjob_schema_errors(sample_document(name)) == []


def test_manifest_omits_unset_fields():
    assert PathwaysJobSpec.parse(minimal()).manifest() == {
        "workers": [{"type": "ct5p-hightpu-4t", "topology": "2x2x2", "numSlices": 1}],
        "controller": {"deploymentMode": "default"},
    }


def test_custom_component_flags_and_env():
    spec = PathwaysJobSpec(
        workers=[Worker(type="ct6e-standard-4t", topology="2x2", num_slices=1)],
        controller=Controller(deployment_mode="colocate_head_with_workers"),
        custom_components=[
            CustomComponent(
                component_type="pathways_server",
                custom_flags=["--temporary_flags_for_debugging=1"],
                custom_env=[EnvVar(name="TPU_STDERR_LOG_LEVEL", value="0")],
            )
        ],
    )
    assert spec.manifest()["customComponents"] == [
        {
            "componentType": "pathways_server",
            "customFlags": ["--temporary_flags_for_debugging=1"],
            "customEnv": [{"name": "TPU_STDERR_LOG_LEVEL", "value": "0"}],
        }
    ]
    assert spec.manifest()["controller"] == {"deploymentMode": "colocate_head_with_workers"}


# --- the resource, through the mock engine --------------------------------------------------


@pytest.fixture(scope="module")
def emitted():
    """A provider, a controller install and the three samples as PathwaysJob resources."""

    def program():
        provider = k8s.Provider("k8s", kubeconfig="{}")
        install = k8s.yaml.v2.ConfigFile(
            "controller",
            file="https://github.com/google/pathways-job/releases/download/v0.1.4/install.yaml",
            opts=pulumi.ResourceOptions(provider=provider),
        )
        for name, (_, build) in SAMPLES.items():
            PathwaysJob(
                f"job-{name}",
                PathwaysJobArgs(
                    name=name,
                    namespace="default",
                    spec=build(),
                    provider=provider,
                    controller_install=install,
                ),
            )
        return {}

    resources, _ = run_program(program, "typed-api")
    return resources


def one(resources, type_token: str):
    (found,) = [r for r in resources if r.type == type_token]
    return found


def test_emitted_type_and_document(emitted):
    jobs = {r.inputs["metadata"]["name"]: r for r in emitted if r.type == PATHWAYS_JOB}
    assert set(jobs) == set(SAMPLES)
    for name, job in jobs.items():
        assert job.inputs == sample_document(name)


def test_emitted_with_provider_dependency_and_replacement_options(emitted):
    provider = one(emitted, K8S_PROVIDER)
    install = one(emitted, CONFIG_FILE)
    jobs = [r for r in emitted if r.type == PATHWAYS_JOB]
    assert len(jobs) == 3
    for job in jobs:
        assert job.custom
        assert job.provider == provider.urn
        assert install.urn in job.dependencies
        assert job.options["replaceOnChanges"] == ["spec"]
        assert job.options["deleteBeforeReplace"] is True


def test_without_controller_install_there_is_no_dependency():
    def program():
        provider = k8s.Provider("k8s", kubeconfig="{}")
        PathwaysJob(
            "job",
            PathwaysJobArgs(
                name="solo",
                namespace="team",
                spec=PathwaysJobSpec.parse(minimal()),
                provider=provider,
                controller_install=None,
                labels={"kueue.x-k8s.io/queue-name": "multislice-queue"},
            ),
        )
        return {}

    resources, _ = run_program(program, "typed-api")
    job = one(resources, PATHWAYS_JOB)
    assert job.dependencies == []
    assert job.inputs["metadata"] == {
        "name": "solo",
        "namespace": "team",
        "labels": {"kueue.x-k8s.io/queue-name": "multislice-queue"},
    }


# --- names ----------------------------------------------------------------------------------


def test_a_22_character_name_is_accepted():
    assert job_name_problem("a" * 22) is None
    assert job_name_problem("llm-pretrain-v5p-run01") is None  # 22 characters


def test_a_23_character_name_is_rejected_with_the_reason():
    problem = job_name_problem("llm-pretrain-v5p-run001")
    assert problem is not None
    assert "23 characters" in problem
    assert "at most 22" in problem
    assert "label" in problem and "63" in problem


@pytest.mark.parametrize("name", ["Train", "1train", "train-", "train_job", "", "tr.ain"])
def test_names_must_be_dns_1035_labels(name):
    problem = job_name_problem(name)
    assert problem is not None
    assert "DNS-1035" in problem


def test_bad_name_fails_before_registration():
    caught: list[ConfigError] = []

    def program():
        provider = k8s.Provider("k8s", kubeconfig="{}")
        try:
            PathwaysJob(
                "job",
                PathwaysJobArgs(
                    name="a-very-long-job-name-23",
                    namespace="team",
                    spec=PathwaysJobSpec.parse(minimal()),
                    provider=provider,
                    controller_install=None,
                ),
            )
        except ConfigError as exc:
            caught.append(exc)
        return {}

    resources, _ = run_program(program, "typed-api")
    assert [r.type for r in resources] == [K8S_PROVIDER]
    (error,) = caught
    assert [i.key for i in error.issues] == ["metadata.name"]
    assert "at most 22" in error.issues[0].message


# --- spec limits ----------------------------------------------------------------------------

WORKER = {"type": "ct5p-hightpu-4t", "topology": "2x2x2", "numSlices": 1}
ALLOWED_TYPES = [
    "tpu7x-standard-4t",
    "ct6e-standard-4t",
    "ct6e-standard-8t",
    "ct5p-hightpu-4t",
    "ct5lp-hightpu-4t",
    "ct5lp-hightpu-8t",
    "ct4p-hightpu-4t",
]


def test_worker_type_enum_is_the_crds():
    assert sorted(t.value for t in WorkerType) == sorted(ALLOWED_TYPES)
    assert sorted(m.value for m in DeploymentMode) == ["colocate_head_with_workers", "default"]
    assert sorted(c.value for c in ComponentType) == [
        "colocated_python_sidecar",
        "pathways_server",
        "proxy_server",
        "worker",
    ]


def test_two_workers_are_rejected():
    worker = Worker(type="ct5p-hightpu-4t", topology="2x2x2", num_slices=1)
    with pytest.raises(ConfigError) as caught:
        PathwaysJobSpec(workers=[worker, worker], controller=Controller(deployment_mode="default"))
    assert str(caught.value) == (
        "PathwaysJobSpec: 1 problem\n  - workers: workers takes exactly 1 entry (it has 2)"
    )


def test_no_worker_is_rejected():
    with pytest.raises(ConfigError, match="workers takes exactly 1 entry"):
        PathwaysJobSpec(workers=[], controller=Controller(deployment_mode="default"))


def test_five_custom_components_are_rejected():
    components = [CustomComponent(component_type=t) for t in ComponentType]
    components.append(CustomComponent(component_type="worker", image="x"))
    assert len(components) == 5
    with pytest.raises(
        ConfigError, match=r"custom_components takes at most 4 entries \(it has 5\)"
    ):
        PathwaysJobSpec(
            workers=[Worker(type="ct5p-hightpu-4t", topology="2x2x2", num_slices=1)],
            controller=Controller(deployment_mode="default"),
            custom_components=components,
        )


def test_four_distinct_custom_components_are_fine():
    spec = PathwaysJobSpec.parse(
        minimal(customComponents=[{"componentType": t.value} for t in ComponentType])
    )
    assert len(spec.manifest()["customComponents"]) == 4


PARSE_ERRORS = [
    pytest.param(minimal(workers=[WORKER, WORKER]), "workers", "exactly 1 entry", id="two-workers"),
    pytest.param(minimal(workers=[]), "workers", "exactly 1 entry", id="no-workers"),
    pytest.param(
        minimal(customComponents=[{"componentType": "worker"}] * 5),
        "customComponents",
        "at most 4",
        id="five-components",
    ),
    pytest.param(
        minimal(customComponents=[{"componentType": "proxy_server"}] * 2),
        "customComponents",
        "unique",
        id="duplicate-component-type",
    ),
    pytest.param(
        minimal(workers=[{**WORKER, "type": "ct5p-hightpu-8t"}]),
        "workers[0].type",
        "'ct5p-hightpu-8t'",
        id="bad-worker-type",
    ),
    pytest.param(
        minimal(controller={"deploymentMode": "colocate"}),
        "controller.deploymentMode",
        "'colocate'",
        id="bad-deployment-mode",
    ),
    pytest.param(
        minimal(workers=[{**WORKER, "numSlices": 0}]),
        "workers[0].numSlices",
        "0 is not allowed: numSlices must be from 1 to 2147483647",
        id="zero-slices",
    ),
    pytest.param(
        minimal(maxRestarts=2**31), "maxRestarts", "2147483647", id="max-restarts-over-int32"
    ),
    pytest.param(
        minimal(workers=[{**WORKER, "topology": "2x2x2x2"}]),
        "workers[0].topology",
        "'2x2x2x2'",
        id="bad-topology-form",
    ),
    pytest.param(
        minimal(controller={}), "controller.deploymentMode", "required", id="no-deployment-mode"
    ),
    pytest.param(
        minimal(maxRestart=3), "maxRestart", "did you mean 'maxRestarts'", id="unknown-key"
    ),
]


@pytest.mark.parametrize(("data", "key", "message"), PARSE_ERRORS)
def test_parse_turns_errors_into_config_errors_with_key_paths(data, key, message):
    with pytest.raises(ConfigError) as caught:
        PathwaysJobSpec.parse(data)
    issues = {issue.key: issue.message for issue in caught.value.issues}
    assert key in issues, issues
    assert message in issues[key]


def test_bad_worker_type_lists_the_allowed_values():
    with pytest.raises(ConfigError) as caught:
        PathwaysJobSpec.parse(minimal(workers=[{**WORKER, "type": "v5p"}]))
    (issue,) = caught.value.issues
    assert issue.key == "workers[0].type"
    for allowed in ALLOWED_TYPES:
        assert allowed in issue.message


def test_parse_reports_every_problem_at_once():
    data = minimal(workers=[{**WORKER, "type": "tpu", "numSlices": -1}], maxRestarts=-1)
    with pytest.raises(ConfigError) as caught:
        PathwaysJobSpec.parse(data, source="job.yaml")
    keys = sorted(issue.key for issue in caught.value.issues)
    assert keys == ["maxRestarts", "workers[0].numSlices", "workers[0].type"]
    assert str(caught.value).startswith("job.yaml: 3 problems")


# --- replacement semantics of every PathwaysJob of every example stack ----------------------


# team stacks rely on the owner's controller; research-jobset has none (tests/components/
# test_workloads_jobset.py checks its JobSets)
@pytest.mark.parametrize(
    "stack", [s for s in owner_stacks(EXAMPLES_DIR) if not uses_jobset_backend(s)]
)
def test_every_stack_job_is_replaced_not_updated(example_plan, stack):
    plan = example_plan(stack)
    jobs = plan.by_type(PATHWAYS_JOB)
    assert jobs, f"stack {stack} has no PathwaysJob"
    (provider,) = plan.by_type(K8S_PROVIDER)
    controller = [
        r.urn
        for r in plan.by_type(CONFIG_FILE)
        if r.inputs["file"].endswith("/pathways-job/releases/download/v0.1.4/install.yaml")
    ]
    assert len(controller) == 1
    for job in jobs:
        assert job.options.get("replaceOnChanges") == ["spec"], job.urn
        assert job.options.get("deleteBeforeReplace") is True, job.urn
        assert job.provider == provider.urn
        assert controller[0] in job.dependencies
