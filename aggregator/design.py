"""Mechanism design: one entry point for every method, returning an audited document.

    doc = design("polyopt", alphabet=..., public_distribution=P̂, epsilon=1.0, n=32561, beta=0.05)

Methods (see :data:`METHODS`): ``grr`` (GRR on X, the LDP baseline), ``srr`` (seed 000
Def. 4), ``ir`` / ``cr`` (the papers' theorems), ``ir-calibrated`` / ``cr-calibrated``
(the same families tuned to the exact audit), ``polyopt`` (Theorem 3 without the
s₁ = s₂ rows), ``polyopt-paper`` (Definition 3 exactly as printed), ``nr`` (the
non-robust optimum of seed 000 Sec. 8, i.e. PolyOpt with B = 0).

Every document carries its audit; everything except ``nr`` is audited against the
requested uncertainty set and refused (DesignError) if the audit fails. ``nr`` claims
only (ε, {P̂})-RLDP (radius 0), which its audit checks; the leakage it would have over
the requested set is recorded as ``audit.epsilon_requested_set``.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable

import numpy as np

from rldp import __version__
from rldp.shared.audit import audit_rldp
from rldp.shared.document import build_document
from rldp.shared.records import Alphabet
from rldp.shared.uncertainty import UncertaintySet
from rldp.shared.utility import mutual_information, normalized_mutual_information

from . import calibrate
from .mechanisms import grr_matrix, srr_matrix
from .polyopt import solve_polyopt

__all__ = ["METHODS", "DesignError", "design", "design_matrix", "validate_parameters"]


class DesignError(ValueError):
    """A design request was invalid, or its result failed the audit."""


def _polyopt(uset: UncertaintySet, eps: float, same_sensitive: bool) -> tuple[np.ndarray, dict]:
    res = solve_polyopt(uset.public_distribution, uset.lower_bounds(), eps * (1 - calibrate.DESIGN_MARGIN),
                        same_sensitive=same_sensitive)
    return res.matrix, {"vertices": int(len(res.vertices)), "solver": "exact"}


def _nr(uset: UncertaintySet, eps: float) -> tuple[np.ndarray, dict]:
    point = UncertaintySet(uset.public_distribution, 0.0, uset.order)
    return _polyopt(point, eps, same_sensitive=False)


METHODS: dict[str, Callable[[UncertaintySet, float], tuple[np.ndarray, dict]]] = {
    "grr": lambda u, e: (grr_matrix(u.public_distribution.size, e), {}),
    "srr": lambda u, e: (srr_matrix(u.n_sensitive, u.n_released, e), {}),
    "ir": calibrate.ir_theorem,
    "ir-calibrated": calibrate.ir_calibrated,
    "cr": calibrate.cr_theorem,
    "cr-calibrated": calibrate.cr_calibrated,
    "polyopt": lambda u, e: _polyopt(u, e, same_sensitive=False),
    "polyopt-paper": lambda u, e: _polyopt(u, e, same_sensitive=True),
    "nr": _nr,
}
# Methods whose guarantee is only w.r.t. the point estimate P̂.
NON_ROBUST = frozenset({"nr"})


def validate_parameters(method: str, epsilon: float, *, radius: float | None = None, beta: float | None = None,
                        n: int | None = None, order: float = 2.0) -> None:
    """Check design parameters at the boundary; raise DesignError naming the bad one."""
    if method not in METHODS:
        raise DesignError(f"unknown method {method!r}; choose one of: {', '.join(METHODS)}")
    if not isinstance(epsilon, (int, float)) or not math.isfinite(epsilon) or epsilon <= 0:
        raise DesignError(f"epsilon must be a finite number > 0 (nats); got {epsilon!r}")
    if not isinstance(order, (int, float)) or not math.isfinite(order) or order <= 0:
        raise DesignError(f"order (Rényi α) must be a finite number > 0; got {order!r}")
    if radius is not None and beta is not None:
        raise DesignError("give either radius or beta, not both")
    if radius is not None and (not isinstance(radius, (int, float)) or math.isnan(radius) or radius < 0):
        raise DesignError(f"radius must be ≥ 0 (nats; inf for no knowledge of P*); got {radius!r}")
    if beta is not None and (not isinstance(beta, (int, float)) or not 0 < beta < 1):
        raise DesignError(f"beta (significance level) must be in (0, 1); got {beta!r}")
    if radius is None and n is None:
        raise DesignError("n (number of public records) is needed to derive the radius from beta")
    if n is not None and (int(n) != n or n < 1):
        raise DesignError(f"n (number of public records) must be a positive integer; got {n!r}")


def design_matrix(method: str, uncertainty: UncertaintySet, epsilon: float) -> tuple[np.ndarray, dict]:
    """The raw designer: (matrix Q[y, x], parameters) for ``method`` at level ε (nats)."""
    validate_parameters(method, epsilon, radius=uncertainty.radius, order=uncertainty.order)
    q, params = METHODS[method](uncertainty, float(epsilon))
    keep = q.sum(axis=1) > 0  # drop outputs that never occur
    return q[keep], params


def design(method: str, *, alphabet: Alphabet, public_distribution: Any, epsilon: float,
           radius: float | None = None, beta: float | None = 0.05, n: int | None = None,
           order: float = 2.0, extra: dict | None = None) -> dict:
    """Design, audit and package a mechanism as a document (DESIGN.md).

    The uncertainty set is F = {P : D_α(P̂‖P) ≤ B} with B = ``radius`` if given, else the
    (1 − β)-confidence radius for ``n`` public records (seed 000, eq. 9).
    """
    if radius is not None:
        beta = None
    validate_parameters(method, epsilon, radius=radius, beta=beta, n=n, order=order)
    p_hat = np.asarray(public_distribution, dtype=float)
    if p_hat.shape != (alphabet.n_sensitive, alphabet.n_released):
        raise DesignError(f"public_distribution has shape {p_hat.shape}; the alphabet needs "
                          f"({alphabet.n_sensitive}, {alphabet.n_released})")
    if radius is None:
        uset = UncertaintySet.from_confidence(p_hat, int(n), float(beta), order)
    else:
        uset = UncertaintySet(p_hat, float(radius), order)

    start = time.perf_counter()
    q, params = design_matrix(method, uset, epsilon)
    seconds = time.perf_counter() - start

    uncertainty: dict[str, Any] = uset.describe()
    if n is not None:
        uncertainty["n"] = int(n)
    if beta is not None:
        uncertainty["beta"] = float(beta)
    audit: dict[str, Any]
    if method in NON_ROBUST:
        claimed = UncertaintySet(p_hat, 0.0, order)
        result = audit_rldp(q, claimed, epsilon)
        requested = audit_rldp(q, uset, epsilon)
        uncertainty = dict(claimed.describe())
        audit = dict(result.to_dict(), epsilon_requested_set=requested.to_dict()["epsilon"],
                     requested_radius=uset.describe()["radius"])
    else:
        result = audit_rldp(q, uset, epsilon)
        audit = result.to_dict()
    if not result.passed:
        raise DesignError(f"the {method} mechanism failed its audit: {'; '.join(result.reasons)}")

    info = mutual_information(q, p_hat)
    doc_extra = {
        "parameters": params,
        "audit": audit,
        "utility": {"mutual_information": info, "nmi": normalized_mutual_information(q, p_hat),
                    "distribution": "public"},
        "design": {"seconds": seconds, "software": f"rldp {__version__}"},
    }
    doc_extra.update(extra or {})
    privacy = {"notion": "rldp", "epsilon": float(epsilon), "uncertainty": uncertainty}
    return build_document(method=method, matrix=q, alphabet=alphabet, public_distribution=p_hat,
                          privacy=privacy, extra=doc_extra)
