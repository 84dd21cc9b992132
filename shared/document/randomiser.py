"""The randomiser key: one id for everything that fixes the distribution of a memoised Y given a record.

The client memoises each owner's draw per randomiser, not per document (``rldp.client.memo``): a
collection rotated every day re-publishes its design under a new document id (new ``collection``
window or dates, new labels), and a memo keyed by that id would draw every record afresh each day,
so an aggregator that links the days would average the draws. Two documents with the same key
give a record the same distribution of Y, so re-sending the memoised Y under the second reveals
nothing the first did not; two documents that differ in anything that changes that distribution
have different keys, so a Y is never reused under another Q.

What the key covers, in its canonical form (:func:`randomiser_bytes`), the UTF-8 bytes of::

    {"format":"rldp.randomiser/1","matrix":…,"per_report":…,"released":…,"sensitive":…}

written like the content id's canonical form (:mod:`.canonical`: sorted keys, no whitespace,
``ensure_ascii`` off, no NaN/Infinity), where

* ``matrix``: Q exactly as the id hashes it (a list of rows with every entry a float, or a
  compact form's canonical object: :mod:`.forms`);
* ``per_report``: the per-report layer's matrix R (``collection.per_report.matrix``, entries
  floats) or ``null`` without one; R's claimed ε₁ is not covered (a claim, not a distribution);
* ``sensitive`` and ``released``: the input alphabet as the document writes it (attribute names,
  values in order, a numeric attribute's bin edges, a latent S's ``"released": false``), which fixes
  how a record is encoded as x.

Everything else is left out: ``id``, ``run``, ``method``, ``privacy`` (claims about Q, which the
client audits itself), ``public_distribution`` (P̂ does not enter the draw), every other
``collection`` field (name, window, dates), ``provenance`` and any label. The output alphabet is Q's
rows (with R's, R's rows). The key is conservative: the same Q written in two forms (rows and a
compact form), or an attribute written with an extra key, gets two keys (a fresh, charged draw,
never a reused one). The key is the sha256 of those bytes (:func:`randomiser_key`); the
``format`` member keeps it apart from every content id.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from ..errors import DocumentError
from .canonical import _canonical_obj, encode_canonical, floats, plain

__all__ = ["RANDOMISER_FORMAT", "randomiser_bytes", "randomiser_key"]

RANDOMISER_FORMAT = "rldp.randomiser/1"


def _layer_matrix(doc: Mapping[str, Any]) -> Any:
    collection = doc.get("collection")
    layer = collection.get("per_report") if isinstance(collection, Mapping) else None
    if layer is None:
        return None
    if not isinstance(layer, Mapping) or "matrix" not in layer:
        raise DocumentError("collection.per_report must be an object with a matrix")
    return floats(plain(layer["matrix"], "collection.per_report.matrix"))


def randomiser_bytes(doc: Mapping[str, Any]) -> bytes:
    """The canonical bytes the randomiser key hashes (see the module docstring)."""
    if not isinstance(doc, Mapping):
        raise DocumentError(f"a mechanism document must be an object (mapping), got {type(doc).__name__}")
    missing = [field for field in ("matrix", "sensitive", "released") if field not in doc]
    if missing:
        raise DocumentError(f"document has no field(s) {', '.join(missing)}: it has no randomiser")
    body = _canonical_obj({field: doc[field] for field in ("matrix", "sensitive", "released")})
    body["format"] = RANDOMISER_FORMAT
    body["per_report"] = _layer_matrix(doc)
    return encode_canonical(body)


def randomiser_key(doc: Mapping[str, Any]) -> str:
    """sha256 hex digest of :func:`randomiser_bytes`: the memo's key for the document's draws."""
    return hashlib.sha256(randomiser_bytes(doc)).hexdigest()
