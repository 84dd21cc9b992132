"""The operator's SDK: the calls that change an aggregator (publish, label, retire, collections, design jobs).

    from rldp.admin import AdminClient

    with AdminClient("https://agg.example", token=admin_token) as admin:
        admin.publish(document, label="app-usage v2")
        admin.create_collection("app-usage", mechanism_id, {"notion": "rldp", "epsilon": 1.0})
        admin.rotate_collection("app-usage", next_id)

They need the service's admin token. :class:`AdminClient` also has every read of
:class:`~rldp.client.reads.ReadCalls` (catalogue, collections, estimates, readiness) and speaks to the
service through the app SDK's :class:`~rldp.client.transport.Transport` (the same retries, size limits,
refusal of redirects and errors). The app's :class:`~rldp.client.Client` has none of these calls: an
app never carries the operator's console.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import requests

from rldp.client.client import DEFAULT_RETRIES
from rldp.client.reads import MSGPACK, ReadCalls, segment
from rldp.client.transport import Transport, json_object
from rldp.shared.document import to_msgpack

__all__ = ["AdminClient"]


class AdminClient(ReadCalls):
    """A client of one aggregator for its operator (thread-safe; reuse it).

    ``token``: the admin token (a read token is enough for the reads); ``timeout``, ``retries``,
    ``backoff_factor``, ``backoff_max`` and ``session`` as :class:`~rldp.client.Client`'s.
    """

    def __init__(
        self,
        url: str,
        *,
        token: str | None = None,
        timeout: float = 10.0,
        retries: int = DEFAULT_RETRIES,
        backoff_factor: float = 0.5,
        backoff_max: float = 30.0,
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

    def close(self) -> None:
        """Close the HTTP session."""
        self._http.close()

    def __enter__(self) -> AdminClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def publish(self, document: dict[str, Any], *, label: str | None = None) -> dict[str, Any]:
        """Publish a mechanism document (admin). Returns {"id", "label", "method", "epsilon", "epsilon_audited",
        "status", "created"}: ``created`` is False when the id was already published (201 vs 200). ``label``: a
        human name for it, sent beside the document (never part of it or of its id)."""
        params = None if label is None else {"label": label}
        headers = {"Content-Type": MSGPACK}
        resp = self._http.request(
            "POST", "/v1/mechanisms", auth=True, data=to_msgpack(document), headers=headers, params=params
        )
        return {**json_object(resp), "created": resp.status_code == 201}

    def set_label(self, mechanism_id: str, label: str | None) -> dict[str, Any]:
        """Set a mechanism's label (admin; None removes it); the mechanism as GET /v1/mechanisms lists it."""
        path = f"/v1/mechanisms/{segment(mechanism_id)}"
        return json_object(self._http.request("PATCH", path, auth=True, json={"label": label}))

    def retire(self, mechanism_id: str) -> dict[str, Any]:
        """Retire a mechanism (admin): it accepts no more reports."""
        return json_object(self._http.request("POST", f"/v1/mechanisms/{segment(mechanism_id)}/retire", auth=True))

    # -- collections (a stable name whose mechanism the operator rotates; apps follow it: Client.collection)
    def create_collection(
        self, name: str, mechanism: str, policy: dict[str, Any], *, description: str = "", window: str | None = None
    ) -> dict[str, Any]:
        """Create a collection whose first mechanism is ``mechanism`` (admin); ``created`` False when it existed.

        ``window``: None (the mechanism's collection window, which it must have: windows are the default),
        ``"none"`` for a mechanism designed without windows, or a duration that must be the mechanism's."""
        body: dict[str, Any] = {"name": name, "mechanism": mechanism, "policy": policy, "description": description}
        if window is not None:
            body["window"] = window
        resp = self._http.request("POST", "/v1/collections", auth=True, json=body)
        return {**json_object(resp), "created": resp.status_code == 201}

    def rotate_collection(self, name: str, mechanism: str) -> dict[str, Any]:
        """Make ``mechanism`` the collection's current mechanism (admin)."""
        path = f"/v1/collections/{segment(name)}/rotate"
        return json_object(self._http.request("POST", path, auth=True, json={"mechanism": mechanism}))

    def resume_collection(self, name: str) -> dict[str, Any]:
        """Lift the pause a collection's drift policy set (admin): its current mechanism takes reports again."""
        return json_object(self._http.request("POST", f"/v1/collections/{segment(name)}/resume", auth=True))

    def rotate_upload_token(self, name: str) -> dict[str, Any]:
        """Create or rotate the collection's upload token (admin): ``{"token": ..., "previous_valid": ...}``. The
        token is shown this once (the service keeps its hash); the previous one stays valid until the next rotation."""
        return json_object(self._http.request("POST", f"/v1/collections/{segment(name)}/upload-token", auth=True))

    def revoke_upload_token(self, name: str) -> dict[str, Any]:
        """Revoke the collection's upload token (admin): its uploads need none again."""
        return json_object(self._http.request("DELETE", f"/v1/collections/{segment(name)}/upload-token", auth=True))

    def retire_collection(self, name: str) -> dict[str, Any]:
        """Retire a collection (admin): it no longer rotates and its clients stop reporting."""
        return json_object(self._http.request("POST", f"/v1/collections/{segment(name)}/retire", auth=True))

    def switch_collection(
        self,
        name: str,
        method: str,
        *,
        min_reports: int | None = None,
        beta: float | None = None,
        time_budget: float | None = None,
        wait: bool = True,
        poll: float = 1.0,
        wait_timeout: float = 3600.0,
    ) -> dict[str, Any]:
        """End a collection's pilot (admin): the server designs ``method`` over the pilot's confidence set and
        rotates the collection to it if it beats the pilot. With ``wait``, the job's final status (its
        ``error`` says why when the pilot was kept); else the queued job."""
        body: dict[str, Any] = {"method": method}
        for key, value in (("min_reports", min_reports), ("beta", beta), ("time_budget", time_budget)):
            if value is not None:
                body[key] = value
        job = json_object(self._http.request("POST", f"/v1/collections/{segment(name)}/switch", auth=True, json=body))
        return self._wait(job, wait, poll, wait_timeout)

    def _wait(self, job: dict[str, Any], wait: bool, poll: float, wait_timeout: float) -> dict[str, Any]:
        if not wait:
            return job
        deadline = time.monotonic() + wait_timeout
        while True:
            status = json_object(self._http.request("GET", job["status_url"], auth=True))
            if status["status"] in ("done", "failed") or time.monotonic() > deadline:
                return status
            time.sleep(poll)

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
        return self._wait(job, wait, poll, wait_timeout)

    def jobs(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The most recent design jobs, newest first (admin; GET /v1/designs): each as :meth:`job` returns it.

        ``limit``: at most this many (the server's default 50, at most 500)."""
        params = None if limit is None else {"limit": int(limit)}
        answer = json_object(self._http.request("GET", "/v1/designs", auth=True, params=params))
        jobs: list[dict[str, Any]] = answer["jobs"]
        return jobs

    def job(self, job_id: str) -> dict[str, Any]:
        """One design job (admin; GET /v1/designs/{job}): ``{"job", "status", "elapsed", "created", "params"}``
        plus ``mechanism`` once done or ``error`` once failed; :class:`ProblemError` 404 unknown-job."""
        return json_object(self._http.request("GET", f"/v1/designs/{segment(job_id)}", auth=True))
