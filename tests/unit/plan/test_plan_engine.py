"""The offline plan engine: what it records from the registrations the SDK sends.

Tiny hand-written programs, so every expected edge and value is known by construction.
"""

from __future__ import annotations

import json

import pulumi
import pulumi_gcp as gcp
import pulumi_kubernetes as k8s
import pytest

from components.plan.engine import order_resources, plan_stack, readable, run_program
from components.plan.model import PlannedResource
from components.plan.render import render_json

# Pulumi's wire format (sdk/python/lib/pulumi/runtime/rpc.py), written out on purpose.
SIG = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"

STACK_URN = "urn:pulumi:t::tpu-pathways::pulumi:pulumi:Stack::tpu-pathways-t"


def urn(type_token: str, name: str, parent: str = "pulumi:pulumi:Stack") -> str:
    return f"urn:pulumi:t::tpu-pathways::{parent}${type_token}::{name}"


class Group(pulumi.ComponentResource):
    def __init__(self, name: str) -> None:
        super().__init__("test:index:Group", name, None, None)
        gcp.compute.Network(
            f"{name}-net",
            mtu=1500,
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=True,
                delete_before_replace=True,
                ignore_changes=["mtu", "description"],
            ),
        )
        self.register_outputs({})


def tiny_program() -> dict:
    account = gcp.serviceaccount.Account("sa", account_id="nodes", project="proj-123")
    gcp.projects.IAMMember(
        "binding",
        project="proj-123",
        role="roles/logging.logWriter",
        member=account.email.apply(lambda email: f"serviceAccount:{email}"),
    )
    cluster = gcp.container.Cluster("cluster", initial_node_count=1)
    gcp.compute.Network(
        "after",
        description=cluster.endpoint,  # unknown until the cloud creates the cluster
        opts=pulumi.ResourceOptions(depends_on=[account]),
    )
    provider = k8s.Provider("k8s", kubeconfig=pulumi.Output.secret("apiVersion: v1"))
    k8s.core.v1.ConfigMap(
        "settings",
        metadata={"name": "settings", "namespace": "default"},
        data={"mode": "test"},
        opts=pulumi.ResourceOptions(provider=provider),
    )
    Group("group")
    return {
        "email": account.email,
        "secret": pulumi.Output.secret("hunter2"),
        "endpoint": cluster.endpoint,
        "whole": 3.0,
        "fraction": 2.5,
        "nested": {"count": 2.0, "names": ["a", "b"]},
        # Data with an Output inside is resolved as the engine would: one secret makes all secret.
        "mixed": {"count": 1.0, "token": pulumi.Output.secret("t")},
        "late": {"name": account.email, "count": 1.0},
        "pair": ("a", 2.0),
    }


@pytest.fixture(scope="module")
def tiny():
    resources, outputs = run_program(tiny_program, "t")
    return {r.name: r for r in resources}, outputs, resources


# --- readable() -----------------------------------------------------------------------------


def test_readable_hides_secrets_marks_unknowns_and_ints_whole_floats():
    wire = {
        "b": 2.0,
        "a": [1.5, {SIG: SECRET_SIG, "value": "hunter2"}, UNKNOWN],
        "ref": {SIG: RESOURCE_SIG, "urn": "urn:pulumi:s::p::t::n", "id": "x"},
        "text": "plain",
    }
    assert readable(wire) == {
        "a": [1.5, "[secret]", "[unknown]"],
        "b": 2,
        "ref": "urn:pulumi:s::p::t::n",
        "text": "plain",
    }
    assert isinstance(readable(2.0), int)
    assert list(readable({"z": 1, "a": 2})) == ["a", "z"]  # keys sorted


# --- registrations --------------------------------------------------------------------------


def test_every_registration_is_recorded_except_the_stack(tiny):
    by_name, _, resources = tiny
    assert sorted(by_name) == sorted(
        ["sa", "binding", "cluster", "after", "k8s", "settings", "group", "group-net"]
    )
    assert len(resources) == 8
    assert all(r.type != "pulumi:pulumi:Stack" for r in resources)


def test_urn_type_parent_custom(tiny):
    by_name, _, _ = tiny
    sa = by_name["sa"]
    assert sa.urn == urn("gcp:serviceaccount/account:Account", "sa")
    assert sa.type == "gcp:serviceaccount/account:Account"
    assert sa.parent == STACK_URN
    assert sa.custom is True
    group = by_name["group"]
    assert group.custom is False
    assert group.inputs == {}
    child = by_name["group-net"]
    assert child.parent == group.urn
    assert child.urn == urn("gcp:compute/network:Network", "group-net", "test:index:Group")


def test_dependencies_come_from_consumed_outputs_and_depends_on(tiny):
    by_name, _, _ = tiny
    sa_urn = by_name["sa"].urn
    assert by_name["binding"].dependencies == [sa_urn]  # consumed account.email
    assert by_name["after"].dependencies == sorted([sa_urn, by_name["cluster"].urn])
    assert by_name["sa"].dependencies == []
    assert by_name["cluster"].dependencies == []


def test_inputs_resolved_through_outputs(tiny):
    by_name, _, _ = tiny
    # the mock derives a service account's email from its inputs
    assert by_name["binding"].inputs == {
        "member": "serviceAccount:nodes@proj-123.iam.gserviceaccount.com",
        "project": "proj-123",
        "role": "roles/logging.logWriter",
    }


def test_secret_and_unknown_inputs(tiny):
    by_name, _, _ = tiny
    assert by_name["k8s"].inputs["kubeconfig"] == "[secret]"
    assert "apiVersion: v1" not in json.dumps(by_name["k8s"].inputs)
    assert by_name["after"].inputs["description"] == "[unknown]"


def test_whole_float_inputs_become_ints(tiny):
    by_name, _, _ = tiny
    mtu = by_name["group-net"].inputs["mtu"]
    assert mtu == 1500
    assert isinstance(mtu, int)


def test_explicit_provider_is_recorded(tiny):
    by_name, _, _ = tiny
    provider = by_name["k8s"]
    assert provider.type == "pulumi:providers:kubernetes"
    assert by_name["settings"].provider == provider.urn
    assert by_name["sa"].provider is None


def test_options(tiny):
    by_name, _, _ = tiny
    assert by_name["group-net"].options == {
        "protect": True,
        "deleteBeforeReplace": True,
        "ignoreChanges": ["description", "mtu"],
    }
    assert by_name["sa"].options == {}  # false and empty options are left out


def test_outputs(tiny):
    _, outputs, _ = tiny
    assert outputs == {
        "email": "nodes@proj-123.iam.gserviceaccount.com",
        "endpoint": "[unknown]",
        "fraction": 2.5,
        "nested": {"count": 2, "names": ["a", "b"]},
        "mixed": "[secret]",
        "late": {"count": 1, "name": "nodes@proj-123.iam.gserviceaccount.com"},
        "pair": ["a", 2],
        "secret": "[secret]",
        "whole": 3,
    }
    assert list(outputs) == sorted(outputs)
    assert isinstance(outputs["whole"], int)


def test_order_puts_parents_providers_and_dependencies_first(tiny):
    _, _, resources = tiny
    position = {r.urn: i for i, r in enumerate(resources)}
    for resource in resources:
        for before in (resource.parent, resource.provider, *resource.dependencies):
            if before in position:
                assert position[before] < position[resource.urn], (before, resource.urn)


def test_order_resources_is_stable():
    def res(name: str, deps: list[str]) -> PlannedResource:
        return PlannedResource(f"u:{name}", "t", name, None, True, None, {}, deps)

    a, b, c = res("a", ["u:c"]), res("b", []), res("c", [])
    assert [r.name for r in order_resources([a, b, c])] == ["c", "a", "b"]
    assert [r.name for r in order_resources([c, b, a])] == ["c", "a", "b"]
    # a dependency cycle does not recurse forever
    x, y = res("x", ["u:y"]), res("y", ["u:x"])
    assert sorted(r.name for r in order_resources([x, y])) == ["x", "y"]


def test_each_run_starts_fresh():
    first, _ = run_program(lambda: (gcp.compute.Network("one"), {})[1], "t")
    second, _ = run_program(lambda: (gcp.compute.Network("two"), {})[1], "t")
    assert [r.name for r in first] == ["one"]
    assert [r.name for r in second] == ["two"]


def test_plan_is_deterministic(config_of, stack_values):
    dev = config_of(stack_values())
    other = config_of(stack_values(cluster={"privateNodes": True}))
    first = render_json(plan_stack(dev, "dev"))
    plan_stack(other, "other")
    second = render_json(plan_stack(dev, "dev"))
    assert first == second


def test_the_tpu_summary_is_what_the_program_exports(config_of, stack_values, tmp_path):
    """summary.tpu is read from the program's tpu_summary output (counts in plan order), not
    recomputed from the config: a program exporting another summary gets that one."""
    program = tmp_path / "__main__.py"
    exported = {"v9": {"chips": 4, "hosts": 1, "slices": 1, "pools": 1}}
    program.write_text(f"import pulumi\npulumi.export('tpu_summary', {exported!r})\n")
    plan = plan_stack(config_of(stack_values()), "dev", {}, program)
    assert json.dumps(plan.summary["tpu"]) == (
        '{"v9": {"pools": 1, "slices": 1, "hosts": 1, "chips": 4}}'
    )
    program.write_text("import pulumi\n")
    assert plan_stack(config_of(stack_values()), "dev", {}, program).summary["tpu"] == {}


def failing_program() -> dict:
    return {"zones": gcp.compute.get_zones_output(project="proj-123").names}


def test_invoke_without_an_answer_fails_clearly():
    with pytest.raises(NotImplementedError, match="no answer for invoke gcp:compute/getZones"):
        run_program(failing_program, "t")


def test_a_failed_run_does_not_poison_the_next():
    with pytest.raises(NotImplementedError):
        run_program(failing_program, "t")
    resources, _ = run_program(lambda: (gcp.compute.Network("fine"), {})[1], "t")
    assert [r.name for r in resources] == ["fine"]


def test_a_program_runs_as_main_and_the_process_is_restored(tmp_path):
    """A program file runs (``main_program(path)()``) as runpy.run_path(..., run_name="__main__")
    does: as ``__main__``, with its path as ``__file__`` and ``sys.argv[0]``; the process's
    ``__main__`` module and argv come back after it, also when it raises."""
    import sys

    from components.plan.main_module import main_program

    program = tmp_path / "__main__.py"
    program.write_text(
        "import sys\n"
        "SEEN.update(name=__name__, file=__file__, argv0=sys.argv[0],\n"
        "            main=sys.modules['__main__'].__dict__ is globals())\n"
        "if FAIL:\n"
        "    raise RuntimeError('refused')\n"
    )
    import builtins

    seen: dict = {}
    before_main, before_argv = sys.modules.get("__main__"), list(sys.argv)
    builtins.SEEN, builtins.FAIL = seen, False  # what the program reads, as builtins
    try:
        main_program(program)()
        assert seen == {
            "name": "__main__",
            "file": str(program),
            "argv0": str(program),
            "main": True,
        }
        builtins.FAIL = True
        with pytest.raises(RuntimeError, match="refused"):
            main_program(program)()
    finally:
        del builtins.SEEN, builtins.FAIL
    assert sys.modules.get("__main__") is before_main
    assert sys.argv == before_argv
