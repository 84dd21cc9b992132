"""``rldp backup``, ``rldp restore`` and ``rldp prune``: the operator's commands on the store itself.

They open the store directly (``--db``, else $RLDP_DATABASE_URL, else the default store of
``rldp serve``), not through the HTTP API: a backup is taken beside a running server (SQLite's
online backup API, ``pg_dump`` on PostgreSQL: :mod:`rldp.aggregator.storage.backup`); a restore
wants the server stopped; a prune runs beside it (:mod:`rldp.aggregator.storage.retention`).
"""

from __future__ import annotations

import argparse
import os
import time
from datetime import UTC, date, datetime

from rldp.aggregator.storage import default_url, open_storage
from rldp.aggregator.storage.backup import backup, restore
from rldp.aggregator.storage.retention import prune
from rldp.shared.arguments import add_json_flag

from .common import CommandError, emit

__all__ = ["add_parser", "parse_cutoff"]


def _url(args: argparse.Namespace) -> str:
    return args.db or os.environ.get("RLDP_DATABASE_URL") or default_url()


def parse_cutoff(text: str | None, now: float | None = None) -> float:
    """``--before``: an ISO date (midnight UTC) or date-time (UTC unless it names its offset) in
    the past, as Unix seconds; CommandError naming what was expected otherwise."""
    now = time.time() if now is None else now
    if text is None:
        raise CommandError("give --before DATE: the reports received before it are removed (e.g. 2026-01-31)")
    text = text.strip()
    try:
        if len(text) == 10:
            moment = datetime.combine(date.fromisoformat(text), datetime.min.time(), UTC)
        else:
            moment = datetime.fromisoformat(text)
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
    except ValueError:
        raise CommandError(
            f"--before must be a date such as 2026-01-31 or a date-time such as 2026-01-31T12:00:00Z; got {text!r}"
        ) from None
    cutoff = moment.timestamp()
    if cutoff > now:
        raise CommandError(f"--before {text} is in the future: it would remove reports still arriving")
    return cutoff


def _resolve(storage: object, args: argparse.Namespace) -> list[str] | None:
    """The mechanism ids ``--mechanism`` (ids or unique prefixes) and ``--collection`` name; None: all."""
    if not args.mechanism and not args.collection:
        return None
    known = [m.id for m in storage.list_mechanisms()]  # type: ignore[attr-defined]
    chosen: list[str] = []
    for given in args.mechanism or []:
        matches = [m for m in known if m == given] or [m for m in known if m.startswith(given)]
        if len(matches) != 1:
            what = "no mechanism" if not matches else f"{len(matches)} mechanisms"
            raise CommandError(f"--mechanism {given!r}: {what} with this id or prefix in the store")
        chosen.append(matches[0])
    for name in args.collection or []:
        record = storage.get_collection(name)  # type: ignore[attr-defined]
        if record is None:
            raise CommandError(f"--collection {name!r}: no such collection in the store")
        chosen.extend(entry.mechanism for entry in record.mechanisms)
    return list(dict.fromkeys(chosen))


def cmd_backup(args: argparse.Namespace) -> int:
    summary = backup(_url(args), args.out, force=args.force)
    emit(args, {"backup": args.out, **summary.to_dict()}, [f"backed up to {args.out}: {summary.lines()[0]}"])
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    summary = restore(_url(args), args.source, force=args.force)
    emit(args, {"restored": args.source, **summary.to_dict()}, [f"restored {args.source}:", *summary.lines()])
    return 0


def cmd_prune(args: argparse.Namespace) -> int:
    cutoff = parse_cutoff(args.before)
    storage = open_storage(_url(args))
    try:
        removed = prune(storage, cutoff, _resolve(storage, args), dry_run=args.dry_run)
    finally:
        storage.close()
    verb = "would remove" if args.dry_run else "removed"
    batches = sum(b for b, _ in removed.values())
    reports = sum(n for _, n in removed.values())
    lines = [f"{verb} {reports} reports in {batches} batches received before {args.before}"]
    lines += [f"  {mid}  {n} reports in {b} batches" for mid, (b, n) in sorted(removed.items())]
    record = {
        "dry_run": args.dry_run,
        "before": cutoff,
        "removed": {mid: {"batches": b, "reports": n} for mid, (b, n) in removed.items()},
    }
    emit(args, record, lines)
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--db", metavar="URL", default=None, help="the store (default $RLDP_DATABASE_URL, else rldp serve's default)"
    )
    add_json_flag(p, "one JSON line on stdout")


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``backup``, ``restore`` and ``prune``."""
    p = sub.add_parser(
        "backup",
        help="back up the store (safe while the server runs)",
        description="Copy the store to OUT: SQLite's online backup API, or pg_dump (custom format) for PostgreSQL.",
    )
    p.add_argument("out", metavar="OUT", help="the backup file to write")
    p.add_argument("--force", action="store_true", help="replace OUT if it exists")
    _common(p)
    p.set_defaults(func=cmd_backup)
    p = sub.add_parser(
        "restore",
        help="restore a backup into an empty store (stop the server first)",
        description="Restore a backup made by rldp backup; refuses a store that holds anything unless --force.",
    )
    p.add_argument("source", metavar="IN", help="the backup file")
    p.add_argument("--force", action="store_true", help="replace what the target store holds")
    _common(p)
    p.set_defaults(func=cmd_restore)
    p = sub.add_parser(
        "prune",
        help="remove reports received before a date",
        description="Remove the reports of the batches received before DATE (their ids stay known: a re-sent "
        "batch is answered as a duplicate, never counted again).",
    )
    p.add_argument("--before", metavar="DATE", help="2026-01-31 (midnight UTC) or an ISO date-time")
    p.add_argument("--mechanism", action="append", metavar="ID", help="only this mechanism (id or prefix; repeatable)")
    p.add_argument("--collection", action="append", metavar="NAME", help="only this collection's mechanisms")
    p.add_argument("--dry-run", action="store_true", help="say what would be removed; change nothing")
    _common(p)
    p.set_defaults(func=cmd_prune)
