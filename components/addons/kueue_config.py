"""Kueue's Configuration, as this project writes it over the release's: on a cluster whose Kueue
queues team jobs, Kueue manages every Job and JobSet of a team namespace, queue label or not
(``manageJobsWithoutQueueName`` scoped by ``managedJobsNamespaceSelector`` to the namespaces
labelled ``TEAM_NAMESPACE_LABEL``: one without a queue stays suspended), and only the kinds this
project runs (``batch/job``, JobSet; no pod integration, so bare pods are never gated: the team
admission policy refuses a TPU pod that is not a Job's); on a MultiKueue manager, JobSets only
(``multikueue``).

Source: kubernetes-sigs/kueue v0.17.1 apis/config/v1beta2/configuration_types.go
(``manageJobsWithoutQueueName``, ``managedJobsNamespaceSelector``: for batch/job and JobSet it
only scopes the former) and config/components/manager/controller_manager_config.yaml (the
release's values below, comments aside). Kueue reads its Configuration only at start, so the
ConfigMap is patched and the controller rolled (a digest of the text in its pod template).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import pulumi
import pulumi_kubernetes as k8s
import yaml

from components.labels import TEAM_NAMESPACE_LABEL

KUEUE_CONFIG_MAP = "kueue-manager-config"
"""The release manifest's ConfigMap of Kueue's Configuration (kustomize: namePrefix kueue-,
configMapGenerator manager-config; kubernetes-sigs/kueue v0.17.1 config/components/manager)."""
KUEUE_NAMESPACE = "kueue-system"
KUEUE_CONFIG_FILE = "controller_manager_config.yaml"
JOBSET_FRAMEWORK = "jobset.x-k8s.io/jobset"
JOB_FRAMEWORK = "batch/job"
CONFIG_DIGEST_ANNOTATION = "tpu-pathways/kueue-config-sha256"
# The value of TEAM_NAMESPACE_LABEL on team namespaces (team_policies.TEAM_NAMESPACE_VALUE).
_TEAM_NAMESPACE_VALUE = "true"


def kueue_configuration(frameworks: Sequence[str], manage_team_namespaces: bool = False) -> dict:
    """The release's Configuration with ``frameworks`` the only integrations; with
    ``manage_team_namespaces``, Kueue manages the team namespaces' jobs without a queue label."""
    config: dict = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443"},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "controller": {
            "groupKindConcurrency": {
                "Job.batch": 5,
                "Pod": 5,
                "Workload.kueue.x-k8s.io": 5,
                "LocalQueue.kueue.x-k8s.io": 1,
                "Cohort.kueue.x-k8s.io": 1,
                "ClusterQueue.kueue.x-k8s.io": 1,
                "ResourceFlavor.kueue.x-k8s.io": 1,
            }
        },
        "clientConnection": {"qps": 50, "burst": 100},
    }
    if manage_team_namespaces:
        config["manageJobsWithoutQueueName"] = True
        config["managedJobsNamespaceSelector"] = {
            "matchLabels": {TEAM_NAMESPACE_LABEL: _TEAM_NAMESPACE_VALUE}
        }
    config["integrations"] = {"frameworks": list(frameworks)}
    return config


def team_cluster_kueue_configuration() -> dict:
    """A cluster of team namespaces: Jobs and JobSets, every one of theirs managed."""
    return kueue_configuration([JOB_FRAMEWORK, JOBSET_FRAMEWORK], manage_team_namespaces=True)


def config_text(configuration: dict) -> str:
    return yaml.safe_dump(configuration, sort_keys=False)


def config_map_patch(
    name: str, parent: pulumi.Resource, provider: k8s.Provider, install: pulumi.Resource, text: str
) -> k8s.core.v1.ConfigMapPatch:
    """``text`` written over the release's ConfigMap (a server-side patch)."""
    return k8s.core.v1.ConfigMapPatch(
        f"{name}-config-map",
        metadata=k8s.meta.v1.ObjectMetaPatchArgs(
            name=KUEUE_CONFIG_MAP,
            namespace=KUEUE_NAMESPACE,
            # The release manifest's field manager owns the file; take it over.
            annotations={"pulumi.com/patchForce": "true"},
        ),
        data={KUEUE_CONFIG_FILE: text},
        opts=pulumi.ResourceOptions(parent=parent, provider=provider, depends_on=[install]),
    )


def config_digest(text: str) -> dict[str, str]:
    """The pod annotation that rolls the controller when the configuration changes."""
    return {CONFIG_DIGEST_ANNOTATION: hashlib.sha256(text.encode()).hexdigest()}


class ConfiguredKueue(Protocol):
    """A Configuration written over the release's (``KueueConfig``, a fleet manager's): what the
    controller's patch waits for, and the pod annotation that rolls it to read it."""

    config_map: pulumi.Resource
    pod_annotations: dict[str, str]


@dataclass(frozen=True)
class KueueConfigArgs:
    """The Kueue install to configure (``team_cluster_kueue_configuration``)."""

    provider: k8s.Provider
    kueue_install: pulumi.Resource


class KueueConfig(pulumi.ComponentResource):
    """A team cluster's Kueue Configuration over the release's. The controller's own patch
    (its placement) carries ``pod_annotations``, so it rolls to read it (one patch per
    Deployment)."""

    config_map: pulumi.Resource
    pod_annotations: dict[str, str]

    def __init__(
        self, name: str, args: KueueConfigArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        super().__init__("tpu-pathways:kueue:KueueConfig", name, None, opts)
        text = config_text(team_cluster_kueue_configuration())
        self.config_map = config_map_patch(name, self, args.provider, args.kueue_install, text)
        self.pod_annotations = config_digest(text)
        self.register_outputs({})
