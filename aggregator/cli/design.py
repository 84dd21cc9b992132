"""``rldp design``: an audited mechanism from a public CSV.

``--notion rldp`` (default) claims (ε, F)-RLDP; ``--notion distp`` claims (ε, δ)-distribution privacy
[KM19, Def 3] between every pair P_U|θ (θ = S) over the same uncertainty set (``--delta``, default 0),
e.g. with the coupling mechanism (``--method coupling [--target …] [--cost …]``, [KM19, Defs 16, 18]).
``--notion ldp|lip|alip`` claims ε-LDP w.r.t. S [LTS20, Def 1], ε-LIP [LTS20, Def 2] or (ε_l, ε_u)-ALIP
[ZDS23, Def 3] (``--epsilon-lower``/``--epsilon-upper``), over F or, with ``--radius 0``, at P̂ only;
methods: optimal, grr, oue, cr (S an input), watchdog, watchdog-paper, subset-merging, subset-rr.

The root command (:mod:`rldp.cli`) registers these through :func:`add_parser` and turns
every error into one clear line on stderr (exit 2), never a traceback. ``--json`` prints
one machine-readable line on stdout.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Sequence
from typing import Any

from rldp.shared.claims import ascii_text, audit_text, claim_text
from rldp.shared.document import alphabet as doc_alphabet
from rldp.shared.document import mechanism_matrix, read_document, write_document
from rldp.shared.errors import one_line
from rldp.shared.information import entropy
from rldp.shared.notions import NOTIONS
from rldp.shared.provenance import PublicCounts
from rldp.shared.records import Alphabet

from ..design import (
    SOLVER_METHODS,
    DesignParameterError,
    DesignRequest,
    ValidatedRequest,
    design_document,
    request_fields,
    validate_request,
)
from ..design.orchestration.choose import (
    AUTO,
    auto_methods,
    design_auto,
    identifiable,
    releases_the_data,
    task_error_of,
)
from ..design.orchestration.sources import few_public_rows
from .common import EXIT_INTERRUPTED, CommandError, emit, fmt
from .design_bins import rule_bins
from .design_flags import add_design_flags
from .design_progress import DesignProgress
from .distp import design_lines, read_cost
from .interrupted import BASELINE_METHOD, baseline_design, take_ctrl_c
from .public_table import (
    check_alphabet,
    check_out,
    numeric_lines,
    read_public_numeric,
)

__all__ = ["add_design_parser", "cmd_design"]

_SOLVER_FIELDS = ("solver", "iterations", "columns", "status", "upper_bound", "upper_bound_kind")


def cmd_design(args: argparse.Namespace) -> int:
    take_ctrl_c()
    try:
        table, alphabet, public, request = _prepare(args)
    except KeyboardInterrupt:  # reading the CSV, or loading a part of rldp: no design yet
        print("rldp design: interrupted before the design started; nothing written", file=sys.stderr)
        return EXIT_INTERRUPTED
    return _design(args, table, alphabet, public, request)


def _prepare(args: argparse.Namespace) -> tuple[Any, Alphabet, PublicCounts, ValidatedRequest]:
    """The public table, its alphabet and counts, and the validated request; the warnings printed."""
    check_out(args.out)
    table, numeric = read_public_numeric(args, [*args.sensitive, *args.released])
    if table.n_rows == 0:
        raise CommandError(f"{args.public}: no data rows")
    alphabet = Alphabet.from_table(table, args.sensitive, args.released, latent=args.latent, numeric=numeric)
    check_alphabet(alphabet, args.public)
    public = PublicCounts.from_table(table, alphabet, name=args.public_name or os.path.basename(args.public))
    if args.warm_start and args.method not in SOLVER_METHODS:
        raise CommandError(f"--warm-start applies to {', '.join(sorted(SOLVER_METHODS))}, not to {args.method!r}")
    warm = _warm_start_matrices(args.warm_start or [], alphabet)
    auto = args.method == AUTO  # every certified method for the notion, the best kept (.choose)
    request = DesignRequest(
        method=auto_methods(args.notion, args.latent)[-1] if auto else args.method,
        notion=args.notion,
        radius=args.radius,
        beta=args.beta,
        n=public.n,
        window=args.window,
        latent=alphabet.latent,
        target=args.target,
        cost=read_cost(args.cost),
        warm_start=warm or None,
        **{f.name: getattr(args, f.name) for f in request_fields() if f.flag},
    )
    try:  # every rule, before any work
        request = validate_request(request, released_size=alphabet.n_released)
    except DesignParameterError as exc:
        raise CommandError(_as_flags(str(exc))) from None
    alphabet, public, request, _ = rule_bins(args, table, alphabet, public, request)  # --task without --bins
    few = few_public_rows(public.n, alphabet.size, request)
    if few:
        print(f"rldp design: warning: {args.public}: {few}", file=sys.stderr)
    if loud := releases_the_data(
        float(request.epsilon or 0), alphabet.n_released if alphabet.latent else alphabet.size
    ):
        print(f"rldp design: warning: {loud}", file=sys.stderr)
    return table, alphabet, public, request


def _design(
    args: argparse.Namespace, table: Any, alphabet: Alphabet, public: PublicCounts, request: ValidatedRequest
) -> int:
    auto, p_hat = args.method == AUTO, public.distribution
    start = time.perf_counter()
    # "optimal" of lip/alip reports column generation's rounds (beyond the exact size).
    iterative = (
        auto or args.method in SOLVER_METHODS or (args.method == "optimal" and NOTIONS[args.notion].optimal_iterates)
    )
    show = (args.progress if args.progress is not None else sys.stderr.isatty()) and iterative
    provenance = public.provenance()
    doc: dict | None = None
    tried: dict[str, dict] = {}
    cut = False
    try:  # Ctrl-C as the bar appears too: before any certified design of this method (else it is kept)
        with DesignProgress(show, args.time_budget, entropy(p_hat.sum(axis=0) if alphabet.latent else p_hat)) as bar:
            if auto:
                doc, tried, cut = design_auto(
                    request.local(progress=bar.update),
                    alphabet=alphabet,
                    public_distribution=p_hat,
                    provenance=provenance,
                    skipped=lambda m, e: print(f"rldp design: auto: {m} skipped: {one_line(e)}", file=sys.stderr),
                )
            else:
                doc, tried, cut = (
                    design_document(
                        request.local(progress=bar.update),
                        alphabet=alphabet,
                        public_distribution=p_hat,
                        provenance=provenance,
                    ),
                    {},
                    False,
                )
    except KeyboardInterrupt:
        pass
    fallback = doc is None
    if doc is None:
        doc = baseline_design(request, alphabet, p_hat, provenance)
        if doc is None:
            print(
                f"rldp design: interrupted after {time.perf_counter() - start:.1f} s, before any certified "
                f"{args.method} design existed; nothing written",
                file=sys.stderr,
            )
            return EXIT_INTERRUPTED
    seconds = time.perf_counter() - start
    write_document(doc, args.out)
    audit = doc["audit"]
    record = {
        "id": doc["id"],
        "method": doc["method"],
        "epsilon": doc["privacy"]["epsilon"],
        "epsilon_audited": audit["epsilon"],
        "mutual_information": doc["utility"]["mutual_information"],
        "nmi": doc["utility"]["nmi"],
        "outputs": int(mechanism_matrix(doc).shape[0]),
        "seconds": seconds,
    }
    if "binning" in doc:  # --task without --bins: U's bins by the rule (design.orchestration.bins)
        record["binning"] = doc["binning"]
    params = doc.get("parameters", {})
    solver_lines = []
    if "solver" in params:
        record.update({k: params[k] for k in _SOLVER_FIELDS if k in params})
        line = f"  solver   {params['solver']}"
        if params["solver"] == "cg":
            line += f", {params.get('iterations')} rounds, {params.get('columns')} columns, {params.get('status')}"
        if params.get("upper_bound") is not None:
            line += f"; optimum <= {params['upper_bound']:.4f} nats ({params.get('upper_bound_kind')})"
        solver_lines.append(line)
    if single := audit.get("per_report"):  # --per-report-epsilon: the guarantee of one report (epsilon: of all)
        record["per_report"] = single
        solver_lines.append(f"  report   epsilon {single['claimed']:.6g} per report, audited {single['epsilon']:.6g}")
    entry = NOTIONS[doc["privacy"]["notion"]]
    if entry.judged_by_delta:  # distp: the claim's δ, the audited δ, the coupling
        solver_lines[:0] = design_lines(doc, record)
    radius = doc["privacy"]["uncertainty"]["radius"]
    if tried and task_error_of(doc) is not None:  # --method auto --task: the least error for the task was kept
        errors = {m: task_error_of(d) for m, d in tried.items()}
        record["candidates"] = {m: {"task_error": e, "nmi": tried[m]["utility"]["nmi"]} for m, e in errors.items()}
        ranked_errors = sorted(errors.items(), key=lambda i: (i[1] is None, i[1] or 0.0))
        solver_lines.append(
            f"  chosen   {doc['method']}, the least {params['task']['measure']} per report of {len(tried)} certified "
            "methods ("
            + ", ".join(f"{m} {'not identified' if e is None else f'{e:.4g}'}" for m, e in ranked_errors)
            + ")"
        )
    elif tried:  # --method auto: what each certified method kept, the best first; * = P_X not identifiable
        ranked = sorted(tried.items(), key=lambda i: -i[1]["utility"]["nmi"])
        record["candidates"] = {
            m: {"nmi": d["utility"]["nmi"], "identifiable": identifiable(mechanism_matrix(d))} for m, d in ranked
        }
        solver_lines.append(
            f"  chosen   {doc['method']}, the best identifiable of {len(tried)} certified methods (NMI "
            + ", ".join(
                f"{m} {c['nmi']:.4f}{'' if c['identifiable'] else '*'}" for m, c in record["candidates"].items()
            )
            + "; * P_X not identifiable from its reports)"
        )
    interrupted = fallback or cut or params.get("status") == "interrupted"
    if interrupted:  # Ctrl-C during the search: the best certified design so far was kept and written
        record["interrupted"] = True
    if fallback:  # Ctrl-C before any: the GRR baseline at the same claim was written instead
        record["fallback"] = BASELINE_METHOD
    claim_line = ascii_text(  # in the notion's terms (rldp.shared.claims): distp's claim is judged by δ
        f"  claim    {doc['privacy']['notion']} {claim_text(doc['privacy'])}; {audit_text(audit, verdict=False)} (pass)"
    )
    if entry.funnel:
        claim_line = _funnel_line(doc, record)
    emit(
        args,
        record,
        [
            f"designed {doc['method']} for S={','.join(args.sensitive)}{' (latent)' if alphabet.latent else ''}, "
            f"U={','.join(args.released)} "
            f"(|X| = {alphabet.size}, n = {table.n_rows}, radius = {radius if radius is not None else 'inf'})",
            claim_line,
            f"  utility  I = {record['mutual_information']:.4f} nats, NMI = {record['nmi']:.4f}, {record['outputs']} outputs",
            *numeric_lines(doc, alphabet),
            *solver_lines,
            f"  public   {public.name}: n = {public.n}, counts sha256 {public.sha256}",
            f"  id       {doc['id']}",
            f"  wrote    {args.out} in {seconds:.2f} s",
        ],
    )
    if fallback:
        print(
            f"rldp design: interrupted after {seconds:.1f} s, before any certified {args.method} design "
            f"existed; wrote the GRR baseline at the same claim to {args.out} instead (audited, "
            f"NMI {record['nmi']:.4f}; not the {args.method} design asked for)",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    if interrupted:
        print(
            f"rldp design: interrupted after {seconds:.1f} s; wrote the best certified design found so far "
            f"to {args.out} (audited, NMI {record['nmi']:.4f}; not the optimum)",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    return 0


#: Request fields named by flags of their own here (the rest are generated from the request's fields).
_NAMED_FLAGS = ("notion", "method", "radius", "beta", "target", "cost", "window", "latent")


def _as_flags(message: str) -> str:
    """A request's refusal in this command's words: each field it names becomes its flag (epsilon_lower
    → --epsilon-lower), so the line says what to type."""
    flags = sorted({*(f.name for f in request_fields() if f.flag), *_NAMED_FLAGS}, key=len, reverse=True)
    pattern = re.compile(r"(?<![-\w])(" + "|".join(map(re.escape, flags)) + r")\b")
    return pattern.sub(lambda m: "--" + m.group(1).replace("_", "-"), message)


def _funnel_line(doc: dict[str, Any], record: dict[str, Any]) -> str:
    """The claim and its audit for ldp (w.r.t. S), lip and alip; where it holds (at P̂ or over F)."""
    privacy, audit = doc["privacy"], doc["audit"]
    where = "at P̂ only" if privacy["uncertainty"]["radius"] == 0 else "over F"
    entry = NOTIONS[privacy["notion"]]
    if entry.two_sided:  # alip: one bound per side of the lift
        extra = audit.get("extra", {})
        record["epsilon_lower"], record["epsilon_upper"] = privacy["epsilon_lower"], privacy["epsilon_upper"]
        audited = f"audited {fmt(extra.get('epsilon_lower', audit['epsilon']))}, {fmt(extra.get('epsilon_upper', audit['epsilon']))}"
        return (
            f"  epsilon  {entry.name} claimed (eps_l, eps_u) = ({privacy['epsilon_lower']:.6g}, "
            f"{privacy['epsilon_upper']:.6g}), {audited} {where} (pass)"
        )
    return f"  epsilon  {entry.label} claimed {record['epsilon']:.6g}, audited {fmt(audit['epsilon'])} {where} (pass)"


def _warm_start_matrices(paths: Sequence[str], alphabet: Any) -> list[Any]:
    """Matrices of earlier documents on the same alphabet (``--warm-start``). Their rows only
    seed the search: the solver mixes any row outside its cone back into it, so a document
    need not be trusted (its id and audit are not checked here)."""
    out = []
    for path in paths:
        doc = read_document(path)
        if doc_alphabet(doc) != alphabet:
            raise CommandError(
                f"--warm-start {path}: its alphabet ({doc_alphabet(doc)!r}) differs from the one "
                f"designed here ({alphabet!r}); expected a document for the same columns and values"
            )
        out.append(mechanism_matrix(doc))
    return out


def add_design_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``design`` on the root command's subparsers (its flags: :mod:`.design_flags`)."""
    p = sub.add_parser("design", help="design an audited mechanism from a public CSV")
    add_design_flags(p)
    p.set_defaults(func=cmd_design)
