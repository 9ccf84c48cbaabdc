"""Where stack configuration comes from: `stacks/Pulumi.<stack>.yaml` for the offline plan, the
Pulumi engine's config map for `pulumi up`. Both end in the same parser.

The engine hands a program every config value as a string (structured values JSON-encoded).
The offline plan converts the YAML file to that same form first, so the plan exercises exactly
the path `pulumi up` takes.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from components.config import NAMESPACE, StackConfig, namespace_values, parse_stack_config
from components.errors import ConfigError, ConfigIssue

if TYPE_CHECKING:
    from components.shared_cluster import SharedCluster

PROJECT_DIR = Path(__file__).resolve().parent.parent
STACKS_DIR = PROJECT_DIR / "stacks"
# libyaml's safe loader when PyYAML has it: the same schema as yaml.safe_load, ~9x faster on
# large stack files (70 ms -> 8 ms for a 256-slice stack; benchmarks/README.md).
_FAST_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def stack_path(stack: str, stacks_dir: Path = STACKS_DIR) -> Path:
    return stacks_dir / f"Pulumi.{stack}.yaml"


def available_stacks(stacks_dir: Path = STACKS_DIR) -> list[str]:
    names = (
        p.name.removeprefix("Pulumi.").removesuffix(".yaml")
        for p in stacks_dir.glob("Pulumi.*.yaml")
    )
    return sorted(names)


def targets_existing_cluster(stack: str, stacks_dir: Path = STACKS_DIR) -> bool:
    """Whether the stack deploys onto a cluster another stack owns (`owner:`), or one made
    outside this project (`cluster.existing`)."""
    values = decode_engine_values(read_stack_file(stack, stacks_dir))
    cluster = values.get("cluster")
    existing = isinstance(cluster, dict) and cluster.get("existing") is not None
    return existing or values.get("owner") is not None


def owner_stacks(stacks_dir: Path = STACKS_DIR) -> list[str]:
    """Stacks that create their cluster; the others target one of these, so deploy these first.

    Refuses two stacks that would own one cluster (same project and cluster name), and a stack
    that reaches an owner's cluster through `cluster.existing` instead of `owner:` (it would
    bypass the owner's rules and queues)."""
    owners: list[str] = []
    claims: dict[tuple[Any, Any], list[str]] = {}  # (project, cluster name) -> owner stacks
    existing: list[tuple[str, tuple[Any, Any]]] = []
    for stack in available_stacks(stacks_dir):
        values = decode_engine_values(read_stack_file(stack, stacks_dir))
        gcp, cluster = values.get("gcp"), values.get("cluster")
        project = gcp.get("project") if isinstance(gcp, dict) else None
        cluster = cluster if isinstance(cluster, dict) else {}
        target = cluster.get("existing")
        if values.get("owner") is not None:
            continue
        if isinstance(target, dict):
            existing.append((stack, (project, target.get("name"))))
            continue
        if target is None:
            owners.append(stack)
            claims.setdefault((project, cluster.get("name")), []).append(stack)
    issues = [
        ConfigIssue(
            "cluster.name",
            f"stacks {' and '.join(repr(s) for s in stacks)} would both own cluster {name!r} in "
            f"project {project!r}; keep one owner and make the others team stacks "
            f"(owner: {stacks[0]}, without gcp, cluster and pools)",
        )
        for (project, name), stacks in claims.items()
        if len(stacks) > 1 and name is not None
    ]
    issues += [
        ConfigIssue(
            "cluster.existing",
            f"stack {stack!r} targets cluster {key[1]!r}, which stack {claims[key][0]!r} owns; "
            f"make it a team stack (owner: {claims[key][0]}) so the owner's rules and queues "
            "apply",
        )
        for stack, key in existing
        if key in claims
    ]
    if issues:
        raise ConfigError(issues, "stacks")
    return owners


def read_stack_file(stack: str, stacks_dir: Path = STACKS_DIR) -> dict[str, str]:
    """The stack file's `config:` map in the engine's string form. Raises ConfigError."""
    path = stack_path(stack, stacks_dir)
    if not path.is_file():
        known = ", ".join(available_stacks(stacks_dir)) or "none"
        raise ConfigError(
            [ConfigIssue("--stack", f"unknown stack {stack!r}; available: {known}")], "plan"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            [ConfigIssue("", f"cannot read it as UTF-8 text: {exc}")], str(path)
        ) from None
    try:
        document = yaml.load(text, Loader=_FAST_SAFE_LOADER) or {}
    except yaml.YAMLError:
        try:  # the pure-Python loader's message quotes the offending line
            document = yaml.safe_load(text) or {}
        except yaml.YAMLError as exc:
            raise ConfigError([ConfigIssue("", f"not valid YAML: {exc}")], str(path)) from None
    config = document.get("config", {}) if isinstance(document, dict) else None
    if not isinstance(config, dict):
        raise ConfigError([ConfigIssue("config", "must be a mapping of keys to values")], str(path))
    return {str(k): engine_string(v) for k, v in config.items()}


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
            with contextlib.suppress(json.JSONDecodeError):
                value = json.loads(value)
        decoded[key] = value
    return decoded


def load_stack(stack: str, stacks_dir: Path = STACKS_DIR) -> StackConfig:
    """Read and validate one stack file (the offline plan's entry). A team stack's owner is
    resolved from the owner stack's own offline plan (same project, no network)."""
    values = decode_engine_values(read_stack_file(stack, stacks_dir))
    source = f"{stack_path(stack, stacks_dir).name} ({NAMESPACE}:)"
    owner = values.get("owner")
    contract = offline_owner(stack, owner, stacks_dir, source) if isinstance(owner, str) else None
    return parse_stack_config(values, source, contract)


def offline_owner(stack: str, owner: str, stacks_dir: Path, source: str) -> SharedCluster | None:
    """The owner's `shared_cluster` output as its offline plan computes it."""
    from components.plan.engine import PROJECT, run_program
    from components.program import build_stack
    from components.shared_cluster import OUTPUT, contract_from_outputs, parse_owner_ref

    def refuse(message: str) -> ConfigError:
        return ConfigError([ConfigIssue("owner", message)], source)

    try:
        project, owner_stack = parse_owner_ref(owner)
    except ValueError:
        return None  # the schema reports the malformed reference against its key
    if project not in (None, PROJECT):
        raise refuse(
            f"{owner!r} is a stack of project {project!r}; the offline plan reads owners of "
            f"this project ({PROJECT}) only, from stacks/Pulumi.<stack>.yaml"
        )
    if owner_stack == stack:
        raise refuse(f"{owner!r} is this stack; name the stack that creates the cluster")
    if not stack_path(owner_stack, stacks_dir).is_file():
        known = ", ".join(owner_stacks(stacks_dir)) or "none"
        raise refuse(f"no stack {owner_stack!r} in this project; cluster owners: {known}")
    if targets_existing_cluster(owner_stack, stacks_dir):
        raise refuse(
            f"stack {owner_stack!r} does not own a cluster (it is a team stack or targets an "
            f"existing cluster); cluster owners: {', '.join(owner_stacks(stacks_dir)) or 'none'}"
        )
    owner_config = load_stack(owner_stack, stacks_dir)
    _, outputs = run_program(lambda: build_stack(owner_config), owner_stack)
    return contract_from_outputs(outputs.get(OUTPUT), owner)


def load_from_engine() -> StackConfig:
    """Validate the config the Pulumi engine passed to this program (the `pulumi up` entry).
    A team stack's owner is read through a StackReference first (it registers nothing else)."""
    from pulumi.runtime import config as runtime_config

    raw = {**runtime_config.get_config_env(), **runtime_config.CONFIG.get()}
    values = decode_engine_values(raw)
    source = f"stack config ({NAMESPACE}:)"
    contract = None
    owner = values.get("owner")
    if isinstance(owner, str):
        from components.program import read_owner_contract
        from components.shared_cluster import parse_owner_ref

        try:
            parse_owner_ref(owner)
        except ValueError:
            pass  # reported by the schema, before anything is read
        else:
            contract = read_owner_contract(owner)
    return parse_stack_config(values, source, contract)
