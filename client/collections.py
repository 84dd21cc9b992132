"""Following a collection: ``Client(url).collection("app-usage")`` reports under its current mechanism.

A collection (GET /v1/collections/{name}) is a stable name whose mechanism the operator can
rotate. :class:`Collection` looks it up on each :meth:`~Collection.submit` (one small GET) and
uses its current mechanism through the :class:`~rldp.client.Client`: the document is downloaded
and verified once per mechanism (content id, the client's :class:`~rldp.client.VerificationPolicy`,
the privacy audit) exactly as for a mechanism id, and draws are memoised per randomiser in the
client's state file (:attr:`~rldp.client.Mechanism.memo_key`: Q, the per-report layer, the alphabet). A
rotation that re-publishes the same design therefore re-sends every record's memoised output and
spends nothing; a redesign (another Q) means a fresh draw of every record, charged to its
owner's :class:`~rldp.client.PrivacyBudget` like any new draw: the client never spends beyond
the budget across rotations — the submit that would is refused with
:class:`~rldp.client.PrivacyBudgetExceeded` and sends nothing. Memo rows a state file of format 2 (an
older rldp) keyed by document id move to their randomiser key when the collection's history names their
document (verified like any mechanism), so an app upgraded mid-collection re-sends them on the next
rotation. When the service cannot be reached
the last mechanism seen is used (its batches go to the offline queue, if any).
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from rldp.shared.errors import RldpError

from .errors import CollectionRetired, ServiceUnavailable
from .estimate import Estimate
from .mechanism import Mechanism
from .receipt import Receipt
from .reporting import Reporter
from .sampling import RandomSource

__all__ = ["Collection", "CollectionHost"]


class CollectionHost(Protocol):
    """What a :class:`Collection` needs of the client that made it (:class:`~rldp.client.Client` has each)."""

    #: The client's memoised reporting (None without a state file).
    reporter: Reporter | None

    def collection_info(self, name: str) -> dict[str, Any]: ...

    def mechanism(self, mechanism_id: str, *, max_epsilon: float | None = None) -> Mechanism: ...

    def privatize(
        self, mechanism_id: str, records: Any, *, owners: Any = None, rng: RandomSource | None = None
    ) -> np.ndarray: ...

    def submit(
        self,
        mechanism_id: str,
        records: Any,
        *,
        owners: Any = None,
        batch_size: int = ...,
        rng: RandomSource | None = None,
    ) -> Receipt: ...

    def estimate_collection(self, name: str, **params: Any) -> Estimate: ...


class Collection:
    """A collection followed through a :class:`~rldp.client.Client` (see the module docstring)."""

    def __init__(self, client: CollectionHost, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"a collection name must be a non-empty string; got {name!r}")
        self.client = client
        self.name = name
        self.last: dict[str, Any] | None = None  # the collection as last seen

    def info(self) -> dict[str, Any]:
        """The collection now (GET /v1/collections/{name}): ``current``, ``mechanisms`` (the history), ``policy``, …;
        :class:`~rldp.client.ProblemError` 404 unknown-collection for an unknown name."""
        self.last = self.client.collection_info(self.name)
        return self.last

    def current(self) -> Mechanism:
        """The current mechanism, verified (cached per mechanism id); the last one seen when the service
        cannot be reached; :class:`CollectionRetired` once the collection is retired."""
        try:
            info = self.info()
        except ServiceUnavailable:
            if self.last is None:
                raise
            info = self.last
        if info.get("status") != "active":
            raise CollectionRetired(f"collection {self.name!r} was retired; it takes no more reports")
        self._adopt_history(info)
        return self.client.mechanism(str(info["current"]))

    def _adopt_history(self, info: dict[str, Any]) -> None:
        """Move memo rows drawn before state format 3 under the collection's earlier documents to their
        randomiser keys (:meth:`rldp.client.reporting.Reporter.adopt`): a document that cannot be verified now
        (offline, refused by the policy) is skipped, its rows kept under its id and still charged."""
        reporter = self.client.reporter
        legacy = reporter.legacy_documents() if reporter is not None else frozenset()
        if reporter is None or not legacy:
            return
        for entry in info.get("mechanisms") or ():
            mid = entry.get("mechanism") if isinstance(entry, dict) else None
            if isinstance(mid, str) and mid in legacy:
                try:
                    reporter.adopt(self.client.mechanism(mid))
                except RldpError:
                    continue

    def privatize(self, records: Any, *, owners: Any = None, rng: RandomSource | None = None) -> tuple[str, np.ndarray]:
        """(current mechanism id, one output per record) under the current mechanism; nothing is sent."""
        mech = self.current()
        return mech.id, self.client.privatize(mech.id, records, owners=owners, rng=rng)

    def submit(self, records: Any, *, owners: Any = None, rng: RandomSource | None = None, **kwargs: Any) -> Receipt:
        """Privatise and upload ``records`` under the current mechanism (:meth:`rldp.client.Client.submit`)."""
        return self.client.submit(self.current().id, records, owners=owners, rng=rng, **kwargs)

    def estimate(self, **params: Any) -> Estimate:
        """P(S, U) from every mechanism of the collection (:meth:`rldp.client.Client.estimate_collection`; a token
        that may read estimates)."""
        return self.client.estimate_collection(self.name, **params)
