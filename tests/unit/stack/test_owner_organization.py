"""A team stack's owner named in another organization is refused before it is read: the
offline plan reads the owner from this project's stack files whatever organization its name
gives, so `pulumi up` must not read a stack of that name elsewhere (components/stack/owner.py)."""

from __future__ import annotations

import pulumi
import pytest

from components.errors import ConfigError
from components.stack import owner


@pytest.mark.parametrize(
    ("ref", "organization", "named", "allowed"),
    [
        (
            "platform/tpu-pathways/research-v5p",
            "elsewhere",
            "platform",
            "'research-v5p' or 'elsewhere/tpu-pathways/research-v5p'",
        ),
        (
            "platform/research-v5p",
            "elsewhere",
            "platform",
            "'research-v5p' or 'elsewhere/research-v5p'",
        ),
        # a DIY backend's organization is "organization", exactly (pulumi refuses another)
        (
            "Organization/research-v5p",
            "organization",
            "Organization",
            "'research-v5p' or 'organization/research-v5p'",
        ),
    ],
)
def test_an_owner_of_another_organization_is_refused(ref, organization, named, allowed):
    with pytest.raises(ConfigError) as caught:
        owner.check_owner_organization(ref, organization)
    (issue,) = caught.value.issues
    assert issue.key == "owner"
    assert f"{ref!r} names organization {named!r}" in issue.message
    assert f"this stack deploys in {organization!r}" in issue.message
    assert issue.message.endswith(allowed)


@pytest.mark.parametrize(
    ("ref", "organization"),
    [
        ("research-v5p", "elsewhere"),  # no organization: the engine's own
        ("platform/tpu-pathways/research-v5p", "platform"),
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


# --- the name the StackReference is given --------------------------------------------------


@pytest.mark.parametrize(
    ("ref", "organization", "name"),
    [
        # Pulumi Cloud: only <organization>/<project>/<stack> is read; the parts left out are
        # this stack's (its organization, project tpu-pathways)
        ("research-v5p", "platform", "platform/tpu-pathways/research-v5p"),
        ("platform/research-v5p", "platform", "platform/tpu-pathways/research-v5p"),
        ("platform/other/research-v5p", "platform", "platform/other/research-v5p"),
        # a DIY backend: as written (its old layout takes a bare stack name only)
        ("research-v5p", "organization", "research-v5p"),
        (
            "organization/tpu-pathways/research-v5p",
            "organization",
            "organization/tpu-pathways/research-v5p",
        ),
        # the offline plan: its mocks know no organization
        ("research-v5p", None, "research-v5p"),
        ("research-v5p", "", "research-v5p"),
    ],
)
def test_the_reference_name_is_what_the_backend_reads(ref, organization, name):
    assert owner.reference_name(ref, organization, "tpu-pathways") == name


def test_a_team_stack_and_a_fleet_name_their_references_in_full_on_pulumi_cloud(monkeypatch):
    made = []
    monkeypatch.setattr(pulumi, "get_organization", lambda: "platform")
    monkeypatch.setattr(pulumi, "get_project", lambda: "tpu-pathways")
    monkeypatch.setattr(
        pulumi, "StackReference", lambda name, stack_name: made.append((name, stack_name))
    )
    owner.owner_reference("research-v5p", "research-v5p")
    owner.owner_reference("worker-dev", "dev")
    assert made == [
        ("research-v5p", "platform/tpu-pathways/research-v5p"),
        ("worker-dev", "platform/tpu-pathways/dev"),
    ]
