"""The grammars free text must match before it reaches a manifest.

Each check returns None or a problem naming what is allowed; ``schema.py`` wraps them as field
validators. Sources:

- image references: the distribution reference grammar (github.com/distribution/reference,
  ``reference.go``), which containerd and the kubelet parse;
- label keys and values, DNS-1123 subdomains: Kubernetes' ``IsQualifiedName`` /
  ``IsValidLabelValue`` / ``IsDNS1123Subdomain`` (k8s.io/apimachinery/pkg/util/validation);
- bucket names and object names: Cloud Storage's naming rules
  (cloud.google.com/storage/docs/buckets#naming, .../objects#naming; the bucket rule's home is
  ``components.pathways.gcs_access``, which also reads gs:// paths out of command lines);
- environment variable names: Kubernetes' ``IsEnvVarName`` checks characters only and sets no
  length, so the bound is ours (``MAX_ENV_NAME``), far under Linux's limit below;
- argument and environment sizes: Linux's MAX_ARG_STRLEN (32 pages = 128 KiB for one argument
  or ``NAME=value`` string, its terminating NUL included: include/uapi/linux/binfmts.h), and the
  API server's 1.5 MiB request limit (etcd's default ``--max-request-bytes``, which the API
  server's object size follows) that a PathwaysJob, and the JobSet made of it, must fit;
- GCE resource names (networks, subnetworks, reservations): RFC 1035 labels of 1-63
  characters (cloud.google.com/compute/docs/naming-resources);
- project IDs: 6-30 lowercase letters, digits or hyphens, starting with a letter, not ending
  with a hyphen, without the restricted strings google, null, undefined and ssl
  (cloud.google.com/resource-manager/docs/creating-managing-projects, "Project ID");
- stack references (``owner:``): Pulumi's fully qualified ``<org>/<project>/<stack>`` form, or a
  stack name of this project.
"""

from __future__ import annotations

import ipaddress
import re

from components.pathways.gcs_access import bucket_problem

# --- container image references ----------------------------------------------------------
_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[_.]|__|[-]+)"
_PATH_COMPONENT = rf"{_ALNUM}(?:{_SEPARATOR}{_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN_NAME = rf"{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*"
_IPV6 = r"\[(?:[a-fA-F0-9:]+)\]"
_HOST = rf"(?:{_DOMAIN_NAME}|{_IPV6})"
_DOMAIN = rf"{_HOST}(?::[0-9]+)?"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_NAME = rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_REFERENCE = re.compile(
    rf"(?P<name>{_NAME})(?::(?P<tag>{_TAG}))?(?:@(?P<digest>{_DIGEST}))?", re.ASCII
)
_MAX_IMAGE_NAME = 255


def image_problem(value: str) -> str | None:
    match = _REFERENCE.fullmatch(value)
    if match is None:
        return (
            f"{_show(value)} is not a container image reference; use "
            "[registry[:port]/]path[:tag][@sha256:digest] in lowercase without spaces, e.g. "
            "'us-docker.pkg.dev/my-project/repo/trainer:v1'"
        )
    if len(match["name"]) > _MAX_IMAGE_NAME:
        return f"the image name is {len(match['name'])} characters; at most {_MAX_IMAGE_NAME}"
    return None


def unpinned_image_problem(value: str) -> str | None:
    """A valid reference that names no fixed build: no tag and no digest (the runtime pulls
    ``latest``), or the tag ``latest`` in any case."""
    match = _REFERENCE.fullmatch(value)
    if match is None or match["digest"]:
        return None
    if match["tag"] is None:
        return f"{_show(value)} has no tag or digest, so it runs whatever 'latest' is"
    if match["tag"].lower() == "latest":
        return f"{_show(value)} is tagged {match['tag']!r}, which names no fixed build"
    return None


# --- Kubernetes label keys and values ------------------------------------------------------
_LABEL_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]", re.ASCII)
_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = re.compile(rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*", re.ASCII)


def label_key_problem(value: str) -> str | None:
    prefix, slash, name = value.rpartition("/")
    allowed = (
        "a label key is [prefix/]name: name at most 63 letters, digits, '-', '_' or '.', "
        "starting and ending with a letter or digit; prefix a DNS subdomain of at most 253"
    )
    if slash and not (len(prefix) <= 253 and _DNS1123_SUBDOMAIN.fullmatch(prefix)):
        return f"{_show(value)} has an invalid prefix {_show(prefix)}; {allowed}"
    if len(name) > 63 or not _LABEL_NAME.fullmatch(name):
        return f"{_show(value)} is not a label key; {allowed}"
    return None


def label_value_problem(value: str) -> str | None:
    if value == "" or (len(value) <= 63 and _LABEL_NAME.fullmatch(value)):
        return None
    return (
        f"{_show(value)} is not a label value; at most 63 letters, digits, '-', '_' or '.', "
        "starting and ending with a letter or digit (or empty)"
    )


# --- Cloud Storage paths -------------------------------------------------------------------
def gcs_path_problem(value: str) -> str | None:
    """``gs://BUCKET[/OBJECT-PREFIX]``: a bucket by its rules, an object name of at most 1024
    UTF-8 bytes without control characters (carriage return and line feed are forbidden)."""
    if not value.startswith("gs://"):
        return f"{_show(value)} is not a Cloud Storage path; use gs://<bucket>/<path>"
    bucket, _, path = value.removeprefix("gs://").partition("/")
    if problem := bucket_problem(bucket):
        return problem
    if len(path.encode("utf-8")) > 1024:
        return f"the object path of {_show(value)} is longer than 1024 bytes"
    if _has_control(path) or path in (".", ".."):
        return (
            f"the object path of {_show(value)} has control characters (newlines, tabs) or is "
            "'.' or '..'; use letters, digits, '/', '-', '_' and '.'"
        )
    return None


# --- free text passed to processes ---------------------------------------------------------
MAX_ARG_BYTES = 128 * 2**10 - 1
"""One command-line argument or flag: Linux's MAX_ARG_STRLEN (128 KiB) less the terminating
NUL; exec fails with E2BIG on a longer one."""
MAX_ARGS_TOTAL_BYTES = 256 * 2**10
"""All arguments of one command, or all flags of one component, together (ours, like
``MAX_ENV_TOTAL_BYTES``: well under Linux's ARG_MAX and the 1.5 MiB object limit)."""
MAX_OBJECT_BYTES = 3 * 2**19
"""The API server refuses an object whose request is over 1.5 MiB (etcd's default
``--max-request-bytes``: etcd.io/docs "System limits", "Request size limit")."""
OBJECT_OVERHEAD_BYTES = 64 * 2**10
"""What the serialized spec is estimated to grow by in the stored object: metadata, labels,
managedFields, and the pod templates the PathwaysJob controller adds around the same
containers, flags and env when it makes the JobSet."""
MAX_ENV_VALUE_BYTES = 32 * 2**10
"""One environment value; Linux refuses to exec with a ``NAME=value`` over 128 KiB."""
MAX_ENV_TOTAL_BYTES = 256 * 2**10
"""All environment values of one container together (well under the 1.5 MiB object limit)."""


def flag_problem(value: str) -> str | None:
    shown = _show(value) if credential_flag_name(value) is None else _flag_shown(value)
    if _has_control(value):
        return (
            f"{shown} contains control characters (newline, tab...); a flag is one line such as "
            "'--name=value'"
        )
    return arg_size_problem(value, shown)


def credential_flag_name(flag: str) -> str | None:
    """The name of a flag that looks like it passes a credential (``--hf_token=...``,
    ``--api-key ...``, ``--password``: ``credential_name`` of the name, '-' read as '_'), else
    None."""
    if not flag.startswith("-"):
        return None
    name = re.split(r"[=\s]", flag.lstrip("-"), maxsplit=1)[0]
    return name if name and credential_name(name.replace("-", "_")) else None


def _flag_shown(flag: str) -> str:
    return f"the flag --{credential_flag_name(flag)} (value not shown)"


# Kubernetes expands $(NAME) in a container's args from its environment (Pod spec, "args":
# "Variable references $(VAR_NAME) are expanded using the container's environment").
_ENV_REFERENCE = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")


def credential_flag_problems(flags: list[str], secret_env: set[str]) -> list[tuple[int, str]]:
    """Flags that pass a credential as plain text, by index: a credential flag's value (after
    '=' or a space, or the next item) may only be ``$(NAME)``, NAME an environment variable set
    from a secret (``secret_env``); the value itself is never shown."""
    problems = []
    for index, flag in enumerate(flags):
        name = credential_flag_name(flag)
        if name is None:
            continue
        value, where = _flag_value(flags, index)
        reference = _ENV_REFERENCE.fullmatch(value or "")
        if not value or (reference is not None and reference[1] in secret_env):
            continue
        problems.append(
            (
                where,
                f"--{name} looks like it passes a credential, so its value may not be plain "
                "text (it would be readable in the stack file, the plan and the PathwaysJob); "
                f"pass it from the environment: --{name}=$(NAME), with env NAME set to "
                "{configSecret: SECRET} or {secretKeyRef: {name: SECRET, key: KEY}}",
            )
        )
    return problems


def _flag_value(flags: list[str], index: int) -> tuple[str | None, int]:
    """A flag's value and the index it is at: after '=' or a space, or the next item unless
    that is another flag (then the flag is a switch, with no value)."""
    parts = re.split(r"[=\s]", flags[index], maxsplit=1)
    if len(parts) == 2:
        return parts[1].strip(), index
    following = flags[index + 1] if index + 1 < len(flags) else None
    if following is None or following.startswith("-"):
        return None, index
    return following, index + 1


def command_arg_problem(value: str) -> str | None:
    """One argument of a user command: any text (a script may span lines) but NUL, which
    ends a C string, and at most Linux's per-argument limit."""
    if "\x00" in value:
        return f"{_show(value)} contains a NUL character, which no command-line argument can hold"
    return arg_size_problem(value)


def arg_size_problem(value: str, shown: str | None = None) -> str | None:
    size = len(value.encode("utf-8"))
    if size > MAX_ARG_BYTES:
        return (
            f"{shown or _show(value)} is {size} bytes; Linux refuses to start a process with an "
            f"argument over {MAX_ARG_BYTES} bytes (MAX_ARG_STRLEN); put large data in a file on "
            "the scratch bucket or a ConfigMap"
        )
    return None


def args_total_problem(values: list[str], what: str) -> str | None:
    total = sum(len(v.encode("utf-8")) for v in values)
    if total > MAX_ARGS_TOTAL_BYTES:
        return f"the {what} total {total} bytes; at most {MAX_ARGS_TOTAL_BYTES}"
    return None


def object_size_problem(kind: str, size: int) -> str | None:
    """``size``: the serialized spec's bytes; the object adds ``OBJECT_OVERHEAD_BYTES``."""
    estimate = size + OBJECT_OVERHEAD_BYTES
    if estimate <= MAX_OBJECT_BYTES:
        return None
    return (
        f"the {kind} would be about {estimate} bytes (its spec is {size}), over the API "
        f"server's object limit of {MAX_OBJECT_BYTES} bytes (1.5 MiB), and so would the JobSet "
        "the controller makes of it; shorten command, flags and env (put large data in a file "
        "on the scratch bucket or a ConfigMap)"
    )


def env_value_problem(value: str) -> str | None:
    size = len(value.encode("utf-8"))
    if size > MAX_ENV_VALUE_BYTES:
        return (
            f"is {size} bytes; an environment value may have at most {MAX_ENV_VALUE_BYTES} "
            "(put large data in a file on the scratch bucket or a ConfigMap)"
        )
    if "\x00" in value:
        return "contains a NUL character, which an environment value cannot hold"
    return None


MAX_ENV_NAME = 256
"""Characters of one environment variable name (ours: Kubernetes sets no length; a name this
long is already a mistake, and every later check of the name stays cheap)."""
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
# Names Pulumi's YAML reader (gopkg.in/yaml.v3) makes of unquoted TRUE/False/NULL/~... keys.
YAML_WORDS = frozenset({"true", "false", "null"})


def env_name_problem(name: str) -> str | None:
    if len(name) > MAX_ENV_NAME:
        return (
            f"the environment variable name {_show(name)} has {len(name)} characters; at most "
            f"{MAX_ENV_NAME}"
        )
    if not _ENV_NAME.fullmatch(name):
        return (
            f"{_show(name)} is not an environment variable name (a letter or '_', then letters, "
            "digits or '_')"
        )
    return yaml_word_problem(name)


def yaml_word_problem(name: str) -> str | None:
    """A name that is ``true``, ``false`` or ``null``: what Pulumi's YAML reader (gopkg.in/
    yaml.v3 v3.0.1, resolve.go) makes of an unquoted ``True``, ``TRUE``, ``False``, ``NULL`` or
    ``~`` key, so two such keys collapse into one (a value lost) before this program sees them
    under `pulumi up` (``ON``, ``yes``, ``off`` stay text there)."""
    if name not in YAML_WORDS:
        return None
    return (
        f"{name!r} is not allowed as a name: Pulumi's YAML reader reads unquoted true, True, "
        "TRUE, false, False, FALSE, null, Null, NULL and ~ keys as true/false/null, and two "
        'such keys become one; quote the name in the stack file ("TRUE": ...)'
    )


# Names that hold credentials by convention: *_TOKEN, *_KEY (or just TOKEN, KEY), and any name
# containing PASSWORD, PASSWD, SECRET or CREDENTIAL, in any case.
_CREDENTIAL_SUFFIXES = ("TOKEN", "KEY")
_CREDENTIAL_WORDS = ("PASSWORD", "PASSWD", "SECRET", "CREDENTIAL")
_KEY_PARTS = re.compile(r"[.:\[\]'\"]+")


def credential_name(name: str) -> bool:
    """Whether a name looks like it holds a credential. Linear in the name (substring and
    suffix tests only; a backtracking pattern here took 25 s on a 200,000-character name)."""
    upper = name.upper()
    suffix = any(upper == word or upper.endswith("_" + word) for word in _CREDENTIAL_SUFFIXES)
    return suffix or any(word in upper for word in _CREDENTIAL_WORDS)


# Keys of the schema whose names hold a credential word but whose values are resource names
# (``cluster.secretsEncryption.kmsKey`` names a Cloud KMS key): a report shows them.
_SCHEMA_KEYS_NOT_CREDENTIALS = frozenset({"secretsEncryption"})


def hides_value(key: str) -> bool:
    """Whether the value at a config key (``workloads[0].env.HF_TOKEN``, ``secrets.pin``) may
    be a credential, so no message may show it."""
    return any(
        credential_name(part)
        for part in _KEY_PARTS.split(key)
        if part and part not in _SCHEMA_KEYS_NOT_CREDENTIALS
    )


def env_total_problem(values: list[str]) -> str | None:
    total = sum(len(v.encode("utf-8")) for v in values)
    if total > MAX_ENV_TOTAL_BYTES:
        return f"the values total {total} bytes; at most {MAX_ENV_TOTAL_BYTES} per container"
    return None


def _has_control(value: str) -> bool:
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in value)


def _show(value: str) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# --- GCP names --------------------------------------------------------------------------------
_RFC1035 = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?", re.ASCII)
_PROJECT_ID = re.compile(r"[a-z][-a-z0-9]{4,28}[a-z0-9]", re.ASCII)
_RESTRICTED_IN_PROJECT_IDS = ("google", "null", "undefined", "ssl")


def gce_name_problem(value: str, what: str) -> str | None:
    if _RFC1035.fullmatch(value):
        return None
    return (
        f"{_show(value)} is not {what} name (1-63 lowercase letters, digits or hyphens, starting "
        "with a letter and not ending with a hyphen)"
    )


def project_resource_problem(value: str, collection: str, what: str) -> str | None:
    """A resource of the stack's project by name, or of another one (a Shared VPC host, a shared
    reservation) by its path projects/<project>/<collection>/<name>."""
    parts = value.split("/")
    if len(parts) > 3 and parts[0] == "projects" and parts[2:-1] == collection.split("/"):
        return project_id_problem(parts[1]) or gce_name_problem(parts[-1], what)
    problem = gce_name_problem(value, what)
    return problem and f"{problem}, or projects/<project>/{collection}/<name>"


def project_id_problem(value: str) -> str | None:
    if not _PROJECT_ID.fullmatch(value):
        return (
            f"{_show(value)} is not a GCP project ID (6-30 lowercase letters, digits or hyphens, "
            "starting with a letter, not ending with a hyphen)"
        )
    if restricted := [word for word in _RESTRICTED_IN_PROJECT_IDS if word in value]:
        return (
            f"{_show(value)} is not a GCP project ID: it contains {restricted[0]!r}, and GCP "
            f"refuses project IDs containing {', '.join(_RESTRICTED_IN_PROJECT_IDS)}"
        )
    return None


# --- IP ranges ------------------------------------------------------------------------------
# Ranges no VPC subnet may use (cloud.google.com/vpc/docs/subnets, "Prohibited IPv4 subnet
# ranges"): "this" network, loopback, link-local, multicast and the limited broadcast address.
# 240.0.0.0/4 (class E) is allowed there, and GKE accepts it for Pods ("non-RFC 1918 ranges").
_PROHIBITED_SUBNETS = {
    ipaddress.IPv4Network("0.0.0.0/8"): "'this network' (0.0.0.0/8)",
    ipaddress.IPv4Network("127.0.0.0/8"): "loopback (127.0.0.0/8)",
    ipaddress.IPv4Network("169.254.0.0/16"): "link-local (169.254.0.0/16)",
    ipaddress.IPv4Network("224.0.0.0/4"): "multicast (224.0.0.0/4)",
    ipaddress.IPv4Network("255.255.255.255/32"): "the broadcast address (255.255.255.255/32)",
}
SMALLEST_SUBNET_PREFIX = 29
"""GCP's smallest subnet range, primary or secondary, is a /29 (cloud.google.com/vpc/docs/
subnets, "IPv4 subnet ranges")."""


def subnet_range_problem(value: str) -> str | None:
    """A node, Pod or Service range of the cluster's subnetwork (already a valid CIDR)."""
    network = ipaddress.ip_network(value)
    if network.version != 4:
        return (
            f"{value!r} is an IPv6 range; the subnetwork's node, Pod and Service ranges are "
            "IPv4 (GKE needs IPv4 ranges even for a dual-stack cluster, and this stack creates "
            "an IPv4-only one); use a private IPv4 range such as '10.0.0.0/20'"
        )
    for reserved, what in _PROHIBITED_SUBNETS.items():
        if network.overlaps(reserved):
            return (
                f"{value!r} overlaps {what}, which GCP refuses in a subnet; use a private range "
                "such as 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16"
            )
    if network.prefixlen > SMALLEST_SUBNET_PREFIX:
        return (
            f"{value!r} is smaller than a /{SMALLEST_SUBNET_PREFIX}, GCP's smallest subnet "
            "range; use a shorter prefix"
        )
    return None


# --- stack references (``owner:``) -------------------------------------------------------
_STACK_PART = r"[A-Za-z0-9_.-]+"
_OWNER_REF = re.compile(rf"(?:({_STACK_PART})/)?(?:({_STACK_PART})/)?({_STACK_PART})")


def parse_owner_ref(ref: str) -> tuple[str | None, str]:
    """`stack`, `org/stack` or `org/project/stack` -> (project or None, stack)."""
    _org, project, stack = owner_ref_parts(ref)
    return project, stack


def owner_ref_parts(ref: str) -> tuple[str | None, str | None, str]:
    """`stack`, `org/stack` or `org/project/stack` -> (org or None, project or None, stack)."""
    match = _OWNER_REF.fullmatch(ref)
    if match is None:
        raise ValueError(
            f"{ref!r} is not a stack reference; use a stack name of this project "
            "(research-v5p) or <org>/<project>/<stack>"
        )
    org, project, stack = match.groups()
    return org, project, stack
