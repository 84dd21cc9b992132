"""What a design request asks for: :class:`DesignRequest` (its fields declared once, with their kinds and
help), and the checks of its solver fields; the rules over the fields are :mod:`.request`."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from rldp.shared.collection import DEFAULT_WINDOW
from rldp.shared.notions import DEFAULT_NOTION, DESIGN_NOTIONS
from rldp.shared.numeric import NumericSpec
from rldp.shared.provenance import DEFAULT_BETA as PROVENANCE_DEFAULT_BETA

from .errors import DesignError

__all__ = [
    "SOLVERS",
    "NOTIONS",
    "DEFAULT_BETA",
    "DEFAULT_ORDER",
    "DEFAULT_TIME_BUDGET",
    "SOLVER_OPTIONS",
    "DesignRequest",
    "ValidatedRequest",
    "LOCAL_FIELDS",
    "seal_request",
    "DesignOptions",
    "RequestField",
    "request_fields",
    "check_solver_options",
    "warm_rows",
]

SOLVERS = ("auto", "exact", "cg")
#: The notions a design can claim (the designable rows of :data:`rldp.shared.notions.NOTIONS`).
NOTIONS = DESIGN_NOTIONS
DEFAULT_BETA = PROVENANCE_DEFAULT_BETA  # the confidence set's significance level when neither beta nor radius is given
DEFAULT_ORDER = 2.0  # Rényi order α of the uncertainty set
DEFAULT_TIME_BUDGET = 60.0  # seconds, for the column-generation solver
# The keyword options of design_matrix(); they apply to the methods that take a solver.
SOLVER_OPTIONS = ("solver", "time_budget", "progress", "warm_start")


def _field(default: Any, kind: str, help: str, *, wire: bool = True, flag: bool = True, json: bool = True) -> Any:
    """A request field: ``kind`` names its validator (:mod:`.request`), ``help`` is shown by the CLI and
    the HTTP schema; ``wire`` fields cross to the design process, ``json`` ones are read from the
    service's JSON body, ``flag`` ones are ``rldp design`` flags generated from this declaration."""
    return field(default=default, metadata={"kind": kind, "help": help, "wire": wire, "flag": flag, "json": json})


@dataclass(frozen=True)
class DesignRequest:
    """Everything a design asks for besides the data (the alphabet and P̂): one typed request.

    The CLI builds it from its flags, the service from JSON (:func:`.request.request_from_json`),
    the design process receives :meth:`to_wire`, and :func:`rldp.aggregator.design.design_document`
    takes it after :func:`.request.validate_request` has checked every field and every cross-field
    rule once. Designers receive it (as ``options``) with the uncertainty set already built.

    ``epsilon`` is the privacy level (nats). ``radius`` / ``beta`` / ``n`` / ``order`` describe the
    uncertainty set F = {P : D_α(P̂‖P) ≤ B} (B = ``radius`` if given, else the (1 − β)-confidence
    radius for ``n`` public records, [LZG24, eq. 9]). ``notion`` is the claim (the table
    :data:`rldp.shared.notions.NOTIONS`): ``"rldp"`` (default); ``"distp"`` with ``delta`` ∈ [0, 1);
    ``"alip"`` with ``epsilon_lower`` and ``epsilon_upper`` (``epsilon`` is then their max).
    ``target`` and ``cost`` apply to method ``coupling`` (:mod:`.coupling`). ``latent`` is True
    when S is not an input of the mechanism; ``released_numeric`` gives each released attribute's name and
    numeric spec (None: categorical), for the designers over a numeric U. Both are set from the alphabet by
    :func:`rldp.aggregator.design.design_document`.
    """

    method: str | None = _field(None, "method", "the design method (README: notions × methods)", flag=False)
    notion: str = _field(DEFAULT_NOTION, "notion", "the claim", flag=False)
    epsilon: float | None = _field(None, "epsilon", "privacy level ε (nats); every notion but alip needs it")
    epsilon_lower: float | None = _field(
        None, "epsilon", "--notion alip: the min-lift budget ε_l (nats; e^-ε_l ≤ P(y|s)/P(y))"
    )
    epsilon_upper: float | None = _field(
        None, "epsilon", "--notion alip: the max-lift budget ε_u (nats; P(y|s)/P(y) ≤ e^ε_u)"
    )
    delta: float | None = _field(None, "delta", "--notion distp: the δ of the (ε, δ) claim, in [0, 1) (default 0)")
    radius: float | None = _field(None, "radius", "radius B of the Rényi ball, in nats (instead of --beta)", flag=False)
    # None: DEFAULT_BETA unless a radius is given (validate_request applies it).
    beta: float | None = _field(None, "beta", "significance level of the confidence set (default 0.05)", flag=False)
    # n comes from the public data itself, never from a caller's word (a larger n is a smaller F).
    n: int | None = _field(None, "count", "number of public records behind P̂", flag=False, json=False)
    order: float = _field(DEFAULT_ORDER, "order", "Rényi order α (default 2)")
    solver: str = _field(
        "auto",
        "solver",
        "polyopt, polyopt-paper, nr and optimal: 'exact' vertex enumeration (small alphabets only), "
        "'cg' column generation (any size, anytime), 'auto' (default) exact where it is fast",
    )
    time_budget: float = _field(
        DEFAULT_TIME_BUDGET,
        "seconds",
        "seconds for the design (held within about 10 %); the best certified mechanism found is "
        "returned (default 60). Ctrl-C writes the best one found so far and exits 130",
    )
    target: Any = _field(None, "target", "method coupling: the common target over U", flag=False)
    cost: Any = _field(None, "cost", "method coupling: the transport cost over U", flag=False)
    # Windows by default (rldp.shared.collection.DEFAULT_WINDOW); None (asked as "none") for no windows.
    window: str | None = _field(
        DEFAULT_WINDOW,
        "window",
        f"collection window (ISO 8601, e.g. P1D, PT6H; default {DEFAULT_WINDOW}, 'none' for no windows): clients "
        "send at most one report per record owner and window, and the service counts and estimates per window",
        flag=False,
    )
    per_report_epsilon: float | None = _field(
        None, "epsilon", "re-randomise the memoised output afresh on every report: one reveals at most E1 < epsilon"
    )
    task: str = _field(
        "joint",
        "task",
        "the statistic the design serves: joint (P(S, U), maximise I(X;Y); default), distribution (U's "
        "distribution, least W1) or mean (U's mean); for distribution and mean the utility-optimising methods "
        "keep the design with the least error for the task, theirs or randomised response on U alone",
    )
    # None: DEFAULT_PLANNED_REPORTS of ..orchestration.bins (10,000); rldp design's --planned-reports, and a
    # service design job's (which runs the rule in its own process: ..orchestration.table_bins).
    planned_reports: int | None = _field(
        None,
        "count",
        "the number of reports you plan to collect (an integer >= 1; default 10,000): with task distribution or "
        "mean and U's bins not given (--bins, --edges; numeric's bins, edges), the number of bins of U is the one "
        "with the least predicted error at that many reports",
    )
    latent: bool = _field(False, "bool", "S is not an input of the mechanism (the privacy funnel)", flag=False)
    # Set by design_document from the alphabet (never asked for): (name, numeric spec or None) per released attribute.
    released_numeric: tuple[tuple[str, NumericSpec | None], ...] = _field(
        (), "local", "the released attributes' numeric specs", wire=False, flag=False, json=False
    )
    progress: Callable[[dict[str, Any]], None] | None = _field(
        None, "local", "progress callback", wire=False, flag=False, json=False
    )
    warm_start: Any = _field(None, "local", "earlier matrices seeding the search", wire=False, flag=False, json=False)
    extra: dict[str, Any] | None = _field(
        None, "local", "fields added to the document", wire=False, flag=False, json=False
    )

    @property
    def level(self) -> float:
        """ε as a number: what designers read (a validated request always has one)."""
        if self.epsilon is None:
            raise DesignError("the design request has no epsilon (validate_request fills it in)")
        return float(self.epsilon)

    def check_solver(self) -> None:
        """Raise DesignError naming the first bad solver field."""
        check_solver_options({"solver": self.solver, "time_budget": self.time_budget, "progress": self.progress})

    def to_wire(self) -> dict[str, Any]:
        """The fields that cross the service's JSON and a design process (msgpack- and JSON-safe)."""
        out = {f.name: getattr(self, f.name) for f in fields(DesignRequest) if f.metadata["wire"]}
        if out["radius"] is not None and math.isinf(out["radius"]):
            out["radius"] = "inf"
        return out

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> DesignRequest:
        """The request :meth:`to_wire` wrote (unknown keys refused: the two ends are one version)."""
        known = {f.name for f in fields(DesignRequest) if f.metadata["wire"]}
        unknown = sorted(set(data) - known)
        if unknown:
            raise DesignError(f"unknown design request field(s) {', '.join(unknown)}")
        values = dict(data)
        if values.get("radius") in ("inf", "Infinity"):
            values["radius"] = math.inf
        return cls(**values)


#: The fields that change how a design runs or what it carries, never what it claims: no rule of
#: :func:`.request.validate_request` reads them, so a validated request may change them (:meth:`ValidatedRequest.local`).
LOCAL_FIELDS = frozenset({"progress", "warm_start", "extra", "released_numeric"})


@dataclass(frozen=True)
class ValidatedRequest(DesignRequest):
    """A :class:`DesignRequest` that :func:`.request.validate_request` has checked, field by field and rule by
    rule: the type the design functions require, so mypy proves every caller validated and nothing is
    validated twice (diffprivlib/scikit-learn: parameters are checked once, at the boundary).

    Only :func:`.request.validate_request` makes one (and a design process, from the payload its own
    server validated: :func:`.request.validated_from_wire`). :meth:`local` changes the fields no rule reads
    and keeps the request validated; any other change — ``dataclasses.replace`` too — makes a request
    that is no longer ``validated`` (:attr:`validated` is False), which the design functions validate again.

    ``released_size``: the |U| the coupling's target and cost were checked against (None: not yet known;
    checked once the alphabet is, by :func:`.request.bind_alphabet`)."""

    released_size: int | None = _field(None, "local", "|U| checked against", wire=False, flag=False, json=False)
    # Set by validate_request / local() only: a dataclasses.replace() makes a fresh, unsealed instance.
    _sealed: bool = field(default=False, init=False, repr=False, compare=False)

    @property
    def validated(self) -> bool:
        """Whether the rules were checked on exactly these field values (False after a ``replace``)."""
        return self._sealed

    def local(self, **changes: Any) -> ValidatedRequest:
        """This request with some of :data:`LOCAL_FIELDS` changed (still validated); DesignError for any other."""
        other = sorted(set(changes) - LOCAL_FIELDS)
        if other:
            raise DesignError(f"{', '.join(other)}: a validated request changes only {', '.join(sorted(LOCAL_FIELDS))}")
        return _sealed(replace(self, **changes)) if self._sealed else replace(self, **changes)


def _sealed(request: ValidatedRequest) -> ValidatedRequest:
    object.__setattr__(request, "_sealed", True)
    return request


def seal_request(request: DesignRequest, released_size: int | None) -> ValidatedRequest:
    """``request`` as a :class:`ValidatedRequest`: for :mod:`.request` alone, once its rules have passed."""
    values = {f.name: getattr(request, f.name) for f in fields(DesignRequest)}
    return _sealed(ValidatedRequest(**values, released_size=released_size))


#: The designers' view of a request (the same object; the name designers have always used).
DesignOptions = DesignRequest


@dataclass(frozen=True)
class RequestField:
    """A request field as the CLI and the HTTP schema see it."""

    name: str
    kind: str
    help: str
    default: Any
    wire: bool
    flag: bool
    json: bool


def request_fields() -> tuple[RequestField, ...]:
    """Every field of :class:`DesignRequest`, in declaration order."""
    return tuple(RequestField(name=f.name, default=f.default, **f.metadata) for f in fields(DesignRequest))


def check_solver_options(options: dict[str, Any]) -> None:
    """Reject unknown keyword options and bad values of the known ones (DesignError)."""
    unknown = sorted(set(options) - set(SOLVER_OPTIONS))
    if unknown:
        raise DesignError(f"unknown design option(s) {', '.join(unknown)}; expected: {', '.join(SOLVER_OPTIONS)}")
    solver = options.get("solver", "auto")
    if solver not in SOLVERS:
        raise DesignError(f"solver must be one of {', '.join(SOLVERS)}; got {solver!r}")
    budget = options.get("time_budget", DEFAULT_TIME_BUDGET)
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not math.isfinite(budget) or budget <= 0:
        raise DesignError(f"time_budget must be a finite number of seconds > 0; got {budget!r}")
    progress = options.get("progress")
    if progress is not None and not callable(progress):
        raise DesignError("progress must be a callable receiving a dict, or None")


def warm_rows(warm: Any, size: int) -> list[np.ndarray]:
    """The ``warm_start`` option as row blocks: matrices (|Y|, |X|) of earlier designs on the
    same data (e.g. at a smaller ε: Γ_ε ⊆ Γ_ε' for ε ≤ ε', so their rows are certified here
    and the result is never below them). Rows outside the cone are mixed into it, never trusted."""
    if warm is None:
        return []
    mats = [warm] if isinstance(warm, np.ndarray) else list(warm)
    out = []
    for m in mats:
        arr = np.asarray(m, dtype=float)
        if arr.ndim not in (1, 2) or not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise DesignError("warm_start must be non-negative, finite matrices (|Y|, |X|) of earlier designs")
        if arr.shape[-1] != size:
            raise DesignError(
                f"warm_start matrices must have |X| = {size} columns (one per symbol); got shape {arr.shape}"
            )
        out.append(np.atleast_2d(arr))
    return out
