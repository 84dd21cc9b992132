"""The README's statements about notions follow the code: the registered notions (``rldp.shared.audit``)
and the notions × methods table of the funnel notions (``NOTION_METHODS``, ``supports_latent``)."""

from __future__ import annotations

import re
from pathlib import Path

from rldp.aggregator.design import NOTION_METHODS
from rldp.shared.audit import notions

README = Path(__file__).resolve().parents[2] / "README.md"
HEADER = "| method | ldp | lip | alip | latent S | what |"


def _text() -> str:
    return " ".join(README.read_text(encoding="utf-8").split())  # lines rewrapped: one space between words


def test_the_sentence_listing_registered_notions_lists_every_registered_notion():
    match = re.search(r"an unknown notion is refused; (.*?) (?:is|are) registered\)", _text())
    assert match, "the README no longer says which notions are registered"
    listed = set(re.findall(r"`([a-z]+)`", match.group(1)))
    assert listed == set(notions())


def test_the_notions_by_methods_table_matches_the_designers():
    lines = README.read_text(encoding="utf-8").splitlines()
    start = lines.index(HEADER) + 2  # past the header and its |---| row
    table: dict[str, tuple[bool, ...]] = {}
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        marks = tuple({"✓": True, "—": False}[cell] for cell in cells[1:5])
        for method in re.findall(r"`([a-z-]+)`", cells[0]):
            table[method] = marks
    funnel = ("ldp", "lip", "alip")
    methods = {m for notion in funnel for m in NOTION_METHODS[notion]}
    assert set(table) == methods
    for method, (*by_notion, latent) in table.items():
        assert by_notion == [method in NOTION_METHODS[notion] for notion in funnel], method
        designers = [NOTION_METHODS[n][method] for n in funnel if method in NOTION_METHODS[n]]
        assert latent == any(d.supports_latent for d in designers), method
