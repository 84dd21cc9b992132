"""The root ``rldp`` command itself: what it does whatever the subcommand (issue 27 D12)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

import rldp.cli as root


@pytest.mark.parametrize("where", ["build_parser", "parse_args"])
def test_ctrl_c_before_the_command_runs_exits_130_in_one_line(monkeypatch, capsys, where) -> None:
    # Ctrl-C in the first ~0.4 s of `rldp design` lands in the scipy import (build_parser).
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    if where == "build_parser":
        monkeypatch.setattr(root, "build_parser", interrupted)
    else:
        monkeypatch.setattr(root.argparse.ArgumentParser, "parse_args", interrupted)
    assert root.main(["design", "x.csv"]) == root.EXIT_INTERRUPTED
    err = capsys.readouterr().err
    assert err.strip().splitlines() == ["rldp: interrupted"]


def test_a_real_sigint_while_loading_exits_130() -> None:
    code = (
        "import time, rldp.cli as root\n"
        "real = root.build_parser\n"
        "def slow(command=None):\n"
        "    print('loading', flush=True)\n"
        "    time.sleep(30)\n"
        "    return real(command)\n"
        "root.build_parser = slow\n"
        "raise SystemExit(root.main(['design', '--help']))\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "loading\n"
    time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert err.strip() == "rldp: interrupted" and "Traceback" not in err
