"""The aggregator service's configuration and its bearer tokens.

Configuration (``config`` argument > environment > default):

=====================  ===========================  ==========================================
key                    environment                  meaning
=====================  ===========================  ==========================================
DATABASE_URL           RLDP_DATABASE_URL            storage URL (default: rldp.sqlite3 in the user's data folder)
ADMIN_TOKEN            RLDP_ADMIN_TOKEN             admin bearer token (publish, retire, design, estimate)
ADMIN_TOKEN_SHA256     RLDP_ADMIN_TOKEN_SHA256      or its SHA-256 hex digest (comma-separated: several)
READ_TOKEN             RLDP_READ_TOKEN              bearer token that may only read estimates
READ_TOKEN_SHA256      RLDP_READ_TOKEN_SHA256       or its SHA-256 hex digest(s)
MAX_BODY_BYTES         RLDP_MAX_BODY_BYTES          request body limit, bytes (default 32 MiB) → 413
MAX_BATCH_REPORTS      RLDP_MAX_BATCH_REPORTS       most reports in one batch (default 1,000,000) → 413
BODY_TIMEOUT           RLDP_BODY_TIMEOUT            seconds a client gets to send a whole body under
                                                    ``rldp serve`` (default 60) → 408
DESIGN_TIMEOUT         RLDP_DESIGN_TIMEOUT          seconds before a design job is stopped (default 3600)
DESIGN_CONCURRENCY     RLDP_DESIGN_CONCURRENCY      design jobs running at once per process (default 1)
JOB_STALE_SECONDS      RLDP_JOB_STALE_SECONDS       a job without heartbeat for this long has failed (120)
WRITER_SOCKET          RLDP_WRITER_SOCKET           SQLite: socket of the writer process that commits
                                                    report batches (``rldp serve`` sets it)
MIN_REPORTS            RLDP_MIN_REPORTS             reports a mechanism (or collection) needs before an
                                                    estimate is served (default 100) → 409 too-few-reports
MAX_BETA               RLDP_MAX_BETA                the largest significance level β of a confidence set
                                                    the service designs or publishes with (default 0.05)
CORS_ORIGIN            RLDP_CORS_ORIGIN             the one web origin (``https://app.example``) whose pages may
                                                    call the service from a browser (unset: none)
ACCESS_LOG             RLDP_ACCESS_LOG              ``json`` (one JSON object per request), ``text`` (Granian's
                                                    plain lines, ``rldp serve`` only) or unset: no access log
PUBLIC_DATA            RLDP_PUBLIC_DATA             public CSV files (header row) that every published
                                                    document's P̂, n and radius must match: ``PATH`` or
                                                    ``NAME=PATH``, comma-separated (the name defaults to
                                                    the file's base name); unset: no such check
=====================  ===========================  ==========================================

The public data is read once, when the configuration is loaded (a file that cannot be read
is a ConfigError then, not a refusal later); ``config["PUBLIC_DATA"]`` is ``{name: Table}``
(a ``config`` argument may also give ``{name: path or Table}`` or a list of paths).

Tokens are hashed (SHA-256) as soon as they are read, compared with
``hmac.compare_digest`` on the hashes, and never logged. Without an admin token the
admin endpoints refuse everyone.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from collections.abc import Mapping
from typing import Any

from rldp.aggregator.storage import default_url, resolve_url, sqlite_file
from rldp.shared.errors import ParameterError, TableError, one_line
from rldp.shared.parameters import DEFAULT_MAX_BETA, check_beta, check_count
from rldp.shared.tables import Table, read_csv
from rldp.shared.tokens import hash_token

from .errors import ConfigError

__all__ = [
    "DEFAULTS",
    "DEFAULT_MIN_REPORTS",
    "default_url",
    "resolve_url",
    "sqlite_file",
    "load_config",
    "hash_token",
    "token_allowed",
    "tokens_configured",
]

_ORIGIN = re.compile(r"https?://[A-Za-z0-9.\-\[\]:]+")

#: Reports before an estimate is served: with fewer, its intervals say little and a few reports could
#: single out the people who sent them (DAP's minimum batch size plays the same part).
DEFAULT_MIN_REPORTS = 100
DEFAULTS: dict[str, Any] = {
    "DATABASE_URL": None,  # default_url(), read when the configuration is loaded
    "MAX_BODY_BYTES": 32 * 1024 * 1024,
    "MAX_BATCH_REPORTS": 1_000_000,
    "BODY_TIMEOUT": 60.0,
    "DESIGN_TIMEOUT": 3600.0,
    "DESIGN_CONCURRENCY": 1,
    "JOB_STALE_SECONDS": 120.0,
    "MAX_BETA": DEFAULT_MAX_BETA,
    "MIN_REPORTS": DEFAULT_MIN_REPORTS,
    "ACCESS_LOG": "",
}
_ENV = {
    "DATABASE_URL": "RLDP_DATABASE_URL",
    "ADMIN_TOKEN": "RLDP_ADMIN_TOKEN",
    "ADMIN_TOKEN_SHA256": "RLDP_ADMIN_TOKEN_SHA256",
    "READ_TOKEN": "RLDP_READ_TOKEN",
    "READ_TOKEN_SHA256": "RLDP_READ_TOKEN_SHA256",
    "MAX_BODY_BYTES": "RLDP_MAX_BODY_BYTES",
    "MAX_BATCH_REPORTS": "RLDP_MAX_BATCH_REPORTS",
    "BODY_TIMEOUT": "RLDP_BODY_TIMEOUT",
    "DESIGN_TIMEOUT": "RLDP_DESIGN_TIMEOUT",
    "DESIGN_CONCURRENCY": "RLDP_DESIGN_CONCURRENCY",
    "JOB_STALE_SECONDS": "RLDP_JOB_STALE_SECONDS",
    "WRITER_SOCKET": "RLDP_WRITER_SOCKET",
    "PUBLIC_DATA": "RLDP_PUBLIC_DATA",
    "CORS_ORIGIN": "RLDP_CORS_ORIGIN",
    "MAX_BETA": "RLDP_MAX_BETA",
    "MIN_REPORTS": "RLDP_MIN_REPORTS",
    "ACCESS_LOG": "RLDP_ACCESS_LOG",
}
_INT_KEYS = {"MAX_BODY_BYTES": 1, "MAX_BATCH_REPORTS": 1, "DESIGN_CONCURRENCY": 1}
_FLOAT_KEYS = {"DESIGN_TIMEOUT", "JOB_STALE_SECONDS", "BODY_TIMEOUT"}
_HEX64 = re.compile(r"[0-9a-f]{64}")
#: Plain tokens shorter than this are refused: a bearer token must not be guessable.
MIN_TOKEN_LENGTH = 16


def _hashes(plain: Any, hashed: Any, name: str) -> tuple[bytes, ...]:
    out: list[bytes] = []
    if plain:
        if not isinstance(plain, str):
            raise ConfigError(f"{name} must be a string")
        if len(plain) < MIN_TOKEN_LENGTH:
            raise ConfigError(
                f"{name} is too short ({len(plain)} characters); use at least {MIN_TOKEN_LENGTH} random characters"
            )
        out.append(bytes.fromhex(hash_token(plain)))
    if hashed:
        items = hashed if isinstance(hashed, (list, tuple)) else str(hashed).split(",")
        for item in items:
            item = item.strip().lower()
            if not _HEX64.fullmatch(item):
                raise ConfigError(f"{name}_SHA256 must be SHA-256 hex digests (64 hex characters), comma-separated")
            out.append(bytes.fromhex(item))
    return tuple(out)


def _public_data(value: Any) -> dict[str, Table]:
    """PUBLIC_DATA as ``{name: Table}``: "PATH" / "NAME=PATH" entries (comma-separated text, a list),
    or a mapping ``{name: path or Table}``; each file is read now."""
    if not value:
        return {}
    if isinstance(value, Mapping):
        entries = [(str(name), source) for name, source in value.items()]
    else:
        items = value.split(",") if isinstance(value, str) else list(value)
        entries = []
        for item in (str(i).strip() for i in items):
            if item:
                name, sep, path = item.partition("=")
                entries.append((name.strip(), path.strip()) if sep else (os.path.basename(item), item))
    where = "PUBLIC_DATA (RLDP_PUBLIC_DATA)"
    out: dict[str, Table] = {}
    for name, source in entries:
        if not name or (not isinstance(source, Table) and not source):
            raise ConfigError(f"{where} entries must be PATH or NAME=PATH, comma-separated; got {name!r}={source!r}")
        if name in out:
            raise ConfigError(f"{where} names {name!r} twice; give each file its own NAME=PATH")
        try:
            out[name] = source if isinstance(source, Table) else read_csv(source)
        except TableError as exc:
            raise ConfigError(f"{where}: {one_line(exc)}") from None
    return out


def load_config(config: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Merge defaults, the environment and ``config``; validate; hash tokens (plain ones dropped).

    Raises :class:`~rldp.aggregator.services.errors.ConfigError` (a ValueError) naming the
    key, its environment variable and what it must be.
    """
    environ = os.environ if environ is None else environ
    merged: dict[str, Any] = dict(DEFAULTS)
    for key, var in _ENV.items():
        if environ.get(var):
            merged[key] = environ[var]
    merged.update({k: v for k, v in (config or {}).items() if v is not None})
    merged["DATABASE_URL"] = merged["DATABASE_URL"] or default_url()
    _check_numbers(merged)
    if merged["ACCESS_LOG"] not in ("", "json", "text"):
        raise ConfigError(
            f"ACCESS_LOG (RLDP_ACCESS_LOG) must be json, text or empty (none); got {merged['ACCESS_LOG']!r}"
        )
    origin = merged.get("CORS_ORIGIN")
    if origin is not None and not (isinstance(origin, str) and _ORIGIN.fullmatch(origin)):
        raise ConfigError(
            f"CORS_ORIGIN (RLDP_CORS_ORIGIN) must be one web origin such as https://app.example:8443 (scheme, host, "
            f"optional port; no path); got {origin!r}"
        )
    merged["ADMIN_HASHES"] = _hashes(
        merged.pop("ADMIN_TOKEN", None), merged.pop("ADMIN_TOKEN_SHA256", None), "ADMIN_TOKEN"
    )
    merged["READ_HASHES"] = _hashes(merged.pop("READ_TOKEN", None), merged.pop("READ_TOKEN_SHA256", None), "READ_TOKEN")
    if set(merged["READ_HASHES"]) & set(merged["ADMIN_HASHES"]):  # a "read-only" token that is the admin's
        raise ConfigError(
            "READ_TOKEN (RLDP_READ_TOKEN / RLDP_READ_TOKEN_SHA256) is the admin token: whoever holds it could "
            "publish, retire and design; give read access its own token (rldp token --plain makes one)"
        )
    merged["PUBLIC_DATA"] = _public_data(merged.get("PUBLIC_DATA"))
    return merged


def _check_numbers(merged: dict[str, Any]) -> None:
    """Every numeric setting converted in place (an environment variable is text) and checked against its range."""
    for key, low in _INT_KEYS.items():
        try:
            merged[key] = int(merged[key])
        except (TypeError, ValueError):
            raise ConfigError(f"{key} ({_ENV[key]}) must be an integer; got {merged[key]!r}") from None
        if merged[key] < low:
            raise ConfigError(f"{key} ({_ENV[key]}) must be ≥ {low}; got {merged[key]}")
    for key in _FLOAT_KEYS:
        try:
            merged[key] = float(merged[key])
        except (TypeError, ValueError):
            raise ConfigError(f"{key} ({_ENV[key]}) must be a number of seconds; got {merged[key]!r}") from None
        if not merged[key] > 0:
            raise ConfigError(f"{key} ({_ENV[key]}) must be > 0; got {merged[key]}")
    try:
        merged["MAX_BETA"] = check_beta(
            float(merged["MAX_BETA"]) if isinstance(merged["MAX_BETA"], str) else merged["MAX_BETA"], "MAX_BETA"
        )
    except (ValueError, ParameterError):
        raise ConfigError(
            f"MAX_BETA (RLDP_MAX_BETA) must be a significance level in (0, 1); got {merged['MAX_BETA']!r}"
        ) from None
    minimum = merged["MIN_REPORTS"]
    try:
        merged["MIN_REPORTS"] = check_count(
            int(minimum) if isinstance(minimum, str) and minimum.strip().isdigit() else minimum, "MIN_REPORTS"
        )
    except ParameterError:
        raise ConfigError(
            f"MIN_REPORTS (RLDP_MIN_REPORTS) must be a whole number of reports ≥ 1; got {minimum!r}"
        ) from None


def tokens_configured(config: Mapping[str, Any], *, read: bool = False) -> bool:
    """Whether any token could pass :func:`token_allowed` (admin, or with ``read`` also read tokens)."""
    return bool(config["ADMIN_HASHES"]) or (read and bool(config["READ_HASHES"]))


def token_allowed(config: Mapping[str, Any], token: str, *, read: bool = False) -> bool:
    """Whether ``token`` is the admin token (or, with ``read``, a read token)."""
    if not token:
        return False
    digest = hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()
    allowed = config["ADMIN_HASHES"] + (config["READ_HASHES"] if read else ())
    ok = False
    for candidate in allowed:  # compare with every hash: the time taken does not tell which matched
        ok |= hmac.compare_digest(digest, candidate)
    return ok
