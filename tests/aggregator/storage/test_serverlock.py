"""``rldp restore`` against a store a live server uses: the server's lock (held by another process)
refuses it in one line with exit 2; no holder, or a holder killed with SIGKILL, lets it proceed; a
server does not start while a restore holds the store."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from rldp_live import record

from rldp.aggregator.storage import open_storage
from rldp.aggregator.storage.backup import backup, restore
from rldp.aggregator.storage.serverlock import StoreInUse, exclusive_for_restore, hold_for_server, lock_path
from rldp.cli import main

MECH = "ab" * 32

#: Another process taking the server's lock as ``rldp serve`` does, then waiting (until killed).
HOLDER = """
import sys, time
from rldp.aggregator.storage import open_storage
from rldp.aggregator.storage.serverlock import hold_for_server
store = open_storage(sys.argv[1], init=False)
lock = hold_for_server(store)
store.close()
print("held", flush=True)
time.sleep(60)
"""


@pytest.fixture
def stores(tmp_path) -> tuple[str, str]:
    """(the URL of a SQLite store holding one mechanism, a backup of it)."""
    url = f"sqlite:///{tmp_path / 'data' / 'rldp.sqlite3'}"
    store = open_storage(url)
    store.publish(record(MECH), b"doc")
    store.close()
    bak = str(tmp_path / "rldp.bak")
    backup(url, bak)
    return url, bak


@pytest.fixture
def holder(stores):
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, stores[0]], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        yield proc
    finally:
        proc.kill()
        proc.wait(10)


def test_restore_refuses_a_store_a_server_holds_in_one_line(stores, holder, tmp_path, capsys) -> None:
    url, bak = stores
    code = main(["restore", bak, "--db", url, "--force"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"a server (pid {holder.pid}) is using {tmp_path / 'data' / 'rldp.sqlite3'}; stop it first" in err
    with pytest.raises(StoreInUse):
        restore(url, bak, force=True)
    # Killed with SIGKILL: the kernel drops its lock (the file with its pid stays): the restore proceeds.
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(10)
    assert os.path.exists(lock_path(open_storage(url, init=False)))
    assert list(restore(url, bak, force=True).mechanisms) == [MECH]


def test_restore_proceeds_when_no_server_holds_the_store(stores, tmp_path, capsys) -> None:
    url, bak = stores
    assert main(["restore", bak, "--db", f"sqlite:///{tmp_path / 'fresh' / 'rldp.sqlite3'}"]) == 0
    assert "restored" in capsys.readouterr().out
    # a lock taken and released in this process (a server that stopped) leaves nothing behind
    store = open_storage(url, init=False)
    hold_for_server(store).close()
    assert list(restore(url, bak, force=True).mechanisms) == [MECH]


def test_a_server_does_not_start_during_a_restore_and_servers_share_the_store(stores) -> None:
    store = open_storage(stores[0], init=False)
    try:
        with exclusive_for_restore(store):
            with pytest.raises(StoreInUse, match="a restore .*is running"):
                hold_for_server(store)
        first, second = hold_for_server(store), hold_for_server(store)  # two servers on one store: allowed
        with pytest.raises(StoreInUse, match=r"a server \(pid \d+\)"):
            with exclusive_for_restore(store):
                pass
        first.close()
        second.close()
        with exclusive_for_restore(store):
            pass
    finally:
        store.close()


def test_postgresql_restore_is_refused_while_a_server_session_holds_the_schema(databases) -> None:
    url = databases.url("postgresql")  # skips without RLDP_TEST_POSTGRES_URL
    other = databases.url("postgresql")  # another schema of the same database: another store
    store, neighbour = open_storage(url), open_storage(other)
    try:
        lock = hold_for_server(store)  # its own session, named after this process
        with pytest.raises(
            StoreInUse,
            match=rf"a server \(rldp serve pid {os.getpid()} on .+\) is using the store in schema rldp_test_",
        ):
            with exclusive_for_restore(store):
                pass
        with exclusive_for_restore(neighbour):  # a server of one schema does not block the other's restore
            with pytest.raises(StoreInUse, match="a restore .*is running"):
                hold_for_server(neighbour)
        lock.close()
        with exclusive_for_restore(store):
            pass
    finally:
        store.close()
        neighbour.close()
