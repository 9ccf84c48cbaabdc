"""Where stack configuration comes from: `stacks/Pulumi.<stack>.yaml` for the offline plan, the
Pulumi engine's config map for `pulumi up` (read by ``components.stack.entry``). Both end in the
same parser.

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
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.config.grammars import parse_owner_ref
from components.config.safe_yaml import MAX_FILE_BYTES, load_yaml
from components.config.schema import NAMESPACE, StackConfig, namespace_values
from components.config.schema.fleet import is_fleet
from components.errors import ConfigError, ConfigIssue
from components.files import FileProblem, read_regular_file
from components.resolve.checks import parse_stack_config
from components.resolve.tenancy.cross_stack import (
    Conflict,
    both,
    derived_name_conflicts,
    fleet_workers,
    manager_remedy,
    manager_values,
    namespace_conflicts,
    shared_worker_conflicts,
    stack_names,
)
from components.resolve.tenancy.shared_cluster import fleet_owner_message, read_contract

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


def targets_existing_cluster(stack: str, stacks_dir: Path = STACKS_DIR) -> bool:
    """Whether the stack deploys onto a cluster another stack owns (`owner:`), or one made
    outside this project (`cluster.existing`)."""
    values = read_stack_values(stack, stacks_dir)
    cluster = values.get("cluster")
    existing = isinstance(cluster, dict) and cluster.get("existing") is not None
    return existing or values.get("owner") is not None


@dataclass(frozen=True)
class StackKinds:
    """Every stack file sorted by role: owners (create their cluster; deploy these first) and
    team stacks (with fleet stacks: they read their workers, so they deploy after them). A file
    that cannot be read is reported in ``errors``, not fatal to the others; ``found`` are
    problems between stacks (``conflicts``: their issues)."""

    owners: list[str]
    teams: list[str]
    errors: dict[str, ConfigError]
    found: list[Conflict]

    @property
    def conflicts(self) -> list[ConfigIssue]:
        return [conflict.issue_of(conflict.stacks[0]) for conflict in self.found]

    def conflicts_of(self, stack: str) -> list[ConfigIssue]:
        """The problems between stacks that involve ``stack``, at its own keys."""
        return [conflict.issue_of(stack) for conflict in self.found if stack in conflict.stacks]


def _clusters_sharing_a_project(
    claims: dict[tuple[Any, Any], list[str]], fleets: Mapping[str, list[str]]
) -> list[Conflict]:
    """Two clusters in one project: a Workload Identity grant names the project's pool,
    `serviceAccount:<project>.svc.id.goog[<namespace>/<ksa>]`, so it holds for that namespace
    and account in every cluster of the project (GKE "Workload Identity Federation for GKE",
    identity sameness)."""
    by_project: dict[Any, list[str]] = {}
    for (project, name), stacks in claims.items():
        if project is not None and name is not None:
            by_project.setdefault(project, []).append(stacks[0])
    return [
        Conflict(
            tuple(stacks),
            ConfigIssue(
                "gcp.project",
                f"stacks {stack_names(stacks, fleets)} would each create a cluster in project "
                f"{project!r}: a team's Workload Identity grant (its bucket prefix) would then "
                "hold for the same namespace in the other cluster too; give each cluster its "
                "own project",
            ),
            frozenset(fleets).intersection(stacks),
        )
        for project, stacks in by_project.items()
        if len(stacks) > 1
    ]


def _one_cluster_two_owners(
    project: Any, name: Any, stacks: list[str], fleets: Mapping[str, list[str]]
) -> Conflict:
    if any(s in fleets for s in stacks):
        remedy = manager_remedy(stacks, fleets)
    else:
        remedy = (
            f"keep one owner and make the others team stacks (owner: {stacks[0]}, without gcp, "
            "cluster and pools)"
        )
    return Conflict(
        tuple(stacks),
        ConfigIssue(
            "cluster.name",
            f"stacks {stack_names(stacks, fleets)} would {both(stacks)} own cluster {name!r} in "
            f"project "
            f"{project!r}; {remedy}",
        ),
        frozenset(fleets).intersection(stacks),
    )


def _existing_owned(stack: str, name: Any, owner: str, fleets: Mapping[str, list[str]]) -> str:
    if owner in fleets:
        return (
            f"stack {stack!r} targets cluster {name!r}, the manager cluster of fleet stack "
            f"{owner!r}, which runs no TPU work and takes no team stacks; add its workloads to "
            f"that fleet's tpu-pathways:workloads, or make it a team stack of a cluster owner"
        )
    return (
        f"stack {stack!r} targets cluster {name!r}, which stack {owner!r} owns; make it a team "
        f"stack (owner: {owner}) so the owner's rules and queues apply"
    )


def classify_stacks(
    stacks_dir: Path = STACKS_DIR,
    read: Mapping[str, Mapping[str, str]] | None = None,
    values: Mapping[str, Mapping[str, Any]] | None = None,
) -> StackKinds:
    """Refuses (in ``conflicts``) two stacks that would own one cluster (same project and
    cluster name), two clusters in one project (``_clusters_sharing_a_project``), a stack that
    reaches an owner's cluster through `cluster.existing` instead of `owner:` (it would bypass
    the owner's rules and queues), and the conflicts of ``cross_stack``: names two owners would
    both create, a namespace two team stacks would both own. A fleet stack's manager is a
    cluster it owns, checked as an owner's. ``read``: config maps of stack files already read
    (``read_stack_file``), not read again; ``values``: stacks' values already decoded (a fleet
    stack's own under `pulumi up`), used instead of their files."""
    owners: list[str] = []
    teams: list[str] = []
    values_of: dict[str, Mapping[str, Any]] = {}
    errors: dict[str, ConfigError] = {}
    claims: dict[tuple[Any, Any], list[str]] = {}  # (project, cluster name) -> owner stacks
    existing: list[tuple[str, tuple[Any, Any]]] = []
    fleets: dict[str, list[str]] = {}  # fleet stack -> its workers
    for stack in sorted({*available_stacks(stacks_dir), *(values or {})}):
        try:
            decoded = (values or {}).get(stack)
            if decoded is None:
                raw = (read or {}).get(stack) or read_stack_file(stack, stacks_dir)
                decoded = decode_engine_values(dict(raw))
        except ConfigError as exc:
            errors[stack] = exc
            continue
        manager = manager_values(decoded)
        if manager is not None:
            # A fleet reads its workers' contracts, so it deploys after them, as team stacks
            # do; the manager is a cluster it owns.
            teams.append(stack)
            fleets[stack] = fleet_workers(decoded)
            values_of[stack] = manager
            claims.setdefault((manager["gcp"]["project"], manager["cluster"]["name"]), []).append(
                stack
            )
            continue
        values_of[stack] = decoded
        gcp, cluster = decoded.get("gcp"), decoded.get("cluster")
        project = gcp.get("project") if isinstance(gcp, dict) else None
        cluster = cluster if isinstance(cluster, dict) else {}
        target = cluster.get("existing")
        if decoded.get("owner") is not None or target is not None:
            teams.append(stack)
            if decoded.get("owner") is None and isinstance(target, dict):
                existing.append((stack, (project, target.get("name"))))
            continue
        owners.append(stack)
        claims.setdefault((project, cluster.get("name")), []).append(stack)
    conflicts = [
        _one_cluster_two_owners(project, name, stacks, fleets)
        for (project, name), stacks in claims.items()
        if len(stacks) > 1 and name is not None
    ]
    conflicts += _clusters_sharing_a_project(claims, fleets)
    conflicts += [
        Conflict(
            (stack, claims[key][0]),
            ConfigIssue("cluster.existing", _existing_owned(stack, key[1], claims[key][0], fleets)),
        )
        for stack, key in existing
        if key in claims
    ]
    conflicts += derived_name_conflicts(
        {s: values_of[s] for s in sorted([*owners, *fleets])}, fleets
    )
    conflicts += namespace_conflicts({s: values_of[s] for s in teams if s not in fleets})
    conflicts += shared_worker_conflicts(fleets)
    return StackKinds(owners, teams, errors, conflicts)


def owner_stacks(stacks_dir: Path = STACKS_DIR) -> list[str]:
    """The stacks that create their cluster. Raises ConfigError on ownership conflicts."""
    kinds = classify_stacks(stacks_dir)
    if kinds.conflicts:
        raise ConfigError(kinds.conflicts, "stacks")
    return kinds.owners


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
    config = {str(k): v for k, v in config.items()}
    issues = secure_value_issues(config) + top_level_null_issues(config)
    if issues:
        raise ConfigError(issues, str(path))
    if SECRETS_KEY in config:
        config[SECRETS_KEY] = offline_secrets(config[SECRETS_KEY])
    return {k: engine_string(v) for k, v in config.items()}


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
    (Pulumi's config.Value reads a YAML null into an empty string: pulumi/pulumi
    sdk/go/common/resource/config/value.go, unmarshalValue). Refused here, where the file shows
    what was written."""
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
    """How the Pulumi engine passes a config value to a program."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value)
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


def lookalike_key_warnings(raw: Mapping[str, Any]) -> list[str]:
    """Keys without a namespace that look meant for this program (``workloads``): Pulumi
    passes them on, and this program never reads them. Warned about, not refused (the
    misspelled namespaces of ``misspelled_namespaces`` are refused)."""
    ours = [f.alias or name for name, f in StackConfig.model_fields.items()]
    warnings = []
    for key in raw:
        if ":" in key or not difflib.get_close_matches(key, ours, n=1, cutoff=0.8):
            continue
        match = difflib.get_close_matches(key, ours, n=1, cutoff=0.6)
        hint = f"; did you mean '{NAMESPACE}:{match[0]}'?" if match else ""
        warnings.append(f"config key {key!r} is not read by this program{hint}")
    return warnings


OwnerReader = Callable[[str], Mapping[str, Any] | None]
"""Given an owner stack's name, its exported outputs (the offline plan passes one that plans
the owner stack; the loader itself never plans)."""


def load_stack(
    stack: str,
    stacks_dir: Path = STACKS_DIR,
    warn: Callable[[str], None] | None = None,
    read_owner: OwnerReader | None = None,
    raw: Mapping[str, str] | None = None,
) -> StackConfig:
    """Read and validate one stack file. Warnings about keys that look misspelled go to ``warn``
    (default: stderr). A team stack's owner contract comes from ``read_owner`` (the offline plan
    gives one that plans the owner stack: ``components.plan.engine.load_stack``). ``raw``: the
    file's config map already read (``read_stack_file``), so it is not read twice."""
    raw = read_stack_file(stack, stacks_dir) if raw is None else raw
    source = f"{stack_path(stack, stacks_dir).name} ({NAMESPACE}:)"
    misspelled = misspelled_namespaces(raw)  # reported with the rest
    for message in lookalike_key_warnings(raw):
        (warn or _stderr)(f"warning: {stack_path(stack, stacks_dir).name}: {message}")
    values = decode_engine_values(raw)
    owner = values.get("owner")
    contract = None
    if isinstance(owner, str) and (owner_stack := owner_stack_of(stack, owner, stacks_dir, source)):
        if read_owner is None:
            raise ConfigError([ConfigIssue("owner", "the owner stack was not read")], source)
        contract = read_contract(read_owner(owner_stack), owner)
    return parse_stack_config(values, source, contract, misspelled)


def owner_stack_of(stack: str, owner: str, stacks_dir: Path, source: str) -> str | None:
    """The stack of this project that ``owner`` names, checked to be a cluster owner (None for
    a malformed reference, which the schema reports against its key)."""

    def refuse(message: str) -> ConfigError:
        return ConfigError([ConfigIssue("owner", message)], source)

    try:
        project, owner_stack = parse_owner_ref(owner)
    except ValueError:
        return None
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
    if is_fleet(read_stack_values(owner_stack, stacks_dir)):
        raise refuse(fleet_owner_message(owner, ", ".join(owner_stacks(stacks_dir)) or "none"))
    if targets_existing_cluster(owner_stack, stacks_dir):
        raise refuse(
            f"stack {owner_stack!r} does not own a cluster (it is a team stack or targets an "
            f"existing cluster); cluster owners: {', '.join(owner_stacks(stacks_dir)) or 'none'}"
        )
    return owner_stack


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)
