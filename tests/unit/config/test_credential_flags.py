"""A credential in a custom component's flags is held to the rule a credential in its env is
held to: never plain text in the stack file. A credential flag takes its value from the
environment (``--hf_token=$(HF_TOKEN)``, Kubernetes expands it from the container's env), and
that variable from a secret."""

from __future__ import annotations

import pytest

from components.errors import ConfigError
from components.resolve.checks import parse_stack_config
from tests.helpers import deep_merge

SENTINEL = "zq-s3cr3t-9"
BASE = {
    "environment": "dev",
    "gcp": {"project": "tpu-pathways-dev", "region": "us-west4", "zone": "us-west4-a"},
    "cluster": {"name": "pathways-dev", "deletionProtection": False},
    "cpuPool": {"machineType": "n2-standard-64", "minNodes": 1, "maxNodes": 4},
    "tpuPools": [{"name": "v5e", "generation": "v5e", "topology": "2x4"}],
    "secrets": {"hfToken": "[secret]"},
}
SECRET_ENV = {"HF_TOKEN": {"configSecret": "hfToken"}}


def _workload(flags: list[str], env: dict | None = None) -> dict:
    component = {"type": "proxy_server", "flags": flags, "env": env or {}}
    job = {"name": "w", "pool": "v5e", "mode": "headless", "customComponents": [component]}
    return deep_merge(BASE, {"workloads": [job]})


def _issues(values: dict) -> dict[str, str]:
    try:
        parse_stack_config(values, "test")
    except ConfigError as exc:
        assert SENTINEL not in str(exc)
        return {issue.key: issue.message for issue in exc.issues}
    return {}


@pytest.mark.parametrize(
    ("flags", "env", "where", "name"),
    [
        ([f"--hf_token={SENTINEL}"], None, 0, "hf_token"),
        (["--verbose", "--api-key", SENTINEL], None, 2, "api-key"),
        ([f"--password {SENTINEL}"], None, 0, "password"),
        ([f"-token={SENTINEL}"], None, 0, "token"),
        (["--hf_token=$(PLAIN)"], {"PLAIN": SENTINEL}, 0, "hf_token"),
        (["--db-password=$(UNSET)"], None, 0, "db-password"),
        ([f"--hf_token=$(HF_TOKEN){SENTINEL}"], SECRET_ENV, 0, "hf_token"),
    ],
)
def test_a_credential_flag_with_a_plain_value_is_refused(flags, env, where, name):
    issues = _issues(_workload(flags, env))
    message = issues[f"workloads[0].customComponents[0].flags[{where}]"]
    assert message.startswith(f"--{name} looks like it passes a credential, so its value may not")
    assert f"--{name}=$(NAME), with env NAME set to {{configSecret: SECRET}}" in message


@pytest.mark.parametrize(
    ("flags", "env"),
    [
        (["--hf_token=$(HF_TOKEN)"], SECRET_ENV),
        (["--hf_token", "$(HF_TOKEN)"], SECRET_ENV),
        (["--use_secret_manager"], None),  # a switch: no value
        (["--api-key", "--verbose"], None),
        (["--hf_token="], None),
        (["--max_tokens=512", "--tokenizer=sp", "--key_value_cache=8"], None),
    ],
)
def test_a_credential_flag_from_a_secret_or_a_switch_is_accepted(flags, env):
    assert _issues(_workload(flags, env)) == {}


def test_a_bad_credential_flag_is_reported_without_its_value():
    issues = _issues(_workload([f"--hf_token={SENTINEL}\n"]))
    assert issues["workloads[0].customComponents[0].flags[0]"].startswith(
        "the flag --hf_token (value not shown) contains control characters"
    )
