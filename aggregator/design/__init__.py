"""Mechanism design: one entry point for every method, returning an audited document.

    from rldp.aggregator.design import design
    doc = design("polyopt", alphabet=..., public_distribution=P̂, epsilon=1.0, n=32561, beta=0.05)

The package, one concept per module:

* :mod:`.build` — :func:`design` / :func:`design_matrix` / :func:`validate_parameters`:
  design, audit, package as a document;
* :mod:`.registry` — the designers (one object per method, one call signature) and
  :data:`METHODS`, :data:`SOLVER_METHODS`, :data:`NON_ROBUST`, :data:`LATENT_METHODS`;
  :data:`NOTION_METHODS` / :func:`methods_for` (the methods of each notion, ``rldp`` and ``distp``);
* :mod:`.options` — :class:`DesignRequest` (= ``DesignOptions``, the designers' name for it), what a
  request asks for, its fields declared once; :mod:`.request` — :func:`validate_request`, its rules;
* :mod:`.families` — GRR, SRR, IR, CR matrices ([LZG24, Def 4-5], [LZG21, Protocol 2]);
* :mod:`.calibrate` — IR / CR parameters from the theorems or from the exact audit;
* :mod:`.cone` — the cone Γ of PolyOpt ([LZG24, Def 3]), for both solvers;
* :mod:`.exact` — exact PolyOpt by vertex enumeration ([LZG24, Thm 3]);
* :mod:`.cg` — PolyOpt and NR by column generation;
* :mod:`.polyopt` — the PolyOpt and NR designers (solver choice, polish, bounds);
* :mod:`.search` — the one-dimensional searches the designers share;
* :mod:`.per_report` — :func:`add_per_report_layer`: a per-report layer R (keep Y with
  probability λ, else draw from the public output distribution) at the largest λ whose R·Q
  passes the audit at the single-report ε₁;
* :mod:`.transport` — optimal transport over U: costs, couplings (POT's ``ot.emd``), the Earth
  mover's distance, barycenters ([KM19, Defs 7-8]);
* :mod:`.coupling` — the coupling mechanism to one common target ([KM19, Defs 16, 18; Prop 2]);
* :mod:`.xdistp` — XDistP with the Earth mover's distance between the protected distributions ([KM19, Def 12]);
* :mod:`.funnel` — the designers of the notions ``ldp`` (w.r.t. S), ``lip`` and ``alip`` ([LTS20], [ZDS23]):
  optimal LDP/LIP/AORR, GRR/OUE/CR calibrated to the audit, the watchdog family;
* :mod:`.errors` — DesignError and the solvers' errors.
"""

from __future__ import annotations

from .build import design, design_document, design_matrix, run_designer, validate_parameters
from .calibrate import cr_calibrated, cr_theorem, ir_calibrated, ir_theorem
from .cg import CGResult, solve_exact_set_cg, solve_nr_cg, solve_polyopt_cg
from .cone import GammaCone, gamma_inequalities
from .coupling import TARGET_RULES, CouplingDesign, coupling_matrix, design_coupling, expected_loss
from .errors import CGError, DesignError, DesignParameterError, PolyOptError, PolyOptTooLarge, SolverError
from .exact import EXACT_MAX_SYMBOLS, PolyOptResult, enumerate_vertices, optimal_weights, solve_polyopt
from .families import cr_matrix, grr_matrix, ir_matrix, srr_matrix
from .options import DEFAULT_TIME_BUDGET, NOTIONS, SOLVERS, DesignOptions, DesignRequest, request_fields
from .per_report import PER_REPORT_FAMILIES, add_per_report_layer, per_report_matrix
from .registry import (
    ALL_METHODS,
    LATENT_METHODS,
    METHODS,
    NON_ROBUST,
    NOTION_METHODS,
    REGISTRY,
    SOLVER_METHODS,
    TRANSPORT_METHODS,
    Designer,
    methods_for,
)
from .request import (
    MAX_DESIGN_SYMBOLS,
    check_design_size,
    check_transport,
    request_from_json,
    validate_request,
)
from .transport import COST_RULES, barycenter, cost_matrix, emd, optimal_coupling
from .xdistp import emd_table, xdistp_epsilon

__all__ = [
    # design, audit, package
    "design",
    "design_document",
    "design_matrix",
    "run_designer",
    "validate_parameters",
    "check_transport",
    "add_per_report_layer",
    "per_report_matrix",
    "PER_REPORT_FAMILIES",
    "DesignOptions",
    "DesignRequest",
    "request_fields",
    "request_from_json",
    "validate_request",
    "MAX_DESIGN_SYMBOLS",
    "check_design_size",
    "Designer",
    "REGISTRY",
    "METHODS",
    "SOLVER_METHODS",
    "NON_ROBUST",
    "LATENT_METHODS",
    "NOTIONS",
    "NOTION_METHODS",
    "ALL_METHODS",
    "TRANSPORT_METHODS",
    "methods_for",
    "SOLVERS",
    "DEFAULT_TIME_BUDGET",
    "EXACT_MAX_SYMBOLS",
    # errors
    "DesignError",
    "DesignParameterError",
    "SolverError",
    "PolyOptError",
    "PolyOptTooLarge",
    "CGError",
    # mechanism families and their parameters
    "grr_matrix",
    "srr_matrix",
    "ir_matrix",
    "cr_matrix",
    "ir_theorem",
    "ir_calibrated",
    "cr_theorem",
    "cr_calibrated",
    # the coupling mechanism and optimal transport [KM19]
    "TARGET_RULES",
    "COST_RULES",
    "CouplingDesign",
    "coupling_matrix",
    "design_coupling",
    "expected_loss",
    "cost_matrix",
    "optimal_coupling",
    "emd",
    "barycenter",
    "emd_table",
    "xdistp_epsilon",
    # PolyOpt solvers
    "GammaCone",
    "gamma_inequalities",
    "PolyOptResult",
    "enumerate_vertices",
    "optimal_weights",
    "solve_polyopt",
    "CGResult",
    "solve_polyopt_cg",
    "solve_nr_cg",
    "solve_exact_set_cg",
]
