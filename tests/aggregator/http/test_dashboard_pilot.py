"""A pilot's mechanism page says it needs no public data (it showed a uniform "Public distribution P̂ 0.1"
and warned "no provenance recorded"); a design from public data still shows its P̂ and provenance."""

from __future__ import annotations

import pytest
from helpers import ADULT_COLUMNS, adult_path
from rldp_live import ADMIN, ADMIN_TOKEN, in_process_app, login

from rldp.aggregator.design import design, design_pilot
from rldp.shared.document import json_compatible
from rldp.shared.provenance import PublicCounts
from rldp.shared.records import Alphabet
from rldp.shared.tables import read_csv


@pytest.fixture
def app(tmp_path):
    with in_process_app(tmp_path) as app:
        yield app


def _page(http, doc: dict) -> str:
    assert http.post("/v1/mechanisms", json=json_compatible(doc), headers=ADMIN).status_code == 201
    resp = http.get(f"/ui/mechanisms/{doc['id']}")
    assert resp.status_code == 200
    return resp.get_data(as_text=True)


def test_a_pilot_page_says_it_needs_no_public_data_and_a_public_design_shows_its_data(http):
    table = read_csv(adult_path(), names=ADULT_COLUMNS)
    alphabet = Alphabet.from_table(table, ["sex"], ["race"])
    assert login(http, ADMIN_TOKEN).status_code == 303
    pilot = design_pilot(alphabet, 1.0, planned_reports=5000, time_budget=5.0).document
    assert "provenance" not in pilot and pilot["privacy"]["uncertainty"]["radius"] is None  # what marks it
    html = _page(http, pilot)
    assert "No public data needed" in html and "none needed: the claim holds for every distribution" in html
    assert "no provenance recorded" not in html and "Public distribution P̂" not in html
    public = PublicCounts.from_table(table, alphabet, name="adult.csv")
    doc = design(
        "grr",
        alphabet=alphabet,
        public_distribution=public.distribution,
        epsilon=1.0,
        provenance=public.provenance(),
    )
    html = _page(http, doc)
    assert "Public distribution P̂" in html and "adult.csv, 32,561 rows" in html
    assert "No public data needed" not in html
