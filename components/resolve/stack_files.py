"""The stack files and the engine's config map: `stacks/Pulumi.<stack>.yaml` for the offline
plan, the Pulumi engine's config map for `pulumi up` (read by ``components.stack.entry``). Both
end in the same parser (``loader.load_stack``, ``checks.parse_stack_config``).

The engine hands a program every config value as a string (structured values JSON-encoded).
The offline plan converts the YAML file to that same form first, as the Pulumi CLI reads it
(``components.config.safe_yaml``: gopkg.in/yaml.v3's values; keys namespaced as below), so the
plan exercises exactly the path `pulumi up` takes.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import re
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from components.config.safe_yaml import MAX_FILE_BYTES, load_yaml
from components.config.schema import NAMESPACE, namespace_values
from components.config.yaml_v3 import go_json_number
from components.errors import ConfigError, ConfigIssue
from components.files import FileProblem, read_regular_file

PROJECT_DIR = Path(__file__).resolve().parents[2]
PROJECT = "tpu-pathways"  # the name in Pulumi.yaml
STACKS_DIR = PROJECT_DIR / "stacks"

# The stack files the program itself reads (a fleet's workers are checked against them): the
# project's under `pulumi up`, the planned directory's under `plan --stacks-dir DIR`.
_PROGRAM_STACKS_DIR: ContextVar[Path] = ContextVar("program_stacks_dir", default=STACKS_DIR)


def program_stacks_dir() -> Path:
    """The stacks directory the running program checks other stacks in."""
    return _PROGRAM_STACKS_DIR.get()


@contextlib.contextmanager
def stacks_dir_of_program(stacks_dir: Path) -> Iterator[None]:
    """Run a program (the offline plan's) with ``stacks_dir`` as its stacks directory."""
    token = _PROGRAM_STACKS_DIR.set(stacks_dir)
    try:
        yield
    finally:
        _PROGRAM_STACKS_DIR.reset(token)


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


def read_stack_file(stack: str, stacks_dir: Path = STACKS_DIR) -> dict[str, str]:
    """The stack file's `config:` map in the engine's string form. Raises ConfigError."""
    check_stack_name(stack)
    path = stack_path(stack, stacks_dir)
    if not path.is_symlink() and not path.exists():  # a symlink that leads nowhere is read below
        known = ", ".join(available_stacks(stacks_dir)) or "none"
        raise ConfigError(
            [ConfigIssue("--stack", f"unknown stack {stack!r}; available: {known}")], "plan"
        )
    try:
        text = read_regular_file(path, MAX_FILE_BYTES, "stack file").decode("utf-8")
    except FileProblem as exc:
        raise ConfigError([ConfigIssue("", str(exc))], str(path)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            [ConfigIssue("", f"cannot read it as UTF-8 text: {exc}")], str(path)
        ) from None
    document = load_yaml(text, str(path)) or {}
    config = document.get("config", {}) if isinstance(document, dict) else None
    if not isinstance(config, dict):
        raise ConfigError([ConfigIssue("config", "must be a mapping of keys to values")], str(path))
    config, issues = namespaced(config)
    issues += secure_value_issues(config) + top_level_null_issues(config)
    if issues:
        raise ConfigError(issues, str(path))
    if SECRETS_KEY in config:
        config[SECRETS_KEY] = offline_secrets(config[SECRETS_KEY])
    return {k: engine_string(v) for k, v in config.items()}


def namespaced(config: dict[str, Any]) -> tuple[dict[str, Any], list[ConfigIssue]]:
    """The config map keyed as the Pulumi CLI keys it, and the keys it refuses or reads other
    than as written. Since Pulumi v3.44 a key without a namespace is the project's
    (``environment`` is ``tpu-pathways:environment``: pulumi/pulumi
    sdk/go/common/workspace/loaders.go, ``stackConfigNamespacedWithProject``); beside its
    namespaced twin one of the two is kept, at random (a Go map), so that is refused. A key
    is ``<namespace>:<name>`` (sdk/go/common/resource/config/key.go, ``ParseKey``): more
    colons fail the load, or (``ns:config:name``, an old form) silently become
    ``ns:name``."""
    issues = []
    keyed: dict[str, Any] = {}
    for key, value in config.items():
        if problem := config_key_problem(key):
            issues.append(ConfigIssue(_shown_key(key), problem))
            continue
        full = key if ":" in key else f"{PROJECT}:{key}"
        if full != key and full in config:
            issues.append(
                ConfigIssue(
                    _shown_key(key),
                    f"Pulumi reads {_shown_key(key)!r} as {_shown_key(full)!r}, which the file "
                    "also sets, and keeps one of the two values at random; remove one",
                )
            )
            continue
        keyed[full] = value
    return keyed, issues


def config_key_problem(key: str) -> str | None:
    """Why the Pulumi CLI refuses ``key`` of a stack file's ``config:`` (or reads it as another
    key); None if it reads it as written (or, without a namespace, as the project's)."""
    namespace, _, name = key.partition(":")
    if ":" in name:
        if name.partition(":")[0] == "config":
            right = f"{namespace}:{name.partition(':')[2]}"
            return (
                f"Pulumi reads it as {_shown_key(right)!r} (an old form of config keys); write "
                "that, so the file says what the program is given"
            )
        return (
            "a config key has one ':', between its namespace and its name "
            "(tpu-pathways:workloads); Pulumi refuses to load a file with this one"
        )
    if not key:
        return f"an empty key (Pulumi reads it as '{PROJECT}:', a key with no name); remove it"
    if key.startswith(":") or key.endswith(":"):
        part = "namespace before" if key.startswith(":") else "name after"
        return f"no {part} the ':'; write it as '{PROJECT}:<name>'"
    return None


def _shown_key(key: str) -> str:
    return key if len(key) <= 80 else key[:77] + "..."


SECRETS_KEY = f"{NAMESPACE}:secrets"
# What the offline plan puts in place of a secret it cannot decrypt (it has no passphrase or
# KMS key, by design); the plan shows it as [secret] either way.
OFFLINE_SECRET = "[secret]"
SET_SECRET_HINT = "pulumi config set --secret --path 'tpu-pathways:secrets.NAME' VALUE"


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
                SECRETS_KEY,
                f"must be a mapping of names to secrets; set each with {SET_SECRET_HINT}",
            )
        )
    elif secrets:
        issues += [
            ConfigIssue(
                f"{SECRETS_KEY}.{name}",
                f"is plain text in the stack file (value not shown); encrypt it: {SET_SECRET_HINT}",
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


def top_level_null_issues(config: dict[str, Any]) -> list[ConfigIssue]:
    """A top-level ``tpu-pathways:<key>: null`` (or ``~``, or nothing after the colon): the
    engine hands it to the program as empty text, which this program could not tell from ''
    (gopkg.in/yaml.v3 decode.go ``prepare`` never calls a config.Value's UnmarshalYAML for a
    null, so the entry keeps the zero Value, empty text; since v3.172 pulumi/pulumi
    sdk/go/common/workspace/loaders.go ``checkForEmptyConfig`` also warns "treated as an empty
    string"). Refused here, where the file shows what was written."""
    return [
        ConfigIssue(
            key,
            "null is not allowed: Pulumi passes a top-level null to the program as empty text "
            "(''); remove the key to take its default, or give it a value",
        )
        for key, value in config.items()
        if value is None and key.startswith(f"{NAMESPACE}:")
    ]


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
    """How the Pulumi engine passes a config value to a program: text as itself, a number or
    true/false as JSON, a mapping or list as JSON with its keys sorted (Go's encoding/json,
    pulumi/pulumi sdk/go/common/resource/config/plaintext.go ``marshalText``), so a program
    meets a mapping's keys in the order `pulumi up` gives them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    if isinstance(value, int | float):
        return go_json_number(value)
    return "" if value is None else str(value)


def read_stack_values(stack: str, stacks_dir: Path = STACKS_DIR) -> dict[str, Any]:
    """The stack file's ``tpu-pathways:`` values, decoded (not validated). Raises ConfigError."""
    return decode_engine_values(read_stack_file(stack, stacks_dir))


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


def misspelled_namespaces(raw: Mapping[str, Any]) -> list[ConfigIssue]:
    """Keys under a namespace that is a misspelling of this project's (``tpu-pathway:secrets``,
    ``Tpu-Pathways:workloads``): refused, as this program would silently not read them (and a
    plain-text value meant for ``tpu-pathways:secrets`` would sit unencrypted in the file)."""
    issues = []
    for key in raw:
        namespace, colon, name = key.rpartition(":")
        if not colon or namespace == NAMESPACE:
            continue
        similar = difflib.SequenceMatcher(None, namespace.lower()[:100], NAMESPACE).ratio()
        if similar >= 0.75:
            right = f"{NAMESPACE}:{name}" if len(name) <= 60 else f"{NAMESPACE}:{name[:57]}..."
            issues.append(
                ConfigIssue(
                    key if len(key) <= 80 else key[:77] + "...",
                    f"the namespace {namespace[:40]!r} is a misspelling of {NAMESPACE!r}, so "
                    f"this program would never read the key; write it as '{right}'",
                )
            )
    return issues
