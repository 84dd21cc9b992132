"""The experiments (`rldp experiment NAME`) and the shipped Adult data.

Quick runs only (CI budget): fig4 end to end through the API and the CLI, fig2 on the two
small Adult pairs with two ε values. The invariants tested are the ones the theory
guarantees: NR ≥ PolyOpt (Γ without the s₁ = s₂ rows) ≥ PolyOpt as printed (each cone
contains the next, and each is an exact LP optimum), calibrated IR/CR ≥ their theorem
versions (the theorem's point is a candidate of the calibrated search), every certified
design passes the audit, and PolyOpt's realised ε* ≤ ε whenever P* lies in F.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import math
from pathlib import Path

import numpy as np
import pytest
from helpers import ADULT_CATEGORY_SIZES, SHARED_DATA

from rldp.aggregator.design import grr_matrix
from rldp.cli import main
from rldp.shared.divergence import confidence_radius, renyi_divergence
from rldp.shared.tolerances import AUDIT_TOLERANCE

experiments = pytest.importorskip("rldp.demo.experiments")
pytest.importorskip("matplotlib")
pytest.importorskip("tqdm")
from rldp.demo.datasets import ADULT_COLUMNS, data_file, load_adult  # noqa: E402
from rldp.demo.experiments import evaluation, stats  # noqa: E402
from rldp.demo.experiments.lzg24_truth import FIG4_EPS_QUICK  # noqa: E402

# md5 of the original UCI adult.data (../shared/data/README.md): the shipped copy must unzip to it.
ADULT_DATA_MD5 = "5d7c39d7b8804f071cdd1f2a7c460872"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        return list(reader.fieldnames or []), list(reader)


def _stat(rows, panel, method, statistic, eps):
    hits = [
        float(r["value"])
        for r in rows
        if r["panel"] == panel
        and r["method"] == method
        and r["statistic"] == statistic
        and r["epsilon"] != ""
        and math.isclose(float(r["epsilon"]), eps)
    ]
    assert len(hits) <= 1
    return hits[0] if hits else None


# ---------------------------------------------------------------------------- shipped data
@pytest.mark.slow
def test_shipped_adult_data_is_the_original_and_loads_from_the_package():
    import rldp.demo

    package_dir = Path(rldp.demo.__file__).resolve().parent
    with data_file("adult.data.gz") as path:
        assert path.resolve().parent == package_dir / "data"  # found next to the package, not ../shared
        raw = gzip.decompress(path.read_bytes())
    assert hashlib.md5(raw).hexdigest() == ADULT_DATA_MD5
    if (SHARED_DATA / "adult.data.gz").exists():
        for name in ("adult.data.gz", "adult.test.csv.gz"):
            with data_file(name) as path:
                assert gzip.decompress(path.read_bytes()) == gzip.decompress((SHARED_DATA / name).read_bytes())

    train, test = load_adult("data"), load_adult("test")
    assert (train.n_rows, test.n_rows) == (32_561, 16_281)
    assert tuple(train.columns) == ADULT_COLUMNS == tuple(test.columns)
    sizes = ADULT_CATEGORY_SIZES
    assert {c: len(set(train.column(c))) for c in sizes} == sizes
    assert "?" in set(train.column("occupation"))
    assert set(test.column("class")) == {"<=50K", ">50K"}  # the cleaned test file: no trailing '.'
    with pytest.raises(ValueError, match="unknown Adult split"):
        load_adult("train")  # type: ignore[arg-type]
    assert (package_dir / "data" / "README.md").read_text().count("CC BY 4.0") >= 1


# ---------------------------------------------------------------------------- fig4
@pytest.fixture(scope="module")
def fig4_quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("fig4")
    result = experiments.run_experiment("fig4", experiments.Config(quick=True, workers=1, progress=False))
    paths = experiments.write_outputs(result, out, records=True)
    return result, out, paths


@pytest.mark.slow
def test_fig4_quick_writes_tidy_csv_png_and_metadata(fig4_quick):
    result, out, paths = fig4_quick
    assert {p.name for p in paths} == {"fig4.csv", "fig4_draws.csv", "fig4.png", "fig4.json"}
    png = (out / "fig4.png").read_bytes()
    assert png.startswith(PNG_MAGIC) and len(png) > 20_000
    header, rows = _read_csv(out / "fig4.csv")
    assert tuple(header) == experiments.COLUMNS
    assert {r["experiment"] for r in rows} == {"fig4"}
    methods = {r["method"] for r in rows} - {""}
    assert methods == {"nr", "polyopt-paper", "polyopt"}
    eps_grid = sorted({float(r["epsilon"]) for r in rows if r["epsilon"]})
    assert eps_grid == sorted(FIG4_EPS_QUICK) and eps_grid[0] == 0.075
    for r in rows:
        v = float(r["value"])
        if r["statistic"].startswith("eps_star"):
            assert v >= 0  # inf allowed (a zero denominator under P*)
        if r["statistic"].startswith("fraction"):
            assert 0.0 <= v <= 1.0
        if r["statistic"] == "nmi_mean":
            assert 0.0 <= v <= 1.0
    # Quantiles are ordered.
    for m in methods:
        for e in eps_grid:
            q = [_stat(rows, "2x5", m, f"eps_star_{s}", e) for s in ("q25", "median", "q75", "max")]
            assert q == sorted(q)


@pytest.mark.slow  # with the other users of fig4_quick: the module fixture runs the experiment
def test_fig4_polyopt_keeps_its_promise_when_p_star_is_in_F_and_nr_does_not(fig4_quick):
    result, _, _ = fig4_quick
    n = experiments.N_ADULT
    radius = confidence_radius(n, experiments.BETA, 10, 2.0)
    inside = 0
    for rec in result.records:
        assert not rec.get("failed"), rec
        p_star, p_hat = experiments.synthetic_draw(0, (2, 5), n, rec["draw"])
        in_f = float(renyi_divergence(p_hat.ravel(), p_star.ravel(), 2.0)) <= radius  # recomputed here
        assert rec["in_F"] == in_f
        if rec["method"] in ("polyopt", "polyopt-paper"):
            assert rec["eps_audited"] <= rec["epsilon"] + AUDIT_TOLERANCE
            if in_f:
                inside += 1
                assert rec["eps_star"] <= rec["epsilon"] + AUDIT_TOLERANCE
    assert inside >= 3  # the check above is not vacuous
    smallest = min(FIG4_EPS_QUICK)
    nr = [r["eps_star"] for r in result.records if r["method"] == "nr" and r["epsilon"] == smallest]
    assert np.mean([e > smallest for e in nr]) > 0.5  # NR leaks more than it claims [LZG24, Fig 4]


@pytest.mark.slow
def test_cli_experiment_is_deterministic_across_worker_counts_and_replots(tmp_path, capsys):
    args = ["experiment", "fig4", "--quick", "--draws", "2", "--epsilons", "0.3", "--no-progress", "--seed", "7"]
    assert main([*args, "--out", str(tmp_path / "one"), "--workers", "1"]) == 0
    assert main([*args, "--out", str(tmp_path / "two"), "--workers", "2"]) == 0
    printed = capsys.readouterr().out
    assert "fig4" in printed and "P(ε*>ε)" in printed
    one = (tmp_path / "one" / "fig4.csv").read_text()
    assert one == (tmp_path / "two" / "fig4.csv").read_text()
    assert {float(r["epsilon"]) for r in _read_csv(tmp_path / "one" / "fig4.csv")[1] if r["epsilon"]} == {0.3}

    (tmp_path / "one" / "fig4.png").unlink()
    assert main(["experiment", "fig4", "--replot", "--out", str(tmp_path / "one")]) == 0
    assert (tmp_path / "one" / "fig4.png").read_bytes().startswith(PNG_MAGIC)
    loaded = experiments.load_result("fig4", tmp_path / "one")
    assert loaded.methods == ["nr", "polyopt-paper", "polyopt"] and loaded.panels == ["2x5"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["experiment", "fig4", "--methods", "bogus"], "unknown method(s) bogus"),
        (["experiment", "fig4", "--methods", "grr"], "compares nr, polyopt-paper, polyopt"),
        (["experiment", "fig2", "--replot", "--out", "/nonexistent/rldp"], "not found"),
    ],
)
def test_cli_experiment_bad_input_is_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["experiment", "nope"],
        ["experiment", "fig2", "--workers", "0"],
        ["experiment", "fig2", "--epsilons", "0.5,-1"],
        ["experiment", "fig2", "--seed", "x"],
    ],
)
def test_cli_experiment_rejects_bad_arguments(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert "error:" in capsys.readouterr().err


# ---------------------------------------------------------------------------- fig2
@pytest.fixture(scope="module")
def fig2_small(tmp_path_factory):
    cfg = experiments.Config(quick=True, workers=1, epsilons=(0.5,), progress=False)
    result = experiments.run_experiment("fig2", cfg)
    out = tmp_path_factory.mktemp("fig2")
    experiments.write_outputs(result, out)
    return result, out


@pytest.mark.slow
def test_fig2_quick_outputs(fig2_small):
    result, out = fig2_small
    assert (out / "fig2.png").read_bytes().startswith(PNG_MAGIC)
    header, rows = _read_csv(out / "fig2.csv")
    assert tuple(header) == experiments.COLUMNS
    assert {r["panel"] for r in rows} == {"sex/race", "race/sex"}
    nmi = [float(r["value"]) for r in rows if r["statistic"] == "nmi"]
    assert len(nmi) == 2 * len(result.methods) and all(0.0 <= v <= 1.0 for v in nmi)
    assert {r["n"] for r in rows} == {"32561"}
    assert not result.notes  # every method is feasible on these pairs


@pytest.mark.slow  # with the other users of fig2_small: the module fixture runs the experiment
def test_fig2_orderings_the_theory_guarantees(fig2_small):
    result, _ = fig2_small
    tol = 1e-7  # LP optima, solved to HiGHS's tolerance
    for panel in ("sex/race", "race/sex"):
        for eps in (0.5,):
            v = {m: result.value(panel, m, "nmi", epsilon=eps) for m in result.methods}
            assert v["nr"] >= v["polyopt"] - tol >= v["polyopt-paper"] - 2 * tol
            assert v["ir-calibrated"] >= v["ir"] - 1e-12
            assert v["cr-calibrated"] >= v["cr"] - 1e-12
            assert v["polyopt"] > v["grr"]  # RLDP's point: far more utility than LDP at the same ε
            for m in result.methods:
                audited = result.value(panel, m, "eps_audited", epsilon=eps)
                if m == "nr":
                    assert audited > eps  # NR protects P̂ only; over F it leaks more
                else:
                    assert audited <= eps + AUDIT_TOLERANCE, (panel, m, eps, audited)


# ---------------------------------------------------------------------------- helpers
def test_quantiles_treat_infinite_leakage_as_largest():
    q = stats.quantile
    vals = np.array([0.1, 0.2, 0.3, math.inf])
    assert q(vals, 0.0) == 0.1 and q(vals, 0.5) == pytest.approx(0.25)
    assert q(vals, 0.75) == math.inf and q(vals, 1.0) == math.inf
    assert q(np.array([1.0, 2.0, 3.0, 4.0, 5.0]), 0.25) == np.quantile([1, 2, 3, 4, 5], 0.25)


def test_infeasible_designs_are_reported_not_raised():
    p_hat = np.full((3, 5), 1 / 15)  # 15 symbols: beyond exact PolyOpt, as in the paper
    base = {"panel": "3x5", "n_sensitive": 3, "n_released": 5, "n": 1000}
    recs = evaluation.evaluate(p_hat, 1000, (0.05,), ("polyopt", "grr"), (0.5, 1.0), base)
    failed = [r for r in recs if r.get("failed")]
    assert {r["method"] for r in failed} == {"polyopt"} and len(failed) == 2
    assert all("12 symbols" in r["failed"] for r in failed)
    rows = stats.summarise("x", recs, {"nmi": ("value",)})
    assert {(r["method"], r["statistic"]) for r in rows} == {("polyopt", "failures"), ("grr", "nmi")}
    notes = stats.failure_notes(recs)
    assert len(notes) == 1 and notes[0].startswith("polyopt omitted on 3x5")


def test_synthetic_draws_are_reproducible_and_from_the_right_model():
    a = experiments.synthetic_draw(3, (2, 5), 1000, 4)
    b = experiments.synthetic_draw(3, (2, 5), 1000, 4)
    c = experiments.synthetic_draw(3, (2, 5), 1000, 5)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], c[0])
    p_star, p_hat = a
    assert p_star.shape == p_hat.shape == (2, 5)
    assert p_star.sum() == pytest.approx(1.0) and p_hat.sum() == pytest.approx(1.0)
    assert np.allclose(p_hat * 1000, np.round(p_hat * 1000))  # an empirical distribution of n = 1000
    # P̂ estimates P*: each cell within 5 binomial standard deviations.
    assert np.all(np.abs(p_hat - p_star) <= 5 * np.sqrt(p_star * (1 - p_star) / 1000) + 1e-12)


def test_polyopt_solver_policy():
    opts = evaluation.solver_options
    assert opts("polyopt", 10, "exact", 5.0) == {"solver": "exact"}
    assert opts("polyopt-paper", 10, "auto", 5.0) == {"solver": "exact"}  # the paper's method where feasible
    assert opts("nr", 240, "auto", 5.0) == {"solver": "cg", "time_budget": 5.0}
    assert opts("polyopt", 10, "cg", 7.0) == {"solver": "cg", "time_budget": 7.0}
    assert opts("ir-calibrated", 240, "cg", 5.0) == {}  # not a vertex-based designer
    with pytest.raises(ValueError, match="polyopt_solver"):
        experiments.Config(polyopt_solver="simplex")
    with pytest.raises(ValueError, match="time_budget"):
        experiments.Config(time_budget=0)


def test_a_design_that_fails_its_audit_is_not_counted(monkeypatch):
    """Privacy is the product: a certified method whose matrix leaks more than its ε under
    the exact audit is recorded as a failed design, never averaged into the utility."""
    real = evaluation.design_matrix

    def leaky(method, uset, eps, **options):
        if method == "srr":  # pretend the designer overshot: GRR at 2ε claims ε
            return grr_matrix(uset.public_distribution.size, 2 * eps), {}
        return real(method, uset, eps, **options)

    monkeypatch.setattr(evaluation, "design_matrix", leaky)
    p_hat = np.array([[0.1, 0.2, 0.1], [0.3, 0.2, 0.1]])
    base = {"panel": "2x3", "n_sensitive": 2, "n_released": 3, "n": 1000}
    recs = evaluation.evaluate(p_hat, 1000, (0.05,), ("srr", "grr"), (1.0,), base)
    srr, grr = recs
    assert srr["failed"].startswith("AuditFailed") and srr["eps_audited"] > 1.0 and "nmi" not in srr
    assert not grr.get("failed") and grr["eps_audited"] <= 1.0 + AUDIT_TOLERANCE
    rows = stats.summarise("x", recs, {"nmi": ("value",)})
    assert {(r["method"], r["statistic"]) for r in rows} == {("srr", "failures"), ("grr", "nmi")}
