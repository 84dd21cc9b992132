"""Choosing: the method ``auto`` (every certified method for the notion, the best kept) and the warning
for an ε so large that any mechanism may release the data nearly as it is.

The best: for the joint task (the default), the highest NMI among the designs whose reports identify P_X;
for a task on U (``DesignRequest.task``: ``distribution`` or ``mean``), the least error for that task
(``parameters.task``: the expected error per report at P̂, in U's units, of the design each method kept —
often ``rr-released``), the NMI breaking ties; a design whose task statistic is not identifiable from its
reports is chosen only when none is.

``rldp design --method auto`` and the demo both choose through :func:`auto_methods` and
:func:`best_method`; :func:`design_auto` is the whole choice for one ε.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from rldp.shared.document import mechanism_matrix
from rldp.shared.records import Alphabet

from ..primitives.errors import DesignError
from ..primitives.options import DesignRequest
from .build import design_document
from .registry import NUMERIC_METHODS, methods_for

__all__ = [
    "AUTO",
    "RANK_TOL",
    "RELEASE_SHARE",
    "auto_methods",
    "best_method",
    "design_auto",
    "identifiable",
    "releases_the_data",
    "task_error_of",
]

#: The method name that asks for the choice.
AUTO = "auto"
#: Singular values below this count as zero when asking whether P_X is identifiable from Q.
RANK_TOL = 1e-9
#: Share of the reports that carry the true record from which a mechanism "releases the data nearly as it is".
RELEASE_SHARE = 0.99


def auto_methods(notion: str = "rldp", latent: bool = False) -> list[str]:
    """The certified methods for ``notion`` (robust: their claim holds over the whole uncertainty set, so
    not ``nr``), in the order they are listed to users; with a latent S, those that design for one. Not the
    LDP baselines for a numeric U (:data:`.registry.NUMERIC_METHODS`: baselines to compare with, ε-LDP on U)."""
    return [
        m
        for m, d in methods_for(notion).items()
        if d.robust and (d.supports_latent or not latent) and m not in NUMERIC_METHODS
    ]


def identifiable(q: np.ndarray) -> bool:
    """Whether Q has full column rank, i.e. P_X can be estimated from the reports."""
    return bool(int(np.linalg.matrix_rank(q, tol=RANK_TOL)) == q.shape[1])


def task_error_of(doc: Mapping[str, Any]) -> float | None:
    """A document's error for the task it was designed for (``parameters.task``: the per-report error of the
    design it kept, in U's units); None for the joint task, or when its statistic is not identifiable."""
    block = (doc.get("parameters") or {}).get("task")
    if not isinstance(block, Mapping) or not isinstance(block.get("per_report_error"), Mapping):
        return None
    error = block["per_report_error"].get(block.get("chosen"))
    return float(error) if isinstance(error, (int, float)) and math.isfinite(error) else None


def best_method(docs: Mapping[str, dict[str, Any]]) -> str:
    """The method of the document with the least task error (:func:`task_error_of`) when they were designed
    for a task on U and one has a finite error, ties to the higher NMI; else the highest NMI among those
    whose matrix has full column rank (P_X must be identifiable to be estimated), else the highest NMI."""
    tasked = {m: e for m, d in docs.items() if (e := task_error_of(d)) is not None}
    if tasked:
        return min(tasked, key=lambda m: (tasked[m], -docs[m]["utility"]["nmi"]))
    ranked = sorted(docs, key=lambda m: docs[m]["utility"]["nmi"], reverse=True)
    return next((m for m in ranked if identifiable(mechanism_matrix(docs[m]))), ranked[0])


def design_auto(
    request: DesignRequest,
    *,
    alphabet: Alphabet,
    public_distribution: Any,
    provenance: Mapping[str, Any] | None = None,
    skipped: Callable[[str, Exception], None] | None = None,
) -> tuple[dict[str, Any], dict[str, dict[str, Any]], bool]:
    """Design every method of :func:`auto_methods` for ``request`` (its method is replaced) and keep the
    best (:func:`best_method`): (that document, every document by method, whether Ctrl-C cut the choice
    short). A method that cannot design for this alphabet or claim is skipped (``skipped(method, error)``
    is told); DesignError if none can. Ctrl-C stops the choice at the documents designed so far (a
    solver stopped by it keeps its best certified design, see :mod:`.solvers.cg`); KeyboardInterrupt if
    there is none yet."""
    docs: dict[str, dict[str, Any]] = {}
    reasons = []
    interrupted = False
    for method in auto_methods(str(request.notion), alphabet.latent):
        try:
            docs[method] = design_document(  # validated once per method (the request's own: as it is)
                request if method == request.method else replace(request, method=method),
                alphabet=alphabet,
                public_distribution=public_distribution,
                provenance=provenance,
            )
        except DesignError as exc:
            reasons.append(f"{method}: {exc}")
            if skipped is not None:
                skipped(method, exc)
        except KeyboardInterrupt:
            if not docs:
                raise
            interrupted = True
        if interrupted or docs.get(method, {}).get("parameters", {}).get("status") == "interrupted":
            interrupted = True
            break
    if not docs:
        raise DesignError(f"method auto: no certified method designs for this request ({'; '.join(reasons)})")
    return docs[best_method(docs)], docs, interrupted


def releases_the_data(epsilon: float, inputs: int) -> str | None:
    """A warning when ε lets even GRR — private as plain LDP on all of X, the strongest guarantee of
    every notion rldp designs for — report the true record with probability ≥ RELEASE_SHARE:
    e^ε / (e^ε + K − 1) ≥ 0.99 ⟺ ε ≥ ln(99 (K − 1)) for K inputs ([LZG24, eq. 56]). Any mechanism
    at that claim may release the data nearly as it is; None below it."""
    if inputs < 2:
        return None
    threshold = math.log(RELEASE_SHARE / (1 - RELEASE_SHARE) * (inputs - 1))
    if epsilon < threshold:
        return None
    return (
        f"epsilon {epsilon:g} lets even GRR report the true record {100 * RELEASE_SHARE:g} % of the time "
        f"(from ln({RELEASE_SHARE / (1 - RELEASE_SHARE):g}·(|X| − 1)) = {threshold:.2f} nats for |X| = {inputs:,}): "
        "at this claim the mechanism releases the data nearly as it is"
    )
