"""The aggregator's side of the demo: design every candidate mechanism, choose one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rldp.aggregator.design import NOTION_METHODS, auto_methods, best_method, design, identifiable
from rldp.shared.document import mechanism_matrix
from rldp.shared.errors import ValidationError
from rldp.shared.records import Alphabet

from .config import DemoConfig
from .console import bar

__all__ = ["candidates", "design_candidates", "choose_method"]


def candidates(notion: str = "rldp", latent: bool = False) -> list[str]:
    """The certified methods the aggregator offers for ``notion`` (``rldp design --method auto``'s:
    :func:`rldp.aggregator.design.auto_methods`); a method infeasible for the alphabet is skipped when designed."""
    if notion not in NOTION_METHODS:
        raise ValidationError(
            f"--notion {notion} has no designers in this build of rldp; available: {', '.join(NOTION_METHODS)}"
        )
    return auto_methods(notion, latent)


def design_candidates(
    cfg: DemoConfig, alphabet: Alphabet, p_hat: np.ndarray, n: int, epsilons: Sequence[float]
) -> tuple[list[dict[str, Any]], dict[str, dict]]:
    """Design every candidate method at every ε; returns (rows for the curves, documents at cfg.epsilon)."""
    methods = candidates(cfg.notion, cfg.latent) if cfg.method == "auto" else sorted({cfg.method, "grr"})
    certified = auto_methods(cfg.notion, cfg.latent)
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
                        "identifiable": identifiable(q),
                        "outputs": q.shape[0],
                    }
                )
                if eps == cfg.epsilon:
                    docs[method] = doc
                progress.set_postfix_str(f"{method} ε={eps:g} NMI={doc['utility']['nmi']:.3f}")
                progress.update()
    return rows, docs


def choose_method(cfg: DemoConfig, docs: dict[str, dict], alphabet: Alphabet) -> str:
    """The requested method, or the one ``rldp design --method auto`` keeps
    (:func:`rldp.aggregator.design.best_method`: the highest NMI with P_X identifiable)."""
    if cfg.method != "auto":
        if cfg.method not in docs:
            raise ValidationError(f"method {cfg.method!r} could not be designed for this alphabet")
        return cfg.method
    return best_method(docs)
