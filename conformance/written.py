"""How the case generators write a (possibly hostile) document: rehashed after an edit, and as a client receives
it (JSON text or msgpack bytes), without the validation that would refuse it."""

from __future__ import annotations

import base64
import json
from typing import Any

import msgpack

from rldp.shared.document import content_id
from rldp.shared.errors import RldpError

Doc = dict[str, Any]

__all__ = ["rehash", "written"]


def rehash(doc: Any) -> Doc:
    """A plain copy of ``doc`` whose id is its content's (kept as it was when the content has no id)."""
    out: Doc = json.loads(json.dumps(doc))
    try:
        out["id"] = content_id(out)
    except RldpError:
        pass  # the content itself is refused (the case checks that), whatever its id
    return out


def written(doc: Any, encoding: str) -> Doc:
    """``doc`` as the case's ``document`` (JSON text) or ``document_base64`` (msgpack bytes)."""
    if encoding == "json":
        return {"encoding": "json", "document": json.dumps(doc, ensure_ascii=False)}
    data = msgpack.packb(doc, use_bin_type=True)
    return {"encoding": "msgpack", "document_base64": base64.b64encode(data).decode("ascii")}
