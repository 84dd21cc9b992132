"""The HTTP client: fetch and verify mechanisms, privatise, upload with retries and a queue.

    client = Client("https://agg.example", timeout=10)
    mech = client.mechanism(mechanism_id)          # downloaded, id checked, audited (cached)
    ys = mech.privatize(records)                   # OS CSPRNG, vectorised
    receipt = client.submit(mechanism_id, records) # privatise + upload in batches

Retries and the mapping of answers to errors are the transport's (:mod:`.transport`):
transient failures are retried with backoff, POST included (uploads are idempotent by
batch id); any other 4xx is permanent: :class:`ProblemError`.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Iterable
from typing import Any

import msgpack
import numpy as np
import requests

from rldp.shared.document import DocumentError, from_json, from_msgpack, to_msgpack

from .errors import MechanismRejected, ProblemError, ServiceUnavailable
from .mechanism import Mechanism
from .queue import DEFAULT_LIMIT_BYTES, OfflineQueue
from .receipt import Receipt
from .sampling import RandomSource
from .transport import Transport, json_object

__all__ = ["Client", "Receipt", "DEFAULT_BATCH_SIZE"]

DEFAULT_BATCH_SIZE = 10_000
MSGPACK = "application/msgpack"


class Client:
    """A client of one rldp aggregator (thread-safe; reuse it).

    ``timeout``: seconds per HTTP attempt (connect and read). ``retries``: attempts after
    the first for transient failures; ``backoff_factor``: the exponential backoff base
    (seconds; sleeps ≈ factor·2^k plus up to ``backoff_factor`` of jitter, at most
    ``backoff_max``). ``token``: bearer token for admin/read calls (publish, estimate, …).
    ``queue_path``: keep batches that could not be sent in this SQLite file (bounded by
    ``queue_limit_bytes``) and send them with :meth:`flush`. ``rng``: the random source
    for privatisation (default: the OS CSPRNG). ``max_epsilon``: refuse mechanisms that
    claim a larger ε.
    """

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 10.0,
        retries: int = 5,
        backoff_factor: float = 0.5,
        backoff_max: float = 30.0,
        token: str | None = None,
        queue_path: str | os.PathLike[str] | None = None,
        queue_limit_bytes: int = DEFAULT_LIMIT_BYTES,
        rng: RandomSource | None = None,
        max_epsilon: float | None = None,
        session: requests.Session | None = None,
    ) -> None:
        self._http = Transport(
            url,
            timeout=timeout,
            retries=retries,
            backoff_factor=backoff_factor,
            backoff_max=backoff_max,
            token=token,
            session=session,
        )
        self.url = self._http.url
        self.timeout = self._http.timeout
        self.rng = rng
        self.max_epsilon = max_epsilon
        self._mechanisms: dict[str, Mechanism] = {}
        self._lock = threading.Lock()
        self.queue = OfflineQueue(queue_path, queue_limit_bytes) if queue_path is not None else None

    def close(self) -> None:
        """Close the HTTP session and the queue."""
        self._http.close()
        if self.queue is not None:
            self.queue.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- mechanisms
    def mechanism(self, mechanism_id: str, *, max_epsilon: float | None = None) -> Mechanism:
        """Download (msgpack), verify (content id, privacy audit, ε ceiling) and cache a mechanism.

        Raises :class:`MechanismRejected` for a mechanism that fails verification and
        :class:`ProblemError` (404 unknown-mechanism) for an unknown id.
        """
        limit = max_epsilon if max_epsilon is not None else self.max_epsilon
        with self._lock:
            cached = self._mechanisms.get(mechanism_id)
        if cached is None:
            if not isinstance(mechanism_id, str) or not mechanism_id:
                raise ValueError(f"mechanism id must be a non-empty string; got {mechanism_id!r}")
            resp = self._http.request(
                "GET", f"/v1/mechanisms/{requests.utils.quote(mechanism_id, safe='')}", headers={"Accept": MSGPACK}
            )
            try:
                if resp.headers.get("Content-Type", "").split(";")[0].strip() == MSGPACK:
                    doc = from_msgpack(resp.content)
                else:
                    doc = from_json(resp.content)
            except DocumentError as exc:
                raise MechanismRejected(mechanism_id, f"invalid or tampered document: {exc}") from None
            cached = Mechanism.from_document(doc, expected_id=mechanism_id)
            with self._lock:
                self._mechanisms[mechanism_id] = cached
        if limit is not None and cached.epsilon > limit:
            raise MechanismRejected(
                mechanism_id, f"claims epsilon {cached.epsilon:g}, above the allowed maximum {limit:g}"
            )
        return cached

    def mechanisms(self) -> list[dict[str, Any]]:
        """The server's catalogue (GET /v1/mechanisms): id, method, epsilon, status, …."""
        mechanisms: list[dict[str, Any]] = self._http.request("GET", "/v1/mechanisms").json()["mechanisms"]
        return mechanisms

    # -- uploads
    def submit(
        self, mechanism_id: str, records: Any, *, batch_size: int = DEFAULT_BATCH_SIZE, rng: RandomSource | None = None
    ) -> Receipt:
        """Privatise ``records`` with the (verified) mechanism and upload them in batches.

        Each batch gets a fresh batch id (uuid4). Transient failures are retried (see the
        module doc); if they persist, the unsent batches go to the offline queue when there
        is one (``receipt.queued``), else :class:`ServiceUnavailable` is raised with
        ``exc.receipt`` telling what was accepted. A permanent refusal raises
        :class:`ProblemError` (also with ``exc.receipt``).
        """
        mech = self.mechanism(mechanism_id)
        ys = mech.privatize(records, rng=rng if rng is not None else self.rng)
        return self.submit_reports(mechanism_id, ys, batch_size=batch_size)

    def submit_reports(self, mechanism_id: str, reports: Any, *, batch_size: int = DEFAULT_BATCH_SIZE) -> Receipt:
        """Upload outputs that are already privatised (see :meth:`submit`)."""
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be ≥ 1; got {batch_size!r}")
        ys = np.asarray(reports)
        if ys.ndim != 1 or (ys.size and ys.dtype.kind not in "iu"):
            raise ValueError("reports must be a 1-D array of integer outputs")
        bodies = []
        for start in range(0, ys.size, int(batch_size)):
            chunk = ys[start : start + int(batch_size)]
            batch = uuid.uuid4().hex
            bodies.append(
                (
                    batch,
                    int(chunk.size),
                    msgpack.packb(
                        {"mechanism": mechanism_id, "batch": batch, "reports": chunk.tolist()}, use_bin_type=True
                    ),
                )
            )
        return self._send_all(mechanism_id, bodies)

    def _post_batch(self, body: bytes) -> dict[str, Any]:
        resp = self._http.request("POST", "/v1/reports", data=body, headers={"Content-Type": MSGPACK}, ok=(200, 201))
        return json_object(resp)

    def _send_all(self, mechanism_id: str, bodies: list[tuple[str, int, bytes]]) -> Receipt:
        accepted = batches = duplicates = queued = dropped = 0
        ids: list[str] = []

        def receipt() -> Receipt:
            return Receipt(accepted, batches, duplicates, queued, dropped, batch_ids=tuple(ids))

        for i, (batch, n, body) in enumerate(bodies):
            try:
                answer = self._post_batch(body)
            except ServiceUnavailable as exc:
                if self.queue is None:
                    exc.receipt = receipt()
                    raise
                for batch_q, n_q, body_q in bodies[i:]:  # the server is down: queue the rest at once
                    stored, lost = self.queue.put(mechanism_id, batch_q, n_q, body_q)
                    queued += n_q if stored else 0
                    dropped += lost
                return receipt()
            except ProblemError as exc:
                exc.receipt = receipt()
                raise
            accepted += int(answer.get("accepted", n))
            batches += 1
            duplicates += bool(answer.get("duplicate"))
            ids.append(batch)
        return receipt()

    def flush(self) -> Receipt:
        """Send the offline queue's batches (oldest first) with their original batch ids.

        Stops at the first transient failure (the rest stay queued). A batch the server
        refuses for good (e.g. its mechanism was retired) is removed and counted in
        ``rejected`` with its reason in ``problems``.
        """
        if self.queue is None:
            return Receipt()
        accepted = batches = duplicates = rejected = 0
        ids: list[str] = []
        problems: list[str] = []
        for item in self.queue.pending():
            try:
                answer = self._post_batch(item.body)
            except ServiceUnavailable:
                break
            except ProblemError as exc:
                self.queue.remove(item.seq)
                rejected += item.n
                problems.append(f"batch {item.batch}: {exc.reason}: {exc.detail}")
                continue
            self.queue.remove(item.seq)
            accepted += int(answer.get("accepted", item.n))
            batches += 1
            duplicates += bool(answer.get("duplicate"))
            ids.append(item.batch)
        stats = self.queue.stats()
        return Receipt(
            accepted, batches, duplicates, stats["pending_reports"], 0, rejected, tuple(ids), tuple(problems)
        )

    # -- admin and read calls (need a token)
    def publish(self, document: dict[str, Any]) -> dict[str, Any]:
        """Publish a mechanism document (admin). Returns {"id", "method", "epsilon", "epsilon_audited", "status"}."""
        resp = self._http.request(
            "POST", "/v1/mechanisms", auth=True, data=to_msgpack(document), headers={"Content-Type": MSGPACK}
        )
        return json_object(resp)

    def retire(self, mechanism_id: str) -> dict[str, Any]:
        """Retire a mechanism (admin): it accepts no more reports."""
        return json_object(self._http.request("POST", f"/v1/mechanisms/{mechanism_id}/retire", auth=True))

    def estimate(self, mechanism_id: str, **params: Any) -> dict[str, Any]:
        """The server's estimate of P(S, U) (admin or read token); ``params``: method, interval, prior, prior_weight."""
        return json_object(
            self._http.request(
                "GET",
                f"/v1/mechanisms/{mechanism_id}/estimate",
                auth=True,
                params={k: v for k, v in params.items() if v is not None},
            )
        )

    def design(
        self,
        csv_text: str,
        *,
        sensitive: str,
        released: Iterable[str] | str,
        epsilon: float,
        method: str,
        beta: float | None = None,
        radius: float | None = None,
        order: float | None = None,
        wait: bool = True,
        poll: float = 1.0,
        wait_timeout: float = 3600.0,
    ) -> dict[str, Any]:
        """Ask the server to design and publish a mechanism from public CSV text (admin).

        With ``wait`` (default) polls the job until it is done or failed and returns its
        final status (``{"status": "done", "mechanism": id, ...}``); else returns the job.
        """
        body: dict[str, Any] = {
            "csv": csv_text,
            "sensitive": sensitive,
            "released": [released] if isinstance(released, str) else list(released),
            "epsilon": epsilon,
            "method": method,
        }
        for key, value in (("beta", beta), ("radius", radius), ("order", order)):
            if value is not None:
                body[key] = value
        job = json_object(self._http.request("POST", "/v1/designs", auth=True, json=body))
        if not wait:
            return job
        deadline = time.monotonic() + wait_timeout
        while True:
            status = json_object(self._http.request("GET", job["status_url"], auth=True))
            if status["status"] in ("done", "failed") or time.monotonic() > deadline:
                return status
            time.sleep(poll)

    def ready(self) -> bool:
        """True when the server and its database answer (GET /readyz)."""
        try:
            self._http.request("GET", "/readyz")
        except (ServiceUnavailable, ProblemError):
            return False
        return True
