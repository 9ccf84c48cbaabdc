"""Pod Security "baseline" as CEL: the checks of Kubernetes' Pod Security Admission at the
baseline level, written as ValidatingAdmissionPolicy validations over a Pod (``object``). Pure:
no Pulumi; ``team_admission`` puts them into the team namespaces' pod policy, with the one
exception Pathways needs (``PathwaysException``: the host network, the host's ``/tmp`` and the
Pathways ports as host ports, for the pods of a trusted chain only).

Facts, from kubernetes/pod-security-admission (policy/check_*.go, read at commit 8f84a87c,
2026-07; the baseline checks of v1.36, the minor ``BASELINE_VERSION`` pins):
- host namespaces: ``hostNetwork``, ``hostPID``, ``hostIPC`` unset or false;
- privileged: no container ``securityContext.privileged: true``;
- capabilities: ``capabilities.add`` only within ``BASELINE_CAPABILITIES`` (exact names: neither
  ``chown`` nor ``CAP_CHOWN``);
- hostPath volumes: none;
- host ports: every ``ports[].hostPort`` unset or 0;
- AppArmor: the annotation ``container.apparmor.security.beta.kubernetes.io/<name>`` empty,
  ``runtime/default`` or ``localhost/*``; the field ``appArmorProfile.type`` (pod and container)
  ``RuntimeDefault`` or ``Localhost``;
- SELinux: ``seLinuxOptions.type`` in ``SELINUX_TYPES`` (``container_engine_t`` since 1.31),
  ``user`` and ``role`` empty (pod and container);
- /proc: ``procMount`` unset or ``Default``, any value in a user namespace
  (``hostUsers: false``) since 1.35;
- seccomp: ``seccompProfile.type`` (pod and container) unset, ``RuntimeDefault`` or
  ``Localhost``;
- sysctls: only ``BASELINE_SYSCTLS`` (the 1.32 list; 1.37 adds two, ``SYSCTLS_1_37``);
- Windows: ``windowsOptions.hostProcess`` not true (pod and container);
- probe and lifecycle hosts (1.34+): ``httpGet.host`` and ``tcpSocket.host`` empty in every
  liveness, readiness and startup probe and postStart and preStop handler.
Every container check visits init, regular and ephemeral containers (policy/visitor.go).

CEL dialect: only what the Kubernetes CEL environment of 1.34+ offers (standard macros, ``has``,
``in``, ``startsWith``); no field named ``namespace`` is selected (a reserved word there).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

BASELINE_VERSION = "v1.36"
"""The Pod Security minor these checks follow (GKE's Regular channel offers 1.34 to 1.36); the
team namespaces pin their Pod Security labels to it too."""
BASELINE_CAPABILITIES = (
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
)
BASELINE_SYSCTLS = (
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.ip_local_reserved_ports",  # 1.27
    "net.ipv4.tcp_keepalive_time",  # 1.29
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
    "net.ipv4.tcp_rmem",  # 1.32
    "net.ipv4.tcp_wmem",
)
SYSCTLS_1_37 = ("net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_notsent_lowat")
"""Allowed by baseline from 1.37 only: refused here (stricter on a 1.37 cluster)."""
SELINUX_TYPES = ("", "container_t", "container_init_t", "container_kvm_t", "container_engine_t")
APPARMOR_ANNOTATION_PREFIX = "container.apparmor.security.beta.kubernetes.io/"
APPARMOR_TYPES = ("RuntimeDefault", "Localhost")
SECCOMP_TYPES = ("RuntimeDefault", "Localhost")
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
LIFECYCLE_HANDLERS = ("postStart", "preStop")


@dataclass(frozen=True)
class Check:
    """One validation: a CEL expression true for an allowed pod, and the message of a denial."""

    expression: str
    message: str


@dataclass(frozen=True)
class PathwaysException:
    """What baseline forbids and a Pathways pod needs, allowed when ``allowed`` (a CEL
    expression, e.g. ``variables.pathways``) is true: the host network (checked by the caller),
    hostPath ``host_path`` and the ``host_ports``."""

    allowed: str
    host_path: str
    host_ports: Sequence[int]


def cel_list(values: Sequence[str | int]) -> str:
    """A CEL list literal of strings or ints."""
    return "[" + ", ".join(f"'{v}'" if isinstance(v, str) else str(v) for v in values) + "]"


def unset_or(field: str, condition: str) -> str:
    """``condition`` on ``field`` when the field is set (``has`` of its last selection)."""
    return f"(!has({field}) || {condition})"


def each_container(condition: str, lists: Sequence[str] = CONTAINER_LISTS) -> str:
    """``condition`` (over ``c``) for every container of ``lists``; a missing list has none."""
    parts = []
    for name in lists:
        field = f"object.spec.{name}"
        parts.append(unset_or(field, f"{field}.all(c, {condition})"))
    return " && ".join(parts)


def _security(owner: str, field: str, condition: str) -> str:
    """``condition`` on ``<owner>.securityContext.<field>`` when both are set."""
    context = f"{owner}.securityContext"
    return f"(!has({context}) || !has({context}.{field}) || {condition})"


def _not_true(field: str) -> str:
    return f"(!has({field}) || {field} != true)"


def host_namespaces() -> list[Check]:
    return [
        Check(_not_true(f"object.spec.{key}"), f"{key} is not allowed (Pod Security baseline)")
        for key in ("hostPID", "hostIPC")
    ]


def privileged() -> Check:
    condition = _security("c", "privileged", "c.securityContext.privileged != true")
    return Check(each_container(condition), "privileged containers are not allowed (baseline)")


def capabilities() -> Check:
    added = "c.securityContext.capabilities"
    condition = _security(
        "c",
        "capabilities",
        f"(!has({added}.add) || {added}.add.all(a, a in {cel_list(BASELINE_CAPABILITIES)}))",
    )
    return Check(
        each_container(condition),
        "capabilities beyond baseline's (AUDIT_WRITE, CHOWN, DAC_OVERRIDE, FOWNER, FSETID, KILL, "
        "MKNOD, NET_BIND_SERVICE, SETFCAP, SETGID, SETPCAP, SETUID, SYS_CHROOT) are not allowed",
    )


def host_paths(exception: PathwaysException) -> Check:
    allowed = f"({exception.allowed} && v.hostPath.path == '{exception.host_path}')"
    return Check(
        unset_or(
            "object.spec.volumes", f"object.spec.volumes.all(v, !has(v.hostPath) || {allowed})"
        ),
        f"hostPath volumes are not allowed (but {exception.host_path} for Pathways pods)",
    )


def host_ports(exception: PathwaysException) -> Check:
    ports = cel_list(list(exception.host_ports))
    port = (
        f"(!has(p.hostPort) || p.hostPort == 0 || ({exception.allowed} && p.hostPort in {ports}))"
    )
    return Check(
        each_container(f"(!has(c.ports) || c.ports.all(p, {port}))"),
        "hostPort is not allowed (but the Pathways ports of Pathways pods)",
    )


def apparmor() -> Check:
    annotations = "object.metadata.annotations"
    value = f"{annotations}[k]"
    annotation = (
        f"{annotations}.all(k, !k.startsWith('{APPARMOR_ANNOTATION_PREFIX}') || {value} == '' "
        f"|| {value} == 'runtime/default' || {value}.startsWith('localhost/'))"
    )
    types = cel_list(APPARMOR_TYPES)
    pod = _security(
        "object.spec",
        "appArmorProfile",
        f"object.spec.securityContext.appArmorProfile.type in {types}",
    )
    container = _security(
        "c", "appArmorProfile", f"c.securityContext.appArmorProfile.type in {types}"
    )
    return Check(
        f"{unset_or(annotations, annotation)} && {pod} && {each_container(container)}",
        "an AppArmor profile other than RuntimeDefault or Localhost is not allowed (baseline)",
    )


def selinux() -> Check:
    def valid(options: str) -> str:
        return (
            f"((!has({options}.type) || {options}.type in {cel_list(SELINUX_TYPES)}) && "
            f"(!has({options}.user) || {options}.user == '') && "
            f"(!has({options}.role) || {options}.role == ''))"
        )

    pod = _security(
        "object.spec", "seLinuxOptions", valid("object.spec.securityContext.seLinuxOptions")
    )
    container = _security("c", "seLinuxOptions", valid("c.securityContext.seLinuxOptions"))
    return Check(
        f"{pod} && {each_container(container)}",
        "SELinux options other than baseline's types (container_t, container_init_t, "
        "container_kvm_t, container_engine_t) or any user or role are not allowed",
    )


def proc_mount() -> Check:
    user_namespace = "(has(object.spec.hostUsers) && object.spec.hostUsers == false)"
    condition = _security("c", "procMount", "c.securityContext.procMount == 'Default'")
    return Check(
        f"{user_namespace} || ({each_container(condition)})",
        "an unmasked /proc (procMount) is allowed only in a user namespace (hostUsers: false)",
    )


def seccomp() -> Check:
    types = cel_list(SECCOMP_TYPES)
    pod = _security(
        "object.spec",
        "seccompProfile",
        f"object.spec.securityContext.seccompProfile.type in {types}",
    )
    container = _security(
        "c", "seccompProfile", f"c.securityContext.seccompProfile.type in {types}"
    )
    return Check(
        f"{pod} && {each_container(container)}",
        "a seccomp profile other than RuntimeDefault or Localhost is not allowed (baseline)",
    )


def sysctls() -> Check:
    condition = (
        f"object.spec.securityContext.sysctls.all(s, s.name in {cel_list(BASELINE_SYSCTLS)})"
    )
    return Check(
        _security("object.spec", "sysctls", condition),
        "sysctls beyond baseline's safe set are not allowed",
    )


def windows_host_process() -> Check:
    def off(options: str) -> str:
        return _not_true(f"{options}.hostProcess")

    pod = _security(
        "object.spec", "windowsOptions", off("object.spec.securityContext.windowsOptions")
    )
    container = _security("c", "windowsOptions", off("c.securityContext.windowsOptions"))
    return Check(
        f"{pod} && {each_container(container)}",
        "Windows hostProcess containers are not allowed (baseline)",
    )


def _no_host(handler: str) -> str:
    """A probe's or lifecycle handler's httpGet and tcpSocket name no host."""
    parts = [
        f"(!has({handler}.{action}) || !has({handler}.{action}.host) || "
        f"{handler}.{action}.host == '')"
        for action in ("httpGet", "tcpSocket")
    ]
    return f"(!has({handler}) || ({' && '.join(parts)}))"


def probe_hosts() -> Check:
    handlers = [_no_host(f"c.{probe}") for probe in PROBES]
    lifecycle = " && ".join(_no_host(f"c.lifecycle.{h}") for h in LIFECYCLE_HANDLERS)
    handlers.append(f"(!has(c.lifecycle) || ({lifecycle}))")
    return Check(
        each_container(" && ".join(handlers)),
        "a probe or lifecycle handler naming a host is not allowed (baseline)",
    )


def baseline_checks(exception: PathwaysException) -> list[Check]:
    """Every baseline check but the host network's, which the caller writes (it decides where
    a Pathways pod may have it): with ``exception`` for hostPath and host ports."""
    return [
        *host_namespaces(),
        privileged(),
        capabilities(),
        host_paths(exception),
        host_ports(exception),
        apparmor(),
        selinux(),
        proc_mount(),
        seccomp(),
        sysctls(),
        windows_host_process(),
        probe_hosts(),
    ]
