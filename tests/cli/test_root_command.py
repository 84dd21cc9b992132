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
    assert err.strip().splitlines() == ["rldp: interrupted before the command started; nothing done"]


@pytest.mark.parametrize("ignored", [False, True], ids=["sigint-default", "started-with-sigint-ignored"])
def test_a_real_sigint_while_loading_exits_130(ignored: bool) -> None:
    """Also when the shell started rldp design with SIGINT ignored (a script's `&`): it was ignored
    until the design's own code ran, so a Ctrl-C while rldp loaded was lost."""
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
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignored else None,
    )
    assert proc.stdout.readline() == "loading\n"
    time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert err.strip() == "rldp: interrupted before the command started; nothing done" and "Traceback" not in err


def _subcommand_helps(parser) -> dict[str, str]:
    sub = next(a for a in parser._actions if a.dest == "command")
    return {choice.dest: choice.help for choice in sub._choices_actions}


def test_each_command_is_listed_with_its_own_line_whether_or_not_its_part_is_installed() -> None:
    # Issue 27 rough edge: a client-only `rldp --help` filed audit and evaluate under "design and check mechanisms".
    installed = _subcommand_helps(root.build_parser())
    for group in root.COMMAND_GROUPS:
        if group.extra == "rldp" and len(group.commands) > 1:
            continue  # the operator's commands are always installed: their listed line is their own
        for name in group.commands:
            assert group.helps[name] == installed[name], name


def test_a_client_only_help_lists_audit_and_evaluate_as_themselves() -> None:
    code = (
        "import sys\n"
        "for name in ('scipy', 'flask', 'matplotlib', 'granian'): sys.modules[name] = None\n"
        "from rldp.cli import main\n"
        "sys.exit(main(['--help']))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    listing = " ".join(proc.stdout.split())
    assert "audit audit a mechanism document" in listing and "evaluate utility and realised epsilon" in listing
    assert "experiment reproduce an experiment" in listing and "data write the shipped example data" in listing
    assert listing.count("design and check") == 0
