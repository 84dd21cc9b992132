"""rldp.client — the SDK an app embeds: verify a mechanism, privatise locally, upload.

    from rldp.client import Client

    client = Client("https://agg.example", timeout=10)
    mech = client.mechanism(mechanism_id)      # downloaded, id checked, privacy audit recomputed
    ys = mech.privatize([{"sex": "Male", "race": "White"}])   # OS CSPRNG, vectorised
    receipt = client.submit(mechanism_id, records)            # privatise + upload in batches

Depends only on numpy, requests, msgpack, cryptography (optional: a faster CSPRNG for large
batches) and rldp.shared (no scipy, no flask).
"""

from .client import DEFAULT_BATCH_SIZE, Client, Receipt
from .errors import MechanismRejected, ProblemError, RLDPError, RldpError, ServiceUnavailable
from .mechanism import Mechanism
from .queue import OfflineQueue
from .sampling import ColumnSampler, OSRandom, uniform_from_bytes

__all__ = [
    "Client",
    "Receipt",
    "Mechanism",
    "MechanismRejected",
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
