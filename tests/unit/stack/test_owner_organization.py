"""A team stack's owner named in another organization is refused before it is read: the
offline plan reads the owner from this project's stack files whatever organization its name
gives, so `pulumi up` must not read a stack of that name elsewhere (components/stack/owner.py)."""

from __future__ import annotations

import pulumi
import pytest

from components.errors import ConfigError
from components.stack import owner


@pytest.mark.parametrize(
    ("ref", "organization", "allowed"),
    [
        (
            "platform/tpu-pathways/research-v5p",
            "elsewhere",
            "'research-v5p' or 'elsewhere/tpu-pathways/research-v5p'",
        ),
        ("platform/research-v5p", "elsewhere", "'research-v5p' or 'elsewhere/research-v5p'"),
    ],
)
def test_an_owner_of_another_organization_is_refused(ref, organization, allowed):
    with pytest.raises(ConfigError) as caught:
        owner.check_owner_organization(ref, organization)
    (issue,) = caught.value.issues
    assert issue.key == "owner"
    assert f"{ref!r} names organization 'platform'" in issue.message
    assert "this stack deploys in 'elsewhere'" in issue.message
    assert issue.message.endswith(allowed)


@pytest.mark.parametrize(
    ("ref", "organization"),
    [
        ("research-v5p", "elsewhere"),  # no organization: the engine's own
        ("platform/tpu-pathways/research-v5p", "platform"),
        ("Platform/tpu-pathways/research-v5p", "platform"),  # Pulumi Cloud ignores the case
        ("platform/tpu-pathways/research-v5p", None),  # the offline plan: no organization known
    ],
)
def test_an_owner_of_this_organization_is_read(ref, organization):
    owner.check_owner_organization(ref, organization)


def test_the_owner_is_not_read_when_its_organization_is_another(monkeypatch):
    """The check comes before the StackReference: nothing is registered or read."""
    referenced = []
    monkeypatch.setattr(pulumi, "get_organization", lambda: "elsewhere")
    monkeypatch.setattr(owner, "owner_reference", lambda *a: referenced.append(a))
    with pytest.raises(ConfigError, match="names organization 'platform'"):
        owner.read_owner_contract("platform/tpu-pathways/research-v5p")
    assert referenced == []
