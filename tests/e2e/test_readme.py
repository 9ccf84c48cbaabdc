"""The README keeps its promises: the config reference matches the models, the two commands
are the ones CI runs."""

from pathlib import Path

from components.config.reference import BEGIN, END, render_reference

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
