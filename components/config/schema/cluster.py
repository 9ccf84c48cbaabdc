"""Where the stack lives: GCP project, network and the GKE cluster."""

from __future__ import annotations

import ipaddress
from typing import Annotated

from pydantic import (
    AfterValidator,
    Field,
    StrictBool,
    StrictInt,
    field_validator,
    model_validator,
)

from components.config import address_sets, grammars
from components.config.schema.base import (
    Cidr,
    ClusterName,
    GroupEmail,
    ProjectId,
    SubnetCidr,
    grammar,
    pattern,
)
from components.config.schema.maintenance import MaintenanceConfig
from components.errors import ConfigIssue, KeyedError
from components.gke_versions import GkeVersion
from components.model import ConfigModel
from components.vocabulary import DnsProvider, ReleaseChannel


class GcpConfig(ConfigModel):
    """Where the stack's resources live."""

    project: ProjectId
    """GCP project ID that owns the cluster, network, node pools and bucket."""
    region: Annotated[str, pattern(r"[a-z]+-[a-z]+\d+", "a GCP region such as 'us-east5'")]
    """Region of the cluster's control plane (regional clusters), subnet and bucket."""
    zone: Annotated[
        str, pattern(r"[a-z]+-[a-z]+\d+-[a-z][a-z0-9]{0,4}", "a GCP zone such as 'us-east5-b'")
    ]
    """Zone of every node pool; TPU capacity is zonal, so all slices live here."""

    @model_validator(mode="after")
    def _zone_in_region(self) -> GcpConfig:
        if not self.zone.startswith(self.region + "-"):
            raise KeyedError.at(
                "zone", f"{self.zone!r} is not in region {self.region!r} (expected {self.region}-X)"
            )
        return self


_NetworkRef = Annotated[
    str, grammar(lambda v: grammars.project_resource_problem(v, "global/networks", "a VPC network"))
]
"""A VPC as GKE's ``network`` takes it: a name, or a path (of the stack's project: another
project's, a Shared VPC host's, is refused by ``resolve.stack_checks``)."""


class NetworkConfig(ConfigModel):
    """The VPC the cluster uses: a dedicated one (default) or an existing one."""

    existing_network: _NetworkRef | None = None
    """Name of an existing VPC of the stack's project to use instead of creating one (or its
    path projects/<project>/global/networks/<name>; a Shared VPC host's network is refused).
    Requires existingSubnetwork."""
    existing_subnetwork: (
        Annotated[str, grammar(lambda v: grammars.gce_name_problem(v, "a subnetwork"))] | None
    ) = None
    """Name of an existing subnetwork of the stack's project in the region (with
    existingNetwork). Every `pulumi preview` and `pulumi up` reads it (compute.subnetworks.get)."""
    mtu: StrictInt = Field(8896, ge=1300, le=8896)
    """MTU of the created VPC. 8896 is what large TPU deployments use for DCN traffic."""
    nodes_cidr: SubnetCidr = "10.0.0.0/20"
    """Primary range of the created subnetwork (node IPs): IPv4, at least a /29, with room for
    every node the pools may have (GCP keeps 4 addresses of each subnet)."""
    pods_cidr: SubnetCidr = "10.4.0.0/14"
    """Secondary range for pod IPs (VPC-native cluster): a /24 per node (GKE's default of 110
    Pods per node), so a /14 holds 1024 nodes."""
    services_cidr: SubnetCidr = "10.8.0.0/20"
    """Secondary range for service IPs."""

    @model_validator(mode="after")
    def _existing_pair(self) -> NetworkConfig:
        if (self.existing_network is None) != (self.existing_subnetwork is None):
            missing = (
                "existingSubnetwork" if self.existing_subnetwork is None else "existingNetwork"
            )
            raise KeyedError.at(missing, "required when the other existing* key is set")
        ranges = {"nodesCidr": self.nodes_cidr, "podsCidr": self.pods_cidr}
        ranges["servicesCidr"] = self.services_cidr
        nets = {k: ipaddress.ip_network(v) for k, v in ranges.items()}
        keys = list(nets)
        for i, a in enumerate(keys):
            for b in keys[i + 1 :]:
                if nets[a].overlaps(nets[b]):
                    raise KeyedError.at(b, f"{ranges[b]!r} overlaps {a} {ranges[a]!r}")
        return self

    @property
    def create(self) -> bool:
        return self.existing_network is None


class AuthorizedNetwork(ConfigModel):
    cidr: Cidr
    """CIDR allowed to reach the control plane's IP endpoint (never 0.0.0.0/0, nor IPv4 written
    as IPv6 that means it, such as ::ffff:0.0.0.0/96)."""
    display_name: str = ""
    """A label shown in the console."""

    @field_validator("cidr")
    @classmethod
    def _not_everywhere(cls, value: str) -> str:
        if (every := address_sets.everywhere(value)) is not None:
            spelled = "" if every == value else f" (it is {every})"
            raise ValueError(
                f"{value!r} would open the control plane's IP endpoint to the whole internet"
                f"{spelled}; list your networks' CIDRs, or list none and use the IAM-gated DNS "
                "endpoint"
            )
        return value


def _gke_version(value: str) -> str:
    GkeVersion.parse(value)
    return value


GkeVersionText = Annotated[str, AfterValidator(_gke_version)]


class ExistingClusterConfig(ConfigModel):
    """Target a cluster another stack (or XPK) made, instead of creating one."""

    name: ClusterName | None = None
    """Name of the existing GKE cluster (with location). Its endpoint is looked up at deploy."""
    location: (
        Annotated[str, pattern(r"[a-z]+-[a-z]+\d+(-[a-z])?", "a GCP region or zone")] | None
    ) = None
    """Region or zone of the existing cluster."""
    kubeconfig_context: (
        Annotated[str, pattern(r"\S(.*\S)?", "a kubeconfig context name (not blank)")] | None
    ) = None
    """Alternatively, a context of the user's kubeconfig file to deploy through."""
    gke_version: GkeVersionText | None = None
    """The oldest GKE version the cluster's control plane and nodes run ('1.35' or
    '1.35.1-gke.1234000'): the preflight checks features against it (Cloud Storage FUSE on the
    host network needs 1.33.3-gke.1226000). Unset: not known, so such features are refused."""

    @model_validator(mode="after")
    def _one_way(self) -> ExistingClusterConfig:
        by_name = self.name is not None or self.location is not None
        if by_name and self.kubeconfig_context is not None:
            raise KeyedError.at("kubeconfigContext", "give either name+location or a context")
        if by_name and (self.name is None or self.location is None):
            raise KeyedError.at("name" if self.name is None else "location", "required together")
        if not by_name and self.kubeconfig_context is None:
            raise KeyedError.at("name", "give name+location, or kubeconfigContext")
        return self


# Google Groups for RBAC reads group membership from this one group's nested groups (GKE
# "Configure Google Groups for RBAC": the group must be named gke-security-groups@<domain>).
SecurityGroup = Annotated[
    GroupEmail,
    pattern(r"gke-security-groups@.+", "named gke-security-groups@<your domain>"),
]
# A Cloud KMS key (pulumi-gcp database_encryption.key_name).
KmsKey = Annotated[
    str,
    pattern(
        r"projects/[a-z][-a-z0-9]{4,28}[a-z0-9]/locations/[a-z0-9-]{1,63}/keyRings/"
        r"[-_a-zA-Z0-9]{1,63}/cryptoKeys/[-_a-zA-Z0-9]{1,63}",
        "a Cloud KMS key: projects/<project>/locations/<location>/keyRings/<ring>/cryptoKeys/<key>",
    ),
]


# An Artifact Registry repository by its resource name.
RepositoryName = Annotated[
    str,
    pattern(
        r"projects/[a-z][-a-z0-9]{4,28}[a-z0-9]/locations/[a-z0-9-]{1,63}/repositories/"
        r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?",
        "an Artifact Registry repository: projects/<project>/locations/<location>/"
        "repositories/<name>",
    ),
]


class SecretsEncryptionConfig(ConfigModel):
    """Application-layer encryption of Kubernetes Secrets with a Cloud KMS key you hold."""

    kms_key: KmsKey
    """The key, in a key ring of the cluster's region (gcp.region; not 'global' nor a
    multi-region); GKE's service agent
    service-<project number>@container-engine-robot.iam.gserviceaccount.com needs
    roles/cloudkms.cryptoKeyEncrypterDecrypter on it."""

    @property
    def location(self) -> str:
        """The key ring's location: projects/<p>/locations/<location>/keyRings/..."""
        return self.kms_key.split("/")[3]


class ClusterConfig(ConfigModel):
    """The GKE Standard cluster."""

    name: ClusterName
    """Cluster name; also the prefix of the network, service account and bucket names."""
    regional: StrictBool = True
    """Regional control plane (nodes still in the one zone), as XPK creates; false = zonal."""
    release_channel: ReleaseChannel | None = None
    """GKE release channel. Default: RAPID in dev (new TPU features first, XPK's default),
    REGULAR in staging and production, where the default maintenance exclusion then holds node
    upgrades back (XPK adds that exclusion only off RAPID)."""
    deletion_protection: StrictBool = True
    """Refuse `pulumi destroy` of the cluster. Turn off only for throwaway stacks."""
    private_nodes: StrictBool | None = None
    """Nodes without external IPs; a Cloud Router + NAT is created for egress. Default: true in
    production stacks, false otherwise."""
    authorized_networks: list[AuthorizedNetwork] = []
    """CIDRs allowed to reach the IP control-plane endpoint; none by default (use the IAM-gated
    DNS endpoint). At most 50 (100 with privateNodes), GKE's limit; together they may not admit
    every IPv4 address, more public IPv4 addresses than a /8, or more global IPv6 addresses than
    a /12, however written (IPv4-mapped, IPv4-compatible, NAT64 and 6to4 IPv6 ranges count as
    the IPv4 they carry)."""
    kubernetes_tokens_via_dns: StrictBool = False
    """Let the IAM-gated DNS-based control-plane endpoint also take Kubernetes service-account
    tokens (GKE's enableK8sTokensViaDns). Needed on a fleet's worker: the fleet's manager reaches
    it with one (MultiKueue allows no exec plugin). Off: Google credentials only."""
    network: NetworkConfig = NetworkConfig()
    """The VPC (created by default)."""
    dns: DnsProvider = DnsProvider.CLOUD_DNS
    """The cluster's DNS provider, set explicitly (GKE's default changes with the version):
    cloudDns (Cloud DNS for GKE, cluster scope: pods resolve at the metadata server's address,
    no kube-dns pods) or kubeDns (kube-dns pods, NodeLocal DNSCache off). The team namespaces'
    NetworkPolicy allows DNS to exactly that provider. Changing it on a running cluster
    recreates its nodes: set kubeDns to keep a cluster created before this key existed as it
    is."""
    maintenance: MaintenanceConfig = MaintenanceConfig()
    """When GKE may upgrade the cluster and its nodes: a recurring window (default: weekends
    00:00-08:00 UTC) and exclusions (staging and production default to no minor or node
    upgrades)."""
    security_group: SecurityGroup | None = None
    """Google Groups for RBAC: gke-security-groups@<your domain>, the group whose member groups
    (such as a team's `group`) RoleBindings may name. Unset: group RoleBindings match nobody."""
    secrets_encryption: SecretsEncryptionConfig | None = None
    """Encrypt Secrets in etcd with a Cloud KMS key (required in production)."""
    image_repositories: list[RepositoryName] = []
    """Artifact Registry repositories the nodes may pull private images from (read on each
    repository, none project-wide). Public images, such as Pathways' own, need none."""
    binary_authorization: StrictBool = False
    """Admit only images the project's Binary Authorization policy allows
    (PROJECT_SINGLETON_POLICY_ENFORCE)."""
    min_master_version: GkeVersionText | None = None
    """The lowest GKE version of the control plane ('1.35' or '1.35.1-gke.1234000', a version
    the release channel offers): GKE creates the cluster at it and never goes below it; new node
    pools start at the control plane's version. Unset: the channel's default (every channel
    offers 1.34 or later, which the preflight assumes)."""
    existing: ExistingClusterConfig | None = None
    """Deploy onto an existing cluster: nothing cluster-level is created, so privateNodes,
    authorizedNetworks, deletionProtection, regional, releaseChannel, network and maintenance are
    refused with it (the owning stack sets them)."""

    @field_validator("authorized_networks")
    @classmethod
    def _not_the_internet(cls, networks: list[AuthorizedNetwork]) -> list[AuthorizedNetwork]:
        exposed = address_sets.exposure([n.cidr for n in networks])
        if exposed is not None:
            raise ValueError(
                f"together these ranges {exposed.what}: the control plane's IP endpoint would "
                f"take traffic from {exposed.reach}; list your networks' CIDRs, or list none and "
                "use the IAM-gated DNS endpoint"
            )
        return networks

    @model_validator(mode="after")
    def _existing_takes_no_cluster_settings(self) -> ClusterConfig:
        if self.existing is None:
            return self
        # Settings of a cluster this stack creates; the owning stack decides them.
        creating_only = (
            "private_nodes",
            "authorized_networks",
            "kubernetes_tokens_via_dns",
            "deletion_protection",
            "network",
            "regional",
            "release_channel",
            "maintenance",
            "security_group",
            "secrets_encryption",
            "binary_authorization",
            "image_repositories",
            "min_master_version",
        )
        issues = [
            ConfigIssue(
                type(self).model_fields[field].alias or field,
                "cannot apply to an existing cluster (this stack does not create it); set it "
                "in the stack that owns the cluster, and remove it here",
            )
            for field in creating_only
            if field in self.model_fields_set
        ]
        if issues:
            raise KeyedError(issues)
        return self
