"""Subcommands of the ``rldp`` CLI contributed by ``rldp.demo``.

* ``rldp demo`` — many simulated users on real census data, end to end (:mod:`.run`).
* ``rldp experiment NAME`` — reproduce one of the papers' experiments (or ``all``,
  :mod:`.experiments`).

Each subcommand lives in its own ``add_*_parser`` function; :func:`add_parser` registers
them all. matplotlib, the one heavy import, is loaded only when a figure is drawn
(:mod:`.plots`), so ``rldp --help`` stays fast.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from rldp.aggregator.design import EXACT_MAX_SYMBOLS, METHODS
from rldp.shared.arguments import add_progress_flags, names, nonnegative_int, positive_float, positive_int
from rldp.shared.errors import ParameterError, ValidationError
from rldp.shared.parameters import check_epsilon

from .experiments import (
    DEFAULT_OUT,
    EXPERIMENTS,
    POLYOPT_SOLVERS,
    Config,
    default_workers,
    load_result,
    report,
    run_experiment,
    write_outputs,
)
from .run import DemoConfig, run_demo
from .run.candidates import candidates
from .run.config import DEFAULT_SEED, DEMO_NOTIONS

__all__ = ["add_parser", "add_demo_parser", "cmd_demo", "add_experiment_parser", "cmd_experiment"]

QUICK_USERS, DEFAULT_USERS = 20_000, 100_000


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register this module's subcommands."""
    add_demo_parser(subparsers)
    add_experiment_parser(subparsers)


# -- rldp demo ----------------------------------------------------------------
def add_demo_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """``rldp demo [--sensitive S] [--released U,...] [--epsilon E] [--quick] ...``"""
    p = subparsers.add_parser("demo", help="simulate many users on census data, end to end")
    p.add_argument("--sensitive", default="sex", help="sensitive attribute S (default: sex)")
    p.add_argument(
        "--released", type=names, default="race", help="released attribute(s) U, comma-separated (default: race)"
    )
    p.add_argument("--epsilon", type=float, default=1.0, help="privacy level ε in nats (default 1)")
    p.add_argument(
        "--notion",
        choices=DEMO_NOTIONS,
        default="rldp",
        help="the guarantee: rldp (default), ldp (ε-LDP w.r.t. S) or lip (ε-LIP) [LTS20, Defs 1-2]",
    )
    p.add_argument("--latent", action="store_true", help="S is not an input of the mechanism (the privacy funnel)")
    p.add_argument("--method", default="auto", help="design method, or 'auto' for the best certified one")
    p.add_argument(
        "--users",
        type=positive_int("--users"),
        default=None,
        help=f"number of simulated users (default {DEFAULT_USERS:,}; quick: {QUICK_USERS:,})",
    )
    p.add_argument("--workers", type=int, default=2, help="user processes (default 2)")
    p.add_argument("--server", help="use an aggregator that is already running at this URL")
    p.add_argument("--admin-token", help="admin token of --server (default: $RLDP_ADMIN_TOKEN)")
    p.add_argument("--out", default="demo-output", help="output folder (default demo-output)")
    p.add_argument(
        "--seed",
        type=nonnegative_int("--seed"),
        default=DEFAULT_SEED,
        help=f"seed of the users and of their draws (default {DEFAULT_SEED}: the same figures on every run, "
        "timings aside; another value gives another run)",
    )
    p.add_argument("--quick", action="store_true", help="a smaller, faster run (CI)")
    p.add_argument(
        "--time-budget",
        type=positive_float("--time-budget"),
        default=DemoConfig.time_budget,
        help=f"seconds per design by column generation (large alphabets; default {DemoConfig.time_budget:g})",
    )
    add_progress_flags(p, "always show progress on stderr (default: only on a terminal)", "never show progress")
    p.add_argument(
        "--no-curves",
        action="store_true",
        help="skip the privacy-utility curves (designing every method over a grid of ε): design at --epsilon only",
    )
    p.add_argument(
        "--no-attack",
        action="store_true",
        help="skip the averaging attack (an aggregator linking each user's reports over 30 windows, "
        "with and without the client's memoisation)",
    )
    p.add_argument(
        "--no-pilot",
        action="store_true",
        help="skip the path without public data (a pilot collection, the switch to a design over the pilot's "
        "confidence set, a drifted population flagged)",
    )
    p.set_defaults(func=cmd_demo)
    return p


def cmd_demo(args: argparse.Namespace) -> int:
    """Run the demo (it prints its report); exit status 0."""
    known = METHODS if args.notion == "rldp" else candidates(args.notion, args.latent)
    if args.method != "auto" and args.method not in known:
        raise ValidationError(f"unknown method {args.method!r}; choose 'auto' or one of: {', '.join(known)}")
    users = args.users if args.users is not None else (QUICK_USERS if args.quick else DEFAULT_USERS)
    cfg = DemoConfig(
        sensitive=args.sensitive,
        released=tuple(args.released),
        epsilon=args.epsilon,
        notion=args.notion,
        latent=args.latent,
        method=args.method,
        users=users,
        workers=args.workers,
        server=args.server,
        admin_token=args.admin_token,
        out=Path(args.out),
        seed=args.seed,
        quick=args.quick,
        # Progress bars only on a terminal: redirected to a file they are a wall of carriage returns.
        progress=args.progress if args.progress is not None else sys.stderr.isatty(),
        curves=not args.no_curves,
        attack=not args.no_attack,
        pilot=not args.no_pilot,
        time_budget=args.time_budget,
    )
    run_demo(cfg)
    return 0


# -- rldp experiment ----------------------------------------------------------
def _epsilons(text: str) -> tuple[float, ...]:
    out = []
    for part in (t.strip() for t in text.split(",")):
        if not part:
            continue
        try:
            out.append(check_epsilon(float(part), "each epsilon"))
        except ValueError as exc:  # not a number, or ParameterError naming the range
            raise argparse.ArgumentTypeError(
                str(exc)
                if isinstance(exc, ParameterError)
                else f"epsilons must be comma-separated numbers; got {part!r}"
            ) from None
    if not out:
        raise argparse.ArgumentTypeError("expected one or more comma-separated epsilons")
    return tuple(sorted(set(out)))


def _methods(text: str) -> tuple[str, ...]:
    methods = tuple(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))
    if not methods:
        raise argparse.ArgumentTypeError("expected one or more comma-separated method names")
    return methods


def add_experiment_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """``rldp experiment NAME [--quick] [--out DIR] [--seed N] [--workers N] ...``"""
    experiments = list(EXPERIMENTS)
    p = subparsers.add_parser(
        "experiment",
        help="reproduce an experiment of the papers (CSV + PNG)",
        description="Reproduce one of the papers' experiments and write NAME.csv (tidy), NAME.png and "
        "NAME.json under --out. [LZG24]: fig2 (Adult pairs), fig3 (synthetic), table2 "
        "(β sweep), fig4 (realised ε*), fig5 (I under P̂ vs P*). [LZG21]: isit-fig2, isit-fig3. "
        "'all' runs every one in turn.",
    )
    p.add_argument(
        "name", choices=[*experiments, "all"], metavar="NAME", help="one of: " + ", ".join(experiments) + ", all"
    )
    _add_run_flags(p)
    _add_grid_flags(p)
    p.add_argument(
        "--draws-csv", action="store_true", help="also write NAME_draws.csv with one row per design and draw"
    )
    p.add_argument(
        "--replot",
        action="store_true",
        help="redraw NAME.png and reprint the table from NAME.csv/NAME.json in --out (no computation)",
    )
    add_progress_flags(
        p, "always show progress bars on stderr (default: only on a terminal)", "never show progress bars"
    )
    p.set_defaults(func=cmd_experiment)
    return p


def _add_run_flags(p: argparse.ArgumentParser) -> None:
    """How much is run, where its outputs go, and with how many workers."""
    p.add_argument(
        "--quick",
        action="store_true",
        help="reduced version (fewer ε, draws and shapes) that finishes in well under a minute",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        metavar="DIR",
        help=f"output folder (default: ./{DEFAULT_OUT}; --out docs/experiments refreshes the tracked figures)",
    )
    p.add_argument("--seed", type=nonnegative_int("seed"), default=0, help="seed of the synthetic draws (default 0)")
    p.add_argument(
        "--workers", type=positive_int("workers"), default=None, help="worker processes (default: every available core)"
    )
    p.add_argument(
        "--draws",
        type=positive_int("draws"),
        default=None,
        help="synthetic draws per shape (default: the paper's count; a few with --quick)",
    )


def _add_grid_flags(p: argparse.ArgumentParser) -> None:
    """Which privacy levels and methods are run, and how PolyOpt is solved."""
    p.add_argument(
        "--epsilons",
        type=_epsilons,
        default=None,
        metavar="E[,E...]",
        help="privacy levels in nats (default: the experiment's grid)",
    )
    p.add_argument(
        "--methods",
        type=_methods,
        default=None,
        metavar="M[,M...]",
        help="design methods to include (default: the paper's, then every other one)",
    )
    p.add_argument(
        "--polyopt-solver",
        choices=list(POLYOPT_SOLVERS),
        default=None,
        help="how PolyOpt and NR are solved: exact vertex enumeration (the papers'; omitted beyond "
        f"{EXACT_MAX_SYMBOLS} symbols), cg (column generation, anytime) or auto (exact up to "
        f"{EXACT_MAX_SYMBOLS} symbols, cg above). "
        "Default: auto for fig2, exact for the synthetic experiments",
    )
    p.add_argument(
        "--time-budget",
        type=positive_float("time budget"),
        default=Config.time_budget,
        metavar="SECONDS",
        help=f"seconds per column-generation design (default {Config.time_budget:g})",
    )


def cmd_experiment(args: argparse.Namespace) -> int:
    """Run the experiment(s), write the outputs, print the tables; exit status 0."""
    # A terminated run (SIGTERM, e.g. a CI timeout) unwinds like Ctrl-C, so the worker
    # processes are stopped too (main() reports the interrupt).
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        return _run_experiments(args)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _run_experiments(args: argparse.Namespace) -> int:
    chosen = list(EXPERIMENTS) if args.name == "all" else [args.name]
    if args.replot:
        for i, name in enumerate(chosen):
            result = load_result(name, args.out)
            path = EXPERIMENTS[name].plot(result, args.out)
            print(("\n" if i else "") + report(result) + f"\n\nredrew {path}", flush=True)
        return 0
    cfg = Config(
        quick=args.quick,
        seed=args.seed,
        workers=args.workers or default_workers(),
        draws=args.draws,
        epsilons=args.epsilons,
        methods=args.methods,
        progress=args.progress,
        polyopt_solver=args.polyopt_solver,
        time_budget=args.time_budget,
    )
    for i, name in enumerate(chosen):
        result = run_experiment(name, cfg)
        paths = write_outputs(result, args.out, records=args.draws_csv)
        print(("\n" if i else "") + report(result))
        print(f"\nwrote {', '.join(str(p) for p in paths)} in {result.seconds:.1f} s", flush=True)
    return 0
