"""Errors raised by the client SDK.

Every error is an :class:`~rldp.shared.errors.RldpError` (the one root of rldp's errors,
also exported here as ``RLDPError``, its older name); each also derives from the built-in class a caller
would naturally catch: refusals of bad input or of a mechanism are ``ValueError``s,
failures to reach the service are ``OSError``s (like ``requests.ConnectionError``).
Errors raised during an upload carry the :class:`~rldp.client.Receipt` of what the
server had already accepted (``exc.receipt``), so nothing is uploaded twice by a caller
that retries only the rest.

The errors the service raises too (:class:`ProblemError`, :class:`TooFewReports`, :class:`ServiceUnavailable`,
:class:`CollectionPaused`, :class:`CollectionRetired`) are declared once, in :mod:`rldp.shared.problems`, and
exported here; :data:`PROBLEM_ERRORS` says which class each problem type is (``conformance/problems.json``).
"""

from __future__ import annotations

from typing import Any

from rldp.shared.errors import RldpError
from rldp.shared.problems import (
    CollectionPaused,
    CollectionRetired,
    ProblemError,
    ServiceUnavailable,
    TooFewReports,
)

__all__ = [
    "RldpError",
    "RLDPError",
    "MechanismRejected",
    "ProblemError",
    "TooFewReports",
    "UploadCredentialRefused",
    "problem_error",
    "ServiceUnavailable",
    "StateFileError",
    "PrivacyBudgetExceeded",
    "CollectionPaused",
    "CollectionRetired",
]

#: The older name of the root error class, kept for code written against rldp 0.1.
RLDPError = RldpError


class MechanismRejected(RldpError, ValueError):
    """A mechanism failed verification: its id does not match its content, its privacy
    audit fails, or it claims more ε than the caller allows. Never use such a mechanism."""

    def __init__(self, mechanism_id: str, message: str, reasons: tuple[str, ...] = ()) -> None:
        super().__init__(f"mechanism {mechanism_id}: {message}")
        self.mechanism_id = mechanism_id
        self.reasons = tuple(reasons)


class UploadCredentialRefused(ProblemError):
    """The batch's collection requires an upload token and this upload carried none, or neither its current nor
    its previous one (401 upload-credential). Permanent: nothing was stored and resending will not help until the
    app gives its installs the collection's current token (``Client(url, upload_token=...)``); the operator makes
    and rotates it (``rldp collection upload-token NAME``)."""

    def __init__(self, status: int, problem: dict[str, Any], receipt: Any = None) -> None:
        super().__init__(status, problem, receipt)
        self.args = (
            f"{self.status} {self.reason}: {self.detail or self.title} (give the client the collection's upload "
            "token: Client(url, upload_token=...))",
        )


#: The ProblemError subclass of each problem type that has one (the others are ProblemError itself).
PROBLEM_ERRORS: dict[str, type[ProblemError]] = {
    "too-few-reports": TooFewReports,
    "no-reports": TooFewReports,
    "upload-credential": UploadCredentialRefused,
}


def problem_error(status: int, problem: dict[str, Any], receipt: Any = None) -> ProblemError:
    """The error for a refusal: the subclass of its problem type (:data:`PROBLEM_ERRORS`) or ProblemError."""
    error = ProblemError(status, problem, receipt)
    cls = PROBLEM_ERRORS.get(error.reason, ProblemError)
    return error if cls is ProblemError else cls(status, problem, receipt)


class StateFileError(RldpError, OSError):
    """The client's state file (``Client(state_path=...)``) cannot be used: it is not a SQLite
    database, is corrupt, belongs to something else or to a newer rldp, or others may read it.

    Never worked around by starting a new file: a new memo would re-randomise every record
    and undo the protection of memoisation. ``path`` names the file.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"state file {path}: {message}")
        self.path = path


class PrivacyBudgetExceeded(RldpError):
    """A report would spend more ε than the app's privacy budget allows; nothing was sent.

    ``budget``: the cap that was reached; ``per``: its period (e.g. ``"P1D"``: a later period
    renews it), None for the owner's lifetime cap (nothing renews it: the app stops asking for new
    draws of this owner; memoised reports still go out); ``spent``: ε the owner has spent in that
    period (or in all); ``asked``: ε the refused call needed; ``owner``: whose budget (``""`` = the
    device's single owner).
    """

    def __init__(self, budget: float, per: str | None, spent: float, asked: float, owner: str) -> None:
        who = "this device's owner" if owner == "" else f"owner {owner!r}"
        period = f" per {per}" if per else " (lifetime total)"
        super().__init__(
            f"privacy budget exceeded: {who} has spent epsilon {spent:.6g} of the budget {budget:g}{period}, "
            f"and this report asks {asked:.6g} more; nothing was sent"
        )
        self.budget = budget
        self.per = per
        self.spent = spent
        self.asked = asked
        self.owner = owner
