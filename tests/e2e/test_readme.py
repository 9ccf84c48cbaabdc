"""The README keeps its promises: the config reference matches the models, the two commands
are the ones CI runs."""

import re
from pathlib import Path

import pytest

from components.cli.reference import BEGIN, END, first_paragraph, render_reference

ROOT = Path(__file__).resolve().parents[2]


def test_config_reference_matches_the_models():
    readme = (ROOT / "README.md").read_text()
    start, end = readme.index(BEGIN), readme.index(END) + len(END)
    assert readme[start:end] == render_reference(), (
        "README config reference is stale: paste `python -m components config-reference`"
    )


def test_readme_documents_the_commands_ci_runs():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert ".venv/bin/python -m components plan --stack dev" in readme
    assert ".venv/bin/python -m pytest" in readme
    assert ".venv/bin/python -m pytest" in ci
    assert "pip install --quiet -e '.[test]'" in ci


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
    readme = (ROOT / "README.md").read_text()
    assert (readme.count(BEGIN), readme.count(END)) == (1, 1)
    # a model docstring's first sentence spans two source lines; the reference keeps it whole
    assert (
        "The small autoscaling pool for kube-system and the JobSet, Kueue and PathwaysJob "
        "controllers, so they never compete with Pathways heads"
    ) in readme


def test_first_paragraph_joins_the_lines_of_a_sentence():
    doc = """A sentence that
    spans two lines.

    Details that the reference leaves out.
    """
    assert first_paragraph(doc) == "A sentence that spans two lines."
