"""rldp.client — the SDK an app embeds: verify a mechanism, privatise locally, upload.

    from rldp.client import Client

    client = Client("https://agg.example", timeout=10)
    mech = client.mechanism(mechanism_id)      # downloaded, id checked, privacy audit recomputed
    ys = mech.privatize([{"sex": "Male", "race": "White"}])   # OS CSPRNG, vectorised
    receipt = client.submit(mechanism_id, records)            # privatise + upload in batches

Reporting over time: ``Client(url, state_path="rldp-state.sqlite3")`` memoises each record's
draw (the same Y for every later report), sends at most one report per owner and window for
mechanisms with a collection window, and with ``privacy_budget=PrivacyBudget(epsilon=3,
per="P1D")`` refuses new draws beyond the budget. ``pinned=[id, …]``, ``min_radius`` and
``max_public_n`` limit which documents the app accepts (:class:`VerificationPolicy`).

Depends only on numpy, requests, msgpack, cryptography (optional: a faster CSPRNG for large
batches) and rldp.shared (no scipy, no flask).
"""

from .budget import PrivacyBudget
from .client import DEFAULT_BATCH_SIZE, Client, Receipt
from .errors import (
    MechanismRejected,
    PrivacyBudgetExceeded,
    ProblemError,
    RLDPError,
    RldpError,
    ServiceUnavailable,
    StateFileError,
)
from .mechanism import Mechanism
from .policy import VerificationPolicy
from .queue import OfflineQueue
from .sampling import ColumnSampler, OSRandom, uniform_from_bytes

__all__ = [
    "Client",
    "Receipt",
    "Mechanism",
    "MechanismRejected",
    "VerificationPolicy",
    "PrivacyBudget",
    "PrivacyBudgetExceeded",
    "StateFileError",
    "ProblemError",
    "RldpError",
    "RLDPError",
    "ServiceUnavailable",
    "OfflineQueue",
    "OSRandom",
    "ColumnSampler",
    "uniform_from_bytes",
    "DEFAULT_BATCH_SIZE",
]
