"""The problem types of the collections' refusals (kept here: :mod:`.problems` lists them with the others)."""

from __future__ import annotations

from rldp.aggregator.services import (
    ClaimPolicyViolated,
    CollectionConflict,
    CollectionExists,
    CollectionPaused,
    CollectionRetired,
    MechanismWithdrawn,
    RotationRefused,
    UnknownCollection,
    UploadCredentialRequired,
)

__all__ = ["COLLECTION_HEADERS", "COLLECTION_PROBLEMS", "COLLECTION_REASONS"]

#: (reason, status, title, description) of each collection refusal.
COLLECTION_PROBLEMS = [
    ("unknown-collection", 404, "Unknown collection", "No collection with this name exists here."),
    (
        "collection-exists",
        409,
        "Collection exists",
        "A collection with this name exists with other settings (creating the same collection again is accepted).",
    ),
    (
        "collection-retired",
        409,
        "Collection retired",
        "The collection was retired: it cannot rotate; its history and estimates stay available.",
    ),
    (
        "collection-conflict",
        409,
        "Collection changed meanwhile",
        "Another request rotated or retired the collection while this one was checked; look at it again.",
    ),
    (
        "claim-policy-violated",
        422,
        "Mechanism does not satisfy the claim policy",
        "The mechanism's privacy claim (notion and parameters) exceeds the collection's claim policy.",
    ),
    (
        "collection-paused",
        423,
        "Collection paused",
        "The collection's drift policy paused its current mechanism: the reporting population no longer looks "
        "like its P̂, so its claim may not hold for these reports. Nothing was stored; keep the batch (same id) "
        "and send it again after the operator resumes or rotates the collection (Retry-After).",
    ),
    (
        "mechanism-withdrawn",
        410,
        "Mechanism withdrawn",
        "The mechanism was paused by its collection's drift policy and the collection has moved on: reports "
        "drawn under it are not taken. Draw again under the collection's current mechanism.",
    ),
    (
        "upload-credential",
        401,
        "Upload credential required",
        "The batch's collection requires an upload token ('Authorization: Bearer <token>', the token its operator "
        "gave the app) and the upload carried none, or neither its current nor its previous one. Nothing was "
        "stored; the app must give its installs the collection's current upload token.",
    ),
    (
        "rotation-refused",
        422,
        "Mechanism cannot join the collection",
        "The mechanism is over another X or window than the collection, or already belongs to a collection.",
    ),
]

#: The problem reason of each collection refusal type.
COLLECTION_REASONS: dict[type[BaseException], str] = {
    UnknownCollection: "unknown-collection",
    CollectionExists: "collection-exists",
    CollectionRetired: "collection-retired",
    CollectionConflict: "collection-conflict",
    ClaimPolicyViolated: "claim-policy-violated",
    RotationRefused: "rotation-refused",
    CollectionPaused: "collection-paused",
    MechanismWithdrawn: "mechanism-withdrawn",
    UploadCredentialRequired: "upload-credential",
}

#: Headers that always come with a collection refusal: a paused collection is looked at again in minutes.
COLLECTION_HEADERS = {
    "collection-paused": {"Retry-After": "300"},
    "upload-credential": {"WWW-Authenticate": 'Bearer realm="rldp-upload"'},
}
