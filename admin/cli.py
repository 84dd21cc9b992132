"""The operator's commands over the HTTP API: ``rldp publish | mechanisms | estimate | retire | jobs | job``.

    export RLDP_SERVER=https://agg.example RLDP_ADMIN_TOKEN=...   # or --server URL
    rldp publish mech.json          # upload a document; the server recomputes its id and audit
    rldp mechanisms                 # the catalogue as a table (--json: the API's answer)
    rldp mechanisms get d627 --out next.json   # a published document, verified, as JSON or msgpack
    rldp estimate d62785a1 --csv    # P_X with 95 % intervals: cell,estimate,low,high
    rldp estimate d627 --method em --interval bootstrap   # the estimator and interval method
    rldp retire d62785a1            # refuse further reports
    rldp jobs; rldp job 3f2a        # design jobs, newest first

Each command is one call of the operator's SDK (:class:`rldp.admin.AdminClient`), so it needs only the client
install. The server comes from ``--server`` or RLDP_SERVER; admin calls take the token from
RLDP_ADMIN_TOKEN (an estimate also accepts RLDP_READ_TOKEN), never from the command line, where
other users could read it in the process list. Ids may be shortened to a unique prefix, as the
tables print them. Output is a table for people; ``--json`` prints the API's answer as one JSON
document, ``estimate --csv`` a CSV. Errors are one line and exit status 2 (by the root command).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rldp.client.connection import SERVER_ENV, connection_options
from rldp.client.ids import SHORT, resolve_prefix
from rldp.shared.arguments import positive_int
from rldp.shared.claims import ascii_text, claim_text, record_audited_text
from rldp.shared.document import from_json, read_document
from rldp.shared.errors import ValidationError
from rldp.shared.tables import csv_document

from .calls import AdminClient
from .collection_cli import add_parsers as add_collection_parsers
from .connect import ADMIN_TOKEN_ENV, ID_HELP, READ_TOKEN_ENV
from .connect import admin_client as _client
from .connect import mechanism_id as _mechanism_id
from .document_cli import add_get_parser, cmd_get
from .output import (
    add_estimate_options,
    drift_line,
    estimate_rows,
    numeric_lines,
    print_json,
    render_table,
    short_number,
    utc_minute,
)

__all__ = ["SERVER_ENV", "ADMIN_TOKEN_ENV", "READ_TOKEN_ENV", "add_parser"]

#: Jobs searched for a job id prefix (the server's largest page).
JOB_SEARCH = 500
#: The widest label ``rldp mechanisms`` prints (``--json`` gives it whole).
LABEL_CELL = 32


# --------------------------------------------------------------------------- connecting


def _job_id(client: AdminClient, given: str) -> str:
    """The full job id ``given`` abbreviates, among the JOB_SEARCH most recent jobs."""
    return resolve_prefix(given, lambda: [j["job"] for j in client.jobs(JOB_SEARCH)], "design job", 32, "rldp jobs")


# --------------------------------------------------------------------------- commands


def cmd_publish(args: argparse.Namespace) -> int:
    """``rldp publish DOC``: upload a document (POST /v1/mechanisms); the server re-audits it before storing it."""
    document = _read_document(args.document)
    with _client(args, auth=True) as client:
        answer = client.publish(document, label=args.label)
    if args.json:
        print_json(answer)
        return 0
    verb = "published" if answer.get("created", True) else "already published (unchanged)"
    print(f"{verb} {answer['id']}" + (f" ({answer['label']})" if answer.get("label") else ""))
    notion = str(document["privacy"].get("notion", "rldp"))
    audited = record_audited_text(notion, answer.get("epsilon_audited"))
    print(
        ascii_text(
            f"  {answer['method']}, {notion} claims {claim_text(document['privacy'])}; passed the server's audit "
            f"(audited {audited}); status {answer['status']}"
        )
    )
    return 0


def _read_document(path: str) -> dict[str, Any]:
    """The document at ``path`` (JSON or msgpack; '-': JSON on standard input), its form and id checked
    here first; the server checks them again and recomputes the audit."""
    if path == "-":
        return from_json(sys.stdin.buffer.read())
    return read_document(path)


def cmd_label(args: argparse.Namespace) -> int:
    """``rldp mechanisms label ID TEXT`` (``--clear``): set or remove a mechanism's label (PATCH; admin)."""
    if (args.text is None) == (not args.clear):
        raise ValidationError("give the label TEXT, or --clear to remove the label (not both)")
    with _client(args, auth=True) as client:
        answer = client.set_label(_mechanism_id(client, args.mechanism), None if args.clear else args.text)
    if args.json:
        print_json(answer)
    elif answer.get("label") is None:
        print(f"{answer['id']}: label removed")
    else:
        print(f"{answer['id']}: label {answer['label']!r}")
    return 0


def _label_cell(label: Any) -> str:
    """A label in a table cell: "-" for none, cut to LABEL_CELL characters."""
    if not label:
        return "-"
    text = str(label)
    return text if len(text) <= LABEL_CELL else text[: LABEL_CELL - 1] + "…"


def cmd_mechanisms(args: argparse.Namespace) -> int:
    """``rldp mechanisms``: the catalogue (GET /v1/mechanisms), one row per mechanism, oldest first."""
    if getattr(args, "action", None) == "label":
        return cmd_label(args)
    if getattr(args, "action", None) == "get":
        return cmd_get(args)
    with _client(args) as client:
        mechanisms = client.mechanisms()
        url = client.url
    if args.json:
        print_json({"mechanisms": mechanisms})
        return 0
    if not mechanisms:
        print(f"no mechanisms published on {url}")
        return 0
    header = ("ID", "LABEL", "METHOD", "NOTION", "CLAIM", "AUDITED", "OUTPUTS", "STATUS", "S", "U", "PUBLISHED (UTC)")
    rows = [
        (
            m["id"][:SHORT],
            _label_cell(m.get("label")),
            m["method"],
            m.get("notion", "-"),
            # In the notion's terms: (ε, δ) for distp, (ε_l, ε_u) for alip (older servers: ε alone).
            ascii_text(claim_text(m.get("claim") or {"notion": m.get("notion", "rldp"), "epsilon": m["epsilon"]})),
            ascii_text(record_audited_text(m.get("notion", "rldp"), m.get("epsilon_audited"))),
            str(m["outputs"]),
            m["status"],
            m["sensitive"],
            ",".join(m["released"]),
            utc_minute(m.get("published")),
        )
        for m in mechanisms
    ]
    print(render_table(header, rows, right=frozenset({4, 5, 6})))
    return 0


def cmd_estimate(args: argparse.Namespace) -> int:
    """``rldp estimate ID``: the server's P_X with 95 % intervals, one row per cell x = (s, u), s major."""
    if args.csv and args.json:
        raise ValidationError("give --csv or --json, not both")
    with _client(args, auth=True, read=True) as client:
        mechanism = _mechanism_id(client, args.mechanism)
        answer = client.estimate(mechanism, window=args.window, method=args.method, interval=args.interval).to_dict()
    if args.json:
        print_json(answer)
        return 0
    rows = estimate_rows(answer)
    if args.csv:
        sys.stdout.write(
            csv_document(
                ("cell", "estimate", "low", "high"),
                ((f"{s}|{u}", *(None if v is None else float(v) for v in values)) for s, u, *values in rows),
            )
        )
        return 0
    labels = answer.get("labels") or {}
    s_name = labels.get("sensitive", {}).get("name", "s")
    u_name = "|".join(labels.get("released", {}).get("names") or ["u"])
    window = answer.get("window") or ("every window" if "windows" in answer else None)
    print(f"mechanism {answer['mechanism']} ({answer.get('status', '?')})")
    print(
        f"{answer['n']:,} reports{f' in {window}' if window else ''}; estimator {answer['method']}, "
        f"{answer['ci95'].get('level', 0.95):.0%} intervals ({answer['ci95'].get('method', '?')})"
    )
    header = (s_name, u_name, "P_X", "95% LOW", "95% HIGH")
    table = [(s, u, *("-" if v is None else f"{float(v):.4f}" for v in values)) for s, u, *values in rows]
    print(render_table(header, table, right=frozenset({2, 3, 4})))
    if answer["ci95"].get("withheld_reason"):
        print(f"note: intervals shown as - are withheld: {answer['ci95']['withheld_reason']}")
    if not answer.get("identifiable", True):
        print(
            f"note: P_X is not identifiable from these reports (rank {answer.get('rank', '?')}); "
            "the estimate of a cell outside the identified ones is not determined by the data"
        )
    for line in numeric_lines(answer):
        print(line)
    print(drift_line(answer))
    return 0


def cmd_retire(args: argparse.Namespace) -> int:
    """``rldp retire ID``: stop accepting a mechanism's reports (idempotent; its estimates stay)."""
    with _client(args, auth=True) as client:
        answer = client.retire(_mechanism_id(client, args.mechanism))
    if args.json:
        print_json(answer)
    else:
        print(f"retired {answer['id']} at {utc_minute(answer.get('retired'))} UTC")
        print("  its reports are refused from now on; its document and estimates stay available")
    return 0


def _design(params: dict[str, Any]) -> str:
    """One line saying what a job designs."""
    released = ",".join(params.get("released") or [])
    return (
        f"{params.get('method', '?')} at epsilon {short_number(params.get('epsilon'))}, S {params.get('sensitive', '?')}, "
        f"U {released or '?'}, from {params.get('n', '?')} public records"
    )


def _outcome(job: dict[str, Any]) -> str:
    """A job's result in a table cell: the mechanism's id prefix once done, the error once failed."""
    if job["status"] == "done":
        return str(job.get("mechanism") or "")[:SHORT]
    return " ".join(str(job.get("error") or "").split())[:70] if job["status"] == "failed" else ""


def cmd_jobs(args: argparse.Namespace) -> int:
    """``rldp jobs``: the most recent design jobs (GET /v1/designs), newest first."""
    with _client(args, auth=True) as client:
        jobs = client.jobs(args.limit)
        url = client.url
    if args.json:
        print_json({"jobs": jobs})
        return 0
    if not jobs:
        print(f"no design jobs on {url}")
        return 0
    header = ("JOB", "STATUS", "CREATED (UTC)", "SECONDS", "METHOD", "EPSILON", "S", "U", "MECHANISM / ERROR")
    rows = [
        (
            j["job"][:SHORT],
            j["status"],
            utc_minute(j.get("created")),
            f"{float(j['elapsed']):.1f}",
            str(j.get("params", {}).get("method", "-")),
            short_number(j.get("params", {}).get("epsilon")),
            str(j.get("params", {}).get("sensitive", "-")),
            ",".join(j.get("params", {}).get("released") or []),
            _outcome(j),
        )
        for j in jobs
    ]
    print(render_table(header, rows, right=frozenset({3, 5})))
    return 0


def cmd_job(args: argparse.Namespace) -> int:
    """``rldp job ID``: one design job (GET /v1/designs/{job}): what it designs and its result."""
    with _client(args, auth=True) as client:
        job = client.job(_job_id(client, args.job))
    if args.json:
        print_json(job)
        return 0
    lines = [
        ("job", job["job"]),
        ("status", job["status"]),
        ("created", f"{utc_minute(job.get('created'))} UTC ({float(job['elapsed']):.1f} s elapsed)"),
        ("design", _design(job.get("params", {}))),
    ]
    lines += [("warning", " ".join(str(w).split())) for w in job.get("params", {}).get("warnings") or []]
    if job.get("mechanism"):
        lines.append(("mechanism", job["mechanism"]))
    if job.get("error"):
        lines.append(("error", " ".join(str(job["error"]).split())))
    width = max(len(key) for key, _ in lines)
    print("\n".join(f"{key.ljust(width)}  {value}" for key, value in lines))
    return 0


# --------------------------------------------------------------------------- parsers


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``publish``, ``mechanisms``, ``estimate``, ``retire``, ``jobs``, ``job``, ``collections``, ``collection``."""
    common = [connection_options(retries=2, json_help="print the API's answer as one JSON document")]
    admin = f" Needs {ADMIN_TOKEN_ENV}."

    p = subparsers.add_parser(
        "publish",
        parents=common,
        help="publish a mechanism document on the server",
        description="Upload a mechanism document; the server recomputes its id and privacy audit and refuses "
        "one that fails. Publishing the same document again changes nothing." + admin,
    )
    p.add_argument(
        "document",
        metavar="DOC",
        help="the mechanism document (JSON or msgpack, e.g. from rldp design; - for JSON on stdin)",
    )
    p.add_argument(
        "--label",
        default=None,
        metavar="TEXT",
        help="a human name for the mechanism (at most 200 characters; not part of the document or its id)",
    )
    p.set_defaults(func=cmd_publish)

    p = subparsers.add_parser(
        "mechanisms",
        parents=common,
        help="list the server's mechanisms",
        description="The published mechanisms, oldest first: id (first characters), label, method, privacy notion, "
        "claimed and audited epsilon, number of outputs, status, S and U. 'rldp mechanisms label ID TEXT' sets a "
        "mechanism's label; 'rldp mechanisms get ID --out FILE' downloads its document.",
    )
    actions = p.add_subparsers(dest="action", metavar="{label,get}")
    a = actions.add_parser(
        "label",
        parents=common,
        help="set or remove a mechanism's label",
        description="Set (or with --clear remove) a mechanism's label: a human name shown by rldp mechanisms and "
        "the dashboard. The document and its id do not change." + admin,
    )
    a.add_argument("mechanism", metavar="ID", help=ID_HELP)
    a.add_argument("text", metavar="TEXT", nargs="?", default=None, help="the label (at most 200 characters)")
    a.add_argument("--clear", action="store_true", help="remove the label")
    a.set_defaults(func=cmd_mechanisms)
    add_get_parser(actions, common)
    p.set_defaults(func=cmd_mechanisms)

    p = subparsers.add_parser(
        "estimate",
        parents=common,
        help="estimate P(S, U) from a mechanism's reports",
        description="The server's estimate of P_X = P(S, U) with 95 % intervals, from every report or one "
        f"collection window's. Needs {ADMIN_TOKEN_ENV} (or {READ_TOKEN_ENV}).",
    )
    p.add_argument("mechanism", metavar="ID", help=ID_HELP)
    p.add_argument("--window", metavar="LABEL", default=None, help="only this collection window (e.g. 2026-11-24)")
    p.add_argument("--csv", action="store_true", help="print CSV: cell (s|u), estimate, low, high")
    add_estimate_options(p)
    p.set_defaults(func=cmd_estimate)

    p = subparsers.add_parser(
        "retire",
        parents=common,
        help="retire a mechanism (refuse its further reports)",
        description="Retire a mechanism: its reports are refused from now on; its document and estimates "
        "stay available." + admin,
    )
    p.add_argument("mechanism", metavar="ID", help=ID_HELP)
    p.set_defaults(func=cmd_retire)

    p = subparsers.add_parser(
        "jobs",
        parents=common,
        help="list the server's design jobs, newest first",
        description="The most recent design jobs (POST /v1/designs), newest first." + admin,
    )
    p.add_argument(
        "--limit", type=positive_int("limit"), default=None, help="at most this many (server default 50, at most 500)"
    )
    p.set_defaults(func=cmd_jobs)

    p = subparsers.add_parser(
        "job",
        parents=common,
        help="show one design job",
        description="A design job's status, what it designs and its result (the mechanism id or the error)." + admin,
    )
    p.add_argument("job", metavar="ID", help="job id, or a unique prefix of one among the 500 most recent")
    p.set_defaults(func=cmd_job)
    add_collection_parsers(subparsers, common, admin)
