"""Every relative link and `#anchor` of the README and the docs resolves, and every docs page is
in the README's map.

Links and headings are read with a CommonMark parser (markdown-it-py, with GitHub's tables), so a
link inside code is not a link. Anchors follow GitHub's heading slugs: the heading's text
lowercased, every character but letters, digits, `-`, `_` and spaces dropped, spaces turned into
`-`, and a repeated slug numbered `-1`, `-2`, ... (github/cmark-gfm and github-slugger)."""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").glob("*.md"))
CHECKED = [ROOT / "README.md", ROOT / "benchmarks" / "README.md", *DOCS]
MAP_HEADING = "documentation"  # the README's section that maps the docs
_PARSER = MarkdownIt("commonmark").enable("table")
_EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)  # https:, mailto:, ...


def slug(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(headings: list[str]) -> set[str]:
    """The anchors GitHub gives these headings, in order: a repeated slug gets -1, -2, ..."""
    seen: Counter[str] = Counter()
    found = set()
    for heading in headings:
        base = slug(heading)
        name = base if not seen[base] else f"{base}-{seen[base]}"
        seen[base] += 1
        found.add(name)
    return found


def _heading_text(inline) -> str:
    """A heading's text as rendered: code spans keep their content, links their text."""
    return "".join(c.content for c in inline.children or [] if c.type in {"text", "code_inline"})


@cache
def parsed(path: Path) -> tuple[list[str], list[str], dict[str, list[str]]]:
    """(headings, link targets, link targets per level-2 section's slug) of a markdown file."""
    tokens = _PARSER.parse(path.read_text())
    headings: list[str] = []
    links: list[str] = []
    sections: dict[str, list[str]] = {}
    current: list[str] = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            text = _heading_text(tokens[i + 1])
            headings.append(text)
            if token.tag == "h2":
                current = sections.setdefault(slug(text), [])
        for child in token.children or []:
            if child.type == "link_open":
                links.append(str(child.attrGet("href")))
                current.append(links[-1])
    return headings, links, sections


def broken_links(path: Path) -> list[str]:
    """Each relative link of ``path`` whose file, or whose anchor in a markdown file, is not
    there, as ``target: why``."""
    problems = []
    for target in parsed(path)[1]:
        if _EXTERNAL.match(target):
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            problems.append(f"{target}: no file {file_part}")
        elif anchor and linked.suffix != ".md":
            problems.append(f"{target}: an anchor into a file that is not markdown")
        elif anchor and anchor not in anchors(parsed(linked)[0]):
            problems.append(f"{target}: no heading {anchor!r} in {linked.name}")
    return problems


def unmapped_pages(readme: Path, pages: list[Path]) -> list[str]:
    """The pages the README's documentation map does not link to."""
    mapped = {
        (readme.parent / target.partition("#")[0]).resolve()
        for target in parsed(readme)[2].get(MAP_HEADING, [])
    }
    return [page.name for page in pages if page.resolve() not in mapped]


# --- the checker, on known answers -----------------------------------------------------------


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("Getting started", "getting-started"),
        ("4. Deploy the dev stack", "4-deploy-the-dev-stack"),
        ("Where `pathwaysDir` points", "where-pathwaysdir-points"),
        (
            "Multi-tenant threat model: what isolates teams and what does not",
            "multi-tenant-threat-model-what-isolates-teams-and-what-does-not",
        ),
        (
            "Fleet stack keys (`tpu-pathways:KEY` of a stack with `tpu-pathways:fleet`)",
            "fleet-stack-keys-tpu-pathwayskey-of-a-stack-with-tpu-pathwaysfleet",
        ),
        ("a_b — c", "a_b--c"),
    ],
)  # fmt: skip
def test_slugs_follow_githubs_rules(heading, expected):
    assert slug(heading) == expected


def test_a_repeated_heading_is_numbered():
    assert anchors(["Usage", "Usage", "Other", "Usage"]) == {"usage", "usage-1", "usage-2", "other"}


def test_the_checker_finds_broken_files_and_anchors(tmp_path):
    (tmp_path / "a.md").write_text(
        "# A\n\n## Setup\n\n## Setup\n\n"
        "[ok](#setup-1) [ok](b.md#b-page) [bad](#setup-2) [bad](b.md#nothing) [bad](c.md)\n"
        "[ext](https://example.com/x#y) `[code](d.md)`\n\n```\n[fenced](e.md)\n```\n"
    )
    (tmp_path / "b.md").write_text("# B page\n")
    assert broken_links(tmp_path / "a.md") == [
        "#setup-2: no heading 'setup-2' in a.md",
        "b.md#nothing: no heading 'nothing' in b.md",
        "c.md: no file c.md",
    ]


def test_the_map_check_finds_a_page_left_out(tmp_path):
    (tmp_path / "docs").mkdir()
    pages = [tmp_path / "docs" / "x.md", tmp_path / "docs" / "y.md"]
    readme = tmp_path / "README.md"
    # y.md is linked, but outside the map
    readme.write_text(
        "# R\n\n[y](docs/y.md)\n\n## Documentation\n\n| page |\n|---|\n| [x](docs/x.md) |\n"
    )
    assert unmapped_pages(readme, pages) == ["y.md"]


# --- the project's docs ----------------------------------------------------------------------


@pytest.mark.parametrize("doc", CHECKED, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(doc):
    assert broken_links(doc) == []


def test_every_docs_page_is_in_the_readme_map():
    assert DOCS, "no docs pages found"
    assert unmapped_pages(ROOT / "README.md", DOCS) == []
