"""``rldp design`` stopped by a real SIGINT (what Ctrl-C sends) at several points of a design.

The signal is sent when the process has printed a given progress line, never after a fixed sleep,
so the verdict does not depend on the machine's speed; the exit is awaited with a generous timeout.
The budget (120 s) is far longer than any of these waits: a run that ignored the signal would end
with status 0 and fail the test, however slow the machine.
"""

from __future__ import annotations

import gzip
import re
import signal
import subprocess
import threading
from pathlib import Path

import pytest
from cli_helpers import RLDP
from helpers import ADULT_COLUMNS, adult_path

from rldp.shared.document import read_document

pytestmark = pytest.mark.slow

WAIT = 300.0  # seconds: for a line to appear, then for the exit (generous: a loaded 2-core machine)


@pytest.fixture(scope="module")
def adult_csv(tmp_path_factory) -> Path:
    csv = tmp_path_factory.mktemp("sigint") / "adult.csv"
    with gzip.open(adult_path(), "rt") as fh:
        rows = [line for line in fh.read().splitlines() if line]
    csv.write_text(",".join(ADULT_COLUMNS) + "\n" + "\n".join(rows) + "\n")
    return csv


def _interrupt_when(args: list[str], ready: re.Pattern[bytes], ignore_sigint: bool = False) -> tuple[int, str, str]:
    """Run ``rldp *args``; send SIGINT once its stderr matches ``ready``; (exit status, stdout, stderr).

    ``ignore_sigint``: start it with SIGINT ignored, as a shell script's ``rldp design … &`` does."""
    proc = subprocess.Popen(
        [*RLDP, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None,
    )
    err = bytearray()
    seen = threading.Event()

    def pump() -> None:
        assert proc.stderr is not None
        while chunk := proc.stderr.read1(65536):  # type: ignore[attr-defined]
            err.extend(chunk)
            if ready.search(err):
                seen.set()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        waited = 0.0
        while not seen.wait(0.5) and proc.poll() is None and waited < WAIT:
            waited += 0.5
        assert seen.is_set(), f"never printed {ready.pattern!r}: {bytes(err)[-2000:]!r}"
        proc.send_signal(signal.SIGINT)
        out = proc.stdout.read() if proc.stdout is not None else b""
        proc.wait(timeout=WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(timeout=WAIT)
    return proc.returncode, out.decode(), bytes(err).decode(errors="replace")


def _design(csv: Path, out: Path) -> list[str]:
    return [
        "design", str(csv), "--sensitive", "relationship", "--released", "occupation", "--epsilon", "1",
        "--method", "polyopt", "--solver", "cg", "--time-budget", "120", "--progress", "--out", str(out),
    ]  # fmt: skip


def _last_line(err: str) -> str:
    return err.replace("\r", "\n").strip().splitlines()[-1]


ROUND_3 = re.compile(rb"round ([3-9]|\d\d+),")


@pytest.mark.parametrize("ignore_sigint", [False, True], ids=["foreground", "started-with-sigint-ignored"])
def test_sigint_during_the_search_writes_the_best_certified_design_and_exits_130(adult_csv, tmp_path, ignore_sigint):
    """After three rounds of the search: the best certified design so far, exit 130, one line on stderr.
    Also when the shell started rldp with SIGINT ignored (a script's ``&``): it ran its whole budget
    and exited 0 without a word."""
    out = tmp_path / "m.json"
    status, stdout, err = _interrupt_when(_design(adult_csv, out), ROUND_3, ignore_sigint=ignore_sigint)
    assert status == 130, err[-2000:]
    line = _last_line(err)
    assert "interrupted after" in line and "wrote the best certified design found so far" in line, line
    assert str(out) in line and f"wrote    {out}" in stdout
    doc = read_document(out)
    assert doc["method"] == "polyopt" and doc["parameters"]["status"] == "interrupted"
    assert doc["audit"]["epsilon"] <= doc["privacy"]["epsilon"] == 1.0


def test_sigint_as_the_design_starts_writes_a_certified_design_and_exits_130(adult_csv, tmp_path):
    """As soon as the progress bar appears (seeding, the NR bound, or the first rounds, depending on the
    machine's speed): exit 130 and a certified document, the one it says it wrote."""
    out = tmp_path / "m.json"
    status, stdout, err = _interrupt_when(_design(adult_csv, out), re.compile(rb"\| 0/120 s"))
    assert status == 130, err[-2000:]
    line = _last_line(err)
    assert line.startswith("rldp design: interrupted after") and str(out) in line, line
    doc = read_document(out)
    if "GRR baseline" in line:  # before any certified PolyOpt design existed
        assert doc["method"] == "grr"
    else:
        assert "best certified design found so far" in line and doc["method"] == "polyopt"
    assert doc["audit"]["epsilon"] <= doc["privacy"]["epsilon"] == 1.0


def test_ctrl_c_while_the_public_csv_is_read_says_nothing_was_written(adult_csv, tmp_path, monkeypatch, capsys):
    from rldp.aggregator.cli import design as design_cli
    from rldp.cli import main

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(design_cli, "read_public_numeric", interrupted)
    out = tmp_path / "m.json"
    assert main(["design", str(adult_csv), "--sensitive", "sex", "--released", "race", "--epsilon", "1",
                 "--method", "polyopt", "--out", str(out)]) == 130  # fmt: skip
    err = capsys.readouterr().err
    assert err == "rldp design: interrupted before the design started; nothing written\n" and not out.exists()
