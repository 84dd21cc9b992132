"""rldp.client — the SDK an app embeds: verify a mechanism, privatise locally, upload.

    from rldp.client import Client

    client = Client("https://agg.example", timeout=10)
    usage = client.collection("app-usage")     # follows the collection's current mechanism
    receipt = usage.submit([{"sex": "Male", "race": "White"}])  # verified, privatised, memoised, sent
    mech = client.mechanism(mechanism_id)      # downloaded, id checked, privacy audit recomputed
    ys = mech.privatize(records)               # OS CSPRNG, vectorised, a fresh draw each call

Reporting over time: ``Client(url)`` memoises each record's draw in a state file under the
user's data folder (``state_path=...`` elsewhere, ``state_path=None`` to turn it off; see
:mod:`.defaults`): the same Y for every later report; at most one report per owner and window
for mechanisms with a collection window; a batch of several records needs ``owners``; new draws
(a collection's rotation, a changed record) beyond the privacy budget are refused before anything
is drawn or sent: by default :data:`DEFAULT_BUDGET`, 4 nats per owner per day and 4 nats per owner
in all, so rotations cannot undo memoisation (``privacy_budget=PrivacyBudget(epsilon=3, per="P1W",
lifetime=12)`` sets another, ``privacy_budget=None`` none). ``pinned=[id, …]``, ``min_radius`` and
``max_public_n`` limit which documents the app accepts (:class:`VerificationPolicy`).

Depends only on numpy, requests, msgpack, cryptography (optional: a faster CSPRNG for large
batches) and rldp.shared (no scipy, no flask). The operator's calls (publish, labels, retire, collections,
design jobs) are not here: they are :class:`rldp.admin.AdminClient`'s, a package this one never imports.
"""

from .budget import DEFAULT_BUDGET, PrivacyBudget
from .client import DEFAULT_BATCH_SIZE, Client, Receipt
from .collections import Collection
from .defaults import DEFAULT_STATE, OwnersRequired, default_state_path
from .errors import (
    CollectionPaused,
    CollectionRetired,
    MechanismRejected,
    PrivacyBudgetExceeded,
    ProblemError,
    RLDPError,
    RldpError,
    ServiceUnavailable,
    StateFileError,
    TooFewReports,
    UploadCredentialRefused,
)
from .estimate import Estimate
from .mechanism import Mechanism
from .policy import VerificationPolicy
from .queue import OfflineQueue
from .sampling import ColumnSampler, OSRandom, uniform_from_bytes

__all__ = [
    "Client",
    "Collection",
    "CollectionPaused",
    "CollectionRetired",
    "DEFAULT_STATE",
    "OwnersRequired",
    "default_state_path",
    "Receipt",
    "Mechanism",
    "MechanismRejected",
    "VerificationPolicy",
    "DEFAULT_BUDGET",
    "PrivacyBudget",
    "PrivacyBudgetExceeded",
    "StateFileError",
    "ProblemError",
    "TooFewReports",
    "UploadCredentialRefused",
    "Estimate",
    "RldpError",
    "RLDPError",
    "ServiceUnavailable",
    "OfflineQueue",
    "OSRandom",
    "ColumnSampler",
    "uniform_from_bytes",
    "DEFAULT_BATCH_SIZE",
]
