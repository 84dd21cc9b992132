"""Why the aggregator refuses a request: one exception type per reason.

The HTTP layer answers each type with its own problem type (rldp.aggregator.http.problems
maps type → problem; it never reads the message). ``detail`` is the message: what was
wrong and what was expected. ``fields`` are structured members the answer carries along
(``field``, ``parameter``, ``mechanism``, ``limit``...).

The refusals of a report batch's content are :class:`rldp.shared.reports.BatchError`
subclasses (they are checked the same way wherever a batch is read); the refusals of a
mechanism document start as :mod:`rldp.shared.errors` document errors and are turned into
the types below by :mod:`rldp.aggregator.services.publish`.

The refusals a client raises again from their answer (:class:`ServiceError`, the root; :class:`TooFewReports`,
:class:`CollectionPaused`, :class:`CollectionRetired`) are declared once, in :mod:`rldp.shared.problems`, and
exported here.
"""

from __future__ import annotations

from typing import Any

from rldp.aggregator.storage import StorageError, StoreFull
from rldp.shared.errors import RldpError
from rldp.shared.problems import CollectionPaused, CollectionRetired, ServiceError, TooFewReports

__all__ = [
    "AddressInUse",
    "ConfigError",
    "ServiceError",
    "Unauthorized",
    "UnsupportedMediaType",
    "BodyTooLarge",
    "BodySyntaxError",
    "MissingField",
    "WrongType",
    "InvalidParameter",
    "UnknownMechanism",
    "MechanismRetired",
    "BatchConflict",
    "InvalidDocument",
    "DocumentIdMismatch",
    "AuditFailed",
    "PublicDataMismatch",
    "UnknownJob",
    "NoReports",
    "TooFewReports",
    "UnknownCollection",
    "CollectionExists",
    "CollectionRetired",
    "CollectionConflict",
    "CollectionPaused",
    "MechanismWithdrawn",
    "UploadCredentialRequired",
    "ClaimPolicyViolated",
    "RotationRefused",
    "DatabaseUnavailable",
    "StorageError",
    "StoreFull",
]


class ConfigError(RldpError, ValueError):
    """The service's configuration (arguments or RLDP_* environment) is invalid."""


class AddressInUse(ConfigError):
    """``rldp serve``'s host:port is taken by another listening process."""


# -- who may ask


class Unauthorized(ServiceError):
    """No bearer token, or one that does not grant this endpoint."""


# -- the body


class UnsupportedMediaType(ServiceError, ValueError):
    """The body is declared neither JSON nor msgpack."""


class BodyTooLarge(ServiceError, ValueError):
    """The body exceeds MAX_BODY_BYTES."""


class BodySyntaxError(ServiceError, ValueError):
    """The body is not valid JSON / msgpack (``encoding`` says which was declared)."""

    def __init__(self, detail: str, encoding: str, **fields: Any) -> None:
        super().__init__(detail, **fields)
        self.encoding = encoding


class MissingField(ServiceError, ValueError):
    """A required field of a request body (other than a report batch) is absent."""


class WrongType(ServiceError, ValueError):
    """A request body (other than a report batch) has the wrong type."""


class InvalidParameter(ServiceError, ValueError):
    """A design or estimate parameter is invalid; ``fields["parameter"]`` names it."""


# -- mechanisms and batches


class UnknownMechanism(ServiceError, LookupError):
    """No mechanism with this id is published here."""


class MechanismRetired(ServiceError):
    """The mechanism was retired and accepts no more reports."""


class BatchConflict(ServiceError):
    """A batch with this id was stored before with different reports."""


class InvalidDocument(ServiceError, ValueError):
    """A mechanism document that is malformed."""


class DocumentIdMismatch(ServiceError, ValueError):
    """A document whose id is not the hash of its content (altered after hashing)."""


class AuditFailed(ServiceError, ValueError):
    """A document whose privacy audit fails (or which cannot be audited)."""


class PublicDataMismatch(ServiceError, ValueError):
    """A document whose claims about its public data do not hold: its P̂, n, radius or counts hash
    differ from the public data the service checks against (PUBLIC_DATA), or its provenance
    contradicts its own P̂ and n."""


class NoReports(ServiceError):
    """An estimate was asked for a mechanism that has no reports."""


# -- collections


class UnknownCollection(ServiceError, LookupError):
    """No collection with this name."""


class CollectionExists(ServiceError):
    """A collection with this name exists with other settings (creating the same one again is accepted)."""


class CollectionConflict(ServiceError):
    """The collection was rotated or retired by another request while this one was checked."""


class MechanismWithdrawn(ServiceError):
    """A paused mechanism its collection has since rotated away from: its reports are not taken any more."""


class UploadCredentialRequired(ServiceError):
    """A batch for a collection that requires an upload token came without a valid one (nothing stored).

    Permanent for a client: the app must give its installs the collection's current upload token."""


class ClaimPolicyViolated(ServiceError, ValueError):
    """A mechanism whose claim (notion and parameters) does not satisfy the collection's claim policy."""


class RotationRefused(ServiceError, ValueError):
    """A mechanism that cannot join the collection: another X or window, retired, or already in a collection."""


# -- designs and operations


class UnknownJob(ServiceError, LookupError):
    """No design job with this id."""


class DatabaseUnavailable(ServiceError):
    """The storage does not answer (readiness check)."""
