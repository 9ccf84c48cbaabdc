"""The manager's token on a worker: a bounded service-account token that `pulumi up` mints and
renews (a Pulumi dynamic resource; pulumi-kubernetes has no TokenRequest resource, and a
resource cannot POST a subresource).

``create`` POSTs a TokenRequest (``authentication.k8s.io/v1``) for the worker's
``multikueue-manager`` service account to the worker's API server (its DNS-based endpoint,
authenticated with the deployer's Google access token), bound to an anchor Secret
(``boundObjectRef``): the token is valid until ``status.expirationTimestamp`` (the lifetime
asked for, or less if the API server caps it) or until the anchor Secret is deleted, whichever
comes first. ``diff`` asks for a replacement when what the token is for changes (server,
account, anchor, lifetime) or when the token expires within ``renew_before_seconds``: so any
`pulumi up` in that window mints a new one (created before the old one is deleted; the
kubeconfig Secret the manager's Kueue reads is updated in between, and Kueue re-reads it: its
MultiKueueCluster controller watches Secrets, kubernetes-sigs/kueue v0.17.1
pkg/controller/admissionchecks/multikueue/multikueuecluster.go ``secretHandler``). ``delete``
does nothing: one token cannot be revoked, it expires; replacing the anchor Secret revokes all.

The deployer's access token is an input so the resource runs where `pulumi up` runs, without a
credential of its own; ``diff`` ignores it (a new one every run) and ``create`` does not keep it
in the outputs. Kubernetes API: POST /api/v1/namespaces/{ns}/serviceaccounts/{name}/token
(the caller needs ``create`` on ``serviceaccounts/token``); expirationSeconds is at least 600.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pulumi
import pulumi.dynamic

# What the token is for: a change to any of them mints a new one.
IDENTITY = (
    "server",
    "namespace",
    "service_account",
    "anchor_name",
    "anchor_uid",
    "lifetime_seconds",
)
MIN_LIFETIME = 600  # TokenRequest expirationSeconds minimum (authentication.k8s.io/v1)

Post = Callable[[str, str, dict], dict]
"""(url, bearer token, JSON body) -> the JSON response; raises on an HTTP error."""


def http_post(url: str, bearer: str, body: dict) -> dict:
    """POST ``body`` to ``url`` (TLS verified against the system's CAs: the DNS-based
    endpoint's certificate is publicly trusted)."""
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "Authorization": f"Bearer {bearer}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read().decode())
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode(errors="replace")[:500]
        raise RuntimeError(f"TokenRequest {url}: HTTP {exc.code} {exc.reason}: {detail}") from None


def token_request_url(props: Mapping[str, Any]) -> str:
    server = str(props["server"]).rstrip("/")
    return (
        f"{server}/api/v1/namespaces/{props['namespace']}/serviceaccounts/"
        f"{props['service_account']}/token"
    )


def token_request(props: Mapping[str, Any]) -> dict:
    """The TokenRequest body: bound to the anchor Secret, for the lifetime asked."""
    return {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {
            "expirationSeconds": max(int(props["lifetime_seconds"]), MIN_LIFETIME),
            "boundObjectRef": {
                "apiVersion": "v1",
                "kind": "Secret",
                "name": props["anchor_name"],
                "uid": props["anchor_uid"],
            },
        },
    }


def mint(props: Mapping[str, Any], post: Post) -> dict[str, Any]:
    """The outputs of a new token: what it is for, the token and its expiry."""
    response = post(token_request_url(props), str(props["access_token"]), token_request(props))
    status = response.get("status") or {}
    if not status.get("token") or not status.get("expirationTimestamp"):
        raise RuntimeError(f"TokenRequest {token_request_url(props)}: no token in the response")
    outs = {key: props[key] for key in (*IDENTITY, "renew_before_seconds")}
    return {**outs, "token": status["token"], "expires_at": status["expirationTimestamp"]}


def renewal_due(expires_at: str, renew_before_seconds: float, now: float) -> bool:
    """Whether a token expiring at ``expires_at`` (RFC 3339) is within the renewal window."""
    expiry = datetime.fromisoformat(expires_at.replace("Z", "+00:00")).timestamp()
    return now >= expiry - float(renew_before_seconds)


def changes(olds: Mapping[str, Any], news: Mapping[str, Any], now: float) -> list[str]:
    """The properties that call for a new token (empty: keep it)."""
    changed = [key for key in IDENTITY if olds.get(key) != news.get(key)]
    expires_at = olds.get("expires_at")
    if not isinstance(expires_at, str) or renewal_due(
        expires_at, news.get("renew_before_seconds", 0), now
    ):
        changed.append("expires_at")
    return changed


class ManagerTokenProvider(pulumi.dynamic.ResourceProvider):
    """The dynamic provider: ``post`` and ``clock`` are for tests (a fake API, a fixed time)."""

    def __init__(self, post: Post | None = None, clock: Callable[[], float] | None = None):
        super().__init__()
        self._post = post
        self._clock = clock

    def create(self, props: dict[str, Any]) -> pulumi.dynamic.CreateResult:
        outs = mint(props, self._post or http_post)
        token_id = f"{props['namespace']}/{props['service_account']}@{outs['expires_at']}"
        return pulumi.dynamic.CreateResult(id_=token_id, outs=outs)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]):
        now = (self._clock or time.time)()
        changed = changes(olds, news, now)
        return pulumi.dynamic.DiffResult(
            changes=bool(changed), replaces=changed, delete_before_replace=False
        )

    def delete(self, _id: str, _props: dict[str, Any]) -> None:
        """A token is no object: it expires, or dies with its anchor Secret."""


@dataclass(frozen=True)
class ManagerTokenArgs:
    server: pulumi.Input[str]
    """The worker's API server URL."""
    namespace: str
    service_account: str
    anchor_name: str
    anchor_uid: pulumi.Input[str]
    """The anchor Secret's uid: the token is bound to it."""
    lifetime_seconds: int
    renew_before_seconds: int
    access_token: pulumi.Input[str]
    """The deployer's Google access token (the worker's DNS-based endpoint takes it)."""


class ManagerToken(pulumi.dynamic.Resource, module="multikueue", name="ManagerToken"):
    """A bounded token of the manager's service account on a worker (module doc)."""

    token: pulumi.Output[str]
    expires_at: pulumi.Output[str]

    def __init__(
        self, name: str, args: ManagerTokenArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        props = {
            "server": args.server,
            "namespace": args.namespace,
            "service_account": args.service_account,
            "anchor_name": args.anchor_name,
            "anchor_uid": args.anchor_uid,
            "lifetime_seconds": args.lifetime_seconds,
            "renew_before_seconds": args.renew_before_seconds,
            "access_token": pulumi.Output.secret(args.access_token),
            "token": None,
            "expires_at": None,
        }
        secret = pulumi.ResourceOptions(additional_secret_outputs=["token"])
        super().__init__(
            ManagerTokenProvider(), name, props, pulumi.ResourceOptions.merge(opts, secret)
        )
