"""``rldp demo``: many users on real census data, end to end.

1. The aggregator learns P̂ from the public Adult training file (shipped with rldp),
   designs the best certified mechanism for (S, U) at level ε, and publishes it on an
   aggregator service started on loopback (SQLite in a temporary folder), or on the
   one given with ``--server``.
2. Simulated users are rows of the Adult *test* file — so the public estimate and the
   users' true distribution really differ, as in life. They run in ``--workers``
   processes, each using the client SDK for real: download the mechanism, verify its
   content id and audit, privatise locally, submit in batches over HTTP.
3. The aggregator estimates P_X with 95 % intervals; the demo prints, for each (s, u),
   the true frequency, the public estimate and the private estimate ± interval, with the
   headline figures (L1 error and the bound its variance predicts, NMI, audited ε,
   reports per second), and writes ``demo-output/`` (summary.json, PNG plots).

The same users are also privatised with GRR at the same ε (plain LDP on X, in process)
to show what robust local privacy buys.
"""

from __future__ import annotations

import json
import math
import multiprocessing as mp
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

__all__ = ["DemoConfig", "run_demo", "add_demo_parser"]

# Methods whose document certifies (ε, F)-RLDP; NR only protects P̂ itself.
CERTIFIED = ("polyopt", "polyopt-paper", "ir-calibrated", "cr-calibrated", "ir", "cr", "srr", "grr")
CURVE_EPSILONS = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0)
QUICK_CURVE_EPSILONS = (0.5, 1.0, 2.0)


@dataclass
class DemoConfig:
    sensitive: str = "sex"
    released: tuple[str, ...] = ("race",)
    epsilon: float = 1.0
    method: str = "auto"  # "auto": the best identifiable certified method
    users: int = 100_000
    workers: int = 2
    server: str | None = None
    admin_token: str | None = None
    batch_size: int = 10_000
    beta: float = 0.05
    out: Path = Path("demo-output")
    seed: int | None = None
    quick: bool = False
    progress: bool = True
    curves: bool = True

    def __post_init__(self) -> None:
        if not (isinstance(self.epsilon, (int, float)) and math.isfinite(self.epsilon) and self.epsilon > 0):
            raise ValueError(f"--epsilon must be a finite number > 0 (nats); got {self.epsilon!r}")
        if int(self.users) != self.users or self.users < 1:
            raise ValueError(f"--users must be a positive integer; got {self.users!r}")
        if int(self.workers) != self.workers or not 1 <= self.workers <= 64:
            raise ValueError(f"--workers must be an integer in [1, 64]; got {self.workers!r}")
        if not 0 < self.beta < 1:
            raise ValueError(f"--beta must be in (0, 1); got {self.beta!r}")
        if self.server is not None and not self.server.startswith(("http://", "https://")):
            raise ValueError(f"--server must be an http(s) URL; got {self.server!r}")
        self.out = Path(self.out)


# ---------------------------------------------------------------------------
# Progress bars (tqdm on stderr; silent when progress is off)
# ---------------------------------------------------------------------------

def _bar(cfg: DemoConfig, total: int, desc: str, unit: str = "it"):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, disable=not cfg.progress, file=sys.stderr,
                dynamic_ncols=True, leave=True, unit_scale=unit == "reports")


def _say(cfg: DemoConfig, text: str) -> None:
    if cfg.progress:
        print(text, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# The aggregator service
# ---------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def aggregator(cfg: DemoConfig) -> Iterator[tuple[str, str]]:
    """(base URL, admin token) of a running aggregator: the one given, or a fresh one on
    loopback backed by SQLite in a temporary folder (removed afterwards)."""
    if cfg.server:
        token = cfg.admin_token or os.environ.get("RLDP_ADMIN_TOKEN")
        if not token:
            raise ValueError("--server needs the aggregator's admin token (--admin-token or RLDP_ADMIN_TOKEN)")
        yield cfg.server.rstrip("/"), token
        return
    folder = Path(tempfile.mkdtemp(prefix="rldp-demo-"))
    token = secrets.token_urlsafe(24)
    port = _free_port()
    env = dict(os.environ, RLDP_ADMIN_TOKEN=token)
    log = open(folder / "server.log", "w")
    cmd = [sys.executable, "-m", "rldp.aggregator.cli", "serve", "--host", "127.0.0.1", "--port", str(port),
           "--db", f"sqlite:///{folder / 'rldp.sqlite3'}"]
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc, folder / "server.log")
        yield url, token
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        shutil.rmtree(folder, ignore_errors=True)


def _wait_healthy(url: str, proc: subprocess.Popen, log: Path, timeout: float = 60.0) -> None:
    import requests

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"the aggregator exited with status {proc.returncode}: {tail.strip()}")
        try:
            if requests.get(f"{url}/readyz", timeout=1).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the aggregator at {url} did not become ready within {timeout:.0f} s")


def _admin(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def publish(url: str, token: str, doc: dict) -> dict:
    """POST /v1/mechanisms (msgpack): the server re-checks the id and the audit."""
    import requests

    from rldp.shared.document import to_msgpack

    resp = requests.post(f"{url}/v1/mechanisms", data=to_msgpack(doc), timeout=60,
                         headers={**_admin(token), "Content-Type": "application/msgpack"})
    if resp.status_code not in (200, 201):
        raise RuntimeError(f"publishing the mechanism failed ({resp.status_code}): {resp.text[:500]}")
    return resp.json()


def fetch_estimate(url: str, token: str, mechanism_id: str) -> dict:
    import requests

    resp = requests.get(f"{url}/v1/mechanisms/{mechanism_id}/estimate", headers=_admin(token), timeout=120)
    if resp.status_code != 200:
        raise RuntimeError(f"the estimate request failed ({resp.status_code}): {resp.text[:500]}")
    return resp.json()


# ---------------------------------------------------------------------------
# Design: choose the best certified (and identifiable) mechanism
# ---------------------------------------------------------------------------

def _candidates(size: int) -> list[str]:
    from rldp.aggregator.design import METHODS
    from rldp.aggregator.polyopt import EXACT_MAX_SYMBOLS

    out = [m for m in CERTIFIED if m in METHODS]
    if size > EXACT_MAX_SYMBOLS and not _has_cg():
        out = [m for m in out if not m.startswith("polyopt")]
    return out


def _has_cg() -> bool:
    try:
        import rldp.aggregator.polyopt_cg  # noqa: F401
    except ImportError:
        return False
    return True


def design_candidates(cfg: DemoConfig, alphabet, p_hat: np.ndarray, n: int, epsilons: Sequence[float]):
    """Design every candidate method at every ε; returns (rows for the curves, documents at cfg.epsilon)."""
    from rldp.aggregator.design import design
    from rldp.shared.document import mechanism_matrix

    methods = _candidates(alphabet.size) if cfg.method == "auto" else sorted({cfg.method, "grr"})
    grid = sorted(set(epsilons) | {cfg.epsilon})
    rows, docs = [], {}
    with _bar(cfg, len(methods) * len(grid), "design") as bar:
        for method in methods:
            for eps in grid:
                if eps != cfg.epsilon and method not in CERTIFIED:
                    bar.update()
                    continue
                try:
                    doc = design(method, alphabet=alphabet, public_distribution=p_hat, epsilon=eps,
                                 n=n, beta=cfg.beta)
                except Exception as exc:  # a method infeasible here is simply left out
                    bar.write(f"  {method} at ε={eps:g} skipped: {exc}")
                    bar.update()
                    continue
                q = mechanism_matrix(doc)
                rank = int(np.linalg.matrix_rank(q, tol=1e-9))
                rows.append({"method": method, "epsilon": eps, "nmi": doc["utility"]["nmi"],
                             "identifiable": rank == alphabet.size, "outputs": q.shape[0]})
                if eps == cfg.epsilon:
                    docs[method] = doc
                bar.set_postfix_str(f"{method} ε={eps:g} NMI={doc['utility']['nmi']:.3f}")
                bar.update()
    return rows, docs


def choose_method(cfg: DemoConfig, docs: dict[str, dict], alphabet) -> str:
    """The requested method, or the certified one with the highest NMI among those whose
    matrix has full column rank (P_X must be identifiable to be estimated)."""
    from rldp.shared.document import mechanism_matrix

    if cfg.method != "auto":
        if cfg.method not in docs:
            raise ValueError(f"method {cfg.method!r} could not be designed for this alphabet")
        return cfg.method
    ranked = sorted(docs, key=lambda m: docs[m]["utility"]["nmi"], reverse=True)
    for method in ranked:
        if np.linalg.matrix_rank(mechanism_matrix(docs[method]), tol=1e-9) == alphabet.size:
            return method
    return ranked[0]


# ---------------------------------------------------------------------------
# The users: worker processes running the client SDK
# ---------------------------------------------------------------------------

def _user_worker(url: str, mechanism_id: str, columns: dict[str, np.ndarray], batch_size: int,
                 progress: Any, index: int) -> dict:
    """One worker process: an app embedding the SDK. Records never leave it unprivatised."""
    from rldp.client import Client

    client = Client(url, timeout=30)
    client.mechanism(mechanism_id)  # download + verify id and audit once (cached)
    n = len(next(iter(columns.values())))
    accepted = duplicates = 0
    for start in range(0, n, batch_size):
        chunk = {k: v[start:start + batch_size] for k, v in columns.items()}
        receipt = client.submit(mechanism_id, chunk, batch_size=batch_size)
        accepted += receipt.accepted
        duplicates += receipt.duplicates
        progress.put(receipt.accepted)
    progress.put(None)
    return {"worker": index, "accepted": accepted, "duplicates": duplicates}


def simulate_users(cfg: DemoConfig, url: str, mechanism_id: str, users, names: Sequence[str]) -> dict:
    """Split the users over worker processes and stream their reports; returns timing."""
    columns = {name: np.asarray(users.column(name)) for name in names}
    n = len(next(iter(columns.values())))
    parts = np.array_split(np.arange(n), cfg.workers)
    ctx = mp.get_context("spawn")  # clean interpreters, like separate devices
    manager = ctx.Manager()
    progress = manager.Queue()
    start = time.perf_counter()
    with ctx.Pool(cfg.workers) as pool, _bar(cfg, n, "users", unit="reports") as bar:
        jobs = [pool.apply_async(_user_worker, (url, mechanism_id, {k: v[idx] for k, v in columns.items()},
                                                cfg.batch_size, progress, i)) for i, idx in enumerate(parts)]
        finished = 0
        while finished < cfg.workers:
            item = progress.get()
            if item is None:
                finished += 1
            else:
                bar.update(item)
        results = [job.get() for job in jobs]
    seconds = time.perf_counter() - start
    manager.shutdown()
    accepted = sum(r["accepted"] for r in results)
    return {"accepted": accepted, "seconds": seconds, "reports_per_second": accepted / seconds if seconds else 0.0}


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------

def predicted_l1_bound(sd: np.ndarray) -> tuple[float, float]:
    """(expected L1 error, a bound it stays under) from per-cell standard deviations.

    For Gaussian errors e_x ~ N(0, sd_x²), E|e_x| = sd_x·sqrt(2/π), so E‖e‖₁ = Σ sd_x·sqrt(2/π).
    sd(‖e‖₁) ≤ Σ_x sd(|e_x|) = Σ sd_x·sqrt(1 − 2/π) whatever the correlations, so by
    Chebyshev the error exceeds E + 4·Σ sd_x·sqrt(1 − 2/π) with probability < 1/16.
    """
    expected = float(np.sum(sd) * math.sqrt(2 / math.pi))
    return expected, expected + 4.0 * float(np.sum(sd) * math.sqrt(1 - 2 / math.pi))


def _grr_comparison(cfg: DemoConfig, alphabet, p_hat, n_public, users, names, truth, rng_seed):
    """GRR at the same ε on the same users (SDK privatisation, in process), estimated by
    the same estimator: what plain LDP on X would have given."""
    from rldp.aggregator.design import design
    from rldp.aggregator.estimate import estimate_distribution, report_counts
    from rldp.client import Mechanism
    from rldp.shared.document import mechanism_matrix

    doc = design("grr", alphabet=alphabet, public_distribution=p_hat, epsilon=cfg.epsilon, n=n_public,
                 beta=cfg.beta)
    mech = Mechanism.from_document(doc)  # the SDK's own verification, as on a device
    ys = mech.privatize({name: np.asarray(users.column(name)) for name in names}, rng=np.random.default_rng(rng_seed))
    q = mechanism_matrix(doc)
    est = estimate_distribution(q, report_counts(ys, q.shape[0]), alphabet.shape)
    return {"method": "grr", "nmi": doc["utility"]["nmi"], "l1_error": float(np.abs(est.joint - truth).sum()),
            "joint": est.joint.tolist()}


def run_demo(cfg: DemoConfig) -> dict:
    """Run the whole demo; returns the JSON summary (also written to cfg.out/summary.json)."""
    from rldp.demo.datasets import load_adult
    from rldp.shared.records import Alphabet

    started = time.perf_counter()
    seed = cfg.seed if cfg.seed is not None else secrets.randbits(32)
    names = (cfg.sensitive, *cfg.released)

    public = load_adult("data")
    alphabet = Alphabet.from_table(public, cfg.sensitive, list(cfg.released))
    p_hat = alphabet.empirical_distribution(public)
    population = load_adult("test")
    for name in names:  # users' values must be in the public alphabet (the SDK refuses others)
        known = set(alphabet.attributes[names.index(name)].values)
        extra = sorted(set(np.unique(population.column(name))) - known)
        if extra:
            raise ValueError(f"users have values of {name!r} absent from the public data: {', '.join(extra)}")
    rng = np.random.default_rng(seed)
    picked = rng.choice(population.n_rows, size=cfg.users, replace=cfg.users > population.n_rows)
    from rldp.shared.records import Table
    users = Table.from_columns({name: np.asarray(population.column(name))[picked] for name in names})
    truth = alphabet.empirical_distribution(users)

    _say(cfg, f"rldp demo: S = {cfg.sensitive}, U = {', '.join(cfg.released)} (|X| = {alphabet.size}), "
              f"ε = {cfg.epsilon:g}, {cfg.users:,} users, {cfg.workers} workers")
    epsilons = (QUICK_CURVE_EPSILONS if cfg.quick else CURVE_EPSILONS) if cfg.curves else ()
    curve_rows, docs = design_candidates(cfg, alphabet, p_hat, public.n_rows, epsilons)
    method = choose_method(cfg, docs, alphabet)
    doc = docs[method]

    with aggregator(cfg) as (url, token):
        published = publish(url, token, doc)
        _say(cfg, f"published {method} as {published['id'][:16]}… on {url} "
                  f"(audited ε = {published.get('epsilon_audited', doc['audit']['epsilon']):.4f})")
        traffic = simulate_users(cfg, url, doc["id"], users, names)
        estimate = fetch_estimate(url, token, doc["id"])

    joint = np.asarray(estimate["joint"], dtype=float)
    low = np.asarray(estimate["ci95"]["low"], dtype=float)
    high = np.asarray(estimate["ci95"]["high"], dtype=float)
    sd = (high - low) / (2 * 1.959964)
    l1 = float(np.abs(joint - truth).sum())
    expected, bound = predicted_l1_bound(sd)
    grr = _grr_comparison(cfg, alphabet, p_hat, public.n_rows, users, names, truth, seed + 1)

    summary = {
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(cfg).items()
                   if k not in ("admin_token",)},
        "seed": seed,
        "mechanism": {"id": doc["id"], "method": method, "epsilon": doc["privacy"]["epsilon"],
                      "epsilon_audited": doc["audit"]["epsilon"], "outputs": len(doc["matrix"]),
                      "nmi": doc["utility"]["nmi"], "radius": doc["privacy"]["uncertainty"]["radius"]},
        "users": cfg.users, "accepted": traffic["accepted"], "upload_seconds": traffic["seconds"],
        "reports_per_second": traffic["reports_per_second"],
        "labels": alphabet.labels(),
        "truth": truth.tolist(), "public": p_hat.tolist(), "estimate": joint.tolist(),
        "ci95_low": low.tolist(), "ci95_high": high.tolist(),
        "l1_error": l1, "l1_expected": expected, "l1_bound": bound, "within_bound": l1 <= bound,
        "l1_public_vs_truth": float(np.abs(p_hat - truth).sum()),
        "identifiable": bool(estimate.get("identifiable", True)),
        "grr": grr, "curves": curve_rows,
        "seconds": time.perf_counter() - started,
    }
    cfg.out.mkdir(parents=True, exist_ok=True)
    (cfg.out / "summary.json").write_text(json.dumps(summary, indent=1, allow_nan=False))
    write_plots(cfg, summary)
    print_report(cfg, summary)
    return summary


def print_report(cfg: DemoConfig, summary: dict) -> None:
    """The human-readable table and headline figures (stdout)."""
    labels = summary["labels"]
    truth = np.ravel(summary["truth"])
    public = np.ravel(summary["public"])
    est = np.ravel(summary["estimate"])
    low, high = np.ravel(summary["ci95_low"]), np.ravel(summary["ci95_high"])
    width = max(12, max(len(label) for label in labels))
    mech = summary["mechanism"]
    print()
    print(f"{'(s, u)':<{width}}  {'true':>7}  {'public':>7}  {'private estimate (95 % CI)':>30}")
    for i, label in enumerate(labels):
        print(f"{label:<{width}}  {truth[i]:7.4f}  {public[i]:7.4f}  "
              f"{est[i]:9.4f}  [{low[i]:.4f}, {high[i]:.4f}]".rjust(0))
    print()
    print(f"mechanism   {mech['method']} ({mech['outputs']} outputs), id {mech['id'][:16]}…")
    print(f"privacy     ε = {mech['epsilon']:g} claimed, {mech['epsilon_audited']:.4f} audited over the "
          f"95 % confidence set (radius {mech['radius']:.3g} nats)")
    verdict = "within" if summary["within_bound"] else "OUTSIDE"
    print(f"accuracy    L1 error {summary['l1_error']:.4f} ({verdict} the bound {summary['l1_bound']:.4f} its "
          f"variance predicts; expected {summary['l1_expected']:.4f})")
    print(f"utility     NMI {mech['nmi']:.3f}  vs  GRR at the same ε: NMI {summary['grr']['nmi']:.3f}, "
          f"L1 error {summary['grr']['l1_error']:.4f}")
    print(f"traffic     {summary['accepted']:,} reports in {summary['upload_seconds']:.1f} s "
          f"({summary['reports_per_second']:,.0f} reports/s over HTTP)")
    print(f"output      {cfg.out}/summary.json, {cfg.out}/estimate.png, {cfg.out}/privacy_utility.png")


def write_plots(cfg: DemoConfig, summary: dict) -> None:
    """estimate.png (truth, public and private estimates with intervals) and
    privacy_utility.png (NMI against ε for each certified method on this pair)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    labels = summary["labels"]
    x = np.arange(len(labels))
    truth = np.ravel(summary["truth"])
    est = np.ravel(summary["estimate"])
    low, high = np.ravel(summary["ci95_low"]), np.ravel(summary["ci95_high"])
    grr = np.ravel(summary["grr"]["joint"])
    method = summary["mechanism"]["method"]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(max(7.5, 0.75 * len(labels) + 2), 7.5), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 2]})
    w = 0.38
    top.bar(x - w / 2, truth, w, label="users' true frequency (adult.test)", color="0.55")
    top.bar(x + w / 2, np.ravel(summary["public"]), w, label="public estimate P̂ (adult.data)", color="tab:blue",
            alpha=0.6)
    top.errorbar(x, est, yerr=[est - low, high - est], fmt="o", color="tab:orange", capsize=3, markersize=4,
                 label=f"private estimate, {method} (95 % CI)")
    top.set_yscale("log")
    top.set_ylabel("frequency (fraction of users, log scale)")
    top.set_title(f"P(S, U) for {summary['users']:,} users at ε = {summary['mechanism']['epsilon']:g} nats")
    top.legend(fontsize=8, loc="upper left")
    bottom.axhline(0.0, color="0.3", linewidth=0.8)
    bottom.errorbar(x - 0.12, est - truth, yerr=[est - low, high - est], fmt="o", color="tab:orange", capsize=3,
                    markersize=4, label=f"{method}: estimate − truth (95 % CI)  L1 = {summary['l1_error']:.4f}")
    bottom.plot(x + 0.12, grr - truth, "x", color="tab:red",
                label=f"GRR (plain LDP, same ε): estimate − truth  L1 = {summary['grr']['l1_error']:.4f}")
    bottom.set_ylabel("estimation error (fraction)")
    bottom.set_xticks(x, labels, rotation=45, ha="right")
    bottom.legend(fontsize=8, loc="best")
    fig.savefig(cfg.out / "estimate.png", dpi=120, bbox_inches="tight")
    plt.close(fig)

    rows = summary["curves"]
    if not rows:
        return
    from rldp.demo.plots import method_label

    fig, ax = plt.subplots(figsize=(7.0, 4.5))
    for method in dict.fromkeys(r["method"] for r in rows):
        pts = sorted((r["epsilon"], r["nmi"]) for r in rows if r["method"] == method)
        if len(pts) > 1:
            ax.plot(*zip(*pts), marker="o", label=method_label(method))
    ax.set_xlabel("ε (nats)")
    ax.set_ylabel("NMI = I(X;Y)/H(X) under P̂")
    ax.set_title(f"Privacy–utility on S = {summary['config']['sensitive']}, "
                 f"U = {', '.join(summary['config']['released'])}")
    ax.axvline(summary["mechanism"]["epsilon"], color="0.5", linestyle=":", linewidth=1, label="ε of this run")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.savefig(cfg.out / "privacy_utility.png", dpi=120, bbox_inches="tight")
    plt.close(fig)


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------

def add_demo_parser(subparsers) -> None:
    """Register ``rldp demo``."""
    from rldp.shared.arguments import nonnegative_int, positive_int

    p = subparsers.add_parser("demo", help="simulate many users on census data, end to end")
    p.add_argument("--sensitive", default="sex", help="sensitive attribute S (default: sex)")
    p.add_argument("--released", default="race", help="released attribute(s) U, comma-separated (default: race)")
    p.add_argument("--epsilon", type=float, default=1.0, help="privacy level ε in nats (default 1)")
    p.add_argument("--method", default="auto", help="design method, or 'auto' for the best certified one")
    p.add_argument("--users", type=positive_int("--users"), default=None, help="number of simulated users (default 100,000; quick: 20,000)")
    p.add_argument("--workers", type=int, default=2, help="user processes (default 2)")
    p.add_argument("--server", help="use an aggregator that is already running at this URL")
    p.add_argument("--admin-token", help="admin token of --server (default: $RLDP_ADMIN_TOKEN)")
    p.add_argument("--out", default="demo-output", help="output folder (default demo-output)")
    p.add_argument("--seed", type=nonnegative_int("--seed"), help="seed for choosing the users (default: random)")
    p.add_argument("--quick", action="store_true", help="a smaller, faster run (CI)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=_cmd_demo)


def _cmd_demo(args) -> int:
    from rldp.aggregator.design import METHODS

    if args.method != "auto" and args.method not in METHODS:
        raise ValueError(f"unknown method {args.method!r}; choose 'auto' or one of: {', '.join(METHODS)}")
    cfg = DemoConfig(sensitive=args.sensitive, released=tuple(r.strip() for r in args.released.split(",") if r.strip()),
                     epsilon=args.epsilon, method=args.method,
                     users=args.users if args.users is not None else (20_000 if args.quick else 100_000),
                     workers=args.workers, server=args.server, admin_token=args.admin_token, out=Path(args.out),
                     seed=args.seed, quick=args.quick, progress=not args.no_progress)
    summary = run_demo(cfg)
    return 0
