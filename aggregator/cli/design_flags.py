"""The command line of ``rldp design``: its flags, each declared once (the request's own fields are read from
:func:`rldp.aggregator.design.request_fields`, so a new option declared there appears here by itself)."""

from __future__ import annotations

import argparse
from typing import Any

from rldp.shared.arguments import add_json_flag, add_progress_flags, names
from rldp.shared.collection import DEFAULT_WINDOW, NO_WINDOW, window_choice
from rldp.shared.errors import ValidationError
from rldp.shared.notions import NOTIONS as NOTION_TABLE

from ..design import ALL_METHODS, NOTIONS, field_kind, request_fields
from ..design.orchestration.choose import AUTO
from .common import radius_nats, significance_level
from .distp import parse_target
from .public_table import add_numeric_flags, add_table_flags

__all__ = ["add_design_flags"]


def _window(text: str) -> str | None:
    try:
        return window_choice(text)
    except ValidationError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_design_flags(p: argparse.ArgumentParser) -> None:
    """Every flag of ``rldp design`` on ``p``."""
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
    p.add_argument(
        "--method",
        required=True,
        choices=[AUTO, *ALL_METHODS],
        metavar="METHOD",
        help="auto (every certified method for the notion; the best NMI with P_X identifiable is kept), or "
        "one of: " + ", ".join(ALL_METHODS) + " (coupling: --notion distp only; optimal, oue, the "
        "watchdog family: --notion ldp, lip or alip)",
    )
    p.add_argument(
        "--notion",
        choices=list(NOTIONS),
        default="rldp",
        help="the claim: "
        + "; ".join(f"{name} ({NOTION_TABLE[name].help})" for name in NOTIONS)
        + "; --radius 0: at P̂ only",
    )
    p.add_argument(
        "--target",
        type=parse_target,
        metavar="RULE|P1,P2,...",
        help="--method coupling: the common target over U: best (default: the point between the public P(U) and "
        "the barycenter that keeps the most information I(X;Y)), barycenter (least expected loss at P̂), marginal "
        "(the public P(U)), uniform, or |U| probabilities in the released alphabet's order",
    )
    p.add_argument(
        "--cost",
        metavar="absolute|hamming|FILE.csv",
        help="--method coupling: transport cost c(x, y) over U: hamming [x ≠ y] (default: the values are "
        "categories), absolute |x - y| over the released alphabet's order (only if the values are ordered and "
        "that order is theirs), or a CSV of |U|×|U| numbers ≥ 0",
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument("--beta", type=significance_level, help="significance level of the confidence set (default 0.05)")
    g.add_argument("--radius", type=radius_nats, help="radius B of the Rényi ball, in nats (instead of --beta)")
    p.add_argument("--names", type=names, help="column names for a CSV without a header row")
    add_table_flags(p)
    add_numeric_flags(p)
    p.add_argument(
        "--public-name", metavar="TEXT", help="the public data's name in the document (default: the file's base name)"
    )
    p.add_argument(
        "--window",
        type=_window,
        default=DEFAULT_WINDOW,
        metavar="DURATION",
        help=f"collection window (ISO 8601, e.g. P1D, PT6H; default {DEFAULT_WINDOW}): clients send at most one "
        "report per record owner and window, and the service counts and estimates per window; "
        f"'{NO_WINDOW}' for no windows (a repeat reporter is then counted each time it reports)",
    )
    p.add_argument("--out", required=True, metavar="FILE", help="where to write the document (.json or .msgpack)")
    p.add_argument(
        "--warm-start",
        action="append",
        metavar="DOC",
        help="polyopt, polyopt-paper and nr: seed the search with an earlier document's rows on the "
        "same alphabet (e.g. the design at a smaller epsilon: the result is never below it); "
        "repeatable",
    )
    add_progress_flags(p, "show solver progress on stderr (default: when stderr is a terminal)", "never show progress")
    _add_request_flags(p)
    add_json_flag(p)


def _flag_type(kind: str, name: str) -> dict[str, Any]:
    """argparse keywords for a request field of this kind (its range is checked again by the request)."""
    flag = field_kind(kind).flag
    if flag is None:
        raise TypeError(f"no command-line form for request field kind {kind!r} ({name})")
    return flag(name.replace("_", " "))


def _add_request_flags(p: argparse.ArgumentParser) -> None:
    """One flag per field the design request declares a flag (rldp.aggregator.design.primitives.options): a new
    option declared there appears here with its help and default, nothing to add in this module."""
    for f in request_fields():
        if f.flag:
            p.add_argument(
                f"--{f.name.replace('_', '-')}",
                default=f.default,
                help=f.help.replace("%", "%%"),
                **_flag_type(f.kind, f.name),
            )
