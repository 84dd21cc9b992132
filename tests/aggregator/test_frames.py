"""pandas DataFrames where a data team would pass one: design, privatize, estimate.

Skipped cleanly when pandas is absent (it is in the test extra, so CI runs these)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from helpers import ADULT_COLUMNS, adult_path

pd = pytest.importorskip("pandas")

from rldp.aggregator.estimate import estimate_distribution  # noqa: E402
from rldp.aggregator.frames import design_from_frame  # noqa: E402
from rldp.client import Mechanism  # noqa: E402
from rldp.shared.document import alphabet as doc_alphabet  # noqa: E402
from rldp.shared.document import mechanism_matrix  # noqa: E402
from rldp.shared.errors import ValidationError  # noqa: E402
from rldp.shared.records import Alphabet  # noqa: E402
from rldp.shared.tables import Table, read_csv  # noqa: E402


@pytest.fixture(scope="module")
def adult_frame():
    return pd.read_csv(adult_path(), names=list(ADULT_COLUMNS), skipinitialspace=True)


@pytest.mark.slow
def test_design_from_a_frame_equals_design_from_the_csv(adult_frame):
    doc = design_from_frame(adult_frame, sensitive="sex", released=["race"], method="srr", epsilon=1.0, name="adult")
    table = read_csv(adult_path(), names=ADULT_COLUMNS)
    alphabet = Alphabet.from_table(table, "sex", ["race"])
    assert doc_alphabet(doc) == alphabet
    np.testing.assert_allclose(doc["public_distribution"], alphabet.empirical_distribution(table), atol=1e-15)
    assert doc["provenance"]["n"] == len(adult_frame) and doc["audit"]["epsilon"] <= 1.0


def test_frame_missing_values_and_sizes(adult_frame):
    frame = adult_frame[["sex", "race", "fnlwgt"]].head(200).copy()
    frame.loc[3, "race"] = None
    with pytest.raises(ValidationError, match=r"missing values in race \(1\)"):
        design_from_frame(frame, sensitive="sex", released=["race"], method="grr", epsilon=1.0)
    doc = design_from_frame(frame, sensitive="sex", released=["race"], method="grr", epsilon=1.0, missing="drop")
    assert doc["provenance"]["n"] == 199
    doc = design_from_frame(frame, sensitive="sex", released=["race"], method="grr", epsilon=1.0, missing="keep")
    assert "" in doc["released"][0]["values"]
    big = adult_frame[["sex", "fnlwgt"]]
    with pytest.raises(ValidationError, match=r"'fnlwgt' has [\d,]+ distinct numeric values.*bin it"):
        design_from_frame(big, sensitive="sex", released=["fnlwgt"], method="grr", epsilon=1.0)
    assert Table.from_frame(frame).column("race")[3] == ""


@pytest.mark.slow
def test_privatize_and_estimate_with_frames(adult_frame):
    doc = design_from_frame(adult_frame, sensitive="sex", released=["race"], method="grr", epsilon=2.0)
    mech = Mechanism.from_document(doc)
    users = adult_frame[["race", "sex", "age"]]  # any column order, extra columns ignored
    ys = mech.privatize(users, rng=np.random.default_rng(1))
    assert ys.shape == (len(users),)
    np.testing.assert_array_equal(mech.alphabet.encode(users), mech.alphabet.encode(users.to_dict("records")))
    q = mechanism_matrix(doc)
    counts = np.bincount(ys, minlength=q.shape[0])
    est = estimate_distribution(q, counts, mech.alphabet.shape)
    frame = est.to_frame(mech.alphabet)
    assert list(frame.columns) == ["sex", "race", "estimate", "ci95_low", "ci95_high", "identified"]
    assert len(frame) == mech.alphabet.size and frame["estimate"].sum() == pytest.approx(1.0)
    row = frame[(frame["sex"] == "Male") & (frame["race"] == "White")].iloc[0]
    assert row["ci95_low"] <= row["estimate"] <= row["ci95_high"]
    assert list(est.to_frame().columns[:2]) == ["s", "u"]


@pytest.mark.slow
def test_client_never_imports_pandas():
    code = "import sys, rldp.client, rldp.shared.records; assert 'pandas' not in sys.modules"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
