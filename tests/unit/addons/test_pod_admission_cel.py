"""The team pod policy's CEL, evaluated over sample pods.

No CEL engine is installed, so the expressions are translated to Python by ``to_python`` below:
it handles exactly the subset the policy uses (``has()``, ``.all()``/``.exists()`` macros,
``size()``, ``in`` on maps, ``!``/``&&``/``||``, string comparisons) and fails on anything else,
so a new construct in the policy shows up here first. A missing field raises, as it does in CEL
(where the failed evaluation, under failurePolicy Fail, denies the pod).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from components.addons.team_isolation import pod_validations

_MACRO = re.compile(r"([A-Za-z_][\w.]*)\.(all|exists)\(")
_HAS = re.compile(r"has\(([\w.]+)\)")
_ALLOWED = re.compile(r"[\w.\s'/()=!<>,&|-]*")


class Obj(dict):
    """A map whose fields read as attributes; a missing one raises, as in CEL."""

    def __getattr__(self, name: str) -> Any:
        if name not in self:
            raise AttributeError(name)
        return wrap(self[name])


def wrap(value: Any) -> Any:
    if isinstance(value, dict):
        return Obj(value)
    if isinstance(value, list):
        return [wrap(v) for v in value]
    return value


def _closing(text: str, start: int) -> int:
    depth = 1
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i
    raise ValueError(f"unbalanced parentheses in {text!r}")


def to_python(cel: str) -> str:
    assert _ALLOWED.fullmatch(cel), f"a construct this translator does not know: {cel!r}"
    match = _MACRO.search(cel)
    if match:
        end = _closing(cel, match.end())
        variable, body = cel[match.end() : end].split(", ", 1)
        assert variable.isidentifier(), variable
        quantifier = "all" if match[2] == "all" else "any"
        translated = f"{quantifier}(({to_python(body)}) for {variable} in {match[1]})"
        return to_python(cel[: match.start()]) + translated + to_python(cel[end + 1 :])
    python = _HAS.sub(r"_has(lambda: \1)", cel)
    python = python.replace("&&", " and ").replace("||", " or ").replace("size(", "len(")
    return re.sub(r"!(?!=)", " not ", python)


def _has(read) -> bool:
    try:
        read()
    except AttributeError:
        return False
    return True


def refusals(pod: dict[str, Any]) -> list[str]:
    """The messages of the policy's validations the pod fails."""
    scope = {"object": wrap(pod), "_has": _has}
    return [
        message
        for expression, message in pod_validations()
        if not eval(to_python(expression), scope)  # the policy's own CEL, translated
    ]


def pathways_worker(**spec: Any) -> dict[str, Any]:
    """A worker pod as JobSet's Job creates it for a PathwaysJob (host network, /tmp)."""
    return {
        "metadata": {
            "labels": {"jobset.sigs.k8s.io/jobset-name": "train"},
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": "train-worker-0",
                    "controller": True,
                }
            ],
        },
        "spec": {
            "hostNetwork": True,
            "dnsPolicy": "ClusterFirstWithHostNet",
            "containers": [
                {
                    "name": "pathways-worker",
                    "ports": [{"containerPort": 29005, "hostPort": 29005}],
                    "volumeMounts": [{"name": "shared-tmp", "mountPath": "/tmp"}],
                }
            ],
            "volumes": [
                {"name": "shared-tmp", "hostPath": {"path": "/tmp", "type": "DirectoryOrCreate"}}
            ],
            **spec,
        },
    }


def plain_pod(**spec: Any) -> dict[str, Any]:
    return {"metadata": {}, "spec": {"containers": [{"name": "app"}], **spec}}


HOST_NETWORK = "hostNetwork is allowed only for Pathways pods (pods of a JobSet's Job)"
HOST_PATH = "hostPath volumes other than /tmp are not allowed"
PRIVILEGED = "privileged containers are not allowed"
CAPABILITIES = "adding Linux capabilities is not allowed"
HOST_PORT = "hostPort is allowed only with the host network of a Pathways pod"


def test_a_pathways_worker_and_a_plain_pod_are_allowed():
    assert refusals(pathways_worker()) == []
    assert refusals(plain_pod()) == []
    assert refusals(plain_pod(securityContext={"seccompProfile": {"type": "RuntimeDefault"}})) == []


def test_host_network_needs_the_pathways_shape():
    forged_label = pathways_worker()
    forged_label["metadata"]["ownerReferences"] = []
    assert refusals(forged_label) == [HOST_NETWORK]
    no_label = pathways_worker()
    no_label["metadata"]["labels"] = {"app": "x"}
    assert refusals(no_label) == [HOST_NETWORK]
    not_controller = pathways_worker()
    del not_controller["metadata"]["ownerReferences"][0]["controller"]
    assert refusals(not_controller) == [HOST_NETWORK]
    assert refusals(plain_pod(hostNetwork=True)) == [HOST_NETWORK]


@pytest.mark.parametrize(
    ("spec", "refused"),
    [
        ({"hostPID": True}, ["hostPID is not allowed"]),
        ({"hostIPC": True}, ["hostIPC is not allowed"]),
        ({"hostPID": False, "hostIPC": False}, []),
        ({"volumes": [{"name": "root", "hostPath": {"path": "/"}}]}, [HOST_PATH]),
        ({"volumes": [{"name": "t", "hostPath": {"path": "/tmp/"}}]}, [HOST_PATH]),
        ({"volumes": [{"name": "s", "emptyDir": {}}]}, []),
        (
            {"initContainers": [{"name": "i", "securityContext": {"privileged": True}}]},
            [PRIVILEGED],
        ),
        (
            {"ephemeralContainers": [{"name": "d", "securityContext": {"privileged": True}}]},
            [PRIVILEGED],
        ),
        ({"containers": [{"name": "a", "securityContext": {"privileged": False}}]}, []),
        (
            {
                "containers": [
                    {"name": "a", "securityContext": {"capabilities": {"add": ["NET_ADMIN"]}}}
                ]
            },
            [CAPABILITIES],
        ),
        (
            {"containers": [{"name": "a", "securityContext": {"capabilities": {"drop": ["ALL"]}}}]},
            [],
        ),
        (
            {"containers": [{"name": "a", "securityContext": {"procMount": "Unmasked"}}]},
            ["an unmasked /proc (procMount) is not allowed"],
        ),
        (
            {"securityContext": {"seccompProfile": {"type": "Unconfined"}}},
            ["an Unconfined seccomp profile is not allowed"],
        ),
        (
            {"containers": [{"name": "a", "ports": [{"containerPort": 80, "hostPort": 80}]}]},
            [HOST_PORT],
        ),
        ({"containers": [{"name": "a", "ports": [{"containerPort": 80}]}]}, []),
    ],
)
def test_what_baseline_forbids_is_refused(spec, refused):
    assert refusals(plain_pod(**spec)) == refused


def test_a_pathways_pod_gets_no_more_than_the_host_network_and_tmp():
    worker = pathways_worker()
    worker["spec"]["volumes"].append({"name": "etc", "hostPath": {"path": "/etc"}})
    worker["spec"]["containers"][0]["securityContext"] = {"privileged": True}
    assert refusals(worker) == [HOST_PATH, PRIVILEGED]


def test_the_translator_reads_the_policys_expressions_literally():
    assert to_python("!has(object.spec.hostPID) || !object.spec.hostPID") == (
        " not _has(lambda: object.spec.hostPID)  or   not object.spec.hostPID"
    )
    assert to_python("object.spec.volumes.all(v, v.name != 'x')") == (
        "all((v.name != 'x') for v in object.spec.volumes)"
    )
    with pytest.raises(AssertionError):
        to_python("object.spec.containers.map(c, c.name)[0]")
