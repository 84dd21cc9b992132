"""The writer process: commits every worker's report batches in groups (see :mod:`rldp.aggregator.writer`).

:func:`serve_writer` is its loop, :func:`main` the process (``python -m rldp.aggregator.writer``),
:class:`WriterProcess` what ``rldp serve`` uses to start, restart and stop it.
"""

from __future__ import annotations

import json
import logging
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from rldp.shared.errors import RldpError, ValidationError, one_line

from ..scheduling import default_scheduling
from ..storage import MAX_GROUP, BatchItem, SQLiteStorage, open_storage, telemetry
from . import wire

__all__ = ["WriterError", "WriterProcess", "main", "serve_writer"]

log = logging.getLogger("rldp.writer")


class WriterError(RldpError, ValueError):
    """The writer process could not start (the message says why: a bad URL, an unusable path...)."""


class _Peer:
    __slots__ = ("sock", "unpacker")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.unpacker = wire.unpacker(64 << 20)


def serve_writer(storage: SQLiteStorage, listener: socket.socket, control: int) -> None:
    """Commit the batches sent to ``listener`` until the file descriptor ``control`` (the
    parent's pipe) reaches end of file (runs in the writer process)."""
    _WriterLoop(storage, listener, control).run()


class _WriterLoop:
    """One selector over the listener, the parent's pipe and every worker's connection; the batches read are
    committed in groups of at most MAX_GROUP, each worker answered in order."""

    def __init__(self, storage: SQLiteStorage, listener: socket.socket, control: int) -> None:
        self.storage, self.listener, self.control = storage, listener, control
        self.sel = selectors.DefaultSelector()
        listener.setblocking(False)
        self.sel.register(listener, selectors.EVENT_READ, None)
        self.sel.register(control, selectors.EVENT_READ, "control")
        self.queued: list[tuple[_Peer, BatchItem]] = []
        self.running = True

    def run(self) -> None:
        while self.running or self.queued:
            for key, _ in self.sel.select(0 if self.queued else None):
                if key.data == "control":
                    self._on_control()
                elif key.data is None:
                    self._accept()
                else:
                    self._read(key.data)
            if self.queued:
                group, self.queued = self.queued[:MAX_GROUP], self.queued[MAX_GROUP:]
                telemetry.queue_depth(len(self.queued))
                self._commit(group)

    def _on_control(self) -> None:
        """EOF on the parent's pipe: the parent stopped us (or died); finish what is queued."""
        try:
            more = os.read(self.control, 4096)
        except OSError:
            more = b""
        if not more:
            self.sel.unregister(self.control)
            self.sel.unregister(self.listener)
            self.running = False

    def _accept(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        conn.setblocking(False)
        self.sel.register(conn, selectors.EVENT_READ, _Peer(conn))

    def _read(self, peer: _Peer) -> None:
        """What a worker sent: pings answered at once, batches queued; a malformed or oversized stream is refused
        and the connection hung up."""
        try:
            chunk = peer.sock.recv(1 << 16)
        except OSError:
            chunk = b""
        if not chunk:
            self._drop(peer)
            return
        try:
            peer.unpacker.feed(chunk)
            for message in peer.unpacker:
                if message == wire.PING:
                    self._answer(peer, wire.encode(wire.PONG))
                else:
                    self.queued.append((peer, wire.batch_item(message)))
        except Exception as exc:  # a malformed or oversized stream: refuse, hang up
            self._answer(peer, wire.encode(["error", f"the writer refused a request: {one_line(exc)}"]))
            self._drop(peer)

    def _commit(self, group: list[tuple[_Peer, BatchItem]]) -> None:
        """One transaction for the group; every waiting worker gets an answer (the failure, if it failed)."""
        try:
            began = time.perf_counter()
            with self.storage.write_transaction() as conn:
                results = self.storage.ingest_group(conn, [item for _, item in group])
            telemetry.commit_observed(self.storage.dialect, time.perf_counter() - began, len(group))
            answers = [[r.status, r.accepted] for r in results]
        except Exception as exc:  # every waiting worker gets an answer
            log.error("writer: a group of %d batches failed: %s", len(group), one_line(exc))
            answers = [wire.error_answer(exc)] * len(group)
        # one send per connection, its answers in order: a pipelining worker reads them in one event
        replies: dict[_Peer, list[bytes]] = {}
        for (peer, _), message in zip(group, answers, strict=True):
            replies.setdefault(peer, []).append(wire.encode(message))
        for peer, parts in replies.items():
            if peer.sock.fileno() >= 0:
                self._answer(peer, b"".join(parts))

    def _drop(self, peer: _Peer) -> None:
        try:
            self.sel.unregister(peer.sock)
        except (KeyError, ValueError):
            pass
        peer.sock.close()

    def _answer(self, peer: _Peer, data: bytes) -> None:
        try:  # answers are a few bytes each, and a peer reads them as they come: the buffer has room
            if peer.sock.send(data) == len(data):
                return
        except OSError:
            pass
        self._drop(peer)  # a peer that cannot take its answers loses its connection (it will retry)


def main() -> int:
    """The writer process (``python -m rldp.aggregator.writer``, started by :class:`WriterProcess`).

    Reads one JSON line ``{"url": …, "path": …}`` from standard input — the URL may hold a
    password, so it never appears on a command line — opens the store, listens on ``path``,
    writes ``ready`` (or ``error: …``) to standard output, and commits until standard input
    reaches end of file. SIGINT and SIGTERM are ignored: sent to the whole process group
    (Ctrl-C, a service manager), they would stop the writer while the workers still finish
    their requests; the parent closes the pipe once the workers are gone — or by dying.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    default_scheduling()
    try:
        settings = json.loads(sys.stdin.readline())
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):  # rldp serve's /metrics adds our samples
            telemetry.install()
        storage = open_storage(settings["url"], init=False)
        if not isinstance(storage, SQLiteStorage):
            raise ValidationError("the writer process serves SQLite stores only")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(settings["path"])
        listener.listen(512)
    except BaseException as exc:  # reported to the parent
        print(f"error: {one_line(exc)}", flush=True)
        return 1
    print("ready", flush=True)
    try:
        serve_writer(storage, listener, sys.stdin.fileno())
    finally:
        listener.close()
        storage.close()
    return 0


_MAX_SOCKET_PATH = 103  # the longest Unix socket path every platform binds (sun_path 108 on Linux, 104 on macOS)


class WriterProcess:
    """Starts the writer process for a SQLite URL, restarts it if it dies, stops it. ``path`` is its socket
    (in a private temporary directory of at most 103 bytes); give it to the workers (``RLDP_WRITER_SOCKET``)."""

    RESTART_DELAY = 1.0

    def __init__(self, url: str, start_timeout: float = 30.0) -> None:
        self.url = url
        self.start_timeout = start_timeout
        # mode 0700: only this user connects; the pid lets the next start remove it after a kill -9
        self.directory = tempfile.mkdtemp(prefix=f"rldp-writer-{os.getpid()}-")
        self.path = os.path.join(self.directory, "writer.sock")
        size = len(os.fsencode(self.path))
        if size > _MAX_SOCKET_PATH:  # said here, not as the writer's "AF_UNIX path too long"
            os.rmdir(self.directory)
            raise WriterError(
                f"the SQLite writer's socket path {self.path} is {size} bytes, over the {_MAX_SOCKET_PATH} a Unix socket allows: set TMPDIR to a shorter folder (e.g. /tmp)"
            )
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._watcher: threading.Thread | None = None

    def start(self) -> WriterProcess:
        """Start the writer and wait until it listens; :class:`WriterError` if it cannot start."""
        self._spawn()
        self._watcher = threading.Thread(target=self._watch, name="rldp-writer-watch", daemon=True)
        self._watcher.start()
        return self

    def _spawn(self) -> None:
        if os.path.exists(self.path):
            os.unlink(self.path)
        proc = subprocess.Popen(
            [sys.executable, "-m", "rldp.aggregator.writer"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        with self._lock:
            self._proc = proc
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps({"url": self.url, "path": self.path}) + "\n")
        proc.stdin.flush()  # the pipe stays open: closing it stops the writer
        ready = selectors.DefaultSelector()
        ready.register(proc.stdout, selectors.EVENT_READ)
        status = proc.stdout.readline().strip() if ready.select(self.start_timeout) else ""
        ready.close()
        if status != "ready":
            proc.kill()
            proc.wait()
            reason = status.removeprefix("error: ") or f"no answer within {self.start_timeout:g} s"
            raise WriterError(f"the SQLite writer process failed to start ({reason})")

    def _watch(self) -> None:
        while not self._stopping.is_set():
            assert self._proc is not None
            self._proc.wait()
            if self._stopping.is_set():
                return
            log.error("the SQLite writer process exited (code %s); restarting it", self._proc.returncode)
            time.sleep(self.RESTART_DELAY)
            try:
                with self._lock:
                    if self._stopping.is_set():
                        return
                self._spawn()
            except (ValueError, OSError) as exc:  # WriterError, or a pipe that broke at once
                log.error("%s; retrying", exc)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the writer once it has answered what it holds, and remove its socket."""
        with self._lock:
            self._stopping.set()
            proc = self._proc
        if proc is not None and proc.poll() is None:
            assert proc.stdin is not None
            proc.stdin.close()  # end of file on its control pipe: it commits what is queued and exits
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        shutil.rmtree(self.directory, ignore_errors=True)
