"""``rldp serve``: the aggregator service (``rldp token`` makes its tokens: :mod:`rldp.admin.token_cli`).

    rldp serve --host 127.0.0.1 --port 8000 --db sqlite:////var/lib/rldp/rldp.sqlite3 --workers 2
    rldp serve --dev                      # Werkzeug's development server, one process

Production runs under Granian: HTTP is parsed by Rust threads outside the GIL, and each of
``--workers`` processes runs the Flask app in ``--threads`` threads behind a buffering front
(:mod:`.front`, Granian's RSGI interface): a body is read whole on the worker's event loop,
within ``BODY_TIMEOUT``, before a thread runs the app — so slow or stalled clients hold
sockets, not threads — and SIGTERM drains the requests being served (at most 10 s; ``/readyz``
answers 503 meanwhile). A report upload to a SQLite store stays on the event loop, which awaits
the writer process's commit; with PostgreSQL an upload is checked on the event loop too and only its
commit waits, in ``--ingest-threads`` threads (:mod:`.upload`). Why Granian and not gunicorn: on the same two cores a do-nothing Flask
endpoint answers 10 kB uploads about 4× faster under Granian, and gunicorn's own HTTP
handling alone capped batched ingestion below a fifth of the in-process limit
(``bench/bench_ingest.py``). Dead workers are respawned. A second ``serve`` on a port in use
is refused ("address in use"), and folders a killed server left in the temporary directory
are removed at the next start. ``serve`` holds a shared lock on its store for its whole life
(:mod:`rldp.aggregator.storage.serverlock`), so ``rldp restore`` refuses to overwrite it meanwhile.

With a SQLite store, ``serve`` also starts one writer process (see
:mod:`rldp.aggregator.services.runtime`) that commits every worker's report batches in
shared group commits; it is restarted if it dies and stopped after the workers. Tokens
come only from the environment (RLDP_ADMIN_TOKEN / RLDP_ADMIN_TOKEN_SHA256,
RLDP_READ_TOKEN / …_SHA256), never from the command line, where other users could read
them in the process list.

Metrics use prometheus_client's multiprocess mode: ``serve`` points PROMETHEUS_MULTIPROC_DIR
at a fresh directory (or empties the one you set) before the workers start, so /metrics
(answered by any worker) adds up every worker's counters, including those of respawned ones.
"""

from __future__ import annotations

import argparse
import errno
import importlib.util
import ipaddress
import os
import secrets
import shutil
import socket
import sys
import tempfile
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from werkzeug.serving import run_simple

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: the bind probe alone
    fcntl = None  # type: ignore[assignment]

from rldp.aggregator.scheduling import batch_scheduling
from rldp.aggregator.services import (
    AddressInUse,
    check_storage,
    clean_stale_dirs,
    default_url,
    hold_store,
    load_config,
    resolve_url,
    sqlite_file,
    start_writer,
)
from rldp.shared.arguments import port, positive_int

from .access import TEXT_FORMAT, text_log_config
from .app import create_app
from .front import INGEST_THREADS

__all__ = ["APP_FACTORY", "add_parser", "cmd_serve", "redact_url", "hold_port_lock"]

#: What each Granian worker calls to build its app (the Flask app behind the buffering front).
APP_FACTORY = "rldp.aggregator.http.front:create_front"
#: ``--unbuffered``: the Flask app under Granian's WSGI interface, with no front (behind a buffering proxy).
WSGI_APP_FACTORY = "rldp.aggregator.http:create_app"


def redact_url(url: str) -> str:
    """The URL with any password replaced by ***, for logs."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return urlunsplit(parts._replace(netloc=netloc))
    return url


def _loopback(host: str) -> bool:
    """Whether ``host`` (an address or a name) is this machine only: 127.0.0.0/8, ::1, localhost."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host.lower() in ("localhost", "localhost.localdomain")


def _event_loop(loops: Any) -> Any:
    """uvloop when installed (Granian's fastest loop rldp supports), else asyncio — never Granian's
    "auto", which picks rloop whenever it is installed: rloop (0.5) has no Unix sockets, so every
    report upload (awaiting the SQLite writer over one) failed with a 500."""
    return loops.uvloop if importlib.util.find_spec("uvloop") is not None else loops.asyncio


def _prepare_multiprocess_dir() -> str:
    path = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if path:
        os.makedirs(path, exist_ok=True)
        for name in os.listdir(path):  # samples of a previous run would be added to ours
            if name.endswith(".db"):
                os.unlink(os.path.join(path, name))
    else:
        path = tempfile.mkdtemp(prefix=f"rldp-metrics-{os.getpid()}-")  # the pid: see clean_stale_dirs
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = path
    return path


def check_address_free(host: str, port: int) -> None:
    """Raise :class:`AddressInUse` if another process listens on ``host:port``.

    Why: Granian binds with SO_REUSEPORT, so a second ``rldp serve`` on a busy port would start
    and split the traffic (and the reports) with the first. A plain bind (SO_REUSEADDR only,
    which ignores TIME_WAIT leftovers but not listeners) fails if anyone holds the port.
    """
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                where = f"[{host}]:{port}" if family == socket.AF_INET6 else f"{host}:{port}"
                raise AddressInUse(
                    f"address in use: {where} (another server listens there; stop it or choose --port)"
                ) from None
            raise


def hold_port_lock(host: str, port: int, tmp: str | None = None) -> int | None:
    """Take this user's lock on ``port`` for the life of this process (the descriptor is returned and
    never closed); :class:`AddressInUse` when another ``rldp serve`` holds it.

    Why: :func:`check_address_free` sees only listeners. Two ``rldp serve`` started at the same moment
    both find the port free, then both bind it with SO_REUSEPORT and split the requests between two
    stores. The lock makes the check and the bind one step per port: exactly one of them starts.
    """
    if port == 0 or fcntl is None:
        return None
    path = os.path.join(tmp or tempfile.gettempdir(), f"rldp-serve-{os.getuid()}-{port}.lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EACCES):
            where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
            raise AddressInUse(
                f"address in use: {where} (another rldp serve is starting or running on port {port}; "
                "stop it or choose --port)"
            ) from None
        raise
    return fd


def cmd_serve(args: argparse.Namespace) -> int:
    """Run the service (Granian, or Werkzeug's server with ``--dev``) until interrupted."""
    overrides: dict[str, Any] = {"DATABASE_URL": args.db}
    if args.max_body_bytes is not None:
        overrides["MAX_BODY_BYTES"] = args.max_body_bytes
    if args.cors_origin is not None:
        overrides["CORS_ORIGIN"] = args.cors_origin
    if args.min_reports is not None:
        overrides["MIN_REPORTS"] = args.min_reports
    if args.access_log is not None:
        overrides["ACCESS_LOG"] = args.access_log
    config = load_config(overrides)  # validates the environment too, before any worker starts
    default = not args.db and not os.environ.get("RLDP_DATABASE_URL")
    # An SQLite path made absolute now (the workers start elsewhere); its folder must exist (the default's
    # is made), unless --create-dirs: sqlite:///var/… is relative to this folder, and a typo made folders.
    url = resolve_url(config["DATABASE_URL"] or default_url(), create_dirs=args.create_dirs or default)
    store = sqlite_file(url) or redact_url(url)
    print(
        f"rldp serve: storage: {store}" + (" (the default, in your data folder; --db to choose)" if default else ""),
        file=sys.stderr,
    )
    if not _loopback(args.host):
        print(
            f"rldp serve: warning: listening on {args.host} over plain HTTP: tokens and reports cross the network "
            "unencrypted; put the TLS reverse proxy of deploy/ (Caddy or nginx) in front and bind 127.0.0.1",
            file=sys.stderr,
        )
    hold_port_lock(args.host, args.port)  # held until this process ends
    check_address_free(args.host, args.port)
    store_lock = hold_store(url)  # held until this process ends: rldp restore refuses meanwhile
    needs_writer = check_storage(url)
    where = f"http://{'[' + args.host + ']' if ':' in args.host else args.host}:{args.port}"
    if not config["ADMIN_HASHES"]:
        print(
            "rldp serve: warning: no admin token configured (RLDP_ADMIN_TOKEN or RLDP_ADMIN_TOKEN_SHA256); "
            "publishing, designs and estimates are refused",
            file=sys.stderr,
        )

    if args.dev:
        app = create_app(
            {
                "DATABASE_URL": url,
                "MAX_BODY_BYTES": config["MAX_BODY_BYTES"],
                "CORS_ORIGIN": config.get("CORS_ORIGIN"),
                "MIN_REPORTS": config["MIN_REPORTS"],
                "ACCESS_LOG": config["ACCESS_LOG"],
            }
        )
        print(
            f"rldp serve: development server on {where} (storage {redact_url(url)}); run without --dev in production",
            file=sys.stderr,
            flush=True,
        )
        try:
            run_simple(args.host, args.port, app, threaded=True, use_reloader=False, use_debugger=False)
        finally:
            store_lock.close()
        return 0

    try:  # optional: --dev works without it, and its absence is one clear line
        from granian import Granian
        from granian.constants import Interfaces, Loops
    except ImportError:
        raise ValueError(
            "granian is not installed (pip install '.[aggregator]' in rldp's source folder); or run the development "
            "server with --dev"
        ) from None

    clean_stale_dirs()  # left by a server that was killed (kill -9 skips the clean-up below)
    metrics_dir = _prepare_multiprocess_dir()
    own_dir = metrics_dir.startswith(tempfile.gettempdir()) and os.path.basename(metrics_dir).startswith(
        "rldp-metrics-"
    )
    # The workers are new processes that build the app from the environment (create_app).
    os.environ["RLDP_DATABASE_URL"] = url
    os.environ["RLDP_MAX_BODY_BYTES"] = str(config["MAX_BODY_BYTES"])
    os.environ["RLDP_MIN_REPORTS"] = str(config["MIN_REPORTS"])
    if config.get("CORS_ORIGIN"):
        os.environ["RLDP_CORS_ORIGIN"] = config["CORS_ORIGIN"]
    os.environ["RLDP_THREADS"] = str(args.threads)
    os.environ["RLDP_INGEST_THREADS"] = str(args.ingest_threads)
    os.environ["RLDP_ACCESS_LOG"] = config["ACCESS_LOG"]  # json: the app's lines; text: Granian's
    os.environ.pop("RLDP_WRITER_SOCKET", None)
    # Every worker must sign and check the dashboard's session cookies with the same secret.
    os.environ.setdefault("RLDP_DASHBOARD_SECRET", secrets.token_hex(32))
    batch = args.scheduling == "batch" and batch_scheduling()  # before the workers start (the writer opts out)
    writer = start_writer(url) if needs_writer else None
    if writer is not None:
        os.environ["RLDP_WRITER_SOCKET"] = writer.path
    # Buffered (default): bodies are read whole on the event loop (front.py), then run in --threads.
    # --unbuffered: plain WSGI, ~1.4x the batched rate, for a server behind a buffering proxy only.
    interface: dict[str, Any] = (
        {"interface": Interfaces.WSGI, "blocking_threads": args.threads}
        if args.unbuffered
        else {"interface": Interfaces.RSGI}
    )
    server = Granian(
        WSGI_APP_FACTORY if args.unbuffered else APP_FACTORY,
        factory=True,
        **interface,
        address=args.host,
        port=args.port,
        workers=args.workers,
        websockets=False,
        loop=_event_loop(Loops),
        log_access=config["ACCESS_LOG"] == "text",
        log_access_format=TEXT_FORMAT,  # Granian's line escaped by access.TextAccessFormatter (query, user agent)
        log_dictconfig=text_log_config() if config["ACCESS_LOG"] == "text" else None,
        respawn_failed_workers=True,
        workers_kill_timeout=args.graceful_timeout,
    )
    mode = (
        ", unbuffered (WSGI: put a buffering proxy in front)"
        if args.unbuffered
        else ", report uploads on each worker's event loop"
        if writer is not None
        else f" + {args.ingest_threads} for report commits"
    )
    print(
        f"rldp serve: listening on {where} (granian, {args.workers} workers × {args.threads} threads{mode}; "
        f"storage {redact_url(url)}{'; one writer process' if writer else ''}{'; SCHED_BATCH' if batch else ''})",
        file=sys.stderr,
        flush=True,
    )
    try:
        server.serve()
    finally:
        if writer is not None:
            writer.stop()
        store_lock.close()  # after the writer: it writes to the store until it stops
        if own_dir:
            shutil.rmtree(metrics_dir, ignore_errors=True)
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``serve`` (``token`` is the operator SDK's: rldp.admin.token_cli)."""
    p = subparsers.add_parser(
        "serve",
        help="run the aggregator HTTP service",
        description="Run the aggregator service (Granian; --dev for the development server). "
        "Tokens come from RLDP_ADMIN_TOKEN[_SHA256] / RLDP_READ_TOKEN[_SHA256].",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=port, default=8000, help="port (default 8000)")
    p.add_argument(
        "--create-dirs",
        action="store_true",
        help="create the folder of an SQLite --db when it does not exist (else refused, naming the resolved path)",
    )
    p.add_argument(
        "--db",
        default=None,
        metavar="URL",
        help="storage: sqlite:///RELATIVE/PATH (from the current folder), sqlite:////ABSOLUTE/PATH (default $RLDP_DATABASE_URL, else rldp.sqlite3 in your data folder: "
        "$XDG_DATA_HOME/rldp or ~/.local/share/rldp, %%LOCALAPPDATA%%\\rldp, ~/Library/Application Support/rldp) "
        "or postgresql://user:pass@host/db",
    )
    p.add_argument(
        "--workers",
        type=positive_int("workers"),
        default=min(4, os.cpu_count() or 1),
        help="worker processes (default: number of cores, at most 4)",
    )
    p.add_argument(
        "--threads", type=positive_int("threads"), default=4, help="threads per worker running the app (default 4)"
    )
    p.add_argument(
        "--ingest-threads",
        type=positive_int("ingest-threads"),
        default=INGEST_THREADS,
        help=f"PostgreSQL: threads per worker in which report uploads wait for their commit (each upload is checked "
        "on the event loop) "
        f"(default {INGEST_THREADS}; with SQLite uploads wait on the event loop; with --unbuffered --threads run "
        "everything)",
    )
    p.add_argument(
        "--scheduling",
        choices=("batch", "normal"),
        default="batch",
        help="Linux CPU scheduling of the server's processes: batch (default: SCHED_BATCH, a wake-up does not "
        "preempt a busy process; more uploads per second on few cores) or normal",
    )
    p.add_argument(
        "--graceful-timeout",
        type=positive_int("graceful-timeout"),
        default=30,
        help="seconds a stopping worker gets to finish its requests before it is killed (default 30)",
    )
    p.add_argument(
        "--max-body-bytes",
        type=positive_int("max-body-bytes"),
        default=None,
        help="request body limit in bytes (default 32 MiB or $RLDP_MAX_BODY_BYTES)",
    )
    p.add_argument(
        "--min-reports",
        type=positive_int("min-reports"),
        default=None,
        help="reports a mechanism or collection needs before an estimate is served (default 100 or "
        "$RLDP_MIN_REPORTS); below it the estimate answers 409 too-few-reports",
    )
    p.add_argument(
        "--cors-origin",
        default=None,
        metavar="ORIGIN",
        help="let pages of this one web origin (e.g. https://app.example) call the service from a browser "
        "(default: none, or $RLDP_CORS_ORIGIN)",
    )
    p.add_argument(
        "--access-log",
        nargs="?",
        const="json",
        choices=("json", "text"),
        default=None,
        help="log every request to stderr: json (the default: one JSON object per request, with its request id) "
        "or text (Granian's plain lines); default $RLDP_ACCESS_LOG, else no access log",
    )
    p.add_argument("--dev", action="store_true", help="Werkzeug's development server (single process)")
    p.add_argument(
        "--unbuffered",
        action="store_true",
        help="no buffering front: the app reads bodies itself under WSGI (faster; a slow client holds a "
        "thread, SIGTERM does not drain): only behind a buffering reverse proxy such as nginx",
    )
    p.set_defaults(func=cmd_serve)
