"""A GKE cluster with one v5p TPU pool and a PathwaysJob on it, from the public API only.

Set the project and location first: ``pulumi config set gcp:project MY-PROJECT``,
``gcp:region us-east5`` and ``gcp:zone us-east5-a``.
"""

import pulumi

from components import (
    CpuNodePool,
    CpuNodePoolArgs,
    DeploymentMode,
    GkeCluster,
    GkeClusterArgs,
    HostNetworkPlacement,
    PathwaysJob,
    PathwaysJobArgs,
    PathwaysJobSpec,
    ReleaseManifest,
    ReleaseManifestArgs,
    ScratchBucket,
    ScratchBucketArgs,
    TeamAdmissionPolicies,
    TeamAdmissionPoliciesArgs,
    TeamNamespace,
    TeamNamespaceArgs,
    TpuNodePool,
    TpuNodePoolArgs,
    UserContainer,
    Worker,
    WorkerType,
    resolve_accelerator,
)

gcp = pulumi.Config("gcp")
project, region, zone = gcp.require("project"), gcp.require("region"), gcp.require("zone")

cluster = GkeCluster(
    "pathways", GkeClusterArgs(project=project, region=region, zone=zone, name="pathways")
)
pools = cluster.pool_target()
# The Pathways head (resource manager, proxy) runs on CPU nodes; the workers on the TPU slices.
heads = CpuNodePool("heads", CpuNodePoolArgs("cpu-np", "n2-standard-64", pools, max_nodes=2))
shape = resolve_accelerator("v5p-16")  # 2x2x2 on two ct5p-hightpu-4t hosts
tpus = TpuNodePool("v5p", TpuNodePoolArgs("v5p", shape, pools, slices=2))

# JobSet, then the PathwaysJob CRD and controller, once the cluster has nodes for them.
jobset = ReleaseManifest(
    "jobset",
    ReleaseManifestArgs(
        "https://github.com/kubernetes-sigs/jobset/releases/download/v0.10.1/manifests.yaml",
        "v0.10.1",
        cluster.provider,
        depends_on=[*cluster.control_plane, heads],
    ),
)
controller = ReleaseManifest(
    "pathways-job",
    ReleaseManifestArgs(
        "https://github.com/google/pathways-job/releases/download/v0.1.4/install.yaml",
        "v0.1.4",
        cluster.provider,
        depends_on=[jobset.manifest],
    ),
)
# The admission policies every team namespace shares (Pod Security baseline, and the host network
# only for the Job controller's pods), and one team alone on the cluster's pools: its Pathways
# pods may use the host network there.
TeamAdmissionPolicies(
    "team-admission",
    TeamAdmissionPoliciesArgs(cluster.provider, kueue=False, depends_on=[jobset.manifest]),
)
team = TeamNamespace(
    "research",
    TeamNamespaceArgs("research", cluster.provider, host_network=HostNetworkPlacement.SHARED),
)
bucket_name = f"{project}-pathways-scratch"
bucket = ScratchBucket(
    "scratch",
    ScratchBucketArgs(
        project=project,
        region=region,
        bucket_name=bucket_name,
        cluster_ready=cluster.control_plane,
        node_service_account=cluster.node_service_account,
    ),
)

PathwaysJob(
    "train",
    PathwaysJobArgs(
        name="train",
        namespace=team.namespace,
        spec=PathwaysJobSpec(
            workers=[
                Worker(type=WorkerType(shape.machine_type), topology=shape.topology, num_slices=2)
            ],
            # The user code in the head pod, pinned to the CPU pool: the SIGTERM wrapper, the
            # host's /tmp and requests = limits come with it, as in a stack file's workload.
            controller=UserContainer(
                image="us-docker.pkg.dev/cloud-tpu-images/maxtext-images/tpu_pre_training:0.2.3",
                command=["python3", "-c", "import pathwaysutils; pathwaysutils.initialize()"],
                cpu="8",
                memory="32Gi",
                service_account="pathways",  # the team's workload account (TeamNamespace)
            ).controller(DeploymentMode.DEFAULT, cpu_pool="cpu-np"),
            pathways_dir=f"gs://{bucket_name}/research/",
            pathways_version="jax-0.9.0",  # a pinned Pathways release, not the controller's latest
        ),
        provider=cluster.provider,
        controller_install=controller.manifest,
        prerequisites=bucket.grants,
    ),
)

pulumi.export("kubeconfig", cluster.kubeconfig)
pulumi.export("tpu_node_pools", tpus.node_pool_names)
