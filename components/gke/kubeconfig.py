"""A kubeconfig for a GKE cluster that authenticates with ``gke-gcloud-auth-plugin``.

It holds no credentials of its own (the plugin asks gcloud for a token at each call), and it
points at the cluster's DNS-based control-plane endpoint, which is IAM-gated and reachable
without a bastion even when nodes are private.
"""

from __future__ import annotations

import json


def gke_kubeconfig(context: str, dns_endpoint: str) -> str:
    cluster = {"server": f"https://{dns_endpoint}"}
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "gke-gcloud-auth-plugin",
            "provideClusterInfo": True,
            "installHint": "Install gke-gcloud-auth-plugin: "
            "gcloud components install gke-gcloud-auth-plugin",
        }
    }
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": context, "cluster": cluster}],
        "users": [{"name": context, "user": user}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
        "current-context": context,
    }
    return json.dumps(document, indent=2)
