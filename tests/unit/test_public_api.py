"""The curated public API (``components/__init__.py``): every exported name resolves, and
importing the package or the TPU catalog loads no provider SDK (the names are lazy)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import components
from tests.conftest import PROJECT_ROOT

SDKS = ("pulumi", "pulumi_gcp", "pulumi_kubernetes")


def sdks_loaded_by(code: str) -> list[str]:
    probe = (
        f"import json, sys\n{code}\n"
        f"print(json.dumps(sorted(m for m in {SDKS!r} if m in sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout)


@pytest.mark.parametrize(
    "code",
    [
        "import components",
        "import components.tpu.catalog",
        "from components import resolve_accelerator; resolve_accelerator('v5p-16')",
    ],
)
def test_no_provider_sdk_is_imported(code):
    assert sdks_loaded_by(code) == []


def test_a_component_import_loads_its_sdk():
    """The probe sees an SDK when one is loaded (so the test above can fail)."""
    assert {"pulumi", "pulumi_gcp"} <= set(sdks_loaded_by("from components import TpuNodePool"))


@pytest.mark.parametrize("name", components.__all__)
def test_every_exported_name_resolves(name):
    assert getattr(components, name) is not None
    assert name in dir(components)


def test_the_api_names_what_users_build_with():
    assert {
        "GkeCluster",
        "GkeClusterArgs",
        "TpuNodePool",
        "TpuNodePoolArgs",
        "CpuNodePool",
        "CpuNodePoolArgs",
        "ScratchBucket",
        "ScratchBucketArgs",
        "PathwaysJob",
        "PathwaysJobSpec",
        "Worker",
        "resolve_accelerator",
    } <= set(components.__all__)
    assert components.resolve_accelerator("v5p-16").topology == "2x2x2"


def test_the_node_pools_of_a_job_preflight_can_be_built_from_the_api():
    """``PathwaysJob(..., node_pools=[...])`` takes NodePoolModels: buildable from exports."""
    from components.pathways.scheduler_model import NodePoolModel, Taint

    assert (components.NodePoolModel, components.Taint) == (NodePoolModel, Taint)
    pool = components.NodePoolModel(
        name="v5p-0",
        group="v5p",
        machine=components.machine_type("ct5p-hightpu-4t"),
        labels={"cloud.google.com/gke-nodepool": "v5p-0"},
        taints=(components.TPU_TAINT,),
        max_nodes=2,
        tpu_chips=4,
        identity=None,
    )
    assert pool.machine.vcpus == 208
    assert components.TPU_TAINT.key == "google.com/tpu"
    assert components.TPU_TAINT.effect is components.TaintEffect.NO_SCHEDULE
    dedicated = components.Taint(
        "tpu-pathways/dedicated-to", "nlp", components.TaintEffect("NoExecute")
    )
    assert str(dedicated) == "tpu-pathways/dedicated-to=nlp:NoExecute"


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'GkeClustr'"):
        components.GkeClustr  # noqa: B018


def test_the_static_mirror_imports_exactly_the_table():
    """``_EXPORTS`` is the one table of the public API; ``__all__`` and the ``TYPE_CHECKING``
    imports (what type checkers read, since the names are lazy) mirror it name for name and
    module for module, so neither can drift from it."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(components))
    (block,) = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"
    ]
    imported = {
        alias.name: node.module
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert imported == components._EXPORTS
    assert sorted(components.__all__) == sorted(components._EXPORTS)
    assert len(components.__all__) == len(set(components.__all__))
