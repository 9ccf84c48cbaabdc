"""Where stack configuration comes from: `stacks/Pulumi.<stack>.yaml` for the offline plan, the
Pulumi engine's config map for `pulumi up`. Both end in the same parser.

The engine hands a program every config value as a string (structured values JSON-encoded).
The offline plan converts the YAML file to that same form first, so the plan exercises exactly
the path `pulumi up` takes.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.config import NAMESPACE, StackConfig, namespace_values, parse_stack_config
from components.errors import ConfigError, ConfigIssue
from components.safe_yaml import MAX_FILE_BYTES, load_yaml

PROJECT_DIR = Path(__file__).resolve().parent.parent
STACKS_DIR = PROJECT_DIR / "stacks"


# Pulumi's own rule for stack names (letters, digits, '-', '_', '.'; at most 100 characters).
_STACK_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")


def stack_path(stack: str, stacks_dir: Path = STACKS_DIR) -> Path:
    return stacks_dir / f"Pulumi.{stack}.yaml"


def check_stack_name(stack: str) -> None:
    """Refuse a name Pulumi would refuse (and that could not name a file) before using it."""
    if not _STACK_NAME.fullmatch(stack):
        shown = stack if len(stack) <= 40 else stack[:37] + "..."
        raise ConfigError(
            [
                ConfigIssue(
                    "--stack",
                    f"{shown!r} ({len(stack)} characters) is not a stack name; use 1-100 letters, "
                    "digits, '-', '_' or '.'",
                )
            ],
            "plan",
        )


def available_stacks(stacks_dir: Path = STACKS_DIR) -> list[str]:
    names = (
        p.name.removeprefix("Pulumi.").removesuffix(".yaml")
        for p in stacks_dir.glob("Pulumi.*.yaml")
    )
    return sorted(names)


def targets_existing_cluster(stack: str, stacks_dir: Path = STACKS_DIR) -> bool:
    """Whether the stack deploys onto a cluster another stack owns (`cluster.existing`)."""
    cluster = decode_engine_values(read_stack_file(stack, stacks_dir)).get("cluster")
    return isinstance(cluster, dict) and cluster.get("existing") is not None


def owner_stacks(stacks_dir: Path = STACKS_DIR) -> list[str]:
    """Stacks that create their cluster; the others target one of these, so deploy these first."""
    return [s for s in available_stacks(stacks_dir) if not targets_existing_cluster(s, stacks_dir)]


@dataclass(frozen=True)
class StackKinds:
    """Every stack file sorted by role; one that cannot be read is reported, not fatal."""

    owners: list[str]
    teams: list[str]
    errors: dict[str, ConfigError]


def classify_stacks(stacks_dir: Path = STACKS_DIR) -> StackKinds:
    owners, teams, errors = [], [], {}
    for stack in available_stacks(stacks_dir):
        try:
            existing = targets_existing_cluster(stack, stacks_dir)
        except ConfigError as exc:
            errors[stack] = exc
            continue
        (teams if existing else owners).append(stack)
    return StackKinds(owners, teams, errors)


def read_stack_file(stack: str, stacks_dir: Path = STACKS_DIR) -> dict[str, str]:
    """The stack file's `config:` map in the engine's string form. Raises ConfigError."""
    check_stack_name(stack)
    path = stack_path(stack, stacks_dir)
    if path.exists() and not path.is_file():
        raise ConfigError([ConfigIssue("", "is not a regular file")], str(path))
    if not path.is_file():
        known = ", ".join(available_stacks(stacks_dir)) or "none"
        raise ConfigError(
            [ConfigIssue("--stack", f"unknown stack {stack!r}; available: {known}")], "plan"
        )
    try:
        with path.open("rb") as stream:  # bounded: a stack file that is a device or huge
            data = stream.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            message = f"larger than {MAX_FILE_BYTES} bytes, the most a stack file may have"
            raise ConfigError([ConfigIssue("", message)], str(path))
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            [ConfigIssue("", f"cannot read it as UTF-8 text: {exc}")], str(path)
        ) from None
    document = load_yaml(text, str(path)) or {}
    config = document.get("config", {}) if isinstance(document, dict) else None
    if not isinstance(config, dict):
        raise ConfigError([ConfigIssue("config", "must be a mapping of keys to values")], str(path))
    config = {str(k): v for k, v in config.items()}
    issues = secure_value_issues(config)
    if issues:
        raise ConfigError(issues, str(path))
    if SECRETS_KEY in config:
        config[SECRETS_KEY] = offline_secrets(config[SECRETS_KEY])
    return {k: engine_string(v) for k, v in config.items()}


SECRETS_KEY = f"{NAMESPACE}:secrets"
# What the offline plan puts in place of a secret it cannot decrypt (it has no passphrase or
# KMS key, by design); the plan shows it as [secret] either way.
OFFLINE_SECRET = "[secret]"
_SET_SECRET = "pulumi config set --secret --path 'tpu-pathways:secrets.NAME' VALUE"


def _is_secure(value: Any) -> bool:
    return isinstance(value, dict) and set(value) == {"secure"} and isinstance(value["secure"], str)


def secure_value_issues(config: dict[str, Any]) -> list[ConfigIssue]:
    """Encrypted values belong under ``tpu-pathways:secrets``, one per name; plain values do
    not (the stack file is committed)."""
    issues = []
    secrets = config.get(SECRETS_KEY)
    if (secrets is not None and not isinstance(secrets, dict)) or _is_secure(secrets):
        issues.append(
            ConfigIssue(
                SECRETS_KEY, f"must be a mapping of names to secrets; set each with {_SET_SECRET}"
            )
        )
    elif secrets:
        issues += [
            ConfigIssue(
                f"{SECRETS_KEY}.{name}",
                f"is plain text in the stack file (value not shown); encrypt it: {_SET_SECRET}",
            )
            for name, value in secrets.items()
            if not _is_secure(value)
        ]
    for key, value in config.items():
        if key.startswith(f"{NAMESPACE}:") and key != SECRETS_KEY:
            issues += [
                ConfigIssue(
                    where,
                    "an encrypted (secure) value is read only from tpu-pathways:secrets.NAME; "
                    "move it there and refer to it with {configSecret: NAME}",
                )
                for where in _secure_locations(value, key)
            ]
    return issues


def _secure_locations(value: Any, key: str) -> list[str]:
    if _is_secure(value):
        return [key]
    if isinstance(value, dict):
        return [w for k, v in value.items() for w in _secure_locations(v, f"{key}.{k}")]
    if isinstance(value, list):
        return [w for i, v in enumerate(value) for w in _secure_locations(v, f"{key}[{i}]")]
    return []


def offline_secrets(secrets: dict[str, Any]) -> dict[str, str]:
    """``{name: {secure: ciphertext}}`` -> ``{name: "[secret]"}``: the offline plan has no key to
    decrypt with, needs none (a secret is never shown), and must not fail for lack of one."""
    return dict.fromkeys(secrets, OFFLINE_SECRET)


def engine_string(value: Any) -> str:
    """How the Pulumi engine passes a config value to a program."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value)
    return "" if value is None else str(value)


def decode_engine_values(raw: dict[str, str]) -> dict[str, Any]:
    """Engine strings -> values the models accept (structured values are JSON)."""
    decoded: dict[str, Any] = {}
    for key, value in namespace_values(raw).items():
        if isinstance(value, str) and value[:1] in ("{", "["):
            # Undecodable JSON stays a string; the schema then reports it against its key.
            with contextlib.suppress(json.JSONDecodeError, RecursionError):
                value = json.loads(value)
        decoded[key] = value
    return decoded


def lookalike_key_warnings(raw: dict[str, str]) -> list[str]:
    """Keys Pulumi passes on but this program never reads, that look meant for it: a misspelled
    namespace (``tpu-pathway:workloads``) or none (``workloads``). Warned about, not refused:
    other programs' namespaces may legitimately sit in a stack file."""
    ours = [f.alias or name for name, f in StackConfig.model_fields.items()]
    warnings = []
    for key in raw:
        namespace, colon, name = key.rpartition(":")
        if colon and namespace == NAMESPACE:
            continue
        looks_ours = (
            difflib.SequenceMatcher(None, namespace, NAMESPACE).ratio() >= 0.75
            if colon
            else bool(difflib.get_close_matches(name, ours, n=1, cutoff=0.8))
        )
        if looks_ours:
            match = difflib.get_close_matches(name, ours, n=1, cutoff=0.6)
            hint = f"; did you mean '{NAMESPACE}:{match[0]}'?" if match else ""
            warnings.append(f"config key {key!r} is not read by this program{hint}")
    return warnings


def load_stack(
    stack: str, stacks_dir: Path = STACKS_DIR, warn: Callable[[str], None] | None = None
) -> StackConfig:
    """Read and validate one stack file (the offline plan's entry). Warnings about keys that
    look misspelled go to ``warn`` (default: stderr)."""
    raw = read_stack_file(stack, stacks_dir)
    for message in lookalike_key_warnings(raw):
        (warn or _stderr)(f"warning: {stack_path(stack, stacks_dir).name}: {message}")
    return parse_stack_config(
        decode_engine_values(raw), f"{stack_path(stack, stacks_dir).name} ({NAMESPACE}:)"
    )


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def load_from_engine() -> StackConfig:
    """Validate the config the Pulumi engine passed to this program (the `pulumi up` entry)."""
    import pulumi
    from pulumi.runtime import config as runtime_config

    raw = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    source = f"stack config ({NAMESPACE}:)"
    for message in lookalike_key_warnings(raw):
        pulumi.log.warn(message)
    if SECRETS_KEY in raw and not runtime_config.is_config_secret(SECRETS_KEY):
        issue = ConfigIssue(
            SECRETS_KEY, f"is stored in plain text (value not shown); encrypt each: {_SET_SECRET}"
        )
        raise ConfigError([issue], source)
    return parse_stack_config(decode_engine_values(raw), source)
