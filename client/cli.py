"""``rldp privatize``: privatise a CSV of records on this machine and submit the outputs.

    rldp privatize --server http://127.0.0.1:8000 --mechanism ID users.csv
    rldp privatize --collection app-usage --owner-column user users.csv   # windowed: one report per user and day
    rldp privatize --collection app-usage --state st.sqlite3 --owner-column user users.csv

The mechanism is downloaded and verified (content id, privacy audit, and the app's policy:
``--pin``, ``--max-epsilon``, ``--min-radius``, ``--max-public-n``) before any record is read;
records are randomised locally with the OS CSPRNG; only the outputs are sent. With ``--state
FILE`` each record's draw is memoised (the same output on every later run) and mechanisms with
a collection window get at most one report per owner and window (``--owner-column``: whose
record each row is; required with a state file for more than one row, else identical rows of
different people would share one draw; without ``--state`` it keeps the memo in the default state
file, as ``Client(url)`` does, so a windowed mechanism needs only this one flag). ``--collection
NAME`` follows a collection: its current mechanism, verified the same way (a rotation means a
fresh draw). A collection that requires an upload token (``rldp collection show NAME`` says so) takes
the uploads only with it: ``--upload-token TOKEN`` or, kept out of the process list, RLDP_UPLOAD_TOKEN
(the token the operator made with ``rldp collection upload-token NAME``).
"""

from __future__ import annotations

import argparse
import json
import os

from rldp.shared.arguments import add_csv_flags, names, positive_float, positive_int
from rldp.shared.errors import RldpError
from rldp.shared.tables import read_csv

from .client import DEFAULT_RETRIES, Client
from .connection import connection_options, server_url
from .defaults import default_state_path
from .errors import UploadCredentialRefused
from .ids import ID_HELP, document_file_id
from .mechanism import Mechanism

__all__ = ["UPLOAD_TOKEN_ENV", "add_parser", "cmd_privatize"]

UPLOAD_TOKEN_ENV = "RLDP_UPLOAD_TOKEN"


def _upload_token(args: argparse.Namespace) -> str | None:
    """``--upload-token``, else RLDP_UPLOAD_TOKEN, else None (uploads without a token); an empty or blank
    value given on purpose is refused by the Client, naming what is expected."""
    if args.upload_token is not None:
        return str(args.upload_token)
    return os.environ.get(UPLOAD_TOKEN_ENV) or None


def cmd_privatize(args: argparse.Namespace) -> int:
    if args.flush and not args.queue:
        raise ValueError("--flush needs --queue FILE (the offline queue to send)")
    if args.data is None and not args.flush:
        raise ValueError("give DATA.csv to privatise (or --flush --queue FILE to send queued batches)")
    if args.data is not None and not (args.mechanism or args.collection):
        raise ValueError("--mechanism ID or --collection NAME is required to privatise DATA.csv (see rldp mechanisms)")
    if args.mechanism and args.collection:
        raise ValueError("give --mechanism ID or --collection NAME, not both")
    # --owner-column alone keeps the memo where Client(url) keeps it by default: one flag for a windowed mechanism.
    state = args.state if args.state or not args.owner_column else str(default_state_path())
    with Client(
        server_url(args),
        timeout=args.timeout,
        retries=args.retries,
        queue_path=args.queue,
        max_epsilon=args.max_epsilon,
        pinned=args.pin,
        min_radius=args.min_radius,
        max_public_n=args.max_public_n,
        state_path=state,
        upload_token=_upload_token(args),
    ) as client:
        try:
            flushed = client.flush() if args.flush else None
            if args.data is None:
                assert flushed is not None
                summary = {
                    "flushed": flushed.accepted,
                    "batches": flushed.batches,
                    "queued": flushed.queued,
                    "rejected": flushed.rejected,
                }
                print(
                    json.dumps(summary)
                    if args.json
                    else f"sent {flushed.accepted} queued reports in {flushed.batches} batches; {flushed.queued} still "
                    f"queued; {flushed.rejected} refused by the server" + "".join(f"\n  {p}" for p in flushed.problems)
                )
                return 0 if flushed.queued == 0 else 3
            # verify before reading any record
            mech = (
                client.collection(args.collection).current()
                if args.collection
                else client.mechanism(document_file_id(args.mechanism) or args.mechanism)
            )
            table = read_csv(args.data, names=args.names, delimiter=args.delimiter, encoding=args.encoding)
            if len(table.columns) == 1 and any(c in table.columns[0] for c in ";\t|,"):
                raise ValueError(
                    f"{args.data} has a single column {table.columns[0]!r}: is the delimiter right? (--delimiter)"
                )
            _check_state(args, state, mech, table.n_rows)
            owners = table.column(args.owner_column) if args.owner_column else None
            receipt = client.submit(mech.id, table, owners=owners, batch_size=args.batch_size)
        except RldpError as exc:
            done = f" (accepted before the error: {exc.receipt.accepted} reports)" if exc.receipt else ""
            if isinstance(exc, UploadCredentialRefused):  # the CLI's way to give the token, not the SDK's
                raise ValueError(
                    f"{exc.status} {exc.reason}: {exc.detail or exc.title} (give the collection's upload token: "
                    f"--upload-token TOKEN or ${UPLOAD_TOKEN_ENV}){done}"
                ) from None
            raise ValueError(f"{exc}{done}") from None
    record: dict[str, object] = {
        "collection": args.collection,
        "mechanism": mech.id,
        "method": mech.method,
        "epsilon": mech.epsilon,
        "records": table.n_rows,
        "accepted": receipt.accepted,
        "batches": receipt.batches,
        "duplicates": receipt.duplicates,
        "queued": receipt.queued,
        "dropped": receipt.dropped,
        "skipped": receipt.skipped,
        "window": receipt.window,
    }
    if flushed is not None:
        record["flushed"] = flushed.accepted
    if args.json:
        print(json.dumps(record))
    else:
        print(
            f"privatised {table.n_rows} records with {mech.method} (epsilon {mech.epsilon:g}, audited "
            f"{mech.epsilon_audited:.6g}) {mech.id[:12]}"
        )
        print(
            f"  accepted {receipt.accepted} reports in {receipt.batches} batches"
            + (f" ({receipt.duplicates} duplicates)" if receipt.duplicates else "")
            + (f"; {receipt.queued} queued for later (--flush --queue FILE)" if receipt.queued else "")
            + (f"; {receipt.dropped} dropped from the full queue" if receipt.dropped else "")
            + (f"; {receipt.skipped} skipped (already reported in window {receipt.window})" if receipt.skipped else "")
        )
    return 0 if receipt.queued == 0 else 3


def _check_state(args: argparse.Namespace, state: str | None, mech: Mechanism, rows: int) -> None:
    """Refuse, before any draw, what the client would refuse, with advice that works for ``mech``."""
    owners = "--owner-column NAME (the column saying whose record each row is; add one if the file has none)"
    if mech.window is not None and state is None:
        raise ValueError(
            f"mechanism {mech.id[:12]} collects at most one report per owner per {mech.window.text} window, so what "
            f"was sent must be kept in a state file: give {owners}; the state file is then {default_state_path()}"
            + (" (or --state FILE for a file of one row)" if rows == 1 else "")
        )
    if state is not None and rows > 1 and not args.owner_column:
        raise ValueError(
            f"{args.data} has {rows} rows and no --owner-column: with --state every row would be one person's and "
            f"identical rows would share one draw; give {owners}"
            + (", or drop --state to draw afresh" if mech.window is None else "")
        )


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``privatize``."""
    p = subparsers.add_parser(
        "privatize",
        help="privatise a CSV of records locally and submit the outputs",
        description="Download and verify a mechanism, privatise every record of DATA.csv with "
        "the OS CSPRNG, and upload only the outputs (in batches, with retries).",
        parents=[connection_options(retries=DEFAULT_RETRIES, json_help="print one JSON line")],
    )
    p.add_argument("data", metavar="DATA.csv", nargs="?", help="records: CSV with a header row (.gz allowed)")
    p.add_argument("--mechanism", metavar="ID", help=f"{ID_HELP} (see rldp mechanisms)")
    p.add_argument(
        "--collection", metavar="NAME", help="follow this collection: its current mechanism (see rldp collections)"
    )
    p.add_argument("--names", type=names, help="column names for a CSV without a header row")
    add_csv_flags(p)
    p.add_argument(
        "--batch-size", type=positive_int("batch size"), default=10_000, help="reports per upload (default 10000)"
    )
    p.add_argument(
        "--max-epsilon",
        type=positive_float("max epsilon"),
        default=None,
        help="refuse a mechanism that claims a larger epsilon",
    )
    p.add_argument(
        "--pin",
        action="append",
        metavar="ID",
        default=None,
        help="accept only this mechanism id (repeatable): the ids the app audited against the public data",
    )
    p.add_argument(
        "--min-radius",
        type=positive_float("min radius"),
        default=None,
        help="refuse a mechanism whose confidence radius is smaller (nats)",
    )
    p.add_argument(
        "--max-public-n",
        type=positive_int("max public n"),
        default=None,
        help="refuse a mechanism that states more public samples, or a radius tighter than this many support",
    )
    p.add_argument(
        "--state",
        metavar="FILE",
        default=None,
        help="memoise each record's output in this private SQLite file (mode 0600): every later run "
        "sends the same output; needed for mechanisms with a collection window",
    )
    p.add_argument(
        "--owner-column",
        metavar="NAME",
        default=None,
        help="the column saying whose record each row is (required with a state file for more than one row); "
        "without --state the state file is the default one, as Client(url) keeps it",
    )
    p.add_argument(
        "--queue",
        metavar="FILE",
        default=None,
        help="keep batches that cannot be sent in this SQLite file (exit status 3 if any)",
    )
    p.add_argument("--flush", action="store_true", help="first send the batches kept in --queue")
    p.add_argument(
        "--upload-token",
        metavar="TOKEN",
        default=None,
        help=f"the collection's upload token, sent with every report upload, when its operator requires one "
        f"(default ${UPLOAD_TOKEN_ENV}, which keeps it out of the process list)",
    )
    p.set_defaults(func=cmd_privatize)
