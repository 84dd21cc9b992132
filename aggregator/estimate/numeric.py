"""Estimates for numbers: the histogram, CDF, mean, quantiles and means per value of S of a numeric
released attribute, each with a 95 % interval, from an :class:`~.result.Estimate` of P(S, U).

**Spread within a bin: uniform.** A bin's share is spread evenly over [e_j, e_{j+1}], so the CDF is linear
between edges, the mean is Σ_j P(bin j)·(e_j + e_{j+1})/2 and a quantile interpolates the CDF linearly.
What this states is the binned distribution: a statistic of the raw numbers is off by at most the
binning (within the bin that holds it, for a quantile). The intervals cover the binned statistic.

* CDF at each edge and the mean are linear in P(S, U): their estimate and interval are
  :meth:`~.result.Estimate.linear` (delta method or bootstrap, or partial-identification bounds when
  they are not identifiable from the reports).
* A quantile q_p: its estimate inverts the estimated CDF; its interval inverts the CDF's pointwise
  bounds (Woodruff's interval: [F_high⁻¹(p), F_low⁻¹(p)]).
* The mean per value s of S, m_s = Σ_u c_u P(s, u) / P(s): delta method, the interval of the linear
  functional Σ_u (c_u − m_s) P(s, u) / P(s) around m_s (identified only when P(S, U) is).
* The quantiles per value s of S: the CDF of U given s at each inner edge, F_s(e_j) = P(s, U ≤ e_j) / P(s),
  with the delta-method interval of the ratio (as for the mean), inverted as above (Woodruff).

Every figure is about the released number, which RLDP protects only as far as it reveals S: :data:`NOTE`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rldp.shared.records import Alphabet

from .result import Estimate

__all__ = ["NOTE", "NOTE_LDP", "QUANTILES", "SPREAD", "numeric_summaries", "quantile_from_cdf", "quantile_entries"]

QUANTILES = (0.5, 0.9, 0.99)
SPREAD = "uniform within each bin"
NOTE = "{name} itself is protected only as far as it reveals {sensitive} (RLDP protects S, not the released value)"
#: Added when every report's probability varies by at most e^ε across all inputs (an LDP baseline for numbers, GRR
#: on S × U, randomised response on U with some noise, …): the number is then also ε-LDP, ε computed from the
#: matrices (rldp.shared.audit.ldp_epsilon), whatever it reveals of S.
NOTE_LDP = "; and {name} itself is {epsilon:.4g}-LDP (no report is more than e^{epsilon:.4g} times likelier for one input than for another)"


def _note(name: str, sensitive: str, input_epsilon: float) -> str:
    note = NOTE.format(name=name, sensitive=sensitive)
    return note + NOTE_LDP.format(name=name, epsilon=input_epsilon) if math.isfinite(input_epsilon) else note


def _num(x: Any) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


def quantile_from_cdf(edges: np.ndarray, cdf: np.ndarray, p: float) -> float:
    """The p-quantile of the distribution whose CDF at ``edges`` is ``cdf`` (0 at e_0, 1 at e_k), linear
    between edges: the smallest x with F(x) = p."""
    cdf = np.maximum.accumulate(np.clip(cdf, 0.0, 1.0))
    j = int(np.searchsorted(cdf, p, side="left"))
    if j <= 0:
        return float(edges[0])
    if j >= len(edges):
        return float(edges[-1])
    lo, hi = cdf[j - 1], cdf[j]
    t = 0.0 if hi <= lo else (p - lo) / (hi - lo)
    return float(edges[j - 1] + t * (edges[j] - edges[j - 1]))


def quantile_entries(edges: np.ndarray, cdf: np.ndarray, low: np.ndarray, high: np.ndarray, ident: bool) -> dict:
    """{"0.5": entry, "0.9": …, "0.99": …}: each quantile of the CDF ``cdf`` at ``edges`` and its interval,
    the inverses of the CDF's pointwise bounds (a higher CDF reaches p sooner: its inverse is the low end)."""
    return {
        f"{p:g}": _entry(
            quantile_from_cdf(edges, cdf, p),
            quantile_from_cdf(edges, high, p),
            quantile_from_cdf(edges, low, p),
            ident,
        )
        for p in QUANTILES
    }


def _entry(est: float, low: float, high: float, identified: bool) -> dict[str, Any]:
    return {"estimate": _num(est), "ci95_low": _num(low), "ci95_high": _num(high), "identified": bool(identified)}


def numeric_summaries(
    estimate: Estimate, alphabet: Alphabet, input_epsilon: float = math.inf
) -> dict[str, dict[str, Any]]:
    """One summary per numeric released attribute (none: {}). With a latent S the estimate is P(U) alone
    (shape (1, |U|)) and there is no mean per value of S. ``input_epsilon``: the mechanisms' LDP level w.r.t.
    their whole input (:func:`rldp.shared.audit.ldp_epsilon` of each matrix, the largest): the note says the number is
    protected only as far as it reveals S and, when that level is finite, that it is also that LDP."""
    a1, a2 = estimate.shape
    latent = a1 != alphabet.n_sensitive
    sizes = [attr.size for attr in alphabet.released]
    u_of_x = np.arange(a1 * a2) % a2
    s_of_x = np.arange(a1 * a2) // a2
    codes = np.unravel_index(u_of_x, sizes) if sizes else ()
    sensitive = alphabet.sensitive
    out = {}
    for attr, code in zip(alphabet.released, codes, strict=True):
        spec = attr.numeric
        if spec is None:
            continue
        edges = np.asarray(spec.edges)
        onehot = (code[None, :] == np.arange(attr.size)[:, None]).astype(float)  # (bins, |X|)
        hist, h_low, h_high = estimate.linear(onehot)
        cum = np.cumsum(onehot, axis=0)[:-1]  # F at the inner edges
        f, f_low, f_high = estimate.linear(cum) if len(cum) else (np.zeros(0),) * 3
        f_ident = estimate.identified(cum) if len(cum) else np.zeros(0, dtype=bool)
        mid = spec.midpoints()
        w_mean = mid @ onehot
        m, m_low, m_high = (v[0] for v in estimate.linear(w_mean[None, :]))
        m_ident = bool(estimate.identified(w_mean[None, :])[0])
        full = np.r_[0.0, f, 1.0]
        low = np.r_[0.0, np.nan_to_num(f_low, nan=0.0), 1.0]
        high = np.r_[0.0, np.nan_to_num(f_high, nan=1.0), 1.0]
        quantiles = quantile_entries(edges, full, low, high, bool(f_ident.all()) if len(f_ident) else True)
        summary: dict[str, Any] = {
            "edges": edges.tolist(),
            "closed": spec.closed,
            "spread": SPREAD,
            "labels": list(attr.values),
            "histogram": {
                "estimate": [_num(v) for v in hist],
                "ci95_low": [_num(v) for v in h_low],
                "ci95_high": [_num(v) for v in h_high],
                "identified": estimate.identified(onehot).tolist(),
            },
            "cdf": {
                "at": edges[1:-1].tolist(),
                "estimate": [_num(v) for v in f],
                "ci95_low": [_num(v) for v in f_low],
                "ci95_high": [_num(v) for v in f_high],
                "identified": f_ident.tolist(),
            },
            "mean": _entry(m, m_low, m_high, m_ident),
            "quantiles": quantiles,
            "note": _note(attr.name, sensitive.name, input_epsilon),
        }
        if not latent:
            summary["mean_by"] = {sensitive.name: _means_by(estimate, s_of_x, w_mean, sensitive.values)}
            summary["quantiles_by"] = {sensitive.name: _quantiles_by(estimate, s_of_x, cum, edges, sensitive.values)}
        out[attr.name] = summary
    return out


def _means_by(estimate: Estimate, s_of_x: np.ndarray, w_mean: np.ndarray, values: tuple[str, ...]) -> dict:
    joint = estimate.joint.ravel()
    out = {}
    for s, value in enumerate(values):
        mask = (s_of_x == s).astype(float)
        share = float(mask @ joint)
        if share <= 0:
            out[value] = _entry(np.nan, np.nan, np.nan, False)
            continue
        m = float((w_mean * mask) @ joint) / share
        g = (w_mean - m) * mask / share  # the ratio's gradient: its delta-method interval is g's
        ident = bool(estimate.identified(np.stack([mask, w_mean * mask])).all())
        _, low, high = (v[0] for v in estimate.linear(g[None, :]))
        half = (high - low) / 2 if ident else np.nan
        out[value] = _entry(m, m - half, m + half, ident)
    return out


def _quantiles_by(
    estimate: Estimate, s_of_x: np.ndarray, cum: np.ndarray, edges: np.ndarray, values: tuple[str, ...]
) -> dict:
    """{s: {"0.5": entry, …}}: the quantiles of U given each value s of S, each with its 95 % interval (not
    identified, and no interval, when P(s, U ≤ e_j) is not identified from the reports)."""
    joint = estimate.joint.ravel()
    out = {}
    for s, value in enumerate(values):
        mask = (s_of_x == s).astype(float)
        share = float(mask @ joint)
        if share <= 0:
            out[value] = {f"{p:g}": _entry(np.nan, np.nan, np.nan, False) for p in QUANTILES}
            continue
        if not len(cum):  # one bin: the binned distribution is known, uniform over it
            out[value] = quantile_entries(edges, np.array([0.0, 1.0]), np.array([0.0, 1.0]), np.array([0.0, 1.0]), True)
            continue
        f = (cum * mask) @ joint / share
        grads = (cum - f[:, None]) * mask / share  # each ratio's gradient: its delta-method interval is g's
        ident = bool(estimate.identified(np.vstack([mask, cum * mask])).all())
        _, g_low, g_high = estimate.linear(grads)
        half = (g_high - g_low) / 2 if ident else np.full(len(f), np.nan)
        full = np.r_[0.0, f, 1.0]
        low = np.r_[0.0, np.clip(np.nan_to_num(f - half, nan=0.0), 0.0, 1.0), 1.0]
        high = np.r_[0.0, np.clip(np.nan_to_num(f + half, nan=1.0), 0.0, 1.0), 1.0]
        entries = quantile_entries(edges, full, low, high, ident)
        if not ident:  # no interval: the inverse of [0, 1] says nothing
            entries = {p: {**e, "ci95_low": None, "ci95_high": None} for p, e in entries.items()}
        out[value] = entries
    return out
