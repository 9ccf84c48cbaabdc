"""What the offline plan answers for another stack's StackReference (a team stack's owner, a
fleet's worker): the outputs that stack's program exports for other stacks, computed from its
stack file (``loader.reference_reader``) instead of planning it. The known answers are the
other stacks' own offline plans: what their programs exported through the mock engine."""

from __future__ import annotations

import pytest

from components.errors import ConfigError
from components.plan import engine
from components.resolve.loader import load_stack, reference_reader
from components.resolve.tenancy.shared_cluster import read_contract
from tests.examples import EXAMPLES_DIR

CONTRACT = "shared_cluster"  # the output team stacks and fleets read


@pytest.mark.parametrize("stack", ["dev", "research-jobset", "research-v5p", "serving-v6e"])
def test_a_cluster_owner_is_read_as_its_own_plan_exports_it(stack, example_plan):
    exported = example_plan(stack).outputs
    assert CONTRACT in exported
    assert reference_reader(EXAMPLES_DIR)(stack) == {CONTRACT: exported[CONTRACT]}


def test_the_contract_read_from_research_v5p_is_its_stack_files():
    """Known answers from stacks/Pulumi.research-v5p.yaml (both sides of the test above run
    the same export function: this one checks what it exports)."""
    contract = reference_reader(EXAMPLES_DIR)("research-v5p")[CONTRACT]
    assert contract["owner_stack"] == "research-v5p"
    assert (contract["project"], contract["region"], contract["zone"]) == (
        "tpu-pathways-research",
        "us-east5",
        "us-east5-a",
    )
    assert contract["cluster_name"] == "pathways-research"
    pools = {p["name"]: (p["node_pools"], p.get("team")) for p in contract["tpu_pools"]}
    assert pools == {"v5p": (["v5p-0", "v5p-1"], None), "v5p-nlp": (["v5p-nlp-0"], "nlp")}


def test_a_stack_that_creates_no_cluster_exports_no_contract(example_plan):
    assert CONTRACT not in example_plan("team-research").outputs
    assert reference_reader(EXAMPLES_DIR)("team-research") == {}


def test_a_team_stack_is_validated_against_the_contract_its_owners_plan_exports(example_plan):
    owner = read_contract(example_plan("research-v5p").outputs, "research-v5p")
    assert load_stack("team-research", EXAMPLES_DIR).shared_cluster == owner


@pytest.mark.parametrize("stack", ["team-research", "fleet"])
def test_a_plan_runs_no_program_but_its_own(stack, monkeypatch):
    """The owner's or the workers' programs are not run to read their contracts."""
    planned = []
    plan_read = engine.plan_read

    def counted(source, *args):
        planned.append(source.stack)
        return plan_read(source, *args)

    monkeypatch.setattr(engine, "plan_read", counted)
    engine.plan_file(stack, EXAMPLES_DIR)
    assert planned == [stack]


def test_a_broken_owner_file_is_reported_with_its_own_name(tmp_path):
    """The owner's stack file is validated as it is for its own plan: its mistake is named."""
    for name in ("research-v5p", "team-research"):
        text = (EXAMPLES_DIR / f"Pulumi.{name}.yaml").read_text()
        (tmp_path / f"Pulumi.{name}.yaml").write_text(text)
    owner = tmp_path / "Pulumi.research-v5p.yaml"
    owner.write_text(owner.read_text().replace("tpu-pathways:environment: ", "tpu-pathways:x: "))
    with pytest.raises(ConfigError) as caught:
        engine.plan_file("team-research", tmp_path)
    assert "Pulumi.research-v5p.yaml" in str(caught.value)
