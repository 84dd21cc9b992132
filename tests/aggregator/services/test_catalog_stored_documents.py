"""A stored document this rldp cannot read whole (an older rldp stored it; a stand-in in tests) is refused as
``InvalidDocument`` (422 invalid-document) by the catalog's typed view, never a 500; an upload reads only its
window and claim, so it still goes through on such a document."""

from __future__ import annotations

from types import SimpleNamespace

import msgpack
import pytest

from rldp.aggregator.services.errors import InvalidDocument
from rldp.aggregator.services.mechanisms import MechanismCatalog

MID = "b" * 64


def _catalog(doc: dict) -> MechanismCatalog:
    return MechanismCatalog(SimpleNamespace(get_document=lambda mechanism: msgpack.packb(doc)))  # type: ignore[arg-type]


def test_a_stored_document_without_a_matrix_gives_its_window_and_claim_and_a_clear_refusal_for_the_rest() -> None:
    catalog = _catalog({"privacy": {"notion": "rldp", "epsilon": 1.0}})
    assert catalog.window(MID) is None and catalog.claim(MID)["epsilon"] == 1.0
    with pytest.raises(InvalidDocument, match="cannot be read by this rldp .*no field 'matrix'.*retire it"):
        catalog.view(MID)


def test_a_stored_document_without_a_privacy_object_is_refused_by_name() -> None:
    with pytest.raises(InvalidDocument, match="has no privacy object"):
        _catalog({"matrix": [[1.0]]}).window(MID)
