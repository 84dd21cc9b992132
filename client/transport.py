"""HTTP plumbing of the client: one session with retries, and errors from answers.

Retries: requests' HTTPAdapter with urllib3's ``Retry`` — exponential backoff with
jitter on connection errors, read errors, 429 and 5xx, honouring ``Retry-After`` (capped
at :attr:`CappedRetry.RETRY_AFTER_MAX`). POST is retried too, which is safe because uploads
are idempotent by batch id (a batch the server already committed is answered as a
duplicate and stored once). Any other 4xx is permanent: :class:`ProblemError`.

A server can lie to a client (docs/design.md, "The client's threat model"): no redirect is followed
(``allow_redirects=False``: :class:`ProblemError` ``redirect``, so a POST of reports is never re-sent
elsewhere), and an answer is read while streaming up to :data:`MAX_RESPONSE_BYTES` (``Content-Length``
checked first, then a running total: :class:`ProblemError` ``response-too-large``), never whole first.
``timeout`` bounds each wait for the server (connect, each read) and also the whole body of an answer,
from its headers to its last byte: a server that trickles a body gets :class:`ServiceUnavailable` (as the
TypeScript SDK's ``timeoutMs``), not a client waiting a read timeout per byte.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import requests
import urllib3.exceptions as u3
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from rldp import __version__
from rldp.shared.document import MAX_SYMBOLS

from .errors import CollectionPaused, ProblemError, ServiceUnavailable, problem_error
from .mechanism import MAX_DENSE_AUDIT_ENTRIES

__all__ = ["Transport", "CappedRetry", "RETRY_STATUSES", "MAX_RESPONSE_BYTES", "json_object", "check_not_a_page"]

# 408: the server gave up on a slow body and stored nothing; the same batch (same id) is sent again.
RETRY_STATUSES = (408, 429, 500, 502, 503, 504)

#: The most bytes of one answer the client reads: the largest document it can accept, MAX_DENSE_AUDIT_ENTRIES
#: float64 entries as base64 text in JSON (⌈32·E/3⌉ bytes; msgpack takes at most 9 an entry), plus 1 KiB per
#: symbol for the alphabet, the public distribution and every other field: 187,345,579 bytes (179 MiB). Declared
#: once in conformance/limits.json, which this value and the TypeScript SDK's are tested against.
MAX_RESPONSE_BYTES = -(-32 * MAX_DENSE_AUDIT_ENTRIES // 3) + 1024 * MAX_SYMBOLS
#: How much of an error answer is read (its problem); the rest is dropped, never buffered.
MAX_PROBLEM_BYTES = 64 * 1024
_CHUNK = 64 * 1024


class CappedRetry(Retry):
    """urllib3 Retry whose Retry-After wait is capped (a server cannot stall a client for a day)."""

    RETRY_AFTER_MAX = 60.0

    def get_retry_after(self, response: Any) -> float | None:
        value = super().get_retry_after(response)
        return None if value is None else min(value, self.RETRY_AFTER_MAX)


def problem(resp: requests.Response) -> dict[str, Any]:
    """The RFC 9457 problem an error answer carries (or one made from its status and text)."""
    try:
        body = resp.json()
        if isinstance(body, dict):
            return body
    except ValueError:
        pass
    return {
        "type": "about:blank",
        "reason": "not-rldp",
        "title": resp.reason or "",
        "status": resp.status_code,
        "detail": _not_rldp(resp),
    }


def _not_rldp(resp: requests.Response) -> str:
    # What a web server that is not an aggregator (or a proxy's error page) said, without its page.
    kind = resp.headers.get("Content-Type", "").split(";")[0].strip() or "no content type"
    return (
        f"{resp.url} answered {resp.status_code} {resp.reason or ''} with {kind}, which is not an rldp aggregator's "
        "answer (check --server / RLDP_SERVER: the aggregator's base URL)"
    ).replace("  ", " ")


class Transport:
    """One aggregator's base URL, an HTTP session that retries, and the bearer token."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float,
        retries: int,
        backoff_factor: float,
        backoff_max: float,
        token: str | None,
        session: requests.Session | None,
        upload_token: str | None = None,
    ) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f"server URL must start with http:// or https://; got {url!r}")
        if not timeout or timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds; got {timeout!r}")
        if int(retries) < 0:
            raise ValueError(f"retries must be ≥ 0; got {retries!r}")
        self.url = url.rstrip("/")
        self.timeout = float(timeout)
        #: The most bytes of one answer (:data:`MAX_RESPONSE_BYTES`).
        self.max_response_bytes = MAX_RESPONSE_BYTES
        self._token = token
        if upload_token is not None and (not isinstance(upload_token, str) or not upload_token.strip()):
            raise ValueError("upload_token must be a non-empty string (the collection's upload token) or None")
        self._upload_token = upload_token
        retry = CappedRetry(
            total=int(retries),
            connect=int(retries),
            read=int(retries),
            status=int(retries),
            other=0,
            backoff_factor=float(backoff_factor),
            backoff_max=float(backoff_max),
            backoff_jitter=float(backoff_factor),
            status_forcelist=RETRY_STATUSES,
            allowed_methods=frozenset({"GET", "HEAD", "POST"}),
            respect_retry_after_header=True,
            raise_on_status=False,
            raise_on_redirect=False,
        )
        self.session = session or requests.Session()
        adapter = HTTPAdapter(max_retries=retry, pool_connections=4, pool_maxsize=16)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self.session.headers["User-Agent"] = f"rldp-client/{__version__}"

    def close(self) -> None:
        """Close the HTTP session."""
        self.session.close()

    def headers(self, auth: bool, extra: dict[str, str] | None = None) -> dict[str, str]:
        headers = dict(extra or {})
        if auth:
            if not self._token:
                raise ValueError("this call needs a bearer token: Client(..., token=...)")
            headers["Authorization"] = f"Bearer {self._token}"
        return headers

    def post_reports(self, body: bytes, media_type: str) -> requests.Response:
        """POST one report batch; with the collection's upload token, if the app was given one (report uploads
        are the only requests that carry it: it is never sent elsewhere, and never with the admin token)."""
        headers = {"Content-Type": media_type}
        if self._upload_token is not None:
            headers["Authorization"] = f"Bearer {self._upload_token.strip()}"
        return self.request("POST", "/v1/reports", data=body, headers=headers, ok=(200, 201))

    def _read(self, resp: requests.Response, method: str, url: str, deadline: float) -> None:
        """Read the body into ``resp`` while streaming: at most :attr:`max_response_bytes` of a success (else
        ProblemError ``response-too-large``), :data:`MAX_PROBLEM_BYTES` of an error answer (the rest dropped),
        by ``deadline`` (``time.monotonic()``; else ServiceUnavailable)."""
        success = resp.status_code < 400
        limit = self.max_response_bytes if success else MAX_PROBLEM_BYTES
        declared = resp.headers.get("Content-Length", "")
        if resp._content is not False:  # already in memory (an adapter that builds its answers): only its size
            if success and len(resp._content or b"") > limit:
                raise self._too_large(resp, method, url, f"{len(resp._content or b''):,} bytes")
            return
        try:
            if success and declared.isdigit() and int(declared) > limit:
                raise self._too_large(resp, method, url, f"{int(declared):,} bytes")
            chunks: list[bytes] = []
            total = 0
            for chunk in _pieces(resp):
                if time.monotonic() > deadline:
                    raise ServiceUnavailable(
                        f"{method} {url}: the answer's body was still arriving after {self.timeout:g} s (the client's "
                        "timeout covers the whole answer); the server or the network is too slow"
                    )
                if total + len(chunk) > limit:
                    if success:
                        raise self._too_large(resp, method, url, "more")
                    chunks.append(chunk[: limit - total])
                    break
                chunks.append(chunk)
                total += len(chunk)
        finally:
            resp.close()
        resp._content = b"".join(chunks)  # what .content, .text and .json() read

    def _too_large(self, resp: requests.Response, method: str, url: str, size: str) -> ProblemError:
        detail = (
            f"{method} {url}: the answer has {size}; this client reads at most {self.max_response_bytes:,} bytes "
            "(the largest document it can accept)"
        )
        return ProblemError(resp.status_code, {"reason": "response-too-large", "detail": detail})

    def request(
        self,
        method: str,
        path: str,
        *,
        auth: bool = False,
        headers: dict[str, str] | None = None,
        ok: tuple[int, ...] = (200, 201, 202),
        **kwargs: Any,
    ) -> requests.Response:
        url = self.url + path
        try:
            resp = self.session.request(
                method,
                url,
                headers=self.headers(auth, headers),
                timeout=self.timeout,
                allow_redirects=False,
                stream=True,
                **kwargs,
            )
            if resp.is_redirect or resp.status_code in (300, 301, 302, 303, 305, 307, 308):
                if resp.raw is not None:
                    resp.close()
                where = resp.headers.get("Location")
                raise ProblemError(
                    resp.status_code,
                    {
                        "reason": "redirect",
                        "detail": f"{method} {url} answered {resp.status_code}{f' to {where}' if where else ''}; the "
                        "client follows no redirect (a report must never be sent elsewhere): give the aggregator's own URL",
                    },
                )
            self._read(resp, method, url, time.monotonic() + self.timeout)
        except requests.exceptions.RetryError as exc:
            raise ServiceUnavailable(f"{method} {url}: the server kept failing after every retry ({exc})") from None
        except (
            requests.exceptions.ConnectionError,
            requests.exceptions.Timeout,
            requests.exceptions.ChunkedEncodingError,
        ) as exc:
            raise ServiceUnavailable(
                f"{method} {url}: cannot reach the server after every retry ({type(exc).__name__})"
            ) from None
        if resp.status_code in ok or resp.status_code == 304:
            return resp
        if resp.status_code in RETRY_STATUSES or resp.status_code >= 500:
            prob = problem(resp)
            raise ServiceUnavailable(
                f"{method} {url}: {resp.status_code} {prob.get('detail') or resp.reason} (after every retry)",
                status=resp.status_code,
            )
        prob = problem(resp)
        if prob.get("reason") == "collection-paused":  # transient: keep the batch, send it again later
            raise CollectionPaused(f"{method} {url}: {prob.get('detail')}", str(prob.get("detail", "")))
        raise problem_error(resp.status_code, prob)


def _pieces(resp: requests.Response) -> Iterator[bytes]:
    """The body as it arrives: each piece after at most one read of the socket (urllib3's ``read1``), so a
    deadline is checked however slowly the bytes come; ``iter_content`` where ``read1`` is missing."""
    read1 = getattr(resp.raw, "read1", None)
    if read1 is None:
        yield from resp.iter_content(_CHUNK)
        return
    try:
        while piece := read1(_CHUNK, decode_content=True):
            yield piece
    except Exception as exc:  # as iter_content would raise them (ChunkedEncodingError, ConnectionError)
        if isinstance(exc, u3.ProtocolError):
            raise requests.exceptions.ChunkedEncodingError(exc) from None
        if isinstance(exc, u3.ReadTimeoutError):
            raise requests.exceptions.ConnectionError(exc) from None
        if isinstance(exc, u3.DecodeError):
            raise requests.exceptions.ContentDecodingError(exc) from None
        raise


def check_not_a_page(resp: requests.Response) -> None:
    """ProblemError (not-rldp) for a successful answer that is a web page (text/*): a server that is not an
    aggregator, or a proxy's page, answering where a document was expected — said so, never parsed."""
    if resp.headers.get("Content-Type", "").split(";")[0].strip().lower().startswith("text/"):
        raise ProblemError(resp.status_code, {"reason": "not-rldp", "detail": _not_rldp(resp)})


def json_object(resp: requests.Response) -> dict[str, Any]:
    """The JSON object a successful answer carries (every endpoint answers an object)."""
    try:
        body = resp.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise ProblemError(resp.status_code, {"reason": "not-rldp", "detail": _not_rldp(resp)})
    return body
