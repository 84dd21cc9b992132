"""``rldp design``, ``rldp audit`` and ``rldp evaluate``: mechanisms from the command line.

The root command (:mod:`rldp.cli`) registers these through :func:`add_parser` and turns
every error into one clear line on stderr (exit 2), never a traceback. ``--json`` prints
one machine-readable line on stdout.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from tqdm import tqdm

from rldp.shared.arguments import checked, names, positive_float
from rldp.shared.audit import all_distributions_epsilon, audit_document, ldp_epsilon, realised_epsilon
from rldp.shared.document import alphabet as doc_alphabet
from rldp.shared.document import mechanism_matrix, public_distribution, read_document, write_document
from rldp.shared.errors import ValidationError
from rldp.shared.information import entropy, mutual_information
from rldp.shared.records import Alphabet
from rldp.shared.tables import read_csv

from .design import METHODS, SOLVER_METHODS, SOLVERS, design

__all__ = ["add_parser", "cmd_design", "cmd_audit", "cmd_evaluate"]

EXIT_AUDIT_FAILED = 1


class CommandError(ValidationError):
    """A command-line request that cannot be carried out (reported as one line, exit 2)."""


_beta = checked(
    float,
    lambda value: 0 < value < 1,
    "beta must be a number in (0, 1); got {text!r}",
    "beta (significance level) must be in (0, 1); got {text!r}",
)
_radius = checked(
    float,
    lambda value: not math.isnan(value) and value >= 0,
    "radius must be a number ≥ 0 or 'inf'; got {text!r}",
    "radius must be ≥ 0 (nats) or 'inf'; got {text!r}",
)


def _emit(args: argparse.Namespace, record: dict[str, Any], lines: Sequence[str]) -> None:
    if args.json:
        print(json.dumps(record, allow_nan=False, default=_json_default))
    else:
        print("\n".join(lines))


def _json_default(obj: Any) -> Any:
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def _fmt(x: float | None) -> str:
    return "inf" if x is None else f"{x:.4f}"


def _finite(x: float) -> float | None:
    return None if x is None or math.isinf(x) else float(x)


# -- design -------------------------------------------------------------------
def cmd_design(args: argparse.Namespace) -> int:
    table = read_csv(args.public, names=args.names)
    if table.n_rows == 0:
        raise CommandError(f"{args.public}: no data rows")
    alphabet = Alphabet.from_table(table, args.sensitive, args.released, latent=args.latent)
    p_hat = alphabet.empirical_distribution(table)
    if args.warm_start and args.method not in SOLVER_METHODS:
        raise CommandError(f"--warm-start applies to {', '.join(sorted(SOLVER_METHODS))}, not to {args.method!r}")
    warm = _warm_start_matrices(args.warm_start or [], alphabet)
    start = time.perf_counter()
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    with _DesignProgress(
        show and args.method in SOLVER_METHODS,
        args.time_budget,
        entropy(p_hat.sum(axis=0) if alphabet.latent else p_hat),
    ) as bar:
        doc = design(
            args.method,
            alphabet=alphabet,
            public_distribution=p_hat,
            epsilon=args.epsilon,
            radius=args.radius,
            beta=None if args.radius is not None else args.beta,
            n=table.n_rows,
            order=args.order,
            solver=args.solver,
            time_budget=args.time_budget,
            progress=bar.update,
            warm_start=warm or None,
        )
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
        "outputs": len(doc["matrix"]),
        "seconds": seconds,
    }
    params = doc.get("parameters", {})
    solver_lines = []
    if "solver" in params:
        record.update(
            {
                k: params.get(k)
                for k in ("solver", "iterations", "columns", "status", "upper_bound", "upper_bound_kind")
                if k in params
            }
        )
        line = f"  solver   {params['solver']}"
        if params["solver"] == "cg":
            line += f", {params.get('iterations')} rounds, {params.get('columns')} columns, {params.get('status')}"
        if params.get("upper_bound") is not None:
            line += f"; optimum <= {params['upper_bound']:.4f} nats ({params.get('upper_bound_kind')})"
        solver_lines.append(line)
    radius = doc["privacy"]["uncertainty"]["radius"]
    _emit(
        args,
        record,
        [
            f"designed {doc['method']} for S={','.join(args.sensitive)}{' (latent)' if alphabet.latent else ''}, "
            f"U={','.join(args.released)} "
            f"(|X| = {alphabet.size}, n = {table.n_rows}, radius = {radius if radius is not None else 'inf'})",
            f"  epsilon  claimed {record['epsilon']:.6g}, audited {audit['epsilon']:.6g} (pass)",
            f"  utility  I = {record['mutual_information']:.4f} nats, NMI = {record['nmi']:.4f}, {record['outputs']} outputs",
            *solver_lines,
            f"  id       {doc['id']}",
            f"  wrote    {args.out} in {seconds:.2f} s",
        ],
    )
    return 0


class _DesignProgress:
    """A progress display on stderr for the iterative solvers: elapsed time against the
    time budget, with the current utility (NMI of the best mechanism so far) and the
    proven upper bound when one is known (a tqdm bar)."""

    def __init__(self, enabled: bool, budget: float, entropy_nats: float) -> None:
        self.enabled = enabled
        self.budget = budget
        self.h = entropy_nats if entropy_nats > 0 else 1.0
        self.bar: Any = None

    def __enter__(self) -> _DesignProgress:
        if self.enabled:
            self.bar = tqdm(
                total=round(self.budget, 1),
                unit="s",
                file=sys.stderr,
                leave=False,
                bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f} s {postfix}",
            )
        return self

    def update(self, info: dict[str, Any]) -> None:
        if not self.enabled:
            return
        text = f"NMI {info['information'] / self.h:.4f}"
        if info.get("upper_bound") is not None:
            text += f" (<= {info['upper_bound'] / self.h:.4f})"
        text += f", round {info['iteration']}, {info['columns']} columns"
        self.bar.n = min(round(info["seconds"], 1), self.bar.total)
        self.bar.set_postfix_str(text, refresh=True)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()


# -- audit --------------------------------------------------------------------
def cmd_audit(args: argparse.Namespace) -> int:
    doc = read_document(args.document)
    result = audit_document(doc)
    record = {
        "id": doc["id"],
        "method": doc["method"],
        "notion": result.notion,
        "epsilon": result.claimed,
        "epsilon_audited": _finite(result.epsilon),
        "passed": result.passed,
        "reasons": list(result.reasons),
    }
    lines = [
        f"{doc['method']} {doc['id'][:12]}: claimed epsilon {result.claimed:.6g}, "
        f"audited {result.epsilon:.6g} ({result.notion}) -> {'PASS' if result.passed else 'FAIL'}"
    ]
    lines += [f"  {r}" for r in result.reasons]
    _emit(args, record, lines)
    return 0 if result.passed else EXIT_AUDIT_FAILED


# -- evaluate -----------------------------------------------------------------
def cmd_evaluate(args: argparse.Namespace) -> int:
    doc = read_document(args.document)
    q = mechanism_matrix(doc)
    alpha = doc_alphabet(doc)
    if args.data:
        table = read_csv(args.data, names=args.names)
        dist = alpha.empirical_distribution(table)
        source, n = str(args.data), table.n_rows
    else:
        dist, source, n = public_distribution(doc), "public", None
    inputs = dist.sum(axis=0) if alpha.latent else dist  # the mechanism reads X = U when S is latent
    info = mutual_information(q, inputs)
    h = entropy(inputs)
    record = {
        "id": doc["id"],
        "method": doc["method"],
        "distribution": source,
        "n": n,
        "mutual_information": info,
        "entropy": h,
        "nmi": info / h if h > 0 else 0.0,
        "epsilon_realised": _finite(realised_epsilon(q, dist)),
        "epsilon_ldp": _finite(ldp_epsilon(q)),
        "epsilon_all_distributions": _finite(all_distributions_epsilon(q, alpha.n_sensitive, alpha.n_released)),
        "epsilon": doc["privacy"]["epsilon"],
    }
    _emit(
        args,
        record,
        [
            f"{doc['method']} {doc['id'][:12]} under the {source} distribution" + (f" (n = {n})" if n else ""),
            f"  I(X;Y) = {info:.4f} nats, H(X) = {h:.4f} nats, NMI = {record['nmi']:.4f}",
            f"  realised epsilon* = {_fmt(record['epsilon_realised'])} (claimed {record['epsilon']:.4g})",
            f"  as plain LDP on X: epsilon = {_fmt(record['epsilon_ldp'])}; "
            f"for every distribution (Prop. 3): epsilon = {_fmt(record['epsilon_all_distributions'])}",
        ],
    )
    return 0


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


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``design``, ``audit`` and ``evaluate`` on the root command's subparsers."""
    p = sub.add_parser("design", help="design an audited mechanism from a public CSV")
    p.add_argument("public", metavar="PUBLIC.csv", help="public side data: CSV with a header row (.gz allowed)")
    p.add_argument(
        "--sensitive",
        required=True,
        type=names,
        metavar="COL[,COL...]",
        help="the sensitive column(s) S (several: S is their product)",
    )
    p.add_argument("--released", required=True, type=names, metavar="COL[,COL...]", help="released columns U")
    p.add_argument(
        "--latent",
        action="store_true",
        help="S is not an input of the mechanism (the privacy funnel): it reads only U, and S is "
        "protected through its correlation with U; P̂ is still learnt over S × U",
    )
    p.add_argument("--epsilon", required=True, type=positive_float("epsilon"), help="privacy level ε (nats)")
    p.add_argument(
        "--method", required=True, choices=list(METHODS), metavar="METHOD", help="one of: " + ", ".join(METHODS)
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument("--beta", type=_beta, default=0.05, help="significance level of the confidence set (default 0.05)")
    g.add_argument("--radius", type=_radius, help="radius B of the Rényi ball, in nats (instead of --beta)")
    p.add_argument("--order", type=positive_float("order"), default=2.0, help="Rényi order α (default 2)")
    p.add_argument("--names", type=names, help="column names for a CSV without a header row")
    p.add_argument("--out", required=True, metavar="FILE", help="where to write the document (.json or .msgpack)")
    p.add_argument(
        "--solver",
        choices=list(SOLVERS),
        default="auto",
        help="polyopt, polyopt-paper and nr: 'exact' vertex enumeration (small alphabets only), "
        "'cg' column generation (any size, anytime), 'auto' (default) exact where it is fast",
    )
    p.add_argument(
        "--time-budget",
        type=positive_float("time budget"),
        default=60.0,
        metavar="SECONDS",
        help="seconds for column generation; the best certified mechanism found is returned (default 60)",
    )
    p.add_argument(
        "--warm-start",
        action="append",
        metavar="DOC",
        help="polyopt, polyopt-paper and nr: seed the search with an earlier document's rows on the "
        "same alphabet (e.g. the design at a smaller epsilon: the result is never below it); "
        "repeatable",
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--progress",
        dest="progress",
        action="store_true",
        default=None,
        help="show solver progress on stderr (default: when stderr is a terminal)",
    )
    g.add_argument("--no-progress", dest="progress", action="store_false", help="never show progress")
    p.add_argument("--json", action="store_true", help="print one JSON line")
    p.set_defaults(func=cmd_design)

    p = sub.add_parser("audit", help="audit a mechanism document (exit 0 if it passes)")
    p.add_argument("document", metavar="FILE")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_audit)

    p = sub.add_parser("evaluate", help="utility and realised epsilon of a mechanism")
    p.add_argument("document", metavar="FILE")
    p.add_argument("--data", metavar="CSV", help="evaluate under this CSV's empirical distribution")
    p.add_argument("--names", type=names, help="column names for a CSV without a header row")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_evaluate)
