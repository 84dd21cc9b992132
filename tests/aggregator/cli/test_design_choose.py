"""``rldp design --method auto`` and the warning for an ε that releases the data nearly as it is."""

from __future__ import annotations

import json

import pytest
from cli_helpers import design_args
from helpers import ADULT_COLUMNS, adult_path

from rldp.aggregator.design import auto_methods
from rldp.cli import main
from rldp.shared.document import read_document

pytestmark = pytest.mark.slow


@pytest.fixture
def adult_csv(tmp_path):
    import gzip

    csv = tmp_path / "adult.csv"
    with gzip.open(adult_path(), "rt") as fh:
        csv.write_text(",".join(ADULT_COLUMNS) + "\n" + "\n".join(line for line in fh.read().splitlines() if line))
    return csv


@pytest.mark.parametrize("epsilon", ["0.5", "1"])  # at 0.5 PolyOpt's best matrix cannot identify P_X
def test_method_auto_designs_every_certified_method_and_writes_the_best(adult_csv, tmp_path, capsys, epsilon):
    out = tmp_path / "m.json"
    assert main([*map(str, design_args(adult_csv, out, method="auto", epsilon=epsilon)), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert sorted(record["candidates"]) == sorted(auto_methods("rldp"))
    eligible = {m: c["nmi"] for m, c in record["candidates"].items() if c["identifiable"]}
    assert record["nmi"] == max(eligible.values()) == record["candidates"][record["method"]]["nmi"]
    doc = read_document(out)
    assert doc["method"] == record["method"] and doc["audit"]["epsilon"] <= float(epsilon)
    assert main(map(str, design_args(adult_csv, tmp_path / "t.json", method="auto", epsilon=epsilon))) == 0
    shown = capsys.readouterr().out
    assert f"  chosen   {record['method']}, the best identifiable of {len(record['candidates'])} certified" in shown


def test_an_epsilon_that_releases_the_data_warns(adult_csv, tmp_path, capsys):
    assert main(map(str, design_args(adult_csv, tmp_path / "a.json", method="polyopt", epsilon="50"))) == 0
    err = capsys.readouterr().err
    assert err.startswith("rldp design: warning: epsilon 50 lets even GRR report the true record 99 %")
    assert "ln(99·(|X| − 1)) = 6.79 nats for |X| = 10" in err and err.count("\n") == 1
    assert main(map(str, design_args(adult_csv, tmp_path / "b.json", method="polyopt", epsilon="1"))) == 0
    assert "warning" not in capsys.readouterr().err
