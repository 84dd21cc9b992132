"""The dashboard's design form (issue 27 rough edges): each notion offers its own methods with its
recommended one first (not grr for every notion), only the chosen notion's fields show — by CSS alone,
the dashboard runs no script — and the server reads the chosen notion's method list."""

from __future__ import annotations

import io
import re
from pathlib import Path

from flask import Flask

from rldp.aggregator.design import methods_for
from rldp.aggregator.http.dashboard.designs import design_request_from_form
from rldp.aggregator.services.dashboard import NOTION_CHOICES
from rldp.shared.notions import DESIGN_NOTIONS, NOTIONS

CSS = Path(__file__).resolve().parents[3] / "aggregator" / "http" / "dashboard" / "static" / "dashboard.css"


def test_every_notion_recommends_a_method_registered_for_it() -> None:
    assert [c.name for c in NOTION_CHOICES] == list(DESIGN_NOTIONS)
    for choice in NOTION_CHOICES:
        assert NOTIONS[choice.name].recommended == choice.recommended, choice.name
        assert choice.recommended in methods_for(choice.name) and choice.recommended != "grr", choice.name
    assert {c.name: c.recommended for c in NOTION_CHOICES}["rldp"] == "polyopt"


def test_the_stylesheet_shows_each_notions_fields_only_when_it_is_chosen() -> None:
    css = CSS.read_text(encoding="utf-8")
    for name in DESIGN_NOTIONS:
        rule = f"form.design:has(input[name=notion][value={name}]:checked) fieldset.notion-{name}"
        assert rule in css, name
    assert re.search(
        r"@supports selector\(:has\(\*\)\) \{\s*form\.design fieldset\.per-notion \{ display: none; \}", css
    )


def _form(**fields: str) -> dict:
    base = {"csv": (io.BytesIO(b"sex,colour\nFemale,red\nMale,blue\n"), "p.csv"), "sensitive": "sex"}
    return {**base, "released": "colour", "epsilon": "1", **fields}


def test_the_server_reads_the_chosen_notions_method() -> None:
    app = Flask(__name__)
    every = {f"method_{c.name}": c.recommended for c in NOTION_CHOICES}  # what a browser sends: every list
    with app.test_request_context("/", method="POST", data=_form(notion="distp", delta="0.01", **every)):
        data = design_request_from_form()
    assert data["method"] == "coupling" and data["notion"] == "distp" and data["delta"] == 0.01
    with app.test_request_context("/", method="POST", data=_form(notion="rldp", **every)):
        assert design_request_from_form()["method"] == "polyopt"
    with app.test_request_context("/", method="POST", data=_form(notion="rldp", method="grr", **every)):
        assert design_request_from_form()["method"] == "grr"  # a plain "method" field is still read
