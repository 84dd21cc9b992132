"""The privacy block of a mechanism document: which fields each notion takes, and their ranges.

Raises :class:`~rldp.shared.errors.DocumentError` naming the field and what is allowed. The blocks:

* ``rldp``: ``{"notion", "epsilon", "uncertainty"}`` [LZG24, Def 1];
* ``ldp``: ``{"notion", "epsilon"[, "uncertainty"]}`` — without an uncertainty set ε-LDP w.r.t. X,
  with one ε-LDP w.r.t. S over F [LTS20, Def 1];
* ``lip`` and ``srlip``: ``{"notion", "epsilon", "uncertainty"}`` [LTS20, Defs 2–3];
* ``alip``: ``{"notion", "epsilon", "epsilon_lower", "epsilon_upper", "uncertainty"}`` with
  ``epsilon = max(epsilon_lower, epsilon_upper)`` [ZDS23, Def 3];
* ``distp``: ``{"notion", "epsilon", "delta", "uncertainty"}`` [KM19, Def 3].

The uncertainty set is the Rényi ball F around P̂ [LZG24, eq 10]; ``radius: 0`` states a
guarantee at P̂ only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import DocumentError
from ..notions import NOTIONS
from ..parameters import check_delta, check_epsilon

__all__ = ["check_box_form", "check_privacy", "number", "NOTION_FIELDS"]

#: The fields each notion's privacy block may have (notions without a row are not restricted).
NOTION_FIELDS: dict[str, tuple[str, ...]] = {n.name: n.block for n in NOTIONS.values() if n.block is not None}


def _document_error(message: str, *, parameter: str) -> DocumentError:
    return DocumentError(message)


def number(value: Any, field: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise DocumentError(f"{field} must be a number, got {value!r}")
    return float(value)


def _positive(privacy: Mapping[str, Any], key: str, kind: str) -> float:
    if key not in privacy:
        raise DocumentError(f"privacy is missing required field {key!r} for notion {kind!r}")
    return check_epsilon(number(privacy[key], f"privacy.{key}"), f"privacy.{key}", error=_document_error)


def check_privacy(privacy: Any) -> None:
    """The privacy block: notion and ε always; per notion its fields (see the module docstring).

    ε > 0, except under ``distp`` where ε ≥ 0: (0, δ)-DistP bounds the total variation between the
    output distributions by δ [KM19, Def 3], and a coupling mechanism is (0, 0)-DistP at P̂.
    """
    if not isinstance(privacy, Mapping):
        raise DocumentError(f"privacy must be an object, got {type(privacy).__name__}")
    for key in ("notion", "epsilon"):
        if key not in privacy:
            raise DocumentError(f"privacy is missing required field {key!r}")
    kind = privacy["notion"]
    if not isinstance(kind, str) or not kind:
        raise DocumentError(f"privacy.notion must be a non-empty string such as 'rldp', got {kind!r}")
    entry = NOTIONS.get(kind)
    eps = check_epsilon(
        number(privacy["epsilon"], "privacy.epsilon"),
        "privacy.epsilon",
        zero=entry is not None and entry.zero_epsilon,
        error=_document_error,
    )
    if "delta" in privacy:
        if entry is not None and "delta" not in entry.claim:
            owners = ", ".join(repr(n.name) for n in NOTIONS.values() if n.judged_by_delta)
            raise DocumentError(f"privacy.delta is a parameter of notion {owners}; notion {kind!r} has no delta")
        check_delta(number(privacy["delta"], "privacy.delta"), "privacy.delta", error=_document_error)
    allowed = NOTION_FIELDS.get(kind)
    if allowed is not None:
        unknown = [key for key in privacy if key not in allowed]
        if unknown:
            raise DocumentError(
                f"privacy has unknown field {unknown[0]!r} for notion {kind!r}; its fields are {', '.join(allowed)}"
            )
    if entry is not None:  # what the notion's own block must satisfy (alip: ε = max(ε_l, ε_u))
        entry.check_block(privacy, eps, lambda key: _positive(privacy, key, kind))
    if entry is not None and (entry.uncertainty == "required" or "uncertainty" in privacy):
        _check_uncertainty(privacy.get("uncertainty"), kind)


def _check_uncertainty(unc: Any, kind: str) -> None:
    """``privacy.uncertainty``: the Rényi ball F around P̂ [LZG24, eq 10] (radius null = unbounded)."""
    if not isinstance(unc, Mapping):
        raise DocumentError(f"privacy.uncertainty (an object) is required for notion {kind!r}")
    if unc.get("divergence") != "renyi":
        raise DocumentError(f"privacy.uncertainty.divergence must be 'renyi', got {unc.get('divergence')!r}")
    if "order" not in unc:
        raise DocumentError("privacy.uncertainty is missing required field 'order'")
    order = number(unc["order"], "privacy.uncertainty.order")
    if not (math.isfinite(order) and order > 0):
        raise DocumentError(f"privacy.uncertainty.order must be a finite number > 0, got {unc['order']!r}")
    if "radius" not in unc:
        raise DocumentError("privacy.uncertainty is missing required field 'radius' (null means unbounded)")
    if unc["radius"] is not None:
        radius = number(unc["radius"], "privacy.uncertainty.radius")
        if not (math.isfinite(radius) and radius >= 0):
            raise DocumentError(
                f"privacy.uncertainty.radius must be a finite number ≥ 0 or null, got {unc['radius']!r}"
            )
    n = unc.get("n")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise DocumentError(f"privacy.uncertainty.n must be a positive integer or absent, got {n!r}")
    beta = unc.get("beta")
    if beta is not None:
        b = number(beta, "privacy.uncertainty.beta")
        if not 0 < b < 1:
            raise DocumentError(f"privacy.uncertainty.beta must be in (0, 1), got {beta!r}")
    if unc.get("box") is not None:
        check_box_form(unc["box"])


def check_box_form(box: Any) -> Mapping[str, Any]:
    """``privacy.uncertainty.box`` as an object with exactly ``lower`` and ``upper`` (its arrays are checked
    against P̂'s shape by :func:`rldp.shared.box_bounds.check_box`); DocumentError otherwise."""
    if not isinstance(box, Mapping) or set(box) != {"lower", "upper"}:
        raise DocumentError(
            "privacy.uncertainty.box must be an object with exactly the fields 'lower' and 'upper' "
            f"(|S| × |U| arrays of numbers), got {_shape_of(box)}"
        )
    return box


def _shape_of(box: Any) -> str:
    # What the box was, in words both SDKs write alike (a repr is neither bounded nor the same in JavaScript).
    if not isinstance(box, Mapping):
        return f"a value of type {type(box).__name__}"
    if not box:
        return "an empty object"
    names = sorted(box)
    shown = ", ".join(repr(k) for k in names[:6]) + (", ..." if len(names) > 6 else "")
    return f"an object with the fields {shown}"
