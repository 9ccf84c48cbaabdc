"""docs/policy.md documents exactly the guardrail rules of components/policy/rules.py: one table
row per rule, in rule order, each saying whether the rule is checked in production only."""

from __future__ import annotations

import re
from pathlib import Path

from components.policy.rules import RULES

DOC = Path(__file__).resolve().parents[3] / "docs" / "policy.md"
ENVIRONMENTS = {"every environment": False, "production": True}  # cell -> production_only
ROW = re.compile(r"^\| `(?P<id>[^`]+)` \| (?P<checked>[^|]+?) \| ")


def documented_rules(text: str) -> list[tuple[str, str]]:
    """(rule id, "Checked in" cell) of every row of the table under "## Rules"."""
    section = text.split("\n## Rules\n", 1)[1].split("\n## ", 1)[0]
    return [(m["id"], m["checked"]) for line in section.splitlines() if (m := ROW.match(line))]


def test_every_rule_is_documented_once_in_rule_order_and_nothing_else():
    documented = [rule_id for rule_id, _ in documented_rules(DOC.read_text())]
    assert documented == [rule.id for rule in RULES]


def test_each_rule_says_where_it_is_checked():
    documented = dict(documented_rules(DOC.read_text()))
    assert {rule_id: ENVIRONMENTS.get(cell) for rule_id, cell in documented.items()} == {
        rule.id: rule.production_only for rule in RULES
    }


def test_the_reader_finds_rows_and_ignores_other_tables():
    text = (
        "# t\n\n## Rules\n\n| Rule id | Checked in | Applies to | Violation when |\n"
        "| --- | --- | --- | --- |\n| `a-rule` | production | Bucket | x |\n"
        "| `b-rule` | every environment | Cluster | y |\n\n## Other\n\n| `c-rule` | z | w |\n"
    )
    assert documented_rules(text) == [("a-rule", "production"), ("b-rule", "every environment")]
