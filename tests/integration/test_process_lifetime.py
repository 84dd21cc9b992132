"""Server processes that must not outlive or overlap each other (issue 27 D6, D7)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from rldp.aggregator.services import jobs

CHILD_SCRIPT = textwrap.dedent(
    """
    import multiprocessing, os, sys, time
    from rldp.aggregator.services import jobs

    def design_like(parent_pid):
        jobs.exit_with_parent(parent_pid, 0.05)
        open(sys.argv[1], "w").close()  # ready: imports done, running
        time.sleep(120)  # a long design

    if __name__ == "__main__":
        proc = multiprocessing.get_context("spawn").Process(target=design_like, args=(os.getpid(),))
        proc.start()
        print(proc.pid, flush=True)
        time.sleep(120)
    """
)


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in "ZX"  # a zombie has ended (whoever adopted it may not reap it at once)


def test_a_design_process_ends_with_its_server(tmp_path) -> None:
    script = tmp_path / "server.py"
    script.write_text(CHILD_SCRIPT)
    ready = tmp_path / "ready"
    server = subprocess.Popen([sys.executable, str(script), str(ready)], stdout=subprocess.PIPE, text=True)
    child = int(server.stdout.readline())
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready.exists() and not _gone(child)
        server.send_signal(signal.SIGKILL)  # kill -9: no clean-up runs in the server
        server.wait(10)
        deadline = time.monotonic() + 5
        while not _gone(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _gone(child), "the design process outlived its server by 5 s"
    finally:
        if not _gone(child):
            os.kill(child, signal.SIGKILL)


def test_the_runner_tells_its_design_process_who_its_server_is(monkeypatch) -> None:
    seen = {}

    class Recorded:
        def __init__(self, target, args, name, daemon):
            seen["target"], seen["args"] = target, args

        def start(self):
            raise RuntimeError("recorded")

    runner = jobs.DesignRunner.__new__(jobs.DesignRunner)
    runner._ctx = type("Ctx", (), {"Pipe": staticmethod(lambda duplex: (None, None)), "Process": Recorded})()
    try:
        runner._design("0" * 32, {})
    except (RuntimeError, AttributeError):
        pass
    assert seen["target"] is jobs._design_child and seen["args"][2] == os.getpid()


def test_two_serves_started_at_once_on_one_port_exactly_one_binds(tmp_path) -> None:
    # Issue 27 D7: both found the port free, both bound it with SO_REUSEPORT and split the requests.
    import requests
    from cli_helpers import RLDP
    from rldp_live import ADMIN_TOKEN, free_port

    for trial in range(2):
        port = free_port()
        env = {**os.environ, "RLDP_ADMIN_TOKEN": ADMIN_TOKEN}
        env.pop("PROMETHEUS_MULTIPROC_DIR", None)
        procs = [
            subprocess.Popen(
                [
                    *RLDP,
                    "serve",
                    "--port",
                    str(port),
                    "--db",
                    f"sqlite:///{tmp_path}/{trial}-{i}.sqlite3",
                    "--workers",
                    "1",
                ],
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                start_new_session=True,
            )
            for i in range(2)
        ]
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and all(p.poll() is None for p in procs):
                time.sleep(0.1)
            refused = [p for p in procs if p.poll() is not None]
            assert len(refused) == 1, "both rldp serve are running on one port"
            err = refused[0].communicate(timeout=10)[1]
            assert refused[0].returncode == 2 and "address in use" in err.strip().splitlines()[-1], err
            (running,) = [p for p in procs if p is not refused[0]]
            for _ in range(600):  # the other serves
                try:
                    if requests.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                        break
                except requests.ConnectionError:
                    time.sleep(0.1)
            else:
                raise AssertionError("the rldp serve that took the port does not answer")
            assert running.poll() is None
        finally:
            for p in procs:
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGTERM)
                    p.communicate(timeout=60)
