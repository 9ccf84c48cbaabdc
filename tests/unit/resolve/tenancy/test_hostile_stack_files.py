"""Another stack file of the directory with a list or a mapping where the stacks' classification
reads a name (`gcp.project`, `cluster.name`, `cluster.existing.name`, a fleet manager's
`project` or `clusterName`, `teams[].name`): every stack's offline plan reads the whole
directory (``classify_stacks``), so such a file must not crash the plans of the others (it
raised TypeError, unhashable, with a traceback), and its own plan reports it against its key."""

from __future__ import annotations

import shutil

import pytest

from components.errors import ConfigError
from components.plan.stack_source import read_stack
from tests.examples import EXAMPLES_DIR

HOSTILE = {
    "gcp.project": "tpu-pathways:gcp: {project: [p], region: us-central2}\n"
    "  tpu-pathways:cluster: {name: c}",
    "cluster.name": "tpu-pathways:gcp: {project: p, region: us-central2}\n"
    "  tpu-pathways:cluster: {name: {a: 1}}",
    "cluster.existing.name": "tpu-pathways:gcp: {project: p, region: us-central2}\n"
    "  tpu-pathways:cluster: {existing: {name: [c]}}",
    "fleet.manager.project": "tpu-pathways:fleet: {workers: [dev], manager: {project: [p]}}",
    "fleet.manager.clusterName": "tpu-pathways:fleet: "
    "{workers: [dev], manager: {project: p, clusterName: {a: 1}}}",
    "teams[0].name": "tpu-pathways:owner: research-v5p\n  tpu-pathways:teams: [{name: [nlp]}]",
}


@pytest.fixture
def stacks_dir(tmp_path):
    directory = tmp_path / "stacks"
    shutil.copytree(EXAMPLES_DIR, directory)
    return directory


@pytest.mark.parametrize("key", HOSTILE)
@pytest.mark.parametrize("stack", ["dev", "team-research"])
def test_a_stack_plans_beside_a_file_with_a_list_where_a_name_goes(stacks_dir, key, stack):
    (stacks_dir / "Pulumi.evil.yaml").write_text(f"config:\n  {HOSTILE[key]}\n")
    assert read_stack(stack, stacks_dir).stack == stack


@pytest.mark.parametrize("key", ["gcp.project", "cluster.name", "teams[0].name"])
def test_that_files_own_plan_reports_it_against_its_key(stacks_dir, key):
    (stacks_dir / "Pulumi.evil.yaml").write_text(f"config:\n  {HOSTILE[key]}\n")
    with pytest.raises(ConfigError) as caught:
        read_stack("evil", stacks_dir)
    assert key in {issue.key for issue in caught.value.issues}
