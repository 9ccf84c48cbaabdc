"""The README and the docs keep their promises: the config reference page matches the models,
the two commands are the ones CI runs, the README's TPU table matches the catalog and its
workload example is the dev stack's."""

import re
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from components.cli.reference import BEGIN, END, first_paragraph, render_reference
from components.tpu import catalog

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "config-reference.md"


def test_config_reference_matches_the_models():
    page = REFERENCE.read_text()
    start, end = page.index(BEGIN), page.index(END) + len(END)
    assert page[start:end] == render_reference(), (
        "docs/config-reference.md is stale: paste `python -m components config-reference` "
        "between its markers"
    )


def test_readme_documents_the_commands_ci_runs():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert ".venv/bin/python -m components plan --stack dev" in readme
    assert ".venv/bin/python -m pytest" in readme
    assert ".venv/bin/python -m pytest" in ci
    # both install from the lock, then the project without resolving again
    for step in ("--require-hashes -r requirements/lock.txt", "--no-deps -e ."):
        assert f".venv/bin/pip install {step}" in readme
        assert f"pip install --quiet {step}" in ci


# --- every repository path the docs name exists ---------------------------------------------

DOCS = ["README.md", "benchmarks/README.md", *sorted(p.name for p in (ROOT / "docs").glob("*.md"))]
# A path in backticks under one of these folders is a repository path.
_PATH = re.compile(
    r"`((?:components|tests|stacks|scripts|benchmarks|docs|policy|examples)/[^`\s]*)`"
)
# Named by the docs but made by a setup step, never committed.
GENERATED = {"policy/.venv"}


def _doc(name: str) -> Path:
    return ROOT / name if "/" in name or name == "README.md" else ROOT / "docs" / name


def named_paths(text: str) -> set[str]:
    """The repository paths a document names; patterns (``stacks/Pulumi.<stack>.yaml``,
    ``*.yaml``) are not one path and are left out, as is a ``::test`` suffix."""
    found = {m.split("::")[0].rstrip(".,:;") for m in _PATH.findall(text)}
    return {p for p in found if not any(c in p for c in "<>*{}")}


def test_the_path_finder_finds_paths_and_skips_patterns():
    text = "see `components/plan/render.py`, `stacks/Pulumi.<stack>.yaml` and `tests/unit/` ok"
    assert named_paths(text) == {"components/plan/render.py", "tests/unit/"}


@pytest.mark.parametrize("doc", DOCS)
def test_every_repository_path_a_doc_names_exists(doc):
    # After files move (e.g. components/stack/ -> components/config/), update the docs' paths.
    missing = sorted(
        p for p in named_paths(_doc(doc).read_text()) - GENERATED if not (ROOT / p).exists()
    )
    assert missing == [], f"{doc} names paths that do not exist: {missing}"


def test_the_config_reference_is_there_once_with_whole_sentences():
    page = REFERENCE.read_text()
    assert (page.count(BEGIN), page.count(END)) == (1, 1)
    # a model docstring's first sentence spans two source lines; the reference keeps it whole
    assert (
        "The small autoscaling pool for kube-system and the JobSet, Kueue and PathwaysJob "
        "controllers, so they never compete with Pathways heads"
    ) in page


def test_the_readme_holds_no_copy_of_the_config_reference():
    readme = (ROOT / "README.md").read_text()
    assert (readme.count(BEGIN), readme.count(END)) == (0, 0)


def test_first_paragraph_joins_the_lines_of_a_sentence():
    doc = """A sentence that
    spans two lines.

    Details that the reference leaves out.
    """
    assert first_paragraph(doc) == "A sentence that spans two lines."


# --- the README's TPU table is the catalog's ------------------------------------------------

TABLE_BEGIN, TABLE_END = "<!-- accelerators:begin -->", "<!-- accelerators:end -->"
GENERATION_NAMES = {"tpu7x": "tpu7x (Ironwood)"}


def table_rows(text: str) -> list[list[str]]:
    """The cells of each body row of the table between the accelerator markers."""
    table = text.split(TABLE_BEGIN, 1)[1].split(TABLE_END, 1)[0].strip().splitlines()
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in table[2:]]


def catalog_rows() -> list[list[str]]:
    by_generation = defaultdict(list)
    for shape in catalog.all_shapes():
        by_generation[shape.generation].append(shape)
    return [
        [
            GENERATION_NAMES.get(generation.value, generation.value),
            ", ".join(f"`{m}`" for m in sorted({s.machine_type for s in shapes})),
            str(len(shapes)),
            str(sum(s.pathways_supported for s in shapes)),
            str(sum(s.pathwaysutils_supported for s in shapes)),
            str(max(s.chips for s in shapes)),
        ]
        for generation, shapes in by_generation.items()
    ]


def test_the_readme_tpu_table_matches_the_catalog():
    assert table_rows((ROOT / "README.md").read_text()) == catalog_rows()


def test_the_tpu_table_reader_reads_cells():
    text = f"x\n{TABLE_BEGIN}\n| a | b |\n|---|--:|\n| v4 | `m` |\n| v5e | 9 |\n{TABLE_END}\n"
    assert table_rows(text) == [["v4", "`m`"], ["v5e", "9"]]


def test_the_tpu_table_states_the_controllers_shapes():
    # Known answers, written out: the shapes the PathwaysJob controller v0.1.4 accepts per
    # generation (its worker-type enum and topology map), not counted from the catalog
    rows = {row[0]: row[3] for row in table_rows((ROOT / "README.md").read_text())}
    expected = {"v4": "13", "v5e": "8", "v5p": "96", "v6e": "8", "tpu7x (Ironwood)": "98"}
    assert rows == expected | {"tpu7": "0"}


# --- the README's workload example is the dev stack's ---------------------------------------


def test_the_readme_workload_example_is_the_dev_stacks_first():
    readme = (ROOT / "README.md").read_text()
    (block,) = re.findall(r"```yaml\n(  tpu-pathways:workloads:.*?)```", readme, re.S)
    example = yaml.safe_load(block)["tpu-pathways:workloads"]
    dev = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())["config"]
    assert example == dev["tpu-pathways:workloads"][:1]
