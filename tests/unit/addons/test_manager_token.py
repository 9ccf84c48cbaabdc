"""The manager's token on a worker (components/addons/manager_token.py): what the dynamic
provider sends to the worker's TokenRequest API and when it asks for a new token, with a fake
API and fixed clocks (no network). Times are literal: 2026-12-01T00:00:00Z is 1796083200."""

from __future__ import annotations

import pytest

from components.addons.manager_token import ManagerTokenProvider, changes, renewal_due

EXPIRES = "2026-12-15T00:00:00Z"
EXPIRY = 1_797_292_800  # EXPIRES in seconds since the epoch
DAY = 86_400
PROPS = {
    "server": "https://gke-abc.us-west4.gke.goog/",
    "namespace": "kueue-system",
    "service_account": "multikueue-manager",
    "anchor_name": "multikueue-manager-anchor",
    "anchor_uid": "0b6f2c3e-1111-2222-3333-444455556666",
    "lifetime_seconds": 14 * DAY,
    "renew_before_seconds": 7 * DAY,
    "access_token": "ya29.deployer",
}


class FakeApi:
    def __init__(self, response: dict) -> None:
        self.response = response
        self.calls: list[tuple[str, str, dict]] = []

    def __call__(self, url: str, bearer: str, body: dict) -> dict:
        self.calls.append((url, bearer, body))
        return self.response


def minted(token: str = "eyJ.token", expires: str = EXPIRES) -> dict:
    return {"status": {"token": token, "expirationTimestamp": expires}}


def test_create_posts_a_token_request_bound_to_the_anchor_and_keeps_no_google_token():
    api = FakeApi(minted())
    result = ManagerTokenProvider(post=api).create(dict(PROPS))
    assert api.calls == [
        (
            "https://gke-abc.us-west4.gke.goog/api/v1/namespaces/kueue-system/serviceaccounts/"
            "multikueue-manager/token",
            "ya29.deployer",
            {
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {
                    "expirationSeconds": 1_209_600,
                    "boundObjectRef": {
                        "apiVersion": "v1",
                        "kind": "Secret",
                        "name": "multikueue-manager-anchor",
                        "uid": "0b6f2c3e-1111-2222-3333-444455556666",
                    },
                },
            },
        )
    ]
    assert result.outs["token"] == "eyJ.token"
    assert result.outs["expires_at"] == EXPIRES
    assert "access_token" not in result.outs
    assert result.id == f"kueue-system/multikueue-manager@{EXPIRES}"


def test_a_response_without_a_token_fails_the_create():
    with pytest.raises(RuntimeError, match="no token in the response"):
        ManagerTokenProvider(post=FakeApi({"status": {}})).create(dict(PROPS))


def test_the_lifetime_asked_is_at_least_the_apis_minimum():
    api = FakeApi(minted())
    ManagerTokenProvider(post=api).create({**PROPS, "lifetime_seconds": 60})
    assert api.calls[0][2]["spec"]["expirationSeconds"] == 600


def olds() -> dict:
    outs = {k: v for k, v in PROPS.items() if k != "access_token"}
    return {**outs, "token": "eyJ.token", "expires_at": EXPIRES}


@pytest.mark.parametrize(
    ("now", "due"),
    [
        (EXPIRY - 8 * DAY, False),  # 8 days left: kept
        (EXPIRY - 7 * DAY - 1, False),
        (EXPIRY - 7 * DAY, True),  # 7 days left: renewed
        (EXPIRY + 1, True),  # expired
    ],
)
def test_a_token_is_renewed_from_renew_before_its_expiry(now, due):
    assert renewal_due(EXPIRES, 7 * DAY, now) is due
    diff = ManagerTokenProvider(clock=lambda: now).diff("id", olds(), dict(PROPS))
    assert diff.changes is due
    assert diff.replaces == (["expires_at"] if due else [])
    assert diff.delete_before_replace is False  # the new token exists before the old goes


def test_a_new_google_token_alone_changes_nothing():
    news = {**PROPS, "access_token": "ya29.next-run"}
    assert changes(olds(), news, EXPIRY - 10 * DAY) == []


@pytest.mark.parametrize("key", ["server", "anchor_uid", "anchor_name", "lifetime_seconds"])
def test_what_the_token_is_for_changing_mints_a_new_one(key):
    news = {**PROPS, key: "changed" if isinstance(PROPS[key], str) else 3 * DAY}
    assert changes(olds(), news, EXPIRY - 10 * DAY) == [key]


def test_delete_calls_nothing():
    api = FakeApi(minted())
    assert ManagerTokenProvider(post=api).delete("id", olds()) is None
    assert api.calls == []


def test_the_provider_survives_pulumis_serialization():
    # The engine runs the provider in another process from the pickle the SDK writes into the
    # resource's __provider input (pulumi.dynamic serialize_provider, with dill).
    import base64

    import dill
    from pulumi.dynamic.dynamic import serialize_provider

    provider = dill.loads(base64.b64decode(serialize_provider(ManagerTokenProvider())))
    assert type(provider).__module__ == "components.addons.manager_token"
    assert "server" in provider.diff("id", olds(), {**PROPS, "server": "https://x"}).replaces
    assert len(serialize_provider(ManagerTokenProvider())) < 10_000  # by reference, not by value
