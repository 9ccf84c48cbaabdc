"""Kubernetes' Pod Security Admission conformance fixtures for the baseline level, as known
answers: every ``FAIL`` pod must be denied and every ``PASS`` pod admitted.

Source: kubernetes/pod-security-admission, test/testdata/baseline/v1.36/{fail,pass}/*.yaml at
commit 8f84a87c (2026-07-01; fixtures regenerated for v1.36/v1.37 in 6fc81b6f, 2026-04-14). The
v1.35 and v1.36 sets are the same; v1.37 differs only in pass/sysctls1 (two sysctls 1.37 adds,
which the policies here refuse: ``SYSCTLS_1_37_PASS``). Facts retyped, not copied: each fixture
is the base pod (one container ``container1``, one init container ``initcontainer1``) with the
fields below; ``P`` is the pod spec, ``C`` the container, ``I`` the init container, ``A`` the
pod's annotations.
"""

from __future__ import annotations

import copy
from typing import Any

VERSION = "v1.36"

_ALLOWED_CAPABILITIES = [
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
]


def _caps(add: list[str] | None = None) -> dict[str, Any]:
    return {"securityContext": {"capabilities": {"add": add} if add else {}}}


def _selinux(**options: str) -> dict[str, Any]:
    return {"securityContext": {"seLinuxOptions": dict(options)}}


def _sc(**fields: Any) -> dict[str, Any]:
    return {"securityContext": dict(fields)}


# name -> (P, C, I, A)
FAIL: dict[str, tuple[dict, dict, dict, dict]] = {
    "apparmorprofile0": (
        {},
        {},
        {},
        {"container.apparmor.security.beta.kubernetes.io/container1": "unconfined"},
    ),
    "apparmorprofile1": (
        {},
        {},
        {},
        {"container.apparmor.security.beta.kubernetes.io/initcontainer1": "unconfined"},
    ),
    "capabilities_baseline0": (_sc(), _caps(["NET_RAW"]), _caps(), {}),
    "capabilities_baseline1": (_sc(), _caps(), _caps(["NET_RAW"]), {}),
    "capabilities_baseline2": (_sc(), _caps(["chown"]), _caps(), {}),
    "capabilities_baseline3": (_sc(), _caps(["CAP_CHOWN"]), _caps(), {}),
    "hostnamespaces0": ({"hostIPC": True}, {}, {}, {}),
    "hostnamespaces1": ({"hostNetwork": True}, {}, {}, {}),
    "hostnamespaces2": ({"hostPID": True}, {}, {}, {}),
    "hostpathvolumes0": (
        {
            "volumes": [
                {"name": "volume-emptydir", "emptyDir": {}},
                {"name": "volume-hostpath", "hostPath": {"path": "/a"}},
            ]
        },
        {},
        {},
        {},
    ),
    "hostpathvolumes1": (
        {
            "volumes": [
                {"name": "volume-hostpath-a", "hostPath": {"path": "/a"}},
                {"name": "volume-hostpath-b", "hostPath": {"path": "/b"}},
            ]
        },
        {},
        {},
        {},
    ),
    "hostports0": ({}, {"ports": [{"containerPort": 12345, "hostPort": 12345}]}, {}, {}),
    "hostports1": ({}, {}, {"ports": [{"containerPort": 12346, "hostPort": 12346}]}, {}),
    "hostports2": (
        {},
        {"ports": [{"containerPort": 12345, "hostPort": 12345}, {"containerPort": 12347}]},
        {"ports": [{"containerPort": 12346, "hostPort": 12346}, {"containerPort": 12348}]},
        {},
    ),
    "hostprobesandhostlifecycle0": (
        {},
        {"livenessProbe": {"httpGet": {"host": "bad.host", "port": 8080}}},
        {},
        {},
    ),
    "hostprobesandhostlifecycle1": (
        {},
        {},
        {
            "restartPolicy": "Always",
            "readinessProbe": {"tcpSocket": {"host": "8.8.8.8", "port": 8080}},
        },
        {},
    ),
    "hostprobesandhostlifecycle2": (
        {},
        {"lifecycle": {"postStart": {"httpGet": {"host": "bad.host", "port": 8080}}}},
        {},
        {},
    ),
    "hostprobesandhostlifecycle3": (
        {},
        {"livenessProbe": {"httpGet": {"host": "127.0.0.1", "port": 8080}}},
        {},
        {},
    ),
    "hostprobesandhostlifecycle4": (
        {},
        {"readinessProbe": {"tcpSocket": {"host": "::1", "port": 8080}}},
        {},
        {},
    ),
    "privileged0": (_sc(), _sc(privileged=True), _sc(), {}),
    "privileged1": (_sc(), _sc(), _sc(privileged=True), {}),
    "procmount0": ({"hostUsers": True, **_sc()}, _sc(procMount="Unmasked"), _sc(), {}),
    "procmount1": ({"hostUsers": True, **_sc()}, _sc(), _sc(procMount="Unmasked"), {}),
    "seccompprofile_baseline0": (_sc(seccompProfile={"type": "Unconfined"}), _sc(), _sc(), {}),
    "seccompprofile_baseline1": (_sc(), _sc(seccompProfile={"type": "Unconfined"}), _sc(), {}),
    "seccompprofile_baseline2": (_sc(), _sc(), _sc(seccompProfile={"type": "Unconfined"}), {}),
    "selinuxoptions0": (_selinux(type="somevalue"), _selinux(), _selinux(), {}),
    "selinuxoptions1": (_selinux(), _selinux(type="somevalue"), _selinux(), {}),
    "selinuxoptions2": (_selinux(), _selinux(), _selinux(type="somevalue"), {}),
    "selinuxoptions3": (_selinux(user="somevalue"), _selinux(), _selinux(), {}),
    "selinuxoptions4": (_selinux(role="somevalue"), _selinux(), _selinux(), {}),
    "sysctls0": (_sc(sysctls=[{"name": "othersysctl", "value": "other"}]), {}, {}, {}),
    "windowshostprocess0": (
        {"hostNetwork": True, **_sc(windowsOptions={"hostProcess": True})},
        _sc(windowsOptions={}),
        _sc(windowsOptions={}),
        {},
    ),
    "windowshostprocess1": (
        {"hostNetwork": True, **_sc(windowsOptions={})},
        _sc(windowsOptions={"hostProcess": True}),
        _sc(windowsOptions={"hostProcess": True}),
        {},
    ),
}

PASS: dict[str, tuple[dict, dict, dict, dict]] = {
    "apparmorprofile0": (
        {},
        {},
        {},
        {"container.apparmor.security.beta.kubernetes.io/container1": "localhost/foo"},
    ),
    "base": ({}, {}, {}, {}),
    "capabilities_baseline0": (
        _sc(),
        _caps(_ALLOWED_CAPABILITIES),
        _caps(_ALLOWED_CAPABILITIES),
        {},
    ),
    "hostports0": (
        {},
        {"ports": [{"containerPort": 12345}]},
        {"ports": [{"containerPort": 12346}]},
        {},
    ),
    "hostprobesandhostlifecycle0": ({}, {}, {}, {}),
    "hostprobesandhostlifecycle1": ({}, {"livenessProbe": {"httpGet": {"port": 8080}}}, {}, {}),
    "hostprobesandhostlifecycle2": ({}, {"readinessProbe": {"tcpSocket": {"port": 8080}}}, {}, {}),
    "privileged0": (_sc(), _sc(privileged=False), _sc(privileged=False), {}),
    "procmount0": (
        {"hostUsers": False, **_sc()},
        _sc(procMount="Default"),
        _sc(procMount="Default"),
        {},
    ),
    "procmount1": (
        {"hostUsers": False, **_sc()},
        _sc(procMount="Unmasked"),
        _sc(procMount="Unmasked"),
        {},
    ),
    "seccompprofile_baseline0": (
        _sc(seccompProfile={"type": "RuntimeDefault"}),
        _sc(seccompProfile={"type": "RuntimeDefault"}),
        _sc(),
        {},
    ),
    "selinuxoptions0": (_sc(), _sc(), _selinux(), {}),
    "selinuxoptions1": (
        _selinux(type="container_t"),
        _selinux(type="container_init_t", level="somevalue"),
        _selinux(type="container_kvm_t"),
        {},
    ),
    "sysctls0": (_sc(), {}, {}, {}),
    "sysctls1": (
        _sc(
            sysctls=[
                {"name": "net.ipv4.tcp_rmem", "value": "4096 87380 16777216"},
                {"name": "net.ipv4.tcp_wmem", "value": "4096 65536 16777216"},
            ]
        ),
        {},
        {},
        {},
    ),
}

SYSCTLS_1_37_PASS = (
    _sc(
        sysctls=[
            {"name": "net.ipv4.tcp_slow_start_after_idle", "value": "0"},
            {"name": "net.ipv4.tcp_notsent_lowat", "value": "16384"},
        ]
    ),
    {},
    {},
    {},
)
"""v1.37's pass/sysctls1: baseline v1.37 admits it; these policies (v1.36) refuse it."""


def pod(name: str, fixture: tuple[dict, dict, dict, dict]) -> dict[str, Any]:
    """The fixture's Pod (its image is irrelevant to every check)."""
    spec_fields, container, init, annotations = copy.deepcopy(fixture)
    metadata: dict[str, Any] = {"name": name}
    if annotations:
        metadata["annotations"] = annotations
    spec = {
        "containers": [{"name": "container1", "image": "registry.k8s.io/pause", **container}],
        "initContainers": [{"name": "initcontainer1", "image": "registry.k8s.io/pause", **init}],
        **spec_fields,
    }
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
