// A GKE cluster with one v5p-16 slice pool and a Pathways training job on it, through the
// tpu-pathways component package (provider/). Set up: see README.md here.
import * as pulumi from "@pulumi/pulumi";
import * as tpu from "@pulumi/tpu-pathways";

const config = new pulumi.Config("gcp");
const gcp = {
    project: config.require("project"),
    region: "us-east5",
    zone: "us-east5-a",
};

const cluster = new tpu.Cluster("research", {
    environment: "staging",
    gcp: gcp,
    cluster: { name: "pathways-research" },
    cpuPool: { machineType: "n2-standard-64", maxNodes: 4 },
    tpuPools: [{ name: "v5p", accelerator: "v5p-16", slices: 2, capacity: { spot: true } }],
    teams: [{ name: "research", resourceQuota: { tpuChips: 64 } }],
});

const train = new tpu.PathwaysWorkload("train", {
    kubeconfig: cluster.kubeconfig,
    namespace: "research",
    name: "train",
    accelerator: "v5p-16",
    slices: 2,
    image: "us-docker.pkg.dev/cloud-tpu-images/maxtext-images/tpu_pre_training:0.2.3",
    command: ["python3", "-m", "MaxText.train", "MaxText/configs/base.yml"],
    cpu: "8",
    memory: "32Gi",
    serviceAccount: "pathways",
    queue: "multislice-queue",
    // plain inputs (they name resources at construction): a string, not an Output
    pathwaysDir: `gs://${gcp.project}-pathways-research-pathways/research/train`,
}, { dependsOn: [cluster] });

export const clusterName = cluster.clusterName;
export const tpuNodePools = cluster.tpuNodePools;
export const job = train.jobName;
