"""An operator command's ID argument takes a mechanism document's file too (admin.connect.mechanism_id): the id
is recomputed from its content, so a script names the document it designed, not the id one machine printed."""

from __future__ import annotations

import json

import pytest
from documents import make_document, tampered

from rldp.admin.connect import mechanism_id
from rldp.shared.document import write_document
from rldp.shared.errors import DocumentError, ValidationError


class _Catalogue:
    """The one call mechanism_id makes of a client: the public catalogue."""

    def __init__(self, ids: list[str]) -> None:
        self.ids, self.calls = ids, 0

    def mechanisms(self) -> list[dict[str, str]]:
        self.calls += 1
        return [{"id": i} for i in self.ids]


@pytest.fixture(scope="module")
def document() -> dict:
    return make_document("file-argument")


def test_a_document_file_stands_for_its_id_without_asking_the_server(tmp_path, document) -> None:
    path = tmp_path / "mech.json"
    write_document(document, path)
    catalogue = _Catalogue([])
    assert mechanism_id(catalogue, str(path)) == document["id"] and catalogue.calls == 0  # type: ignore[arg-type]
    write_document(document, tmp_path / "mech.msgpack")
    assert mechanism_id(catalogue, str(tmp_path / "mech.msgpack")) == document["id"]  # type: ignore[arg-type]


def test_a_tampered_document_file_is_refused_and_a_prefix_is_still_a_prefix(tmp_path, document, monkeypatch) -> None:
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(tampered(document)), encoding="utf-8")
    with pytest.raises(DocumentError, match="edited.json"):
        mechanism_id(_Catalogue([]), str(path))  # type: ignore[arg-type]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ab").write_text("not a document", encoding="utf-8")
    catalogue = _Catalogue(["ab" + "0" * 62])
    assert mechanism_id(catalogue, "ab") == "ab" + "0" * 62  # hex: a prefix, even where a file has that name
    with pytest.raises(ValidationError, match="'missing.json' is neither a mechanism id .* nor a mechanism document"):
        mechanism_id(catalogue, "missing.json")  # type: ignore[arg-type]
