"""The calls that read the service without reporting: the catalogue, collections, estimates, readiness.

Shared by the app's :class:`~rldp.client.Client` and the operator's :class:`rldp.admin.AdminClient`
(which adds the calls that change the service). The catalogue and the collections are public;
estimates and windows need a read (or admin) token: ``Client(url, token=...)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import quote

from .errors import ProblemError, ServiceUnavailable
from .estimate import ESTIMATE_INTERVALS, ESTIMATE_METHODS, Estimate
from .ids import listed
from .transport import Transport, json_object

__all__ = ["ReadCalls", "MSGPACK", "MOVED_TO_ADMIN", "segment"]

MSGPACK = "application/msgpack"
#: The operator's calls that ``Client`` had in rldp 0.1: they are :class:`rldp.admin.AdminClient`'s now.
MOVED_TO_ADMIN = frozenset(
    {
        "publish",
        "set_label",
        "retire",
        "create_collection",
        "rotate_collection",
        "resume_collection",
        "rotate_upload_token",
        "revoke_upload_token",
        "retire_collection",
        "switch_collection",
        "design",
        "jobs",
        "job",
    }
)


def segment(identifier: str) -> str:
    """``identifier`` as one URL path segment (an id typed by an operator may hold '/', '?', …)."""
    if not isinstance(identifier, str) or not identifier:
        raise ValueError(f"an id must be a non-empty string; got {identifier!r}")
    return quote(identifier, safe="")


def _params(params: dict[str, Any]) -> dict[str, Any]:
    """An estimate's query parameters (None: the server's default); method and interval checked here, naming
    the choices, before any request."""
    for key, choices in (("method", ESTIMATE_METHODS), ("interval", ESTIMATE_INTERVALS)):
        if params.get(key) is not None and params[key] not in choices:
            raise ValueError(f"{key} must be one of {', '.join(choices)}; got {params[key]!r}")
    return {k: v for k, v in params.items() if v is not None}


class ReadCalls:
    """Mixin of :class:`~rldp.client.Client` and :class:`rldp.admin.AdminClient`: reads of the service."""

    _http: Transport
    url: str

    def mechanisms(self) -> list[dict[str, Any]]:
        """The server's catalogue (GET /v1/mechanisms): id, method, epsilon, status, …."""
        return listed(json_object(self._http.request("GET", "/v1/mechanisms")), "mechanisms", self.url)

    def collections(self) -> list[dict[str, Any]]:
        """Every collection (GET /v1/collections), oldest first: name, policy, window, status, current, mechanisms."""
        collections: list[dict[str, Any]] = json_object(self._http.request("GET", "/v1/collections"))["collections"]
        return collections

    def collection_info(self, name: str) -> dict[str, Any]:
        """One collection now (GET /v1/collections/{name}): ``current``, ``mechanisms`` (the history), ``policy``,
        ``status``, …; :class:`~rldp.client.ProblemError` 404 unknown-collection for an unknown name."""
        return json_object(self._http.request("GET", f"/v1/collections/{segment(name)}"))

    def estimate(self, mechanism_id: str, **params: Any) -> Estimate:
        """The server's estimate of P(S, U) (admin or read token); ``params``: method, interval, prior, prior_weight,
        window (one collection window's label; without it, every report). :class:`~rldp.client.TooFewReports`
        while the mechanism has fewer reports than the server's minimum."""
        path = f"/v1/mechanisms/{segment(mechanism_id)}/estimate"
        return Estimate.from_dict(json_object(self._http.request("GET", path, auth=True, params=_params(params))))

    def estimate_collection(self, name: str, **params: Any) -> Estimate:
        """P(S, U) from every mechanism of the collection in one likelihood (admin or read token); ``params`` as
        :meth:`estimate`'s."""
        path = f"/v1/collections/{segment(name)}/estimate"
        return Estimate.from_dict(json_object(self._http.request("GET", path, auth=True, params=_params(params))))

    def windows(self, mechanism_id: str) -> dict[str, Any]:
        """The server's reports per collection window (admin or read token):
        ``{"mechanism", "collection", "windows": [{"window": label, "reports": n}, …]}``."""
        return json_object(self._http.request("GET", f"/v1/mechanisms/{segment(mechanism_id)}/windows", auth=True))

    def ready(self) -> bool:
        """True when the server and its database answer (GET /readyz)."""
        try:
            self._http.request("GET", "/readyz")
        except (ServiceUnavailable, ProblemError):
            return False
        return True

    if not TYPE_CHECKING:  # run time only: mypy keeps reporting a misspelt attribute

        def __getattr__(self, name: str) -> NoReturn:
            """An operator's call asked of the app's Client: say where it went (AttributeError, as for any name)."""
            if name in MOVED_TO_ADMIN:
                raise AttributeError(
                    f"{type(self).__name__}.{name} moved to the operator's SDK: use rldp.admin.AdminClient(url, "
                    f"token=...).{name}(...) (the app's Client no longer carries the operator's calls)",
                    name=name,
                    obj=self,
                )
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}", name=name, obj=self)
