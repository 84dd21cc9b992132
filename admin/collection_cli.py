"""The operator's collection commands: ``rldp collections`` and ``rldp collection
create|show|rotate|switch|resume|upload-token|retire|estimate``.

    rldp collection create app-usage --mechanism d62785a1 --notion rldp --epsilon 1 --description "daily use"
    rldp collection create app-usage --mechanism PILOT --notion rldp --epsilon 1 --switch-after 2000 --drift pause
    rldp collections                          # name, status, policy, window, current mechanism
    rldp collection rotate app-usage 3f2a9c   # a new published mechanism becomes current
    rldp collection estimate app-usage        # P_X from every mechanism's reports, one likelihood
    rldp collection switch app-usage          # end the pilot: design over its confidence set, rotate
    rldp collection resume app-usage          # lift the pause its drift policy set
    rldp collection upload-token app-usage    # require (or rotate) the token uploads must carry; --revoke
    rldp collection retire app-usage

Like :mod:`.cli`: one SDK call each, the admin token from RLDP_ADMIN_TOKEN, ids as
unique prefixes, a table for people and ``--json`` for programs.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rldp.shared.arguments import positive_float, positive_int
from rldp.shared.collection import DEFAULT_CONTAMINATION, DRIFT_POLICIES, drift_policy

from .connect import ID_HELP
from .connect import admin_client as _client
from .connect import mechanism_id as _mechanism_id
from .output import add_estimate_options, estimate_rows, print_json, render_table, short_number, utc_minute

__all__ = ["add_parsers"]

SHORT = 12


def _policy(policy: dict[str, Any]) -> str:
    """A claim policy in one cell: ``rldp ε ≤ 1``, ``distp ε ≤ 1 δ ≤ 0.001``."""
    names = {"epsilon": "ε", "delta": "δ", "epsilon_lower": "ε_l", "epsilon_upper": "ε_u"}
    return " ".join(
        [str(policy.get("notion", "?"))] + [f"{names[k]} ≤ {short_number(v)}" for k, v in policy.items() if k in names]
    )


def _status(c: dict[str, Any]) -> str:
    """What the operator must see: ``paused`` for an active collection whose current mechanism its drift
    policy paused (the API keeps ``status`` for the lifecycle, active|retired, and says why in ``paused``)."""
    return "paused" if c.get("paused") and c.get("status") == "active" else str(c.get("status"))


def _with_status(c: dict[str, Any]) -> dict[str, Any]:
    return {**c, "status": _status(c)}


def _uploads(c: dict[str, Any]) -> str:
    """Whether the collection's report uploads need its upload token (the token itself is never shown)."""
    required = c.get("upload_token_required")
    if required is None:
        return "unknown (the server does not say whether an upload token is required)"
    if required:
        return "need the collection's upload token (the app sends it: Client(url, upload_token=...))"
    return "need no token (anyone who can reach the server can send reports; rldp collection upload-token NAME)"


def _token_cell(required: Any) -> str:
    return "required" if required is True else "none" if required is False else "?"


def _show(c: dict[str, Any]) -> None:
    print(f"collection {c['name']} ({_status(c)}){': ' + c['description'] if c.get('description') else ''}")
    print(f"  policy {_policy(c['policy'])}; window {c.get('window') or 'none'}; current {c['current']}")
    policy = c["policy"]
    switch = policy.get("switch")
    print(
        f"  on drift: {drift_policy(policy)}"
        + ("" if not switch else f"; the pilot switches by itself after {int(switch['after']):,} reports")
    )
    print(f"  uploads: {_uploads(c)}")
    if c.get("paused"):
        print(f"  PAUSED since {utc_minute(c['paused'].get('since'))} UTC: {c['paused']['reason']}")
        print("  (its reports are refused and kept by the clients; rldp collection resume NAME takes them again)")
    for e in c["mechanisms"]:
        until = "now (current)" if e["current"] else f"{utc_minute(e.get('until'))} UTC"
        print(f"  {e['mechanism'][:SHORT]}  from {utc_minute(e.get('since'))} UTC to {until}")


def cmd_collections(args: argparse.Namespace) -> int:
    """``rldp collections``: every collection, oldest first."""
    with _client(args) as client:
        collections = client.collections()
        url = client.url
    if args.json:
        print_json({"collections": [_with_status(c) for c in collections]})
        return 0
    if not collections:
        print(f"no collections on {url}")
        return 0
    header = ("NAME", "STATUS", "POLICY", "WINDOW", "UPLOAD TOKEN", "CURRENT", "MECHANISMS", "CREATED (UTC)")
    rows = [
        (
            c["name"],
            _status(c),
            _policy(c["policy"]),
            c.get("window") or "-",
            _token_cell(c.get("upload_token_required")),
            c["current"][:SHORT],
            str(len(c["mechanisms"])),
            utc_minute(c.get("created")),
        )
        for c in collections
    ]
    print(render_table(header, rows, right=frozenset({6})))
    return 0


def _upload_token(args: argparse.Namespace) -> int:
    """``rldp collection upload-token NAME [--revoke]``: the new token, printed once (stdout: only the token)."""
    with _client(args, auth=True) as client:
        answer = client.revoke_upload_token(args.name) if args.revoke else client.rotate_upload_token(args.name)
    if args.json:
        print_json(answer)
    elif args.revoke:
        done = "revoked" if answer.get("revoked") else "had none: nothing to revoke"
        print(f"{args.name}: upload token {done}; its report uploads need no token again")
    else:
        print(answer["token"])
        previous = (
            "the previous token stays valid until the next rotation" if answer["previous_valid"] else "none before"
        )
        print(
            f"upload token of {args.name} (shown once; the service keeps its hash only; {previous}). Give it to every "
            "install of the app (Client(url, upload_token=...)), never one per install; rotate it if it leaks.",
            file=sys.stderr,
        )
    return 0


def cmd_collection(args: argparse.Namespace) -> int:
    """``rldp collection ACTION NAME …``."""
    if args.action == "upload-token":
        return _upload_token(args)
    with _client(args, auth=args.action != "show", read=args.action == "estimate") as client:
        if args.action == "create":
            policy: dict[str, Any] = {"notion": args.notion}
            for key in ("epsilon", "delta", "epsilon_lower", "epsilon_upper", "drift", "contamination"):
                if getattr(args, key) is not None:
                    policy[key] = getattr(args, key)
            if args.switch_after is not None:
                policy["switch"] = {"after": args.switch_after}
                if args.switch_method is not None:  # else the service uses the notion's recommended designer
                    policy["switch"]["method"] = args.switch_method
            mechanism = _mechanism_id(client, args.mechanism)
            answer = client.create_collection(
                args.name, mechanism, policy, description=args.description, window=args.window
            )
        elif args.action == "rotate":
            answer = client.rotate_collection(args.name, _mechanism_id(client, args.mechanism))
        elif args.action == "retire":
            answer = client.retire_collection(args.name)
        elif args.action == "resume":
            answer = client.resume_collection(args.name)
        elif args.action == "estimate":
            answer = client.estimate_collection(
                args.name, window=args.window, method=args.method, interval=args.interval
            ).to_dict()
        elif args.action == "switch":
            answer = client.switch_collection(
                args.name, args.method, min_reports=args.min_reports, beta=args.beta, time_budget=args.time_budget
            )
        else:
            answer = client.collection_info(args.name)
    if args.json:
        print_json(answer if args.action in ("estimate", "switch") else _with_status(answer))
    elif args.action == "switch":
        if answer["status"] == "done":
            print(f"switched {args.name} to {answer['mechanism']} (designed over the pilot's confidence set)")
        else:
            print(f"{args.name} not switched: {answer.get('error') or answer['status']}")
            return 1
    elif args.action == "estimate":
        parts = ", ".join(f"{m['mechanism'][:SHORT]}: {m['reports']:,}" for m in answer["mechanisms"])
        print(
            f"collection {answer['collection']}: {answer['n']:,} reports over {len(answer['mechanisms'])} mechanisms ({parts})"
        )
        table = [
            (s, u, *("-" if v is None else f"{float(v):.4f}" for v in values))
            for s, u, *values in estimate_rows(answer)
        ]
        print(render_table(("S", "U", "P_X", "95% LOW", "95% HIGH"), table, right=frozenset({2, 3, 4})))
        if answer.get("ci95", {}).get("withheld_reason"):
            print(f"note: intervals shown as - are withheld: {answer['ci95']['withheld_reason']}")
    else:
        verbs = {
            "create": "created" if answer.get("created", True) else "already exists (unchanged):",
            "rotate": "rotated",
            "resume": "resumed",
        }
        if args.action in verbs or args.action == "retire":
            print(verbs.get(args.action, "retired"), answer["name"])
        _show(answer)
    return 0


def add_parsers(subparsers: argparse._SubParsersAction[argparse.ArgumentParser], common: list[Any], admin: str) -> None:
    """Register ``collections`` and ``collection``."""
    p = subparsers.add_parser(
        "collections",
        parents=common,
        help="list the server's collections",
        description="The collections, oldest first: name, status (active; paused: its drift policy paused its "
        "current mechanism, reports are refused until `rldp collection resume`; retired), claim policy, window, "
        "current mechanism.",
    )
    p.set_defaults(func=cmd_collections)
    p = subparsers.add_parser(
        "collection",
        help="create, show, rotate, switch, resume, retire or estimate a collection",
        description="A collection is a stable name apps follow (Client(url).collection(NAME), rldp privatize "
        "--collection NAME) whose mechanism the operator rotates.",
    )
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    a = actions.add_parser(
        "create",
        parents=common,
        help="create a collection",
        description="Create a "
        "collection whose first mechanism is ID, with a claim policy every later mechanism must satisfy." + admin,
    )
    a.add_argument("name", metavar="NAME")
    a.add_argument("--mechanism", metavar="ID", required=True, help=f"the first mechanism: {ID_HELP}")
    a.add_argument("--notion", required=True, help="the policy's privacy notion (rldp, ldp, distp, …)")
    a.add_argument("--epsilon", type=positive_float("epsilon"), help="the largest epsilon a mechanism may claim")
    a.add_argument("--delta", type=float, help="distp: the largest delta")
    a.add_argument("--epsilon-lower", type=positive_float("epsilon lower"), help="alip: the largest epsilon_lower")
    a.add_argument("--epsilon-upper", type=positive_float("epsilon upper"), help="alip: the largest epsilon_upper")
    a.add_argument(
        "--window",
        help="the mechanism's collection window (default: whatever it has, and it must have one); "
        "'none' for a mechanism designed without windows",
    )
    a.add_argument("--description", default="", help="what the collection measures")
    a.add_argument(
        "--drift",
        choices=DRIFT_POLICIES,
        help="what a detected drift does: warn (default: event, banner, metrics), pause (refuse reports until "
        "resumed; clients keep them) or redesign (design over the live reports and rotate)",
    )
    a.add_argument(
        "--contamination",
        type=float,
        metavar="GAMMA",
        help=f"the share of a window's reports that may be forged (uploads are anonymous) without the drift "
        f"watch acting on them, nor the pilot's confidence set leaving the honest users (in [0, 0.5); default "
        f"{DEFAULT_CONTAMINATION:g})",
    )
    a.add_argument(
        "--switch-after",
        type=positive_int("switch after"),
        metavar="N",
        help="a pilot collection: switch by itself once the pilot has N reports",
    )
    a.add_argument(
        "--switch-method",
        help="the design method of that switch (default: the notion's recommended one, polyopt for rldp)",
    )
    for action, text in (
        ("show", "show a collection and its history"),
        ("resume", "lift the pause its drift policy set"),
        ("retire", "retire a collection"),
    ):
        a = actions.add_parser(action, parents=common, help=text, description=text)
        a.add_argument("name", metavar="NAME")
    a = actions.add_parser(
        "rotate",
        parents=common,
        help="make another mechanism current",
        description="Make the published mechanism ID the collection's current one." + admin,
    )
    a.add_argument("name", metavar="NAME")
    a.add_argument("mechanism", metavar="ID", help=ID_HELP)
    a = actions.add_parser(
        "upload-token",
        parents=common,
        help="require a token on the collection's report uploads, or rotate it (--revoke: require none)",
        description="Make a new upload token for the collection and print it once: its report uploads must then "
        "carry it ('Authorization: Bearer'); the previous token stays valid until the next rotation. The app's "
        "backend hands the same token to every install (it links a report to 'an install of this app', nothing "
        "finer); rotate it if it leaks. --revoke: uploads need no token again." + admin,
    )
    a.add_argument("name", metavar="NAME")
    a.add_argument("--revoke", action="store_true", help="drop the requirement (no token needed again)")
    a = actions.add_parser(
        "estimate",
        parents=common,
        help="estimate P(S, U) from every mechanism's reports",
        description="One likelihood over the reports of every mechanism of the collection.",
    )
    a.add_argument("name", metavar="NAME")
    a.add_argument("--window", metavar="LABEL", default=None, help="only this collection window")
    add_estimate_options(a)
    a = actions.add_parser(
        "switch",
        parents=common,
        help="end the pilot: design over its confidence set and rotate if it beats the pilot",
        description="The collection's current mechanism must be a pilot (RLDP over every distribution). The server "
        "designs METHOD over the confidence set its reports give (P̂ from the pilot, no public data) and rotates the "
        "collection to it only if it has more utility at P̂ than the pilot; exit 1 when the pilot is kept." + admin,
    )
    a.add_argument("name", metavar="NAME")
    a.add_argument("--method", default="polyopt", help="the next mechanism's design method (default polyopt)")
    a.add_argument("--min-reports", type=positive_int("min reports"), help="the fewest pilot reports (default 1000)")
    a.add_argument("--beta", type=positive_float("beta"), help="1 - the confidence of the pilot's set (default 0.05)")
    a.add_argument("--time-budget", type=positive_float("time budget"), help="seconds for the design")
    for parser in actions.choices.values():
        parser.set_defaults(func=cmd_collection)
