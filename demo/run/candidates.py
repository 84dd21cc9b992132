"""The aggregator's side of the demo: design every candidate mechanism, choose one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rldp.aggregator.design import METHODS, NOTION_METHODS, design
from rldp.shared.document import mechanism_matrix
from rldp.shared.errors import ValidationError
from rldp.shared.records import Alphabet

from .config import CERTIFIED, DemoConfig
from .console import bar

__all__ = ["candidates", "design_candidates", "choose_method"]

# Singular values below this count as zero when asking whether P_X is identifiable from Q.
RANK_TOL = 1e-9


def _identifiable(q: np.ndarray, size: int) -> bool:
    """Whether Q has full column rank, i.e. P_X can be estimated from the reports."""
    return int(np.linalg.matrix_rank(q, tol=RANK_TOL)) == size


def candidates(notion: str = "rldp", latent: bool = False) -> list[str]:
    """The certified methods the aggregator offers for ``notion`` (beyond 12 symbols PolyOpt is
    solved by column generation; a method infeasible for the alphabet is skipped when designed).
    For the funnel notions, every method the product registers for the notion (and, with a
    latent S, that can design for one)."""
    if notion == "rldp":
        return [m for m in CERTIFIED if m in METHODS]
    if notion not in NOTION_METHODS:
        raise ValidationError(
            f"--notion {notion} has no designers in this build of rldp; available: {', '.join(NOTION_METHODS)}"
        )
    designers = NOTION_METHODS[notion]
    return [m for m, d in designers.items() if not latent or d.supports_latent]


def design_candidates(
    cfg: DemoConfig, alphabet: Alphabet, p_hat: np.ndarray, n: int, epsilons: Sequence[float]
) -> tuple[list[dict[str, Any]], dict[str, dict]]:
    """Design every candidate method at every ε; returns (rows for the curves, documents at cfg.epsilon)."""
    methods = candidates(cfg.notion, cfg.latent) if cfg.method == "auto" else sorted({cfg.method, "grr"})
    certified = CERTIFIED if cfg.notion == "rldp" else methods
    grid = sorted(set(epsilons) | {cfg.epsilon})
    rows, docs = [], {}
    with bar(cfg, len(methods) * len(grid), "design") as progress:
        for method in methods:
            for eps in grid:
                if eps != cfg.epsilon and method not in certified:
                    progress.update()
                    continue
                try:
                    doc = design(
                        method,
                        alphabet=alphabet,
                        public_distribution=p_hat,
                        epsilon=eps,
                        n=n,
                        beta=cfg.beta,
                        notion=cfg.notion,
                        time_budget=cfg.time_budget,
                    )
                except Exception as exc:
                    progress.write(f"  {method} at ε={eps:g} skipped: {exc}")
                    progress.update()
                    continue
                q = mechanism_matrix(doc)
                rows.append(
                    {
                        "method": method,
                        "epsilon": eps,
                        "nmi": doc["utility"]["nmi"],
                        "identifiable": _identifiable(q, alphabet.size),
                        "outputs": q.shape[0],
                    }
                )
                if eps == cfg.epsilon:
                    docs[method] = doc
                progress.set_postfix_str(f"{method} ε={eps:g} NMI={doc['utility']['nmi']:.3f}")
                progress.update()
    return rows, docs


def choose_method(cfg: DemoConfig, docs: dict[str, dict], alphabet: Alphabet) -> str:
    """The requested method, or the certified one with the highest NMI among those whose
    matrix has full column rank (P_X must be identifiable to be estimated)."""
    if cfg.method != "auto":
        if cfg.method not in docs:
            raise ValidationError(f"method {cfg.method!r} could not be designed for this alphabet")
        return cfg.method
    ranked = sorted(docs, key=lambda m: docs[m]["utility"]["nmi"], reverse=True)
    for method in ranked:
        if _identifiable(mechanism_matrix(docs[method]), alphabet.size):
            return method
    return ranked[0]
