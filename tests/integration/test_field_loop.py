"""The field loop on a live server (issue 24, "done when"): a collection starts with a pilot, switches by
itself once the pilot has its reports, the population drifts and is flagged, the collection is redesigned
over the live reports, and app clients follow every rotation without spending beyond their budget.

The population's reports are simulated in bulk (y ~ Q(·|x) for x drawn from the population, vectorised)
and uploaded with ``Client.submit_reports``; the apps are real SDK clients following the collection,
with a state file and the default privacy budget.
"""

from __future__ import annotations

import sqlite3
import uuid

import numpy as np
import pytest
from documents import make_document
from helpers import population_reports, window_label
from rldp_live import ADMIN_TOKEN, wait_until

from rldp.admin import AdminClient
from rldp.aggregator.design import design_pilot
from rldp.client import DEFAULT_BUDGET, Client, PrivacyBudgetExceeded
from rldp.shared.audit import audit_document
from rldp.shared.document import report_matrix
from rldp.shared.records import Alphabet
from rldp.shared.tolerances import AUDIT_TOLERANCE

ALPHABET = Alphabet.from_dict(
    {"sensitive": {"name": "sex", "values": ["F", "M"]}, "released": [{"name": "colour", "values": list("rgb")}]}
)
POPULATION = np.array([0.05, 0.15, 0.10, 0.30, 0.25, 0.15])
DRIFTED = np.array([0.60, 0.02, 0.02, 0.16, 0.10, 0.10])  # 60 % in one cell: far outside F
PILOT_REPORTS = 1_000_000


def _spent(path) -> float:
    with sqlite3.connect(path) as conn:
        return float(conn.execute("SELECT COALESCE(SUM(epsilon), 0) FROM memo").fetchone()[0])


@pytest.mark.slow
def test_pilot_then_automatic_switch_then_drift_then_redesign_and_the_apps_follow_within_budget(server, tmp_path):
    pilot = design_pilot(ALPHABET, 1.0, planned_reports=PILOT_REPORTS, time_budget=5.0).document
    name = f"field-{uuid.uuid4().hex[:8]}"
    policy = {
        "notion": "rldp",
        "epsilon": 1.0,
        "drift": "redesign",
        "switch": {"after": PILOT_REPORTS, "method": "polyopt", "time_budget": 5},
    }
    admin = AdminClient(server.url, token=ADMIN_TOKEN, timeout=60)
    population = Client(server.url, state_path=None, timeout=60)  # the reports of the simulated population
    admin.publish(pilot)
    admin.create_collection(name, pilot["id"], policy, description="the field loop")
    apps = [Client(server.url, state_path=tmp_path / f"app{i}.sqlite3") for i in range(3)]  # default budget
    records = [("F", "r"), ("M", "g"), ("M", "b")]

    def report_all() -> set[str]:
        """Each app reports its record through the collection; the mechanisms they used."""
        used = set()
        for app, record in zip(apps, records, strict=True):
            usage = app.collection(name)
            assert usage.submit([record], owners="me").accepted == 1
            used.add(usage.last["current"])
        return used

    def current(other_than: str, what: str) -> str:
        try:
            return wait_until(lambda: (c := admin.collection_info(name)["current"]) != other_than and c, 300, what)
        except AssertionError as exc:  # say what the design jobs did
            jobs = [(j["params"].get("kind"), j["status"], j.get("error")) for j in admin.jobs()]
            raise AssertionError(f"{exc}; jobs: {jobs}") from None

    try:
        assert report_all() == {pilot["id"]}
        # 1. The pilot phase: the population reports under the pilot; the batch that brings it to n₁ starts
        # the switch by itself (nobody calls /switch).
        population.submit_reports(
            pilot["id"],
            population_reports(pilot, POPULATION, PILOT_REPORTS, seed=1),
            batch_size=200_000,
            window=window_label(pilot),  # the pilot collects by day, as every design does by default
        )
        designed = current(pilot["id"], "the automatic switch")
        doc = population.mechanism(designed).document
        assert doc["provenance"]["source"] == "pilot" and doc["provenance"]["pilot_mechanism"] == pilot["id"]
        assert audit_document(doc).passed and doc["privacy"]["uncertainty"]["radius"] is not None
        assert report_all() == {designed}  # the apps rotate: one fresh draw each, charged to their budget
        # 2. The population drifts: the collection watch flags it as reports arrive (nobody asks for an
        # estimate) and designs over the live reports' confidence set; the collection rotates.
        drifted = population_reports(doc, DRIFTED, 200_000, seed=2)
        population.submit_reports(designed, drifted, batch_size=100_000, window=window_label(doc))
        redesigned = current(designed, "the redesign after the drift")
        new = population.mechanism(redesigned).document
        assert audit_document(new).passed
        if np.linalg.matrix_rank(report_matrix(doc)) < ALPHABET.size:  # its reports cannot identify P
            assert new["privacy"]["uncertainty"]["radius"] is None  # back to a pilot: no F to drift from
        else:
            assert new["provenance"]["pilot_mechanism"] == designed
        assert report_all() == {redesigned}
        for i in range(len(apps)):  # one draw per mechanism, all within the default budget
            with sqlite3.connect(tmp_path / f"app{i}.sqlite3") as conn:
                assert {
                    m for (m,) in conn.execute("SELECT k.mechanism FROM memo JOIN mechanisms AS k ON k.id = memo.mech")
                } == {population.mechanism(m).memo_key for m in (pilot["id"], designed, redesigned)}
            assert _spent(tmp_path / f"app{i}.sqlite3") <= DEFAULT_BUDGET.total + 3 * AUDIT_TOLERANCE
        # 3. An operator who keeps redesigning (another Q each time: a rotation of the same design would re-send
        # the memoised draw, free): the app's next draw that would pass the budget is refused, and the app never
        # spends beyond it.
        refused = False
        for k in range(6):
            window = pilot["collection"]["window"]
            extra = make_document(f"{name}-extra-{k}", epsilon=1.0 - k * 1e-7, alphabet=ALPHABET, window=window)
            admin.publish(extra)
            admin.rotate_collection(name, extra["id"])
            try:
                apps[0].collection(name).submit([records[0]], owners="me")
            except PrivacyBudgetExceeded as exc:
                refused = "nothing was sent" in str(exc)
                break
        assert refused
        assert _spent(tmp_path / "app0.sqlite3") <= DEFAULT_BUDGET.total + 10 * AUDIT_TOLERANCE
    finally:
        for app in apps:
            app.close()
        admin.close()
        population.close()
