"""Workloads through the config layer: a few lines of stack config become production-ready
PathwaysJobs, and mistakes are caught at preview time with the key named."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time

import pytest

from components.tpu import catalog
from tests.helpers import SIGTERM_WRAPPER, assert_error_report

PATHWAYS_JOB = "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob"
BUCKET = "tpu-pathways-dev-pathways-dev-pathways"  # <project>-<cluster>-pathways
CONTROLLER_ENV = {"JAX_PLATFORMS", "JAX_BACKEND_TARGET", "XCLOUD_ENVIRONMENT", "PATHWAYS_HEAD"}

TRAIN = {
    "name": "train",
    "team": "ml",
    "pool": "v5p",
    "slices": 2,
    "image": "us-docker.pkg.dev/example/train:1",
    "command": ["python3", "train.py", "--steps", "100"],
    "env": {"DATASET": "gs://example-data/c4"},
    "resources": {"cpu": "20", "memory": "80Gi"},
}
INFER = {
    "name": "infer",
    "team": "ml",
    "pool": "v6e",
    "mode": "inference",
    "image": "us-docker.pkg.dev/example/serve:1",
    "command": ["python3", "serve.py"],
    "resources": {"cpu": "8", "memory": "32Gi"},
}
NOTEBOOK = {"name": "nb", "team": "ml", "pool": "v5p", "mode": "headless"}


def values(stack_values, *, workloads=None, **overrides):
    """Kueue off (it cannot queue the colocated inference head), so the v5p pool has the 3
    slices its jobs ask for (the preflight refuses an oversubscribed pool without Kueue)."""
    base = {
        "cpuPool": {"name": "head-pool"},
        "tpuPools": [
            {"name": "v5p", "accelerator": "v5p-16", "slices": 3, "allowUnlistedZone": True},
            {"name": "v6e", "generation": "v6e", "topology": "2x2", "allowUnlistedZone": True},
        ],
        "teams": [{"name": "ml", "serviceAccount": "trainer"}],
        "workloads": [TRAIN, INFER, NOTEBOOK] if workloads is None else workloads,
        "addons": {"kueue": {"enabled": False}},
        "dataBuckets": [{"name": "example-data"}],  # TRAIN's DATASET
    }
    base.update(overrides)
    return stack_values(**base)


def jobs(plan) -> dict[str, dict]:
    return {r.inputs["metadata"]["name"]: r.inputs for r in plan.by_type(PATHWAYS_JOB)}


def main_container(job: dict) -> dict:
    (container,) = job["spec"]["controller"]["template"]["spec"]["containers"]
    return container


@pytest.fixture(scope="module")
def plain(plan_of, stack_values):
    return plan_of(values(stack_values))


@pytest.fixture(scope="module")
def queued(plan_of, stack_values):
    """Kueue on, the training job with priority high."""
    train = {**TRAIN, "priority": "high"}
    return plan_of(
        values(stack_values, workloads=[train, NOTEBOOK], addons={"kueue": {"enabled": True}})
    )


# --- training -------------------------------------------------------------------------------


def test_training_workers_come_from_the_pool(plain):
    # v5p-16 = 2x2x2 on ct5p-hightpu-4t
    assert jobs(plain)["train"]["spec"]["workers"] == [
        {"type": "ct5p-hightpu-4t", "topology": "2x2x2", "numSlices": 2}
    ]


def test_training_head_runs_on_the_cpu_pool(plain):
    controller = jobs(plain)["train"]["spec"]["controller"]
    assert controller["deploymentMode"] == "default"
    assert controller["mainContainerName"] == "main"
    pod = controller["template"]["spec"]
    assert pod["nodeSelector"] == {"cloud.google.com/gke-nodepool": "head-pool"}
    assert pod["serviceAccountName"] == "trainer"


def test_training_container(plain):
    container = main_container(jobs(plain)["train"])
    assert container["name"] == "main"
    assert container["image"] == "us-docker.pkg.dev/example/train:1"
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert container["resources"] == {
        "requests": {"cpu": "20", "memory": "80Gi"},
        "limits": {"cpu": "20", "memory": "80Gi"},
    }
    assert container["env"] == [{"name": "DATASET", "value": "gs://example-data/c4"}]


def test_training_command_is_wrapped(plain):
    command = main_container(jobs(plain)["train"])["command"]
    assert command == [*SIGTERM_WRAPPER, "python3", "train.py", "--steps", "100"]


def test_shared_tmp_volume(plain):
    pod = jobs(plain)["train"]["spec"]["controller"]["template"]["spec"]
    (volume,) = pod["volumes"]
    assert volume["hostPath"]["path"] == "/tmp"
    (mount,) = main_container(jobs(plain)["train"])["volumeMounts"]
    assert mount == {"name": volume["name"], "mountPath": "/tmp"}


def test_no_controller_set_env(plain):
    for name in ("train", "infer"):
        env = main_container(jobs(plain)[name]).get("env", [])
        assert not {e["name"] for e in env} & CONTROLLER_ENV


def test_default_pathways_dir_is_under_the_teams_prefix(plain):
    assert {name: job["spec"]["pathwaysDir"] for name, job in jobs(plain).items()} == {
        "train": f"gs://{BUCKET}/ml/train",
        "infer": f"gs://{BUCKET}/ml/infer",
        "nb": f"gs://{BUCKET}/ml/nb",
    }


def test_explicit_pathways_dir_inside_the_bucket_is_kept(plan_of, stack_values):
    train = {**TRAIN, "pathwaysDir": f"gs://{BUCKET}/ml/runs/2026/train"}
    plan = plan_of(values(stack_values, workloads=[train]))
    assert jobs(plan)["train"]["spec"]["pathwaysDir"] == f"gs://{BUCKET}/ml/runs/2026/train"


def logs(job: str) -> str:
    """Logs Explorer on a job of namespace ml of the dev cluster (console_links' URL form)."""
    return (
        "https://console.cloud.google.com/logs/query;query=resource.type%3D%22k8s_container%22"
        "%0Aresource.labels.project_id%3D%22tpu-pathways-dev%22%0Aresource.labels.location%3D%22"
        "us-west4%22%0Aresource.labels.cluster_name%3D%22pathways-dev%22%0Aresource.labels."
        f"namespace_name%3D%22ml%22%0Aresource.labels.pod_name%3D~%22%5E{job}-%28pathways-head"
        "%7Cworker%29-%22%0Aseverity%3E%3DDEFAULT;storageScope=project;duration=P1D"
        "?project=tpu-pathways-dev"
    )


DASHBOARD = (
    '"tpu-pathways test (pathways-dev)" at '
    "https://console.cloud.google.com/monitoring/dashboards?project=tpu-pathways-dev"
)


def test_training_outputs(plain):
    assert plain.outputs["workloads"]["ml/train"] == {
        "proxy": "grpc://train-pathways-head-0-0.train.ml.svc.cluster.local:29000",
        "logs": logs("train"),
        "dashboard": DASHBOARD,
    }


def test_jobs_live_in_the_team_namespace(plain):
    assert {job["metadata"]["namespace"] for job in jobs(plain).values()} == {"ml"}


# --- inference and headless -----------------------------------------------------------------


def test_inference_colocates_the_head_with_the_workers(plain):
    job = jobs(plain)["infer"]
    assert job["spec"]["controller"]["deploymentMode"] == "colocate_head_with_workers"
    # Pinned to the v6e pool's first node pool: the controller builds the colocated head's
    # nodeSelector from the workers', so head and workers both land on node pool v6e-0.
    assert job["spec"]["workers"] == [
        {
            "type": "ct6e-standard-4t",
            "topology": "2x2",
            "numSlices": 1,
            "nodeSelector": {"cloud.google.com/gke-nodepool": "v6e-0"},
        }
    ]
    pod = job["spec"]["controller"]["template"]["spec"]
    assert "cloud.google.com/gke-nodepool" not in pod.get("nodeSelector", {})
    assert main_container(job)["resources"]["requests"] == {"cpu": "8", "memory": "32Gi"}
    # The controller pins the head to TPU nodes without a TPU request, so no toleration is added
    # for it (controller v0.1.3+): the template must tolerate the TPU taint itself.
    assert pod["tolerations"] == [
        {"key": "google.com/tpu", "operator": "Exists", "effect": "NoSchedule"}
    ]


def test_training_head_does_not_tolerate_the_tpu_taint(plain):
    assert "tolerations" not in jobs(plain)["train"]["spec"]["controller"]["template"]["spec"]


def test_headless_has_no_template(plain):
    job = jobs(plain)["nb"]
    assert job["spec"]["controller"] == {"deploymentMode": "default"}
    assert job["spec"]["workers"] == [
        {"type": "ct5p-hightpu-4t", "topology": "2x2x2", "numSlices": 1}
    ]


def test_headless_outputs_say_how_to_connect(plain):
    assert plain.outputs["workloads"]["ml/nb"] == {
        "proxy": "grpc://nb-pathways-head-0-0.nb.ml.svc.cluster.local:29000",
        "port_forward": (
            "kubectl port-forward -n ml $(kubectl get pods -n ml -l "
            "jobset.sigs.k8s.io/jobset-name=nb,jobset.sigs.k8s.io/replicatedjob-name=pathways-head"
            " -o name | head -n 1) 29000:29000"
        ),
        "logs": logs("nb"),
        "dashboard": DASHBOARD,
    }


# --- priority and Kueue ---------------------------------------------------------------------


def test_priority_on_workers_and_head(queued):
    job = jobs(queued)["train"]
    assert job["spec"]["workers"][0]["priorityClassName"] == "high"
    assert job["spec"]["controller"]["template"]["spec"]["priorityClassName"] == "high"


def test_no_priority_by_default(plain):
    job = jobs(plain)["train"]
    assert "priorityClassName" not in job["spec"]["workers"][0]
    assert "priorityClassName" not in job["spec"]["controller"]["template"]["spec"]


def test_kueue_queue_label_on_every_job(queued):
    assert sorted(jobs(queued)) == ["nb", "train"]
    for name, job in jobs(queued).items():
        assert job["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": "multislice-queue"}, name


def test_no_queue_label_without_kueue(plain):
    assert sorted(jobs(plain)) == ["infer", "nb", "train"]
    for job in jobs(plain).values():
        assert "labels" not in job["metadata"]


def test_elastic_and_restart_settings(plan_of, stack_values):
    train = {
        **TRAIN,
        "maxRestarts": 3,
        "maxSliceRestarts": 4,
        "elasticSlices": 1,
        "terminationGracePeriodSeconds": 600,
        "nodeSelector": {"tpu-pathways/pool": "v5p"},
    }
    job = jobs(plan_of(values(stack_values, workloads=[train])))["train"]
    assert job["spec"]["maxRestarts"] == 3
    assert job["spec"]["controller"]["elasticSlices"] == 1
    assert job["spec"]["workers"] == [
        {
            "type": "ct5p-hightpu-4t",
            "topology": "2x2x2",
            "numSlices": 2,
            "maxSliceRestarts": 4,
            "terminationGracePeriodSeconds": 600,
            "nodeSelector": {"tpu-pathways/pool": "v5p"},
        }
    ]
    assert job["spec"]["controller"]["template"]["spec"]["terminationGracePeriodSeconds"] == 600


def test_workload_outputs_are_not_lost_across_namespaces(plan_of, stack_values):
    """Two teams may each run a job called `nb` (names are unique per namespace); the stack
    outputs, keyed <namespace>/<name>, describe both."""
    stack = values(
        stack_values,
        teams=[{"name": "a", "isolation": "shared"}, {"name": "b", "isolation": "shared"}],
        workloads=[{**NOTEBOOK, "team": "a"}, {**NOTEBOOK, "team": "b"}],
    )
    plan = plan_of(stack)
    assert len(plan.by_type(PATHWAYS_JOB)) == 2
    assert sorted(plan.outputs["workloads"]) == ["a/nb", "b/nb"]


# --- preview-time checks --------------------------------------------------------------------

UNSUPPORTED_V5P = "4x4x16"  # XPK offers it; the PathwaysJob controller v0.1.4 does not


def test_the_unsupported_topology_is_really_unsupported():
    shape = catalog.shape_for("v5p", UNSUPPORTED_V5P)
    assert shape.machine_type == "ct5p-hightpu-4t"
    assert shape.pathways_supported is False


def with_workload(**changes):
    return {"workloads": [{**TRAIN, **changes}]}


CHECKS = [
    pytest.param(
        with_workload(pool="v4"),
        "workloads[0].pool",
        ["'v4' is not a TPU pool", "v5p, v6e"],
        id="pool-does-not-exist",
    ),
    pytest.param(
        with_workload(slices=4),
        "workloads[0].slices",
        ["4 exceeds the 3 slice(s) of pool 'v5p'"],
        id="more-slices-than-the-pool",
    ),
    pytest.param(
        {
            "tpuPools": [
                {
                    "name": "v5p",
                    "generation": "v5p",
                    "topology": UNSUPPORTED_V5P,
                    "allowUnlistedZone": True,
                }
            ],
            "workloads": [{**TRAIN, "slices": 1}],
        },
        "workloads[0].pool",
        ["4x4x16", "controller v0.1.4"],
        id="topology-not-accepted-by-the-controller",
    ),
    pytest.param(
        with_workload(pathwaysDir="gs://someone-elses-bucket/train"),
        "workloads[0].pathwaysDir",
        ["not under the prefix of team 'ml'", f"use gs://{BUCKET}/ml/<path>"],
        id="pathways-dir-outside-the-bucket",
    ),
    pytest.param(
        with_workload(pathwaysDir=f"gs://{BUCKET}-other/ml/train"),
        "workloads[0].pathwaysDir",
        ["not under the prefix of team 'ml'"],
        id="pathways-dir-in-a-bucket-with-the-same-prefix",
    ),
    pytest.param(
        with_workload(pathwaysDir=f"gs://{BUCKET}/train"),
        "workloads[0].pathwaysDir",
        ["not under the prefix of team 'ml'", "only under their own prefix"],
        id="pathways-dir-outside-the-teams-prefix",
    ),
    pytest.param(
        with_workload(pathwaysDir=f"gs://{BUCKET}/ml-other/train"),
        "workloads[0].pathwaysDir",
        ["not under the prefix of team 'ml'"],
        id="pathways-dir-in-a-team-with-the-same-prefix",
    ),
    pytest.param(
        with_workload(resources={"cpu": "60", "memory": "100Gi"}),
        "workloads[0].resources",
        ["does not fit", "n2-standard-64"],
        id="head-does-not-fit-the-cpu-pool",
    ),
    pytest.param(
        {"workloads": [{**INFER, "resources": {"cpu": "200", "memory": "32Gi"}}]},
        "workloads[0].resources",
        ["does not fit", "colocated"],
        id="colocated-head-does-not-fit-the-tpu-host",
    ),
    pytest.param(
        with_workload(priority="high"),
        "workloads[0].priority",
        ["needs addons.kueue.enabled"],
        id="priority-without-kueue",
    ),
    pytest.param(
        {"workloads": [TRAIN, {**INFER, "name": "train"}]},
        "workloads[1].name",
        ["'train' is used twice in namespace 'ml'"],
        id="duplicate-names",
    ),
    pytest.param(
        with_workload(name="llm-pretrain-v5p-run001"),
        "workloads[0].name",
        ["23 characters", "at most 22"],
        id="name-23-characters",
    ),
    pytest.param(
        {"workloads": [{**NOTEBOOK, "image": "python:3.12"}]},
        "workloads[0].image",
        ["headless"],
        id="headless-with-image",
    ),
    pytest.param(
        {"workloads": [INFER], "addons": {"kueue": {"enabled": True}}},
        "workloads[0].mode",
        ["cannot be queued by Kueue", "controller pins the head to TPU nodes"],
        id="inference-with-kueue",
    ),
    pytest.param(
        with_workload(env={"JAX_PLATFORMS": "cpu"}),
        "workloads[0].env.JAX_PLATFORMS",
        ["set by the PathwaysJob controller"],
        id="controller-env",
    ),
    pytest.param(
        with_workload(team="nobody"),
        "workloads[0].team",
        ["'nobody' is not a team"],
        id="unknown-team",
    ),
    pytest.param(
        with_workload(elasticSlices=3),
        "workloads[0].elasticSlices",
        ["3 exceeds slices 2"],
        id="elastic-slices-over-slices",
    ),
    pytest.param(
        with_workload(image=None),
        "workloads[0].image",
        ["required for mode training"],
        id="training-without-image",
    ),
]


@pytest.mark.parametrize(("overrides", "key", "fragments"), CHECKS)
def test_preview_time_check(stack_values, config_error, overrides, key, fragments):
    raw = values(stack_values, **overrides)
    for workload in raw["workloads"]:
        for k in [k for k, v in workload.items() if v is None]:
            del workload[k]
    error = config_error(raw)
    issues = {issue.key: issue.message for issue in error.issues}
    assert key in issues, issues
    for fragment in fragments:
        assert fragment in issues[key]


@pytest.mark.parametrize(("overrides", "key", "fragments"), CHECKS)
def test_preview_time_check_cli_exits_2_before_registering(
    stack_values, cli_plan, overrides, key, fragments
):
    raw = values(stack_values, **overrides)
    for workload in raw["workloads"]:
        for k in [k for k, v in workload.items() if v is None]:
            del workload[k]
    code, _, err, registered = cli_plan(raw)
    assert code == 2
    assert key in err
    assert_error_report(err)
    assert registered == 0


# --- the SIGTERM wrapper, actually run ------------------------------------------------------

CHILD = "trap 'echo got-term; exit 7' TERM; echo ready; sleep 5 & wait"
# A racy wrapper loses the child's status in only a few percent of runs, so run it many times
# (in parallel: two batches of 64 take about a second).
BATCHES, RUNS = 2, 64


@pytest.fixture(scope="module")
def wrapper_script(plan_of, stack_values):
    command = main_container(jobs(plan_of(values(stack_values)))["train"])["command"]
    assert command[:2] == ["/bin/sh", "-c"]
    return command[2]


def run_wrapped(script: str, argv: list[str], terminate_after: float | None, runs: int = 1):
    """Start ``runs`` copies of ``/bin/sh -c SCRIPT pathways-main ARGV...`` (each in its own
    process group), optionally SIGTERM each once its child printed 'ready' and
    ``terminate_after`` seconds have passed; return [(exit status, output)]."""
    with contextlib.ExitStack() as stack:
        outputs = [stack.enter_context(tempfile.TemporaryFile()) for _ in range(runs)]
        procs: list[subprocess.Popen] = []
        stack.callback(_end_groups, procs)
        for out in outputs:
            procs.append(
                subprocess.Popen(
                    ["/bin/sh", "-c", script, "pathways-main", *argv],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        if terminate_after is not None:
            deadline = time.monotonic() + 10
            while not all("ready" in _text(o) for o in outputs):
                assert time.monotonic() < deadline, "the wrapped command never started"
                time.sleep(0.02)
            time.sleep(terminate_after)
            for proc in procs:
                proc.send_signal(signal.SIGTERM)
        return [(p.wait(timeout=10), _text(o)) for p, o in zip(procs, outputs, strict=True)]


def _text(out) -> str:
    out.seek(0)
    return out.read().decode()


def _end_groups(procs: list[subprocess.Popen]) -> None:
    """Kill what is left of the process groups this test started (the child's `sleep 5`
    outlives it), by their ids."""
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


def test_wrapper_forwards_sigterm_and_propagates_the_exit_status(wrapper_script):
    """SIGTERM to the wrapper reaches the child, which checkpoints ("got-term") and exits 7;
    the pod must end with the child's status, not the signal's (143)."""
    outcomes: dict[tuple[int, str], int] = {}
    for _ in range(BATCHES):
        results = run_wrapped(wrapper_script, ["sh", "-c", CHILD], terminate_after=0.4, runs=RUNS)
        for status, output in results:
            outcomes[(status, output)] = outcomes.get((status, output), 0) + 1
    assert outcomes == {(7, "ready\ngot-term\n"): BATCHES * RUNS}


# The child signals its own wrapper as soon as it starts: often before the wrapper has read the
# child's process id (`child=$!`). A wrapper that forwards only once it knows the id loses that
# SIGTERM (the child runs to completion and exits 0: seen in 30 of 48 runs of the old wrapper).
EARLY_CHILD = "trap 'echo got-term; exit 7' TERM; kill -TERM $PPID; sleep 5 & wait"


def test_wrapper_forwards_a_sigterm_that_arrives_before_it_knows_the_child(wrapper_script):
    results = run_wrapped(wrapper_script, ["sh", "-c", EARLY_CHILD], terminate_after=None, runs=48)
    assert sorted(set(results)) == [(7, "got-term\n")]


def test_wrapper_passes_arguments_and_status_through(wrapper_script):
    argv = ["sh", "-c", 'printf "%s|" "$@"; exit 3', "argv0", "a b", "c"]
    ((status, output),) = run_wrapped(wrapper_script, argv, terminate_after=None)
    assert (status, output) == (3, "a b|c|")


def test_wrapper_reports_a_child_killed_by_a_signal(wrapper_script):
    ((status, _),) = run_wrapped(wrapper_script, ["sh", "-c", "kill -KILL $$"], None)
    assert status == 128 + signal.SIGKILL


def test_v4_workloads_use_the_upstream_samples_worker_type(plan_of, stack_values):
    # all three upstream PathwaysJob samples run on ct4p-hightpu-4t; a colocated head on a v4
    # host is not size-checked (no published host size), so it plans instead of failing
    infer_v4 = {**INFER, "pool": "v4"}
    train_v4 = {**TRAIN, "pool": "v4", "slices": 1}
    plan = plan_of(
        values(
            stack_values,
            workloads=[train_v4, infer_v4],
            tpuPools=[
                {"name": "v4", "accelerator": "v4-16", "slices": 2, "allowUnlistedZone": True}
            ],
        )
    )
    # the inference job holds the pool's first node pool although it is declared second, and
    # the training job sharing the pool is kept off it
    node_pools = {"infer": "v4-0", "train": "v4-1"}
    assert sorted(jobs(plan)) == ["infer", "train"]
    for name, job in jobs(plan).items():
        assert job["spec"]["workers"] == [
            {
                "type": "ct4p-hightpu-4t",
                "topology": "2x2x2",
                "numSlices": 1,
                "nodeSelector": {"cloud.google.com/gke-nodepool": node_pools[name]},
            }
        ]


# --- the proxy's credentials for clients outside Google Cloud (a laptop over port-forward) ---

LAPTOP_NOTEBOOK = {"name": "nb", "pool": "v5e", "mode": "headless"}


def test_insecure_proxy_credentials_set_the_proxy_env(plan_of, stack_values):
    notebook = {**LAPTOP_NOTEBOOK, "proxyCredentials": "insecure"}
    (job,) = plan_of(stack_values(workloads=[notebook])).by_type(PATHWAYS_JOB)
    assert job.inputs["spec"]["customComponents"] == [
        {
            "componentType": "proxy_server",
            "customEnv": [{"name": "IFRT_PROXY_USE_INSECURE_GRPC_CREDENTIALS", "value": "true"}],
        }
    ]


def test_insecure_proxy_credentials_join_a_proxy_component_of_the_stack(plan_of, stack_values):
    notebook = {
        **LAPTOP_NOTEBOOK,
        "proxyCredentials": "insecure",
        "customComponents": [
            {"type": "proxy_server", "image": "example.com/proxy:1", "env": {"LOG": "1"}},
            {"type": "worker", "flags": ["--v=1"]},
        ],
    }
    (job,) = plan_of(stack_values(workloads=[notebook])).by_type(PATHWAYS_JOB)
    assert job.inputs["spec"]["customComponents"] == [
        {"componentType": "worker", "customFlags": ["--v=1"]},
        {
            "componentType": "proxy_server",
            "image": "example.com/proxy:1",
            "customEnv": [
                {"name": "LOG", "value": "1"},
                {"name": "IFRT_PROXY_USE_INSECURE_GRPC_CREDENTIALS", "value": "true"},
            ],
        },
    ]


def test_proxy_credentials_default_to_alts(plan_of, stack_values):
    (job,) = plan_of(stack_values(workloads=[LAPTOP_NOTEBOOK])).by_type(PATHWAYS_JOB)
    assert "customComponents" not in job.inputs["spec"]


@pytest.mark.parametrize(
    ("workload", "key", "message"),
    [
        (
            {
                "name": "train",
                "pool": "v5e",
                "image": "example.com/train:1",
                "command": ["python3", "train.py"],
                "proxyCredentials": "insecure",
            },
            "workloads[0].proxyCredentials",
            "applies to headless workloads only (mode training has no port-forward address); "
            "remove it",
        ),
        (
            {
                **LAPTOP_NOTEBOOK,
                "customComponents": [
                    {
                        "type": "proxy_server",
                        "env": {"IFRT_PROXY_USE_INSECURE_GRPC_CREDENTIALS": "true"},
                    }
                ],
            },
            # as plain env it would also be refused as credential-like: it has a key of its own
            "workloads[0].customComponents[0].env.IFRT_PROXY_USE_INSECURE_GRPC_CREDENTIALS",
            "is the IFRT proxy's switch to insecure gRPC credentials; set proxyCredentials: "
            "insecure on a headless workload or shared service instead",
        ),
    ],
)
def test_proxy_credentials_misuse_is_refused(stack_values, config_error, workload, key, message):
    issues = {i.key: i.message for i in config_error(stack_values(workloads=[workload])).issues}
    assert issues == {key: message}
