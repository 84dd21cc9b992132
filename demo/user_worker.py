"""The code each simulated user's process runs: an app that embeds the client SDK.

Its own module, outside :mod:`rldp.demo.run`, so that a spawned worker imports only the
SDK (numpy, requests, msgpack) and not the demo's aggregator side (the designers and
scipy take about half a second to import, which the demo's traffic figure would count).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from rldp.client import Client

__all__ = ["CLIENT_TIMEOUT", "user_worker"]

CLIENT_TIMEOUT = 30.0  # seconds per HTTP request of a user's SDK


def user_worker(
    url: str,
    mechanism_id: str,
    columns: dict[str, np.ndarray],
    owners: np.ndarray,
    batch_size: int,
    progress: Any,
    index: int,
    state_path: str | None,
    seed: tuple[int, ...] | None = None,
) -> dict:
    """One worker process: the apps of the users ``owners`` (one per record), embedding the SDK as an app
    does by default — a state file (memo, window ledger, budget) and each record its owner's. Records never
    leave it unprivatised; the mechanism collects by day, so each user is one report in today's window.

    ``seed``: the entropy of the draws (a simulation's, so that the demo's figures repeat run after run);
    None draws from the OS CSPRNG, as an app does. ``state_path`` None: apps without state (no memo, ledger or
    budget; each record privatised afresh and sent labelled with today's window), the baseline of the traffic
    benchmark (bench/bench_demo_traffic.py)."""
    rng = None if seed is None else np.random.default_rng(np.random.SeedSequence(seed))
    accepted = duplicates = 0
    try:
        client = Client(url, timeout=CLIENT_TIMEOUT, state_path=state_path, rng=rng)
        mech = client.mechanism(mechanism_id)  # download + verify id and audit once (cached)
        n = len(next(iter(columns.values())))
        for start in range(0, n, batch_size):
            chunk = {k: v[start : start + batch_size] for k, v in columns.items()}
            if state_path is None:  # fresh draws, labelled with today's window (nothing remembers them)
                label = None if mech.window is None else mech.window.label_at(time.time())
                receipt = client.submit_reports(mech.id, mech.privatize(chunk), batch_size=batch_size, window=label)
            else:
                receipt = client.submit(
                    mechanism_id, chunk, owners=owners[start : start + batch_size], batch_size=batch_size
                )
            accepted += receipt.accepted
            duplicates += receipt.duplicates
            progress.put(receipt.accepted)
        client.close()
    finally:  # the parent counts workers by this mark: a worker that fails must still send it (else it waits)
        progress.put(None)
    return {"worker": index, "accepted": accepted, "duplicates": duplicates}
