"""The asyncio client of the writer process: many batches in flight on one connection, each
answered with its own result; a lost or silent writer fails them all (retry with the same id)."""

from __future__ import annotations

import asyncio
import os
import socket
import tempfile

import msgpack
import numpy as np
import pytest

from rldp.aggregator.storage import BatchItem, StorageError, open_storage
from rldp.aggregator.writer import AsyncWriterClient

MID = "a" * 64  # conftest.py's active mechanism


def _item(mechanism: str, batch: str, ys: np.ndarray) -> BatchItem:
    return BatchItem.encode(mechanism, batch, ys, 6)


@pytest.mark.live
def test_pipelined_batches_each_get_their_own_answer_and_are_counted_once(sqlite_url, writer):
    url, proc = sqlite_url, writer
    rng = np.random.default_rng(3)
    batches = {f"b{i}": rng.integers(0, 6, int(rng.integers(1, 300))) for i in range(300)}
    names = sorted(batches)
    # every batch, half of them again (retries), a conflicting copy of some, other mechanisms
    jobs = [(MID, n, batches[n], "accepted") for n in names]
    jobs += [(MID, n, batches[n], "duplicate") for n in names[::2]]
    jobs += [(MID, n, batches[n][::-1].copy() + 0, "conflict") for n in names[1::50] if len(set(batches[n])) > 1]
    jobs += [("f" * 64, "x", np.array([1]), "unknown"), ("d" * 64, "y", np.array([1]), "retired")]
    order = np.random.default_rng(4).permutation(len(jobs))
    first = [jobs[int(k)] for k in order if jobs[int(k)][3] == "accepted"]
    rest = [jobs[int(k)] for k in order if jobs[int(k)][3] != "accepted"]
    client = AsyncWriterClient(proc.path)

    async def run(part):
        return await asyncio.gather(*(client.submit(_item(m, b, ys)) for m, b, ys, _ in part))

    async def main():
        return await run(first), await run(rest)

    got_first, got_rest = asyncio.run(main())
    assert [r.status for r in got_first] == ["accepted"] * len(first)
    assert [r.status for r in got_rest] == [want for *_, want in rest]
    assert [r.accepted for r in got_first] == [ys.size for _, _, ys, _ in first]
    store = open_storage(url)
    try:
        expected = np.bincount(np.concatenate(list(batches.values())), minlength=6)
        np.testing.assert_array_equal(store.counts(MID, 6), expected)
    finally:
        store.close()


class _SilentWriter:
    """A Unix socket that accepts connections and never answers (or hangs up when told)."""

    def __init__(self) -> None:
        self.directory = tempfile.mkdtemp(prefix="rldp-w-")
        self.path = os.path.join(self.directory, "s")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen()
        self.listener.setblocking(False)

    def close(self) -> None:
        self.listener.close()
        os.unlink(self.path)
        os.rmdir(self.directory)


async def _accepted(listener: socket.socket, timeout: float = 10.0) -> socket.socket:
    """The next connection to the non-blocking ``listener`` (polled: the test's loop keeps running)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        try:
            return listener.accept()[0]
        except BlockingIOError:
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError("no connection to the stand-in writer") from None
            await asyncio.sleep(0.01)


def test_a_writer_that_does_not_answer_fails_every_request_in_flight_after_the_timeout():
    silent = _SilentWriter()
    try:
        client = AsyncWriterClient(silent.path, timeout=0.3)

        async def main():
            loop = asyncio.get_running_loop()
            started = loop.time()
            results = await asyncio.gather(
                *(client.submit(_item(MID, f"b{i}", np.array([1, 2]))) for i in range(5)), return_exceptions=True
            )
            return results, loop.time() - started

        results, elapsed = asyncio.run(main())
        assert all(isinstance(r, StorageError) for r in results)
        assert "no answer within 0.3 s" in str(results[0]) and "retry it with the same batch id" in str(results[0])
        assert 0.3 <= elapsed < 2.0
    finally:
        silent.close()


def test_a_lost_connection_fails_the_requests_in_flight_and_the_next_request_reconnects():
    silent = _SilentWriter()
    try:
        client = AsyncWriterClient(silent.path, timeout=30)

        async def main():
            first = asyncio.ensure_future(client.submit(_item(MID, "b1", np.array([1]))))
            peer = await _accepted(silent.listener)  # the writer's side of the connection: hang up on it
            peer.close()
            with pytest.raises(StorageError, match="did not answer"):
                await first
            second = asyncio.ensure_future(client.submit(_item(MID, "b2", np.array([1]))))
            again = await _accepted(silent.listener)  # a new connection
            again.sendall(msgpack.packb(["accepted", 1]))
            result = await second
            again.close()
            return result

        assert asyncio.run(main()).status == "accepted"
    finally:
        silent.close()


def test_an_unreachable_writer_is_a_storage_error_naming_its_socket(tmp_path):
    client = AsyncWriterClient(str(tmp_path / "nothing.sock"))
    with pytest.raises(StorageError, match="cannot reach the writer process at .*nothing.sock"):
        asyncio.run(client.submit(_item(MID, "b", np.array([1]))))


@pytest.mark.live
def test_a_client_used_from_a_new_event_loop_connects_again(writer):
    proc = writer
    client = AsyncWriterClient(proc.path, timeout=10)
    first = asyncio.run(client.submit(_item(MID, "loop-1", np.array([1, 2]))))
    second = asyncio.run(client.submit(_item(MID, "loop-2", np.array([3]))))  # the first loop is closed
    assert (first.status, second.status, second.accepted) == ("accepted", "accepted", 1)
