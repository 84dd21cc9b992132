"""``rldp audit`` and ``rldp evaluate``: check a mechanism document, and measure it."""

from __future__ import annotations

import argparse
import math

from rldp.shared.arguments import add_csv_flags, add_json_flag, names
from rldp.shared.audit import all_distributions_epsilon, audit_document, ldp_epsilon, realised_epsilon
from rldp.shared.claims import ascii_text, audit_text, claim_text
from rldp.shared.document import alphabet as doc_alphabet
from rldp.shared.document import mechanism_matrix, public_distribution, read_document, report_matrix
from rldp.shared.information import entropy, mutual_information
from rldp.shared.notions import lookup
from rldp.shared.pilot import PILOT_SOURCE, pilot_mismatches
from rldp.shared.provenance import check_document_provenance, check_public_data
from rldp.shared.tables import read_csv

from .common import EXIT_AUDIT_FAILED, CommandError, emit, finite, fmt, significance_level
from .distp import evaluate_distp
from .lift import audit_sides, evaluate_lift

__all__ = ["add_check_parsers", "cmd_audit", "cmd_evaluate"]


def _check_pilot(doc: dict, pilot: dict, record: dict) -> tuple[bool, list[str]]:
    """The document's P̂ and radius recomputed from its pilot provenance and the pilot document, and the
    pilot's own claim: private for every distribution (its audit over radius ∞ passes)."""
    if (doc.get("provenance") or {}).get("source") != PILOT_SOURCE:
        raise CommandError("--pilot: this document's P̂ did not come from a pilot (its provenance names no pilot)")
    pilot_audit = audit_document(pilot)
    unbounded = pilot["privacy"].get("uncertainty", {}).get("radius") is None or math.isinf(
        float(pilot["privacy"]["uncertainty"]["radius"])
    )
    mismatches = pilot_mismatches(doc, report_matrix(pilot), str(pilot["id"]))
    ok = bool(pilot_audit.passed) and unbounded and not mismatches
    problems = [m[3] for m in mismatches]
    if not pilot_audit.passed:
        problems.append(f"the pilot fails its own audit: {'; '.join(pilot_audit.reasons)}")
    if not unbounded:
        problems.append("the pilot is not private for every distribution (its radius is finite)")
    record["pilot"] = {"id": pilot["id"], "passed": ok, "mismatches": problems}
    verdict = (
        "MATCH (P̂ and the radius recomputed from the pilot's counts)" if ok else "MISMATCH: " + "; ".join(problems)
    )
    return ok, [f"  pilot {str(pilot['id'])[:12]}…: {verdict}"]


def cmd_audit(args: argparse.Namespace) -> int:
    doc = read_document(args.document)
    result = audit_document(doc)
    record = {
        "id": doc["id"],
        "method": doc["method"],
        "notion": result.notion,
        "epsilon": result.claimed,
        "epsilon_audited": finite(result.epsilon),
        "passed": result.passed,
        "reasons": list(result.reasons),
    }
    lines = [  # the claim and the verdict in the notion's terms (rldp.shared.claims): distp by its δ
        ascii_text(
            f"{doc['method']} {doc['id'][:12]}: {result.notion} claims {claim_text(doc['privacy'])}; "
            f"{audit_text(result.to_dict(), verdict=False)} -> {'PASS' if result.passed else 'FAIL'}"
        )
    ]
    # What the notion adds (rldp.shared.notions): distp its δ at the claimed ε; ldp w.r.t. S, lip, alip, srlip
    # both sides, the worst (y, s), the scope.
    sides, more = audit_sides(result)
    record.update(sides)
    lines += more
    lines += [f"  {r}" for r in result.reasons]
    per_report = getattr(result, "per_report", None)  # a LayeredAuditResult: the single-report claim too
    if per_report is not None:
        lines.append(f"  per report: claimed epsilon {per_report.claimed:.6g}, audited {per_report.epsilon:.6g}")
    own = check_document_provenance(doc)  # the provenance against the document's own P̂ and n
    record["provenance"] = own.to_dict()
    if own.provenance is not None:
        prov = own.provenance
        verdict = "consistent" if own.passed else f"INCONSISTENT: {own.summary()}"
        if prov.get("source") == PILOT_SOURCE:
            lines.append(
                f"  provenance pilot {prov['pilot_mechanism'][:12]}…: n = {prov['n']} reports, beta {prov['beta']:g}, "
                f"{prov['construction']} {verdict}"
            )
        else:
            lines.append(
                f"  provenance {prov['name']}: n = {prov['n']}, counts sha256 {prov['counts_sha256'][:16]}… {verdict}"
            )
    passed = bool(result.passed) and own.passed
    if args.pilot:
        ok, more = _check_pilot(doc, read_document(args.pilot), record)
        lines += more
        passed = passed and ok
    elif own.provenance is not None and own.provenance.get("source") == PILOT_SOURCE:
        lines.append(f"  note: {own.notes[0]}")
    if args.public_data:
        check = check_public_data(
            doc,
            read_csv(args.public_data, names=args.names, delimiter=args.delimiter, encoding=args.encoding),
            beta=args.beta,
        )
        record["public_data"] = {"file": str(args.public_data), **check.to_dict()}
        verdict = f"MATCH (n = {check.n}, counts sha256 {check.counts_sha256})" if check.passed else "MISMATCH"
        lines.append(f"  public data {args.public_data}: {verdict}" + ("" if check.passed else f": {check.summary()}"))
        lines += [f"  note: {note}" for note in check.notes]
        passed = passed and check.passed
    elif own.provenance is None:
        lines.append(f"  note: {own.notes[0]}")
    record["passed"] = passed
    emit(args, record, lines)
    return 0 if passed else EXIT_AUDIT_FAILED


def cmd_evaluate(args: argparse.Namespace) -> int:
    doc = read_document(args.document)
    q = mechanism_matrix(doc)
    alpha = doc_alphabet(doc)
    if args.data:
        table = read_csv(args.data, names=args.names, delimiter=args.delimiter, encoding=args.encoding)
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
        "epsilon_realised": finite(realised_epsilon(q, dist)),
        "epsilon_ldp": finite(ldp_epsilon(q)),
        "epsilon_all_distributions": finite(all_distributions_epsilon(q, alpha.n_sensitive, alpha.n_released)),
        "epsilon": doc["privacy"]["epsilon"],
    }
    lines = [
        f"{doc['method']} {doc['id'][:12]} under the {source} distribution" + (f" (n = {n})" if n else ""),
        f"  I(X;Y) = {info:.4f} nats, H(X) = {h:.4f} nats, NMI = {record['nmi']:.4f}",
        f"  realised epsilon* = {fmt(record['epsilon_realised'])} (claimed {record['epsilon']:.4g})",
        # Not claims: what the same Q would guarantee under stronger notions, for comparison.
        f"  for comparison (not claimed): as plain LDP on X, the worst Q(y|x)/Q(y|x') over any two "
        f"records, epsilon = {fmt(record['epsilon_ldp'])}; for every distribution of X [LZG24, Prop 3], "
        f"epsilon = {fmt(record['epsilon_all_distributions'])}",
    ]
    lift_record, more = evaluate_lift(doc, dist, source)  # [LTS20, Defs 1–2], [ZDS23, Defs 5–6]
    record.update(lift_record)
    lines += more
    entry = lookup(doc["privacy"]["notion"])
    if entry.judged_by_delta:  # distp: δ at ε, divergence DistP, XDistP w.r.t. EMD [KM19]
        extra, more = evaluate_distp(doc, dist, source, args.cost)
        record.update(notion=entry.name, delta=doc["privacy"].get("delta", 0.0), **extra)
        lines += more
    elif args.cost is not None:
        raise CommandError("--cost applies to distp documents (XDistP w.r.t. the Earth mover's distance) only")
    emit(args, record, lines)
    return 0


def add_check_parsers(sub: argparse._SubParsersAction) -> None:
    """Register ``audit`` and ``evaluate`` on the root command's subparsers."""
    p = sub.add_parser("audit", help="audit a mechanism document (exit 0 if it passes)")
    p.add_argument("document", metavar="FILE")
    p.add_argument(
        "--public-data",
        metavar="CSV",
        help="recompute P̂, n, the radius and the counts hash from this public CSV; exit 1 if the document differs",
    )
    p.add_argument("--names", type=names, help="column names for a --public-data CSV without a header row")
    add_csv_flags(p)
    p.add_argument(
        "--pilot",
        metavar="PILOT",
        help="the pilot document of a design whose P̂ came from a pilot: recompute P̂ and the radius from the "
        "counts its provenance records; exit 1 if the document differs",
    )
    p.add_argument(
        "--beta",
        type=significance_level,
        help="hold the radius to this confidence level (default: the document's beta, else 0.05)",
    )
    add_json_flag(p, "print the audit as one JSON line")
    p.set_defaults(func=cmd_audit)

    p = sub.add_parser("evaluate", help="utility and realised epsilon of a mechanism")
    p.add_argument("document", metavar="FILE")
    p.add_argument("--data", metavar="CSV", help="evaluate under this CSV's empirical distribution")
    p.add_argument("--names", type=names, help="column names for a CSV without a header row")
    add_csv_flags(p)
    p.add_argument(
        "--cost",
        metavar="absolute|hamming|FILE.csv",
        help="distp documents: the cost over U of the Earth mover's distance (XDistP) and of the expected "
        "loss (default: the document's coupling cost, else hamming)",
    )
    add_json_flag(p, "print the evaluation as one JSON line")
    p.set_defaults(func=cmd_evaluate)
