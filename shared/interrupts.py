"""Ctrl-C for commands that must answer it (``rldp design``), even when started with SIGINT ignored."""

from __future__ import annotations

import signal
import threading

__all__ = ["take_ctrl_c"]


def take_ctrl_c() -> None:
    """Make SIGINT raise KeyboardInterrupt even when this process was started with it ignored.

    A shell without job control (a script: ``rldp design … &``) starts background commands with
    SIGINT ignored (POSIX), and Python then leaves it ignored: ``kill -INT`` or Ctrl-C at the
    script's terminal did nothing, and a design ran its whole budget and exited 0 without a word.
    A design is stopped on purpose; its answer to SIGINT is the documented one (the best certified
    design so far, exit 130). Only from the main thread (the only one that may set handlers)."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
