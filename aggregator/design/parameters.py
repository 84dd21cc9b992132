"""The boundary check of a design request's parameters (:func:`validate_parameters`)."""

from __future__ import annotations

import math
from typing import Any

from .coupling import TARGET_RULES
from .errors import DesignError
from .options import NOTIONS
from .registry import ALL_METHODS, NOTION_METHODS, TRANSPORT_METHODS, methods_for
from .transport import COST_RULES, check_distribution, cost_matrix

__all__ = ["check_bounds", "check_transport", "validate_parameters"]


def validate_parameters(
    method: str,
    epsilon: float,
    *,
    radius: float | None = None,
    beta: float | None = None,
    n: int | None = None,
    order: float = 2.0,
    notion: str = "rldp",
    delta: float | None = None,
    epsilon_lower: float | None = None,
    epsilon_upper: float | None = None,
) -> None:
    """Check design parameters at the boundary; raise DesignError naming the bad one."""
    if notion not in NOTIONS:
        raise DesignError(f"notion must be one of {', '.join(NOTIONS)}; got {notion!r}")
    methods = methods_for(notion)
    if method not in methods:
        if method not in ALL_METHODS:
            raise DesignError(f"unknown method {method!r}; choose one of: {', '.join(methods)} (notion {notion})")
        others = [name for name, designers in NOTION_METHODS.items() if method in designers]
        raise DesignError(
            f"method {method!r} does not design for notion {notion!r} (it does for {', '.join(others)}); "
            f"methods for {notion}: {', '.join(methods)}"
        )
    if delta is not None:
        if notion != "distp":
            raise DesignError(f"delta applies to notion distp only; notion {notion} has no delta")
        if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 <= delta < 1:
            raise DesignError(f"delta must be a number in [0, 1); got {delta!r}")
    check_bounds(notion, epsilon, epsilon_lower, epsilon_upper)
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


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def check_bounds(notion: str, epsilon: Any, lower: Any, upper: Any) -> None:
    """alip needs ε_l and ε_u (> 0; ε, if given, is their max); the other notions take neither."""
    if notion != "alip":
        if lower is not None or upper is not None:
            raise DesignError(f"epsilon_lower/epsilon_upper apply to notion alip only; notion {notion} takes epsilon")
        return
    for name, value in (("epsilon_lower", lower), ("epsilon_upper", upper)):
        if value is None:
            raise DesignError(f"notion alip needs {name} (ε_l and ε_u, finite numbers > 0, nats)")
        if not _positive(value):
            raise DesignError(f"{name} must be a finite number > 0 (nats); got {value!r}")
    if epsilon is not None and _positive(epsilon) and abs(float(epsilon) - max(lower, upper)) > 1e-12:
        raise DesignError(
            f"epsilon for notion alip is max(epsilon_lower, epsilon_upper) = {max(lower, upper)}; got {epsilon!r}"
        )


def check_transport(method: str, target: Any, cost: Any, released_size: int) -> None:
    """``target`` and ``cost`` of the coupling mechanism, checked against |U| = ``released_size`` before a
    design starts: a rule name (:data:`.coupling.TARGET_RULES`, :data:`.transport.COST_RULES`), |U|
    probabilities, or a |U|×|U| matrix of finite non-negative costs. DesignError naming the field."""
    if method not in TRANSPORT_METHODS:
        if target is not None or cost is not None:
            field = "target" if target is not None else "cost"
            raise DesignError(f"{field} applies to method {', '.join(TRANSPORT_METHODS)} only, not to {method!r}")
        return
    if isinstance(target, str):
        if target not in TARGET_RULES:
            raise DesignError(
                f"target must be one of {', '.join(TARGET_RULES)} or {released_size} probabilities; got {target!r}"
            )
    elif target is not None:
        check_distribution(target, released_size, "target")
    if isinstance(cost, str) and cost not in COST_RULES:
        raise DesignError(f"cost must be one of {', '.join(COST_RULES)} or a {released_size}×{released_size} matrix")
    if cost is not None:
        cost_matrix(cost, released_size)
