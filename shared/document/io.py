"""Mechanism documents as JSON (on disk, pretty) and msgpack (on the wire), read and written.

Malformed bytes raise :class:`~rldp.shared.errors.DocumentSyntaxError` (its ``encoding``
says which format was expected); a well-formed document that fails validation raises the
:class:`~rldp.shared.errors.DocumentError` of :func:`~rldp.shared.document.validate_document`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import msgpack

from ..errors import DocumentError, DocumentSyntaxError
from .canonical import plain
from .forms import for_json, for_msgpack
from .schema import validate_document

__all__ = ["json_compatible", "to_json", "from_json", "to_msgpack", "from_msgpack", "write_document", "read_document"]

_JSON_EXTENSIONS = (".json",)
_MSGPACK_EXTENSIONS = (".msgpack", ".mpk")


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def _pretty(obj: Any, level: int) -> str:
    # indent 1, but lists of scalars (matrix rows, value lists) stay on one line.
    pad = " " * level
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f"{pad} {_dump(k)}: {_pretty(v, level + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(obj, list):
        if all(not isinstance(v, (dict, list)) for v in obj):
            return json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))
        return "[\n" + ",\n".join(f"{pad} {_pretty(v, level + 1)}" for v in obj) + f"\n{pad}]"
    return _dump(obj)


def _with_matrix(doc: Mapping[str, Any], convert: Any) -> dict[str, Any]:
    out = plain(doc, "")
    if isinstance(out, dict) and isinstance(out.get("matrix"), dict):
        out["matrix"] = convert(out["matrix"])
    return dict(out)


def json_compatible(doc: Mapping[str, Any]) -> dict[str, Any]:
    """A plain copy of a document that ``json.dumps`` can write: a compact matrix's binary arrays
    (msgpack bin) as their base64 text, so the JSON hashes to the same id.  Does not validate."""
    return _with_matrix(doc, for_json)


def to_json(doc: Mapping[str, Any]) -> str:
    """Pretty JSON text of a document (one matrix row per line; a compact matrix's arrays as base64).
    Does not validate."""
    try:
        return _pretty(_with_matrix(doc, for_json), 0) + "\n"
    except ValueError as exc:
        if isinstance(exc, DocumentError):
            raise
        raise DocumentError(f"document contains a non-finite number ({exc})") from None


def _reject_constant(name: str) -> Any:
    raise DocumentSyntaxError(
        f"not valid JSON: {name} is not allowed (not a JSON number; use null for an unbounded radius)", "json"
    )


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Duplicate keys would let two parsers see two different documents under one id.
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise DocumentError(f"not a valid document: key {k!r} appears twice in one object")
        out[k] = v
    return out


def from_json(text: str | bytes) -> dict[str, Any]:
    """Parse and validate a JSON document."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise DocumentSyntaxError(f"not valid JSON: not UTF-8 ({exc.reason} at byte {exc.start})", "json") from None
    if not isinstance(text, str):
        raise DocumentError(f"from_json expects str or bytes, got {type(text).__name__}")
    if not text.strip():
        raise DocumentSyntaxError("not valid JSON: empty document", "json")
    try:
        obj = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        raise DocumentSyntaxError(
            f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", "json"
        ) from None
    except RecursionError:
        raise DocumentError("not a valid document: nested too deeply") from None
    return validate_document(obj)


def to_msgpack(doc: Mapping[str, Any]) -> bytes:
    """msgpack bytes of a document (binary type on; floats as float64; a compact matrix's arrays as bin).
    Does not validate."""
    try:
        packed: bytes = msgpack.packb(_with_matrix(doc, for_msgpack), use_bin_type=True)
        return packed
    except (OverflowError, TypeError, ValueError) as exc:
        if isinstance(exc, DocumentError):
            raise
        raise DocumentError(f"document cannot be encoded as msgpack ({exc})") from None


def from_msgpack(data: bytes) -> dict[str, Any]:
    """Parse and validate a msgpack document; any malformed input raises :class:`DocumentError`."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise DocumentError(f"from_msgpack expects bytes, got {type(data).__name__}")
    if len(data) == 0:
        raise DocumentSyntaxError("not a valid msgpack document: empty document", "msgpack")
    try:
        obj = msgpack.unpackb(bytes(data), raw=False, strict_map_key=True)
    except Exception as exc:  # msgpack raises many types (ExtraData, FormatError, ValueError, ...)
        detail = str(exc).splitlines()[0] if str(exc) else ""
        raise DocumentSyntaxError(
            f"not a valid msgpack document ({type(exc).__name__}{': ' + detail if detail else ''})", "msgpack"
        ) from None
    if not isinstance(obj, dict):
        raise DocumentError(f"a mechanism document must be a map, got msgpack {type(obj).__name__}")
    return validate_document(obj)


#: File signatures of what is passed for a document by mistake.
_MAGIC = (
    (b"\x1f\x8b", "a gzip file"),
    (b"PK\x03\x04", "a zip file"),
    (b"%PDF", "a PDF file"),
    (b"\x89PNG", "a PNG image"),
    (b"SQLite format 3\x00", "an SQLite database"),
)


def _looks_like(data: bytes) -> str:
    """What a file that is not a document seems to be, for the refusal: 'a CSV file', 'a text file', …"""
    for magic, what in _MAGIC:
        if data.startswith(magic):
            return what
    head = data[:4096]
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:  # cut in the middle of a character, or not UTF-8 at all
        if exc.start < len(head) - 3:
            return "a binary file"
        text = head[: exc.start].decode("utf-8")
    text = text.lstrip("\ufeff")
    if not all(c.isprintable() or c in "\r\n\t" for c in text):
        return "a binary file"
    lines = [line for line in text.splitlines()[:5] if line.strip()]
    if len(lines) > 1:  # the last line may be cut at 4 KiB
        for sep in (",", ";", "\t"):
            counts = {line.count(sep) for line in lines[:-1]} if len(lines) > 2 else {lines[0].count(sep)}
            if counts != {0} and len(counts) == 1:
                return "a CSV file"
    return "a text file"


def _kind(path: str) -> str | None:
    ext = os.path.splitext(path)[1].lower()
    if ext in _JSON_EXTENSIONS:
        return "json"
    if ext in _MSGPACK_EXTENSIONS:
        return "msgpack"
    return None


def write_document(doc: Mapping[str, Any], path: str | os.PathLike[str]) -> None:
    """Validate and write a document: JSON for ``.json``, msgpack for ``.msgpack``/``.mpk``.

    The file is replaced atomically, so a reader never sees half a document.
    """
    where = os.fspath(path)
    kind = _kind(where)
    if kind is None:
        raise DocumentError(f"{where}: unknown extension; use .json, .msgpack or .mpk")
    folder = os.path.dirname(where) or "."
    if not os.path.isdir(folder):  # say so, rather than let open() name the temporary file
        raise DocumentError(f"{where}: no such folder {folder!r}; create it first")
    valid = validate_document(doc)
    data = to_json(valid).encode("utf-8") if kind == "json" else to_msgpack(valid)
    tmp = f"{where}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, where)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def read_document(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a document (format by extension; sniffed from the content otherwise)."""
    where = os.fspath(path)
    try:
        with open(where, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        raise DocumentError(f"{where}: no such file") from None
    except OSError as exc:
        raise DocumentError(f"{where}: cannot read: {exc.strerror or exc}") from None
    kind = _kind(where)
    if kind is None:
        # A JSON object starts with "{" (after whitespace / BOM); msgpack maps never do.
        kind = "json" if data.lstrip(b" \t\r\n\xef\xbb\xbf")[:1] == b"{" else "msgpack"
        # A msgpack document is a map: its first byte is a map's (fixmap 0x80-0x8f, map16 0xde, map32 0xdf).
        if kind == "msgpack" and data and not (0x80 <= data[0] <= 0x8F or data[0] in (0xDE, 0xDF)):
            raise DocumentSyntaxError(
                f"{where} looks like {_looks_like(data)}, not a mechanism document (JSON or msgpack)", "msgpack"
            )
    try:
        return from_json(data) if kind == "json" else from_msgpack(data)
    except DocumentError as exc:
        exc.args = (f"{where}: {exc}",)  # same type (syntax, id mismatch...), the file named
        raise
