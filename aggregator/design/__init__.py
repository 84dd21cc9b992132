"""Mechanism design: one entry point for every method, returning an audited document.

    from rldp.aggregator.design import design
    doc = design("polyopt", alphabet=..., public_distribution=P̂, epsilon=1.0, n=32561, beta=0.05)

The package in three floors, each importing only the floors below it (the layers contract
"design/ by floor" of pyproject.toml holds this; ``rldp.aggregator.design`` re-exports the public names):

* :mod:`.primitives` — errors, :class:`DesignRequest` (= ``DesignOptions``; :mod:`.primitives.options`),
  the families GRR/SRR/IR/CR ([LZG24, Def 4-5], [LZG21, Protocol 2]), the cone Γ of PolyOpt
  ([LZG24, Def 3]) and exact PolyOpt by vertex enumeration ([LZG24, Thm 3]);
* :mod:`.solvers` — the one-dimensional searches, IR / CR calibration, column generation
  (:mod:`.solvers.cg`), the PolyOpt and NR designers (:mod:`.solvers.polyopt`), the per-report layer
  (:func:`add_per_report_layer`), optimal transport over U (:mod:`.solvers.optimal_transport`, POT's
  ``ot.emd``, [KM19, Defs 7-8]), the coupling mechanism ([KM19, Defs 16, 18; Prop 2]), XDistP
  ([KM19, Def 12]) and the funnel designers of ``ldp`` (w.r.t. S), ``lip`` and ``alip``
  (:mod:`.solvers.funnel`, [LTS20], [ZDS23]);
* :mod:`.orchestration` — the registry of designers (:data:`METHODS`, :data:`NOTION_METHODS`,
  :func:`methods_for`, …), :func:`validate_request` (the rules of a request), :func:`design` /
  :func:`design_matrix` (design, audit, package as a document), the sources of P̂ and the pilot.
"""

from __future__ import annotations

from .orchestration.build import (
    design,
    design_document,
    design_matrix,
    design_validated,
    run_designer,
    validate_parameters,
)
from .orchestration.choose import AUTO, auto_methods, best_method, design_auto, identifiable, releases_the_data
from .orchestration.kinds import FIELD_KINDS, FieldKind, field_kind
from .orchestration.pilot import PilotChoice, design_pilot, switch_after_pilot
from .orchestration.registry import (
    ALL_METHODS,
    LATENT_METHODS,
    METHODS,
    NON_ROBUST,
    NOTION_METHODS,
    NUMERIC_METHODS,
    REGISTRY,
    SOLVER_METHODS,
    TRANSPORT_METHODS,
    Designer,
    methods_for,
)
from .orchestration.request import (
    MAX_DESIGN_SYMBOLS,
    bind_alphabet,
    bind_public_rows,
    check_design_size,
    check_transport,
    request_from_json,
    validate_request,
    validated_from_wire,
)
from .orchestration.sources import PilotData, PublicData, design_from
from .primitives.cone import GammaCone, gamma_inequalities
from .primitives.errors import CGError, DesignError, DesignParameterError, PolyOptError, PolyOptTooLarge, SolverError
from .primitives.exact import EXACT_MAX_SYMBOLS, PolyOptResult, enumerate_vertices, optimal_weights, solve_polyopt
from .primitives.families import cr_matrix, grr_matrix, ir_matrix, srr_matrix
from .primitives.options import (
    DEFAULT_TIME_BUDGET,
    NOTIONS,
    SOLVERS,
    DesignOptions,
    DesignRequest,
    ValidatedRequest,
    request_fields,
)
from .solvers.calibrate import cr_calibrated, cr_theorem, ir_calibrated, ir_theorem
from .solvers.cg import CGResult, solve_exact_set_cg, solve_nr_cg, solve_polyopt_cg
from .solvers.coupling import TARGET_RULES, CouplingDesign, coupling_matrix, design_coupling, expected_loss
from .solvers.numeric_ldp import epsilon_on_u, piecewise_matrix, square_wave_matrix
from .solvers.optimal_transport import COST_RULES, barycenter, cost_matrix, emd, optimal_coupling
from .solvers.per_report import PER_REPORT_FAMILIES, add_per_report_layer, per_report_matrix
from .solvers.task import TASKS, released_rr, task_error
from .solvers.xdistp import emd_table, xdistp_epsilon

__all__ = [
    # design, audit, package
    "design",
    "design_document",
    "design_validated",
    "design_matrix",
    "run_designer",
    "validate_parameters",
    # choosing: --method auto, and an ε that releases the data
    "AUTO",
    "auto_methods",
    "best_method",
    "design_auto",
    "identifiable",
    "releases_the_data",
    # where P̂ comes from: public data or a private pilot
    "design_from",
    "PublicData",
    "PilotData",
    "design_pilot",
    "PilotChoice",
    "switch_after_pilot",
    "check_transport",
    "add_per_report_layer",
    "per_report_matrix",
    "PER_REPORT_FAMILIES",
    "DesignOptions",
    "DesignRequest",
    "request_fields",
    "FIELD_KINDS",
    "FieldKind",
    "field_kind",
    "request_from_json",
    "validate_request",
    "ValidatedRequest",
    "validated_from_wire",
    "bind_alphabet",
    "bind_public_rows",
    "MAX_DESIGN_SYMBOLS",
    "TASKS",
    "released_rr",
    "task_error",
    "square_wave_matrix",
    "piecewise_matrix",
    "epsilon_on_u",
    "check_design_size",
    "Designer",
    "REGISTRY",
    "METHODS",
    "SOLVER_METHODS",
    "NON_ROBUST",
    "LATENT_METHODS",
    "NUMERIC_METHODS",
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
