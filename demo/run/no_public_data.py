"""The demo's no-public-data path: a pilot collection, the switch, and a drifted population flagged.

A team with no public data for P̂ (docs/design.md, "P̂ from a private pilot"):

1. publishes a pilot mechanism private for every distribution (chosen by
   :func:`rldp.aggregator.design.orchestration.pilot.design_pilot`) as the first mechanism of a collection;
2. lets ``pilot_users`` simulated users report through it (the SDK, worker processes);
3. ends the pilot (``POST /v1/collections/{name}/switch``): the service designs PolyOpt over the
   confidence set the pilot's reports give and rotates the collection to it if it beats the pilot;
4. then a *drifted* population reports through the new mechanism — 60 % of its users
   the users' rarest cell (Female|Other on sex/race) — and the drift watch flags it, with its
   realised ε* (a calibrated point and a 95 % interval).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import requests

from rldp.admin.output import realised_figure
from rldp.aggregator.design.orchestration.pilot import design_pilot
from rldp.shared.document import report_matrix
from rldp.shared.information import normalized_mutual_information
from rldp.shared.records import Alphabet
from rldp.shared.tables import Table

from .config import DemoConfig
from .console import p_value_text, radius_text, say
from .server import DemoError, fetch_estimate, publish
from .users import simulate_users

__all__ = ["COLLECTION", "DRIFTED_SHARE", "run_no_public_data"]

COLLECTION = "demo-no-public-data"
DRIFTED_SHARE = 0.6  # of the drifted users, this share has the users' rarest (s, u)
_DRIFTED_USERS = 5_000
_SWITCH_TIMEOUT = 600.0
#: The demo runs this path on alphabets up to this size (seconds of design each; `rldp experiment pilot`
#: measures larger ones).
DEMO_MAX_SYMBOLS = 32


def _admin(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _post(url: str, token: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    resp = requests.post(f"{url}{path}", json=body, headers=_admin(token), timeout=120)
    if resp.status_code not in (200, 201, 202):
        raise DemoError(f"POST {path} failed ({resp.status_code}): {resp.text[:500]}")
    answer: dict[str, Any] = resp.json()
    return answer


def _wait(url: str, token: str, status_url: str) -> dict[str, Any]:
    deadline = time.monotonic() + _SWITCH_TIMEOUT
    while True:
        job: dict[str, Any] = requests.get(f"{url}{status_url}", headers=_admin(token), timeout=60).json()
        if job["status"] in ("done", "failed") or time.monotonic() > deadline:
            return job
        time.sleep(0.5)


def _drifted(users: Table, names: Sequence[str], alphabet: Alphabet, cell: int, seed: int) -> Table:
    """_DRIFTED_USERS users: DRIFTED_SHARE of them at input symbol ``cell``, the rest drawn from ``users``."""
    rng = np.random.default_rng(seed)
    n_cell = int(round(DRIFTED_SHARE * _DRIFTED_USERS))
    rest = rng.choice(users.n_rows, size=_DRIFTED_USERS - n_cell)
    record = alphabet.decode(cell)[0]
    columns = {
        name: np.concatenate([np.full(n_cell, record[j], dtype=object), np.asarray(users.column(name))[rest]])
        for j, name in enumerate(names)
    }
    return Table.from_columns({k: v.astype(str) for k, v in columns.items()})


def run_no_public_data(
    cfg: DemoConfig, url: str, token: str, alphabet: Alphabet, users: Table, names: Sequence[str], truth: np.ndarray
) -> dict[str, Any]:
    """Steps 1-4 of the module docstring on the running aggregator; the figures for the summary."""
    if alphabet.size > DEMO_MAX_SYMBOLS:
        say(cfg, f"no public data: skipped for |X| = {alphabet.size} > {DEMO_MAX_SYMBOLS} (see rldp experiment pilot)")
        return {"skipped": f"|X| = {alphabet.size} > {DEMO_MAX_SYMBOLS}"}
    pilot = _start_pilot(cfg, url, token, alphabet, users, names)
    job = _wait(
        url,
        token,
        _post(
            url,
            token,
            f"/v1/collections/{COLLECTION}/switch",
            {"method": "polyopt", "beta": cfg.beta, "time_budget": 20},
        )["status_url"],
    )
    p = truth.ravel()
    pilot_nmi = normalized_mutual_information(report_matrix(pilot), p)
    out: dict[str, Any] = {
        "pilot": {"id": pilot["id"], "method": pilot["method"], "reports": users.n_rows, "nmi": pilot_nmi},
        "switched": job["status"] == "done",
    }
    if job["status"] != "done":
        out["reason"] = job.get("error")
        say(cfg, f"  the pilot was kept: {job.get('error')}")
        return out
    doc = requests.get(f"{url}/v1/mechanisms/{job['mechanism']}", timeout=60).json()
    radius = doc["privacy"]["uncertainty"]["radius"]
    out["designed"] = {
        "id": doc["id"],
        "method": doc["method"],
        "radius": radius,
        "nmi": normalized_mutual_information(report_matrix(doc), p),
    }
    say(
        cfg,
        f"  switch after {users.n_rows:,} pilot reports: {doc['method']} over F of radius {radius_text(radius)} "
        f"(from the pilot's reports, β = {cfg.beta:g}); NMI at the users' P {out['designed']['nmi']:.3f} "
        f"vs the pilot's {pilot_nmi:.3f}",
    )
    out["drift"] = _drift_step(cfg, url, token, doc["id"], alphabet, users, names, p)
    return out


def _start_pilot(
    cfg: DemoConfig, url: str, token: str, alphabet: Alphabet, users: Table, names: Sequence[str]
) -> dict[str, Any]:
    """Publish a pilot (private for every distribution) as a collection and let every user report through it."""
    choice = design_pilot(alphabet, cfg.epsilon, planned_reports=users.n_rows, beta=cfg.beta, time_budget=5.0)
    pilot = choice.document
    publish(url, token, pilot)
    _post(
        url,
        token,
        "/v1/collections",
        {
            "name": COLLECTION,
            "policy": {"notion": "rldp", "epsilon": cfg.epsilon},
            "mechanism": pilot["id"],
            "description": "no public data: pilot first",
        },
    )
    say(cfg, f"no public data: pilot {pilot['method']} (private for every distribution) as collection {COLLECTION!r}")
    simulate_users(cfg, url, pilot["id"], users, names, stream=1)
    return pilot


def _drift_step(
    cfg: DemoConfig,
    url: str,
    token: str,
    designed: str,
    alphabet: Alphabet,
    users: Table,
    names: Sequence[str],
    p: np.ndarray,
) -> dict[str, Any]:
    """Users drift to the rarest cell and report through the designed mechanism: does the watch flag it?"""
    # The rarest cell of the users' own distribution: fixed by the seed (the pilot's estimate is not: the client
    # draws from the OS CSPRNG, and a cell picked from it made the demo's drift figure vary run to run).
    users_p = np.ravel(np.asarray(p, dtype=float))
    cell = int(np.argmin(np.where(users_p > 0, users_p, np.inf)))
    drifted = _drifted(users, names, alphabet, cell, cfg.seed)
    simulate_users(cfg, url, designed, drifted, names, stream=2)
    drift = fetch_estimate(url, token, designed).get("drift") or {}
    out = {
        "cell": "|".join(alphabet.decode(cell)[0]),
        "users": drifted.n_rows,
        "share": DRIFTED_SHARE,
        **drift,
    }
    flagged = "FLAGGED" if drift.get("rejected") else "not flagged"
    say(
        cfg,
        f"  drift: {_DRIFTED_USERS:,} users, {DRIFTED_SHARE:.0%} {out['cell']}: {flagged} "
        f"({p_value_text(drift.get('p_value', float('nan')))}); {realised_figure(drift)}, against the claim "
        f"ε = {cfg.epsilon:g}",
    )
    return out
