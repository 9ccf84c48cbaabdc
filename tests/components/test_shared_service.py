"""Shared Pathways services: a headless PathwaysJob many clients reach through pathwaysutils'
``isc_pathways.connect(pathways_service=..., expected_tpu_instances=...)``."""

from __future__ import annotations

import ast
import re

import pulumi_kubernetes as k8s
import pytest

from components.errors import ConfigError
from components.pathways.spec import Controller, DeploymentMode, PathwaysJobSpec, Worker, WorkerType
from components.plan.engine import run_program
from components.workloads.shared_service import SharedPathwaysService, SharedPathwaysServiceArgs

PATHWAYS_JOB = "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob"
LOCAL_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"
CLUSTER_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
SERVICE = "tpu-pathways:workloads:SharedPathwaysService"
# what pathwaysutils' shared-service client accepts as an instance type
INSTANCE_KEY = re.compile(r"^tpu(v5e|v5|v6e|7x):\d+(x\d+){1,2}$")


@pytest.fixture(scope="module")
def serving(example_plan):
    return example_plan("serving-v6e")


SERVING_CONNECT = (
    'isc_pathways.connect(cluster="pathways-serving", project="tpu-pathways-serving", '
    'region="us-east5", '
    'gcs_bucket="gs://tpu-pathways-serving-pathways-serving-pathways/serving/shared-v6e", '
    'pathways_service="shared-v6e-pathways-head-0-0.shared-v6e.default.svc.cluster.local:29001", '
    'expected_tpu_instances={"tpuv6e:2x2": 1})'
)


SERVING_LOGS = (
    "https://console.cloud.google.com/logs/query;query=resource.type%3D%22k8s_container%22%0A"
    "resource.labels.project_id%3D%22tpu-pathways-serving%22%0Aresource.labels.location%3D%22"
    "us-east5%22%0Aresource.labels.cluster_name%3D%22pathways-serving%22%0Aresource.labels."
    "namespace_name%3D%22default%22%0Aresource.labels.pod_name%3D~%22%5Eshared-v6e-%28pathways-"
    "head%7Cworker%29-%22%0Aseverity%3E%3DDEFAULT;storageScope=project;duration=P1D"
    "?project=tpu-pathways-serving"
)


def test_serving_stack_outputs(serving):
    assert serving.outputs["shared_services"] == {
        "default/shared-v6e": {
            "team": "serving",
            "expected_tpu_instances": {"tpuv6e:2x2": 1},
            # in `default`: pathwaysutils 0.1.13 reads the service's JobSet there
            "pathways_service": (
                "shared-v6e-pathways-head-0-0.shared-v6e.default.svc.cluster.local:29001"
            ),
            "connect": SERVING_CONNECT,
            "logs": SERVING_LOGS,
            "dashboard": (
                '"tpu-pathways serving-v6e (pathways-serving)" at '
                "https://console.cloud.google.com/monitoring/dashboards?project=tpu-pathways-serving"
            ),
        }
    }


def test_serving_plan_summary_shows_the_connect_call_and_client_capacity(serving):
    entry = serving.summary["workloads"]["default/shared-v6e"]
    assert entry["connect"] == SERVING_CONNECT
    # cpu-np has 4 nodes at most; the service's own head holds one (host port 29000); the
    # colocated batch-infer head sits on a TPU host
    assert entry["clients"] == {
        "atOnce": 3,
        "counted": "4 node(s) of cpu-np at most, less 1 held by this stack's Pathways heads; "
        "one client proxy (16 CPU / 93.1Gi, host port 29000) per node",
    }


def test_serving_shared_service_is_a_headless_default_mode_job(serving):
    (service,) = serving.by_type(SERVICE)
    (job,) = [r for r in serving.by_type(PATHWAYS_JOB) if r.parent == service.urn]
    assert job.inputs["metadata"] == {
        "name": "shared-v6e",
        "namespace": "default",
        "labels": {"tpu-pathways/team": "serving"},
        # `pulumi up` waits until the service runs, or fails with its status
        "annotations": {
            "pulumi.com/waitFor": "condition=Running",
            "pulumi.com/timeoutSeconds": "1800",
        },
    }
    assert job.inputs["spec"] == {
        # elasticSlices > 0 is what makes the v0.1.4 controller honour maxSliceRestarts
        "controller": {"deploymentMode": "default", "elasticSlices": 1},
        "maxRestarts": 30,  # the upstream deployer's
        "pathwaysDir": "gs://tpu-pathways-serving-pathways-serving-pathways/serving/shared-v6e",
        "pathwaysVersion": "jax-0.9.0",  # the stack's pinned release, not the controller's latest
        # kept off v6e-0, the node pool the stack's colocated batch-infer holds
        "workers": [
            {
                "type": "ct6e-standard-4t",
                "topology": "2x2",
                "numSlices": 1,
                "maxSliceRestarts": 1000000,  # the upstream deployer's
                "nodeSelector": {"cloud.google.com/gke-nodepool": "v6e-1"},
            }
        ],
    }
    assert job.options["replaceOnChanges"] == ["spec"]
    assert job.options["deleteBeforeReplace"] is True


@pytest.mark.parametrize(
    ("pool", "slices", "expected"),
    [
        (
            {"generation": "v6e", "topology": "2x2", "slices": 2, "allowUnlistedZone": True},
            2,
            {"tpuv6e:2x2": 2},
        ),
        (
            {"generation": "v6e", "topology": "4x4", "slices": 2, "allowUnlistedZone": True},
            1,
            {"tpuv6e:4x4": 1},
        ),
        ({"generation": "v5e", "topology": "4x4"}, 1, {"tpuv5e:4x4": 1}),
        (
            {"accelerator": "v5p-16", "slices": 3, "allowUnlistedZone": True},
            3,
            {"tpuv5:2x2x2": 3},
        ),  # tpuv5, not tpuv5p
    ],
)
def test_expected_tpu_instances(plan_of, stack_values, pool, slices, expected):
    plan = plan_of(
        stack_values(
            tpuPools=[{"name": "pool", **pool}],
            sharedServices=[{"name": "svc", "pool": "pool", "slices": slices}],
        )
    )
    entry = plan.outputs["shared_services"]["default/svc"]
    assert entry["expected_tpu_instances"] == expected
    assert entry["pathways_service"] == "svc-pathways-head-0-0.svc.default.svc.cluster.local:29001"
    (job,) = plan.by_type(PATHWAYS_JOB)
    assert job.inputs["spec"]["controller"] == {"deploymentMode": "default", "elasticSlices": 1}
    assert job.inputs["spec"]["workers"][0]["numSlices"] == slices


def test_shared_service_gets_its_own_local_queue_in_default_with_kueue(plan_of, stack_values):
    plan = plan_of(
        stack_values(
            addons={"kueue": {"enabled": True}},
            sharedServices=[{"name": "svc", "pool": "v5e"}],
        )
    )
    (job,) = plan.by_type(PATHWAYS_JOB)
    assert job.inputs["metadata"]["labels"] == {
        "tpu-pathways/team": "pathways",
        "kueue.x-k8s.io/queue-name": "svc",
    }
    queues = {
        (r.inputs["metadata"]["namespace"], r.inputs["metadata"]["name"]): r.inputs["spec"]
        for r in plan.by_type(LOCAL_QUEUE)
    }
    assert queues == {
        ("pathways", "multislice-queue"): {"clusterQueue": "cluster-queue"},
        ("default", "svc"): {"clusterQueue": "cluster-queue"},
    }


def test_a_team_quota_admits_its_shared_service_from_default(plan_of, stack_values):
    plan = plan_of(
        stack_values(
            teams=[{"name": "serving"}],
            addons={
                "kueue": {
                    "enabled": True,
                    "teamQuotas": [{"team": "serving", "chips": {"v5litepod-8": 8}}],
                }
            },
            sharedServices=[{"name": "svc", "team": "serving", "pool": "v5e"}],
        )
    )
    (queue,) = [
        r for r in plan.by_type(LOCAL_QUEUE) if r.inputs["metadata"]["namespace"] == "default"
    ]
    assert queue.inputs["spec"] == {"clusterQueue": "serving-cluster-queue"}
    (team_queue,) = [
        r
        for r in plan.by_type(CLUSTER_QUEUE)
        if r.inputs["metadata"]["name"] == "serving-cluster-queue"
    ]
    assert team_queue.inputs["spec"]["namespaceSelector"] == {
        "matchExpressions": [
            {
                "key": "kubernetes.io/metadata.name",
                "operator": "In",
                "values": ["serving", "default"],
            }
        ]
    }


def test_shared_service_restarts_images_and_version_are_configurable(plan_of, stack_values):
    service = {
        "name": "svc",
        "pool": "v5e",
        "maxRestarts": 50,
        "pathwaysVersion": "jax-0.6.0",
        "customComponents": [
            {"type": "pathways_server", "image": "example.com/server@sha256:" + "a" * 64},
            {"type": "worker", "image": "example.com/server@sha256:" + "a" * 64},
        ],
    }
    plan = plan_of(stack_values(sharedServices=[service], waitForRunning={"timeoutSeconds": 600}))
    (job,) = plan.by_type(PATHWAYS_JOB)
    spec = job.inputs["spec"]
    assert spec["maxRestarts"] == 50
    assert spec["workers"][0]["maxSliceRestarts"] == 1000000
    assert spec["pathwaysVersion"] == "jax-0.6.0"
    assert [c["componentType"] for c in spec["customComponents"]] == ["pathways_server", "worker"]
    assert job.inputs["metadata"]["annotations"]["pulumi.com/timeoutSeconds"] == "600"


def test_workloads_wait_only_when_the_stack_asks(plan_of, stack_values):
    notebook = {"name": "nb", "pool": "v5e", "mode": "headless"}
    (job,) = plan_of(stack_values(workloads=[notebook])).by_type(PATHWAYS_JOB)
    assert "annotations" not in job.inputs["metadata"]
    asked = stack_values(workloads=[notebook], waitForRunning={"jobs": True})
    (job,) = plan_of(asked).by_type(PATHWAYS_JOB)
    assert job.inputs["metadata"]["annotations"] == {
        "pulumi.com/waitFor": "condition=Running",
        "pulumi.com/timeoutSeconds": "1800",
    }


EIGHT_CHIP_HOST = {
    "tpuPools": [
        {
            "name": "v6e8",
            "generation": "v6e",
            "topology": "2x4",
            "machineType": "ct6e-standard-8t",
            "allowUnlistedZone": True,
        }
    ],
    "sharedServices": [{"name": "svc", "pool": "v6e8"}],
}


def test_an_8_chip_host_pool_is_rejected(stack_values, config_error):
    error = config_error(stack_values(**EIGHT_CHIP_HOST))
    issues = {issue.key: issue.message for issue in error.issues}
    assert list(issues) == ["sharedServices[0].pool"]
    message = issues["sharedServices[0].pool"]
    assert "'tpuv6e1t:2x4'" in message
    assert "not an instance type" in message


def test_a_v4_pool_is_rejected_for_a_shared_service(stack_values, config_error):
    # tpuv4 is not in pathwaysutils' instance pattern, though the PathwaysJob controller takes it
    values = stack_values(
        tpuPools=[{"name": "v4", "accelerator": "v4-8", "allowUnlistedZone": True}],
        sharedServices=[{"name": "svc", "pool": "v4"}],
    )
    issues = {issue.key: issue.message for issue in config_error(values).issues}
    assert issues == {
        "sharedServices[0].pool": "'tpuv4:2x2x1' is not an instance type pathwaysutils' shared "
        "service accepts (tpuv5e, tpuv5, tpuv6e or tpu7x with a topology); use a v5e, v5p, "
        "v6e or tpu7x pool of 4-chip hosts"
    }


def test_an_8_chip_host_pool_exits_2_before_registering(stack_values, cli_plan):
    code, _, err, registered = cli_plan(stack_values(**EIGHT_CHIP_HOST))
    assert code == 2
    assert "sharedServices[0].pool" in err and "tpuv6e1t:2x4" in err
    assert registered == 0


@pytest.mark.parametrize(
    ("service", "key", "fragment"),
    [
        ({"name": "svc", "pool": "nope"}, "sharedServices[0].pool", "not a TPU pool"),
        ({"name": "svc", "pool": "v5e", "slices": 2}, "sharedServices[0].slices", "exceeds"),
        ({"name": "svc", "pool": "v5e", "team": "x"}, "sharedServices[0].team", "not a team"),
        (
            {"name": "shared-service-for-team", "pool": "v5e"},
            "sharedServices[0].name",
            "at most 22",
        ),
    ],
)
def test_shared_service_checks(stack_values, config_error, service, key, fragment):
    error = config_error(stack_values(sharedServices=[service]))
    issues = {issue.key: issue.message for issue in error.issues}
    assert key in issues, issues
    assert fragment in issues[key]


def service_args(spec: PathwaysJobSpec, provider=None, **extra) -> SharedPathwaysServiceArgs:
    """Args of a 2x4 v6e service `svc` in namespace `serving` of cluster `lab`."""
    return SharedPathwaysServiceArgs(
        job_name="svc",
        namespace="serving",
        spec=spec,
        address="svc-pathways-head-0-0.svc.serving.svc.cluster.local:29001",
        instance_type="tpuv6e:2x4",
        cluster_name="lab",
        project="tpu-lab",
        location="us-east5-a",
        provider=provider,
        wait_timeout_seconds=900,
        **extra,
    )


def test_a_service_built_from_its_args_alone():
    """The component from its Args, without a stack config: its PathwaysJob is its child, waits
    for Running, depends on the install and the prerequisites; its outputs are what was given."""
    spec = PathwaysJobSpec(
        workers=[Worker(type=WorkerType.CT6E_STANDARD_4T, topology="2x4", num_slices=2)],
        controller=Controller(deployment_mode=DeploymentMode.DEFAULT),
        pathways_dir="gs://lab-scratch/serving/svc",
    )

    def program():
        provider = k8s.Provider("k8s", kubeconfig="{}")
        install = k8s.core.v1.Namespace("install")
        queue = k8s.core.v1.Namespace("queue")
        service = SharedPathwaysService(
            "svc",
            service_args(
                spec,
                provider=provider,
                proxy_options=["use_insecure_credentials:true"],
                controller_install=install,
                labels={"kueue.x-k8s.io/queue-name": "multislice-queue"},
                prerequisites=[queue],
            ),
        )
        return {
            "service": service.pathways_service,
            "instances": service.expected_tpu_instances,
            "connect": service.connect,
        }

    resources, outputs = run_program(program, "typed-api")
    assert outputs == {
        "instances": {"tpuv6e:2x4": 2},
        "service": "svc-pathways-head-0-0.svc.serving.svc.cluster.local:29001",
        "connect": 'isc_pathways.connect(cluster="lab", project="tpu-lab", region="us-east5-a", '
        'gcs_bucket="gs://lab-scratch/serving/svc", '
        'pathways_service="svc-pathways-head-0-0.svc.serving.svc.cluster.local:29001", '
        'expected_tpu_instances={"tpuv6e:2x4": 2}, '
        'proxy_options=["use_insecure_credentials:true"])',
    }
    (service,) = [r for r in resources if r.type == SERVICE]
    (job,) = [r for r in resources if r.type == PATHWAYS_JOB]
    namespaces = {r.name: r.urn for r in resources if r.type == "kubernetes:core/v1:Namespace"}
    assert job.parent == service.urn
    assert job.name == "svc"
    assert sorted(job.dependencies) == sorted([namespaces["install"], namespaces["queue"]])
    assert job.inputs["metadata"] == {
        "name": "svc",
        "namespace": "serving",
        "labels": {"kueue.x-k8s.io/queue-name": "multislice-queue"},
        "annotations": {
            "pulumi.com/waitFor": "condition=Running",
            "pulumi.com/timeoutSeconds": "900",
        },
    }
    assert job.inputs["spec"]["workers"] == [
        {"type": "ct6e-standard-4t", "topology": "2x4", "numSlices": 2}
    ]


# --- what pathwaysutils 0.1.13's client accepts (experimental/shared_pathways_service) ---------

# isc_pathways.connect's keyword-only parameters, and which of them have no default
CONNECT_PARAMETERS = {
    "cluster",
    "project",
    "region",
    "gcs_bucket",
    "pathways_service",
    "expected_tpu_instances",
    "proxy_job_name",
    "proxy_server_image",
    "proxy_options",
    "collect_service_metrics",
}
CONNECT_REQUIRED = {
    "cluster",
    "project",
    "region",
    "gcs_bucket",
    "pathways_service",
    "expected_tpu_instances",
}


def client_accepts(pathways_service: str, expected_tpu_instances: dict[str, int]) -> None:
    """The client's own checks, written out: validators.validate_pathways_service,
    gke_utils.extract_jobset_name and validators.validate_tpu_instances."""
    host, port = pathways_service.split(":")  # exactly one ':'
    assert host.strip() and port.strip()
    int(port)  # numeric
    assert "-pathways-head" in host  # the JobSet name is what comes before it
    assert len(expected_tpu_instances) == 1  # one machine type
    (key,) = expected_tpu_instances
    assert key.strip() and INSTANCE_KEY.match(key), key


def connect_arguments(call: str) -> dict:
    """The keyword arguments of a pasted ``isc_pathways.connect(...)`` call (all literals)."""
    (statement,) = ast.parse(call).body
    node = statement.value
    assert ast.unparse(node.func) == "isc_pathways.connect"
    assert not node.args  # connect takes keywords only
    return {k.arg: ast.literal_eval(k.value) for k in node.keywords}


@pytest.mark.parametrize(
    ("pool", "instances"),
    [
        ({"generation": "v5e", "topology": "2x4"}, {"tpuv5e:2x4": 1}),
        ({"accelerator": "v5p-16", "allowUnlistedZone": True}, {"tpuv5:2x2x2": 1}),
        ({"generation": "v6e", "topology": "2x2", "allowUnlistedZone": True}, {"tpuv6e:2x2": 1}),
        ({"accelerator": "tpu7x-8", "allowUnlistedZone": True}, {"tpu7x:2x2x1": 1}),
    ],
)
def test_outputs_pass_the_clients_validation(plan_of, stack_values, pool, instances):
    plan = plan_of(
        stack_values(
            tpuPools=[{"name": "pool", **pool}],
            sharedServices=[{"name": "svc", "pool": "pool"}],
        )
    )
    entry = plan.outputs["shared_services"]["default/svc"]
    address = "svc-pathways-head-0-0.svc.default.svc.cluster.local:29001"
    assert entry["pathways_service"] == address
    assert entry["expected_tpu_instances"] == instances
    client_accepts(entry["pathways_service"], entry["expected_tpu_instances"])
    arguments = connect_arguments(entry["connect"])
    assert set(arguments) <= CONNECT_PARAMETERS
    assert set(arguments) >= CONNECT_REQUIRED
    assert arguments == {
        "cluster": "pathways-dev",
        "project": "tpu-pathways-dev",
        "region": "us-west4",
        "gcs_bucket": "gs://tpu-pathways-dev-pathways-dev-pathways/pathways/svc",
        "pathways_service": address,
        "expected_tpu_instances": instances,
    }
    assert plan.summary["workloads"]["default/svc"]["connect"] == entry["connect"]


def test_a_zonal_cluster_connects_with_its_zone(plan_of, stack_values):
    values = stack_values(
        cluster={"regional": False}, sharedServices=[{"name": "svc", "pool": "v5e"}]
    )
    connect = plan_of(values).outputs["shared_services"]["default/svc"]["connect"]
    # the client runs `gcloud container clusters get-credentials --location=<region>`
    assert connect_arguments(connect)["region"] == "us-west4-a"


def test_insecure_proxy_credentials_go_into_the_connect_call(plan_of, stack_values):
    service = {"name": "svc", "pool": "v5e", "proxyCredentials": "insecure"}
    connect = plan_of(stack_values(sharedServices=[service])).outputs["shared_services"][
        "default/svc"
    ]["connect"]
    assert connect_arguments(connect)["proxy_options"] == ["use_insecure_credentials:true"]


# --- namespace default: collisions ----------------------------------------------------------


def test_two_teams_cannot_both_name_a_service_alike(stack_values, config_error):
    values = stack_values(
        teams=[
            {"name": "serving", "isolation": "shared"},
            {"name": "research", "isolation": "shared"},
        ],
        sharedServices=[
            {"name": "svc", "team": "serving", "pool": "v5e"},
            {"name": "svc", "team": "research", "pool": "v5e"},
        ],
    )
    issues = {i.key: i.message for i in config_error(values).issues}
    assert issues == {
        "sharedServices[0].name": "'svc' is used twice in namespace 'default'",
        "sharedServices[1].name": "'svc' is used twice in namespace 'default'",
    }


def test_a_service_may_not_be_named_kubernetes(stack_values, config_error):
    values = stack_values(sharedServices=[{"name": "kubernetes", "pool": "v5e"}])
    issues = {i.key: i.message for i in config_error(values).issues}
    assert issues == {
        "sharedServices[0].name": "'kubernetes' is Kubernetes' own Service in "
        "namespace 'default', where shared services run (JobSet names a Service after the "
        "job); choose another name"
    }


@pytest.mark.parametrize("name", ["x-pathways-head", "a-pathways-head-b"])
def test_a_service_name_containing_the_head_marker_is_refused(stack_values, config_error, name):
    values = stack_values(sharedServices=[{"name": name, "pool": "v5e"}])
    issues = {i.key: i.message for i in config_error(values).issues}
    assert issues == {
        "sharedServices[0].name": f"'{name}' contains '-pathways-head': pathwaysutils 0.1.13 "
        "(gke_utils.extract_jobset_name) reads the JobSet name from the service's address up "
        "to the first '-pathways-head', so clients would look for the wrong JobSet; choose "
        "another name"
    }


def test_a_service_name_ending_in_pathways_is_kept_whole_by_the_client(plan_of, stack_values):
    # "svc-pathways" + "-pathways-head-0-0..." still splits back to "svc-pathways"
    values = stack_values(sharedServices=[{"name": "svc-pathways", "pool": "v5e"}])
    (job,) = plan_of(values).by_type(PATHWAYS_JOB)
    assert job.inputs["metadata"]["name"] == "svc-pathways"


def test_default_is_still_refused_as_a_team(stack_values, config_error):
    values = stack_values(
        teams=[{"name": "default"}],
        sharedServices=[{"name": "svc", "team": "default", "pool": "v5e"}],
    )
    keys = {i.key for i in config_error(values).issues}
    assert "teams[0].name" in keys


# --- slice restarts -------------------------------------------------------------------------

HUGE_V5P = {
    "name": "huge",
    "generation": "v5p",
    "topology": "16x20x28",
    "allowUnlistedZone": True,
}  # 2240 hosts
# A Pod range for its nodes: the default /14 holds 1024 (a /24 per node).
WIDE_PODS = {"network": {"podsCidr": "10.64.0.0/12"}}


def test_slice_restarts_default_to_what_the_backoff_limit_holds(plan_of, stack_values):
    values = stack_values(
        tpuPools=[HUGE_V5P],
        cpuPool={"maxNodes": 2},
        cluster=WIDE_PODS,
        sharedServices=[{"name": "svc", "pool": "huge"}],
    )
    (job,) = plan_of(values).by_type(PATHWAYS_JOB)
    # 2240 x 958698 = 2147483520 <= 2**31 - 1 < 2240 x 958699
    assert job.inputs["spec"]["workers"][0]["maxSliceRestarts"] == 958698


def test_slice_restarts_that_overflow_the_backoff_limit_are_refused(stack_values, config_error):
    values = stack_values(
        tpuPools=[HUGE_V5P],
        cluster=WIDE_PODS,
        sharedServices=[{"name": "svc", "pool": "huge", "maxSliceRestarts": 1000000}],
    )
    issues = {i.key: i.message for i in config_error(values).issues}
    assert issues == {
        "sharedServices[0].maxSliceRestarts": "1000000 x the 2240 hosts of a slice of pool "
        "'huge' overflows the worker Job's backoffLimit (an int32 in the PathwaysJob controller "
        "v0.1.4); at most 958698"
    }


def test_workload_slice_restarts_that_overflow_the_backoff_limit_are_refused(
    stack_values, config_error
):
    workload = {
        "name": "train",
        "pool": "huge",
        "image": "example.com/t:1",
        "command": ["t"],
        "maxSliceRestarts": 2147483647,
        "elasticSlices": 1,
    }
    issues = {
        i.key: i.message
        for i in config_error(
            stack_values(tpuPools=[HUGE_V5P], workloads=[workload], cluster=WIDE_PODS)
        ).issues
    }
    assert issues == {
        "workloads[0].maxSliceRestarts": "2147483647 x the 2240 hosts of a slice of pool "
        "'huge' overflows the worker Job's backoffLimit (an int32 in the PathwaysJob controller "
        "v0.1.4); at most 958698"
    }


def test_workload_slice_restarts_without_elastic_slices_do_not_reach_the_backoff_limit(
    stack_values, config_of
):
    # without elasticSlices the controller's backoffLimit is hosts x 4, whatever maxSliceRestarts
    workload = {
        "name": "train",
        "pool": "huge",
        "image": "example.com/t:1",
        "command": ["t"],
        "maxSliceRestarts": 2147483647,
    }
    config = config_of(stack_values(tpuPools=[HUGE_V5P], workloads=[workload], cluster=WIDE_PODS))
    assert config.workloads[0].max_slice_restarts == 2147483647


# --- client capacity ------------------------------------------------------------------------


def test_no_room_for_a_client_names_the_key_and_the_count(stack_values, config_error):
    # 3 nodes: the service's head, a training head and a headless head hold all of them
    values = stack_values(
        cpuPool={"maxNodes": 3},
        tpuPools=[{"name": "v5e", "generation": "v5e", "topology": "2x4", "slices": 3}],
        workloads=[
            {"name": "train", "pool": "v5e", "image": "example.com/t:1", "command": ["t"]},
            {"name": "nb", "pool": "v5e", "mode": "headless"},
        ],
        sharedServices=[{"name": "svc", "pool": "v5e"}],
    )
    issues = {i.key: i.message for i in config_error(values).issues}
    assert issues == {
        "cpuPool.maxNodes": "no node is left for a client of the shared services (3 node(s) of "
        "cpu-np at most, less 3 held by this stack's Pathways heads; one client proxy (16 CPU / "
        "93.1Gi, host port 29000) per node); raise cpuPool.maxNodes by the number of clients to "
        "hold at once"
    }


def test_training_heads_hold_cpu_nodes_clients_cannot_use(plan_of, stack_values):
    training = {
        "name": "train",
        "pool": "v5e",
        "image": "example.com/train:1",
        "command": ["python3", "train.py"],
    }
    values = stack_values(
        tpuPools=[{"name": "v5e", "generation": "v5e", "topology": "2x4", "slices": 2}],
        cpuPool={"maxNodes": 5},
        workloads=[training],
        sharedServices=[{"name": "svc", "pool": "v5e"}],
    )
    clients = plan_of(values).summary["workloads"]["default/svc"]["clients"]
    assert clients["atOnce"] == 3  # 5 nodes, less the service's head and the training head


def test_no_room_for_a_client_is_refused_at_plan_time(stack_values, cli_plan):
    values = stack_values(cpuPool={"maxNodes": 1}, sharedServices=[{"name": "svc", "pool": "v5e"}])
    code, _, err, registered = cli_plan(values)
    assert code == 2
    assert "cpuPool.maxNodes" in err
    assert "no node is left for a client of the shared services" in err
    assert registered == 0


def test_the_plain_plan_says_how_many_clients_fit(stack_values, cli_plan):
    values = stack_values(cpuPool={"maxNodes": 3}, sharedServices=[{"name": "svc", "pool": "v5e"}])
    code, out, _, _ = cli_plan(values)
    assert code == 0
    lines = out.splitlines()
    start = lines.index(
        "      clients  at once 2 (3 node(s) of cpu-np at most, less 1 held by this stack's "
        "Pathways heads; one client proxy (16"
    )
    assert lines[start + 1 : start + 3] == [
        "               CPU / 93.1Gi, host port 29000) per node)",
        '      connect  isc_pathways.connect(cluster="pathways-dev", project="tpu-pathways-dev", '
        'region="us-west4",',
    ]


def test_a_service_without_a_scratch_path_is_refused_by_its_args():
    spec = PathwaysJobSpec(
        workers=[Worker(type=WorkerType.CT6E_STANDARD_4T, topology="2x4", num_slices=1)],
        controller=Controller(deployment_mode=DeploymentMode.DEFAULT),
    )
    with pytest.raises(ConfigError, match="needs pathways_dir"):
        service_args(spec)
