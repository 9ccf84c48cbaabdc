"""Pulumi type tokens of the provider resources and invokes that the plan, its mocks, diff, cost,
critical path, render and the guardrails look for: one place, so the layers that read a plan never
disagree on a token. Pure: no Pulumi. (The project's own component tokens,
``tpu-pathways:<module>:<Type>``, are each written once, in their component.)"""

from __future__ import annotations

# --- the engine's own ----------------------------------------------------------------------
STACK = "pulumi:pulumi:Stack"  # the root stack resource
STACK_REFERENCE = "pulumi:pulumi:StackReference"
PULUMI_PREFIX = "pulumi:"  # the engine's resources and providers (pulumi:providers:*)
PROJECT_PREFIX = "tpu-pathways:"  # this project's component resources
# What the offline plan's mock engine answers an invoke's looked-up values with (it looks
# nothing up): the one answer the code that reads a lookup may take for "not looked up".
DEPLOY_TIME = "<looked up at deploy time>"

# --- Google Cloud: GKE --------------------------------------------------------------------
CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"

# --- Google Cloud: network ----------------------------------------------------------------
NETWORK = "gcp:compute/network:Network"
SUBNETWORK = "gcp:compute/subnetwork:Subnetwork"
FIREWALL = "gcp:compute/firewall:Firewall"
ROUTER = "gcp:compute/router:Router"
ROUTER_NAT = "gcp:compute/routerNat:RouterNat"
# A Compute Engine workload policy (Ironwood slice placement).
RESOURCE_POLICY = "gcp:compute/resourcePolicy:ResourcePolicy"

# --- Google Cloud: identity and project IAM -----------------------------------------------
SERVICE_ACCOUNT = "gcp:serviceaccount/account:Account"
PROJECT_IAM_MEMBER = "gcp:projects/iAMMember:IAMMember"
PROJECT_IAM_BINDING = "gcp:projects/iAMBinding:IAMBinding"
PROJECT_IAM_POLICY = "gcp:projects/iAMPolicy:IAMPolicy"

# --- Google Cloud: storage and who may read it --------------------------------------------
BUCKET = "gcp:storage/bucket:Bucket"
BUCKET_IAM_MEMBER = "gcp:storage/bucketIAMMember:BucketIAMMember"
BUCKET_IAM_BINDING = "gcp:storage/bucketIAMBinding:BucketIAMBinding"
BUCKET_IAM_POLICY = "gcp:storage/bucketIAMPolicy:BucketIAMPolicy"
BUCKET_ACCESS_CONTROL = "gcp:storage/bucketAccessControl:BucketAccessControl"
DEFAULT_OBJECT_ACCESS_CONTROL = "gcp:storage/defaultObjectAccessControl:DefaultObjectAccessControl"
OBJECT_ACCESS_CONTROL = "gcp:storage/objectAccessControl:ObjectAccessControl"
BUCKET_ACL = "gcp:storage/bucketACL:BucketACL"
DEFAULT_OBJECT_ACL = "gcp:storage/defaultObjectACL:DefaultObjectACL"
OBJECT_ACL = "gcp:storage/objectACL:ObjectACL"

# --- Google Cloud: file systems and monitoring ---------------------------------------------
LUSTRE_INSTANCE = "gcp:lustre/instance:Instance"
FILESTORE_INSTANCE = "gcp:filestore/instance:Instance"
DASHBOARD = "gcp:monitoring/dashboard:Dashboard"
ALERT_POLICY = "gcp:monitoring/alertPolicy:AlertPolicy"

# --- Google Cloud: invokes the program calls ----------------------------------------------
GET_SUBNETWORK = "gcp:compute/getSubnetwork:getSubnetwork"
GET_PROJECT = "gcp:organizations/getProject:getProject"
GET_CLUSTER = "gcp:container/getCluster:getCluster"
# The deployer's own credentials (a fleet mints the manager's tokens on its workers with them).
GET_CLIENT_CONFIG = "gcp:organizations/getClientConfig:getClientConfig"

# --- Kubernetes ---------------------------------------------------------------------------
KUBERNETES_PREFIX = "kubernetes:"  # every object pulumi-kubernetes registers
# pulumi-kubernetes' YAML components (ConfigFile, ConfigGroup, any version).
KUBERNETES_YAML_PREFIX = "kubernetes:yaml"
# A release manifest applied by URL (pulumi-kubernetes' remote ConfigFile component).
CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
PRIORITY_CLASS = "kubernetes:scheduling.k8s.io/v1:PriorityClass"
# A server-side patch of an install's controller Deployment (addons/installs.py ControllerPatch).
DEPLOYMENT_PATCH = "kubernetes:apps/v1:DeploymentPatch"
NAMESPACE = "kubernetes:core/v1:Namespace"
RESOURCE_QUOTA = "kubernetes:core/v1:ResourceQuota"
K8S_SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"
ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
CLUSTER_ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding"
ADMISSION_POLICY = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"
ADMISSION_POLICY_BINDING = (
    "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding"
)
PATHWAYS_JOB = "kubernetes:pathways-job.pathways.domain/v1:PathwaysJob"
# A Pathways workload on the JobSet backend (components/workloads/jobset.py).
JOBSET = "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet"
# What a Pathways workload is created as, on either backend.
WORKLOAD_TYPES = (PATHWAYS_JOB, JOBSET)
KUEUE_TYPE_PREFIX = "kubernetes:kueue.x-k8s.io/"  # every served version of Kueue's kinds
# Kueue's namespaced queue: KUEUE_TYPE_PREFIX, a served version, then ":LocalQueue".
LOCAL_QUEUE_KIND = "LocalQueue"
